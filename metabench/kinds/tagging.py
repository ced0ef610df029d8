"""Tagging: one label per word (token-level metaphor detection)."""

from __future__ import annotations

from pydantic import Field

from ..errors import ConfigError
from ..metrics.tagging import metaphor_vocabulary, sentence_counts, shared_parsing
from ..requests import TagRequest
from .base import Kind, KindArgs


class TaggingArgs(KindArgs):
    vocabulary_normalise: str = Field(
        "exact", description="how words are matched against the training metaphor vocabulary (in/out-of-vocabulary F1)"
    )


class Tagging(Kind):
    name = "tagging"
    Args = TaggingArgs

    @classmethod
    def check_config(cls, config, raw) -> None:
        if not config.labels.positive:
            raise ConfigError(
                f"{raw.where('labels')}: a tagging task needs `labels.positive` (the entity type scored, e.g. METAPHOR)",
                hint="e.g. labels: {scheme: BIO, positive: METAPHOR, names: [O, B-METAPHOR, I-METAPHOR]}",
            )

    def labels(self) -> tuple[str, ...]:
        positive = self.config.labels.positive
        return tuple(self.config.labels.names or ("O", f"B-{positive}", f"I-{positive}"))

    def gold(self, item) -> tuple[str, ...]:
        return tuple(item.tags)

    def request_type(self) -> type:
        return TagRequest

    def request(self, item) -> TagRequest:
        return TagRequest(words=tuple(item.words), labels=self.labels())

    def score(self, item, gold, prediction) -> dict[str, float]:
        span, token = sentence_counts(gold, prediction, self.config.labels.positive)
        return {
            "span_tp": float(span["tp"]), "span_fp": float(span["fp"]), "span_fn": float(span["fn"]),
            "token_tp": float(token["tp"]), "token_fp": float(token["fp"]), "token_fn": float(token["fn"]),
            "correct": float(tuple(gold) == tuple(prediction)),
        }

    def fit_context(self, train_items: list) -> None:
        self._train_vocab = metaphor_vocabulary(
            [i.words for i in train_items], [i.tags for i in train_items], normalise=self.args.vocabulary_normalise
        )

    def metric_values(self, items: list, golds: list, preds: list) -> dict[str, float]:
        """The task's six to ten tagging metrics read the same golds and predictions: inside
        `shared_parsing` they read them once (nothing changes the lists while the metrics run)."""
        with shared_parsing():
            return super().metric_values(items, golds, preds)

    def metric_context(self, items: list) -> dict:
        context = {"words": [i.words for i in items], "positive": self.config.labels.positive}
        if hasattr(self, "_train_vocab"):
            context["train_vocab"] = self._train_vocab
            context["normalise"] = self.args.vocabulary_normalise
        return context
