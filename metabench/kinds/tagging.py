"""Tagging: one label per word (token-level metaphor detection)."""

from __future__ import annotations

from pydantic import Field

from ..errors import ConfigError
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
        from ..metrics.tagging import sentence_counts

        span, token = sentence_counts(gold, prediction, self.config.labels.positive)
        scores = {f"span_{k}": float(v) for k, v in span.items()}
        scores.update({f"token_{k}": float(v) for k, v in token.items()})
        scores["correct"] = float(tuple(gold) == tuple(prediction))
        return scores

    def fit_context(self, train_items: list) -> None:
        from ..metrics.tagging import metaphor_vocabulary

        self._train_vocab = metaphor_vocabulary(
            [i.words for i in train_items], [i.tags for i in train_items], normalise=self.args.vocabulary_normalise
        )

    def metric_context(self, items: list) -> dict:
        context = {"words": [i.words for i in items], "positive": self.config.labels.positive}
        if hasattr(self, "_train_vocab"):
            context["train_vocab"] = self._train_vocab
            context["normalise"] = self.args.vocabulary_normalise
        return context
