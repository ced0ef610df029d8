"""Choice: pick one of several continuations of a prompt by their log-likelihood (lm-eval's multiple_choice).

The prompt is the task's ``protocol.decoder.template`` rendered on the item; the options are either fixed
continuations (``options: [" A", " B", " C", " D"]``) or per item (``options_field``). A decoder adapter
scores every option as a continuation of the prompt and answers the argmax, with the per-option
log-likelihoods; baselines (``constant:index=N``, ``random``) answer an index directly.

The gold is an option index: from the preparer (MUNCH), ``answer_field`` (an index on the item) or
``label_field`` (a label, mapped through ``label_map`` then ``option_labels``). Metrics see option labels
when ``option_labels`` is given (``A``..``D``, ``metaphorical``/``literal``) and indices otherwise.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..errors import ConfigError, MetabenchError
from ..requests import ChoiceRequest
from .base import Kind, item_field
from .prompts import PromptedArgs, PromptedMixin, render


class ChoiceArgs(PromptedArgs):
    options: list[str] | None = Field(None, description="fixed continuations, e.g. [' A', ' B', ' C', ' D']")
    options_field: str | None = Field(None, description="item attribute holding per-item option texts")
    option_template: str | None = Field(None, description="Jinja template of one option ({{ option }}, item fields)")
    option_labels: list[str] | None = Field(None, description="label of each fixed option, passed to metrics")
    answer_field: str | None = Field(None, description="item attribute holding the gold option index")
    label_field: str | None = Field(None, description="item attribute holding the gold label (see option_labels)")
    label_map: dict[str, str] = Field(default_factory=dict, description="raw gold label -> option label")
    scoring: Literal["sum", "per_byte"] = Field(
        "sum", description="argmax of summed log-likelihood (lm-eval acc) or per UTF-8 byte (acc_norm)"
    )


class Choice(PromptedMixin, Kind):
    name = "choice"
    Args = ChoiceArgs

    @classmethod
    def check_config(cls, config, raw) -> None:
        cls.check_prompt(config, raw)
        args = ChoiceArgs.model_validate(config.kind_args)
        if (args.options is None) == (args.options_field is None):
            raise ConfigError(
                f"{raw.where('kind_args')}: a choice task needs exactly one of kind_args.options (fixed "
                "continuations) or kind_args.options_field (per item)",
                hint="e.g. kind_args: {options: [' A', ' B', ' C', ' D'], option_labels: [A, B, C, D]}",
            )
        if args.option_labels is not None:
            if args.options is None or len(args.option_labels) != len(args.options):
                raise ConfigError(
                    f"{raw.where('kind_args', 'option_labels')}: option_labels needs fixed `options` of the same length",
                )
        if args.prepare is None and args.answer_field is None and args.label_field is None:
            raise ConfigError(
                f"{raw.where('kind_args')}: say where the gold comes from: prepare, answer_field or label_field",
            )
        if args.label_field is not None and args.option_labels is None:
            raise ConfigError(f"{raw.where('kind_args', 'label_field')}: label_field needs option_labels")

    # ----------------------------------------------------------------------------------------- items

    def options(self, item) -> tuple[str, ...]:
        if self.args.options is not None:
            raw = list(self.args.options)
        else:
            raw = [str(o) for o in item_field(item, self.args.options_field)]
        if self.args.option_template is None:
            return tuple(raw)
        fields = self.fields(item)
        return tuple(render(self.args.option_template, {**fields, "option": o}, what="option") for o in raw)

    def labels(self) -> tuple[str, ...]:
        return tuple(self.args.option_labels or self.config.labels.names or ())

    def gold(self, item) -> int:
        if self.args.prepare is not None:
            gold = self.fields(item).get("gold")
            if gold is not None:
                return int(gold)
        if self.args.answer_field is not None:
            return int(item_field(item, self.args.answer_field))
        raw = str(item_field(item, self.args.label_field))
        label = self.args.label_map.get(raw, raw)
        try:
            return self.args.option_labels.index(label)
        except ValueError:
            raise MetabenchError(
                f"item '{item.id}': gold label {raw!r} is none of the option labels {self.args.option_labels}",
                hint="map it with kind_args.label_map",
            ) from None

    def request_type(self) -> type:
        return ChoiceRequest

    def request(self, item) -> ChoiceRequest:
        return ChoiceRequest(
            context=self.prompt(item),
            options=self.options(item),
            chat=self.decoder.chat_template,
            system=self.system_prompt(item),
        )

    def fewshot_target(self, item) -> str:
        return self.options(item)[self.gold(item)]

    # ----------------------------------------------------------------------------------------- scoring

    def index(self, item, prediction) -> int:
        """The chosen option of an answer: an index, or an adapter's dict with log-likelihoods."""
        if isinstance(prediction, dict):
            lls = prediction.get("loglikelihoods")
            if self.args.scoring == "per_byte" and lls:
                options = self.options(item)
                scores = [ll / max(1, len(o.encode("utf-8"))) for ll, o in zip(lls, options)]
                return max(range(len(scores)), key=lambda i: (scores[i], -i))
            return int(prediction["index"])
        return int(prediction)

    def index_of_label(self, label, letters: str = "") -> int:
        """The option a label names, as a choice task stores answers given in words (a decoder's generated
        letter, metabench.kinds.answered); -1 for a label no option has (an unread answer). Options without
        labels of their own are named by ``letters`` in order (a generated way's ``letters: AB``)."""
        labels = list(self.args.option_labels or []) or list(letters)
        return labels.index(label) if label in labels else -1

    def answer_label(self, item, prediction):
        """The label of the option an answer chose (its index where the options have no labels)."""
        return self._label(self.index(item, prediction))

    def _label(self, index: int):
        labels = self.args.option_labels
        return labels[index] if labels and 0 <= index < len(labels) else index

    def score(self, item, gold, prediction) -> dict[str, float]:
        return {"correct": float(self.index(item, prediction) == int(gold))}

    def metric_input(self, item, gold, prediction):
        """Metrics read option labels (``option_labels``, e.g. MUNCH's letters), else option indices."""
        return self._label(int(gold)), self._label(self.index(item, prediction))


# ------------------------------------------------------------------------------------------- metrics


def confusion_counts(golds, preds, *, labels: list | None = None) -> dict[str, float]:
    """Counts of every (gold, predicted) pair: ``confusion_counts/<gold>/<pred>``; with ``labels``, every
    cell of the full matrix (zeros included)."""
    from collections import Counter

    counts = Counter(zip(golds, preds))
    rows = labels if labels is not None else sorted({*golds, *preds}, key=str)
    cols = labels if labels is not None else rows
    return {f"confusion_counts/{g}/{p}": float(counts.get((g, p), 0)) for g in rows for p in cols}


def munch_table9(golds, preds) -> dict[str, float]:
    """MUNCH Table 9: expected answer type × prediction, from gold and predicted letters.

    Rows: ``apt_inapt`` (gold A or B) → ``correct`` / ``wrong_ab`` (the inapt one) / ``C`` / ``D``;
    ``apt_apt`` (gold C) → ``C`` / ``AB`` / ``D``; ``inapt_inapt`` (gold D) → ``D`` / ``AB`` / ``C``.
    """
    cells = {
        "apt_inapt/correct": 0, "apt_inapt/wrong_ab": 0, "apt_inapt/C": 0, "apt_inapt/D": 0,
        "apt_apt/C": 0, "apt_apt/AB": 0, "apt_apt/D": 0,
        "inapt_inapt/D": 0, "inapt_inapt/AB": 0, "inapt_inapt/C": 0,
    }
    for gold, pred in zip(golds, preds):
        if gold in ("A", "B"):
            key = "correct" if pred == gold else ("wrong_ab" if pred in ("A", "B") else str(pred))
            row = "apt_inapt"
        elif gold == "C":
            row, key = "apt_apt", "AB" if pred in ("A", "B") else str(pred)
        elif gold == "D":
            row, key = "inapt_inapt", "AB" if pred in ("A", "B") else str(pred)
        else:
            raise ValueError(f"munch_table9: gold {gold!r} is not a letter A-D")
        cells[f"{row}/{key}"] = cells.get(f"{row}/{key}", 0) + 1
    return {f"munch_table9/{k}": float(v) for k, v in cells.items()}
