"""What a kind asks a model for. Kinds build requests; adapters answer them.

The request types are the only thing kinds and adapters share, which keeps the data flow one-way: kinds
never import adapters and adapters never read task YAML. Each request has a ``key`` — the text that
identifies its input — used by the lexical-memorisation (``lookup``) baseline.
"""

from __future__ import annotations

import re
from collections.abc import Callable
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
    """Label a text (optionally a text pair). Answer: one of ``labels``.

    ``expression``: the lexical identity (lemma or string) of the item's target expression, for
    expression-level tasks; the expression-keyed ``lookup`` memorises labels by it. None where the input
    does not show the expression (no marked target, or a view that hides it, ``masked``): a request never
    carries what its view hides.
    """

    text: str
    labels: tuple[str, ...]
    text_pair: str | None = None
    expression: str | None = None

    @property
    def key(self) -> str:
        return self.text if self.text_pair is None else f"{self.text}\t{self.text_pair}"


@dataclass(frozen=True)
class ChoiceRequest:
    """Pick one continuation of ``context``. Answer: the index of the chosen option.

    Decoder adapters may answer ``{"index": i, "loglikelihoods": [...], "is_greedy": [...]}`` instead of a
    bare index (kinds accept both). ``chat``: wrap ``context`` as a user message in the model's chat template
    (with ``system`` as the system message) before the options are appended.
    """

    context: str
    options: tuple[str, ...]
    chat: bool = False
    system: str | None = None

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
    chat: bool = False
    system: str | None = None

    @property
    def key(self) -> str:
        return self.prompt


@dataclass(frozen=True)
class RankRequest:
    """Rank single-word answers by the model's next-token distribution (MUNCH paraphrase generation).

    The adapter takes the ``k`` most probable next tokens after ``prompt`` and greedily completes each into a
    word (at most ``max_word_tokens`` more tokens, stopping at whitespace, a quote or a newline). With
    ``complete`` set, only tokens that begin (case-insensitively, leading whitespace ignored) one of those
    strings are completed — the paper's procedure, which saves work and cannot change where an acceptable
    answer ranks. Answer: ``[[token, word_or_None], ...]`` in the model's order, best first.
    """

    prompt: str
    k: int = 10
    max_word_tokens: int = 8
    complete: tuple[str, ...] | None = None
    chat: bool = False
    system: str | None = None

    @property
    def key(self) -> str:
        return self.prompt


Request = TagRequest | ClassifyRequest | ChoiceRequest | GenerateRequest | RankRequest

_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
_MAX_WORD_SEARCH = 4000  # longer texts are cut first (a runaway generation must not cost time)


def first_word(text: str) -> str:
    """The first word of ``text`` ("" if none): letters/digits with inner hyphens or apostrophes.

    What "word" means in a ``RankRequest`` answer and in the ``word`` parser alike, so an adapter's ranked
    words and a kind's parsed words are the same thing.
    """
    match = _WORD.search(text[:_MAX_WORD_SEARCH])
    return match.group(0) if match else ""


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
    #: Scores predictions for ``validation_requests`` with the task's own metrics (as in results.json, e.g.
    #: ``{"span_f1": 0.61, ...}``): what model selection (``finetune.select_metric``) reads. None: unavailable.
    score_validation: Callable[[list], dict[str, float]] | None = None
