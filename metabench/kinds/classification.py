"""Classification: one label per item — a text, or a text pair such as an NLI premise and hypothesis."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from ..requests import ClassifyRequest
from .base import Kind


class ClassificationArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    text_field: str = Field("text", description="item attribute holding the text (premise for NLI)")
    pair_field: str | None = Field(None, description="item attribute holding the second text (hypothesis)")
    label_field: str = Field("label", description="item attribute holding the gold label")


class Classification(Kind):
    name = "classification"
    Args = ClassificationArgs

    @classmethod
    def check_config(cls, config, raw) -> None:
        if not config.labels.names:
            raise ConfigError(
                f"{raw.where('labels')}: a classification task needs `labels.names` (the label set in a fixed order)",
                hint="e.g. labels: {names: [entailment, neutral, contradiction]}",
            )

    def gold(self, item) -> str:
        return str(getattr(item, self.args.label_field))

    def request(self, item) -> ClassifyRequest:
        pair = getattr(item, self.args.pair_field) if self.args.pair_field else None
        return ClassifyRequest(text=getattr(item, self.args.text_field), labels=self.labels(), text_pair=pair)

    def score(self, item, gold, prediction) -> dict[str, float]:
        return {"correct": float(gold == prediction)}
