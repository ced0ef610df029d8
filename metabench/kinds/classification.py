"""Classification: one label per item — a text, or a text pair such as an NLI premise and hypothesis."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError, DataError
from ..requests import ClassifyRequest
from .base import Kind


class ClassificationArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    text_field: str = Field("text", description="item attribute holding the text (premise for NLI)")
    pair_field: str | None = Field(None, description="item attribute holding the second text (hypothesis)")
    label_field: str = Field("label", description="item attribute holding the gold label")
    label_map: dict[str, str] = Field(
        default_factory=dict,
        description="raw gold label -> task label, for training and test data alike (e.g. neutral and "
        "contradiction -> not_entailment to train a binary NLI model on a 3-way corpus)",
    )
    marker: Literal["none", "pme"] = Field(
        "none",
        description="pme: wrap the item's target expression in <PME>…</PME> (its character spans, else the "
        "whitespace word at target_index) before a model sees the text; encoders add the markers as tokens",
    )


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
        raw = str(getattr(item, self.args.label_field))
        return self.args.label_map.get(raw, raw)

    def request(self, item) -> ClassifyRequest:
        pair = getattr(item, self.args.pair_field) if self.args.pair_field else None
        text = getattr(item, self.args.text_field)
        if self.args.marker == "pme":
            text = mark_expression(item, text)
        return ClassifyRequest(text=text, labels=self.labels(), text_pair=pair)

    def score(self, item, gold, prediction) -> dict[str, float]:
        return {"correct": float(gold == prediction)}


PME_OPEN, PME_CLOSE = "<PME>", "</PME>"


def mark_expression(item, text: str) -> str:
    """``text`` with the item's expression wrapped in <PME>…</PME> (Boisson et al. 2023's Default input).

    The expression is the item's character ``spans`` (from the first start to the last end when it is
    discontinuous), else the whitespace-separated word at ``target_index``.
    """
    spans = tuple(getattr(item, "spans", ()) or ())
    if spans:
        start, end = min(s for s, _ in spans), max(e for _, e in spans)
    else:
        index = getattr(item, "target_index", None)
        words = list(re.finditer(r"\S+", text))
        if index is None or not 0 <= index < len(words):
            raise DataError(
                f"item '{getattr(item, 'id', '?')}': kind_args.marker=pme needs the item's target (spans or "
                f"target_index), and it has {'none' if index is None else f'index {index} of {len(words)} words'}",
                hint="use marker: none for datasets without a marked expression",
            )
        start, end = words[index].span()
    if not 0 <= start < end <= len(text):
        raise DataError(f"item '{getattr(item, 'id', '?')}': span ({start}, {end}) is outside its text")
    return f"{text[:start]}{PME_OPEN}{text[start:end]}{PME_CLOSE}{text[end:]}"
