"""A task answered by a decoder through a prompt: the task's own kind in every respect but the request.

A benchmark is one set of items, golds and metrics whatever model answers it (metabench.answering). Its own kind
(``classification``, ``tagging``) reads the golds and scores; a protocol section with its own kind (``choice``:
scored, ``generation``: parsed text) builds the decoder's request and reads its answer. :class:`Answered` joins
the two: requests and few-shot demonstrations from the prompted kind, everything else from the task's kind, and
each answer mapped into the task's form before it is stored (:meth:`prediction`) — the option's label, the
parsed label, one tag per word — so samples, paired tests, the trivial-predictor marks and verification read a
decoder's run exactly as an encoder's.

An answer no parser reads is stored as :data:`INVALID`: the label ``invalid`` (never a gold, so it is wrong and
never the positive class), or that tag on every word of a sentence (no span). Its share is the run's
``format_failure_rate``, computed from the stored predictions (so verification rebuilds it) and shown beside the
primary metric wherever a generated run's number is printed.
"""

from __future__ import annotations

from typing import Any

from .parsers import INVALID
from .prompts import PromptedMixin

#: A choice task's stored index of an answer no parser read (no option has it, so it is never correct).
UNREAD_INDEX = -1
#: Metric a generated run reports beside its primary metric: the share of answers no parser read.
FORMAT_FAILURE = "format_failure_rate"


def is_invalid(prediction) -> bool:
    """Whether a stored prediction is an unread answer (a label, a tag sequence or a choice task's index)."""
    if isinstance(prediction, list):
        return bool(prediction) and all(tag == INVALID for tag in prediction)
    return prediction == INVALID or prediction == UNREAD_INDEX


def format_failure_rate(predictions: list) -> float:
    """The share of stored predictions that are unread answers (verification rebuilds it from them)."""
    return sum(map(is_invalid, predictions)) / len(predictions)


class Answered:
    """The task's kind (``own``) answered through a prompted kind (``prompted``) in one way (``mode``)."""

    def __init__(self, own, prompted: PromptedMixin, mode: str):
        self.own, self.prompted, self.mode = own, prompted, mode
        self.protocol: str | None = None  # the section's key, set by `metabench.jobs.build_kind`

    def __getattr__(self, name: str) -> Any:  # the task's kind in every respect not defined here
        return getattr(self.own, name)

    # -- the decoder's side -----------------------------------------------------------------------------

    def request_type(self) -> type | None:
        return self.prompted.request_type()

    def request(self, item):
        return self.prompted.request(item)

    def fit_context(self, train_items: list) -> None:
        self.own.fit_context(train_items)
        self.prompted.fit_context(train_items)

    def fit_fewshot(self, items: list) -> None:
        self.prompted.fit_fewshot(items)

    def reseed(self, seed: int) -> bool:
        return self.prompted.reseed(seed)

    def demonstrations(self) -> list[str]:
        return self.prompted.demonstrations()

    def prediction(self, item, answer):
        """The decoder's answer in the task's form: an option's label (scored), or the parsed label or tag
        sequence (generated), :data:`INVALID` when nothing could be read; for a task whose own kind is a choice
        (MUNCH), that label's option index (-1: unread)."""
        prompted = self.prompted
        if self.mode == "scored":
            value = prompted.answer_label(item, answer)
        else:
            parsed = prompted.parse(item, answer)
            value = list(parsed.value) if isinstance(parsed.value, (list, tuple)) else parsed.value
            if not parsed.ok:
                words = getattr(item, "words", None)
                value = [INVALID] * len(words) if isinstance(value, list) and words is not None else INVALID
        to_index = getattr(self.own, "index_of_label", None)
        return to_index(value, getattr(self.prompted.args, "letters", "")) if to_index is not None else value

    def answer_key(self, item, prediction) -> str:
        return self.own.answer_key(item, prediction)

    # -- scoring: the task's own, plus the format failures of a generated run ------------------------------

    def aggregate(self, items: list, golds: list, preds: list) -> dict[str, float]:
        out = self.own.aggregate(items, golds, preds)
        if self.mode == "generated" and preds:
            out[FORMAT_FAILURE] = format_failure_rate(preds)
        return out

    def warn_unusable(self, items: list, preds_by_seed: dict[int, list]) -> None:
        """One warning for the job: how many answers no parser read (they are scored as wrong)."""
        bad = [(seed, item.id) for seed, preds in preds_by_seed.items() for item, p in zip(items, preds)
               if is_invalid(p)]
        if bad:
            import logging

            total = len(items) * len(preds_by_seed)
            logging.getLogger("metabench.kinds.answered").warning(
                "%s: %d of %d answers unreadable by the %s parser (format failures, scored as wrong), e.g. %s",
                self.own.config.task, len(bad), total, getattr(self.prompted.args, "parser", "?"),
                ", ".join(str(i) for _, i in bad[:3]))
