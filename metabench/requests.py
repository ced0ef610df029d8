"""What a kind asks a model for. Kinds build requests; adapters answer them.

The request types are the only thing kinds and adapters share, which keeps the data flow one-way: kinds
never import adapters and adapters never read task YAML. Each request has a ``key`` — the text that
identifies its input — used by the lexical-memorisation (``lookup``) baseline.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TagRequest:
    """Label every word. Answer: a tuple of labels, one per word."""

    words: tuple[str, ...]
    labels: tuple[str, ...]

    @property
    def key(self) -> str:
        return " ".join(self.words)


@dataclass(frozen=True)
class ClassifyRequest:
    """Label a text (optionally a text pair). Answer: one of ``labels``."""

    text: str
    labels: tuple[str, ...]
    text_pair: str | None = None

    @property
    def key(self) -> str:
        return self.text if self.text_pair is None else f"{self.text}\t{self.text_pair}"


@dataclass(frozen=True)
class ChoiceRequest:
    """Pick one continuation of ``context``. Answer: the index of the chosen option."""

    context: str
    options: tuple[str, ...]

    @property
    def key(self) -> str:
        return self.context


@dataclass(frozen=True)
class GenerateRequest:
    """Continue a prompt. Answer: the generated text (stop strings removed)."""

    prompt: str
    until: tuple[str, ...] = ()
    max_new_tokens: int = 32
    temperature: float = 0.0

    @property
    def key(self) -> str:
        return self.prompt


Request = TagRequest | ClassifyRequest | ChoiceRequest | GenerateRequest


@dataclass
class Training:
    """What a trainable adapter gets for one (task, seed): training and validation requests with gold answers.

    ``protocol`` is the task's protocol section for the adapter's family (e.g. ``Finetune`` hyperparameters
    for encoders); ``data_hash`` identifies the training data, for checkpoint caching.
    """

    requests: list
    golds: list
    validation_requests: list
    validation_golds: list
    labels: tuple[str, ...]
    protocol: object
    seed: int
    data_hash: str
