"""Classification: one label per item — a text, or a text pair such as an NLI premise and hypothesis."""

from __future__ import annotations

from operator import attrgetter
from typing import Literal

from pydantic import Field

from .views import DEFAULT_MASK, expression_key, render
from ..errors import ConfigError, MetabenchError
from ..requests import ClassifyRequest
from .base import Kind, KindArgs, LazyContext


class ClassificationArgs(KindArgs):
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
    view: Literal["default", "pme_only", "masked"] = Field(
        "default",
        description="with marker: pme, what the model sees (Boisson et al. 2023): default = text with <PME>…</PME>; "
        "pme_only = the expression alone (first to last word when discontinuous); masked = the expression "
        "replaced by `mask`. Usually set by the task's `views:` expansion, not by hand",
    )
    mask: str = Field(DEFAULT_MASK, min_length=1, description="the string that replaces the expression in view masked")


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
        args = config.kind_args
        if args.get("view", "default") != "default" and args.get("marker", "none") != "pme":
            raise ConfigError(
                f"{raw.where('kind_args')}: view {args['view']!r} needs kind_args.marker: pme (the item's expression)",
                hint="set marker: pme, or drop the view for tasks without a target expression",
            )

    def __init__(self, config, metric_fns):
        super().__init__(config, metric_fns)
        self._rendered: dict[int, tuple[object, ClassifyRequest]] = {}
        self._labels = self.labels()

    def gold(self, item) -> str:
        raw = str(getattr(item, self.args.label_field))
        return self._known(self.args.label_map.get(raw, raw), item)

    def _known(self, gold: str, item) -> str:
        """A gold label outside ``labels.names`` would be scored as a class no model can answer: refused,
        naming the item (a dataset's new label, or a label_map that misses one)."""
        names = self.labels()
        if gold not in names:
            raise MetabenchError(
                f"task '{self.config.task}', item '{item.id}': gold label {gold!r} is not in labels.names "
                f"{list(names)}",
                hint="add it to labels.names, or map it with kind_args.label_map")
        return gold

    def gold_key(self):
        if type(self).gold is not Classification.gold:  # a subclass reading golds its own way
            return None
        return ("classification", self.args.label_field, tuple(sorted(self.args.label_map.items())))

    def golds(self, items: list) -> list[str]:
        if type(self).gold is not Classification.gold:
            return super().golds(items)
        raw = map(str, map(attrgetter(self.args.label_field), items))
        mapping = self.args.label_map
        golds = [mapping.get(r, r) for r in raw] if mapping else list(raw)
        known = set(self.labels())
        for item, gold in zip(items, golds):
            if gold not in known:
                self._known(gold, item)
        return golds

    def request_type(self) -> type:
        return ClassifyRequest

    def request(self, item) -> ClassifyRequest:
        """The item's request, rendered once per kind (a kind serves one job): the runner asks for the test
        items' requests and the collision ceiling for the same items' inputs. The memo holds the item too, so
        its ``id`` cannot be reused by another item while the entry lives."""
        found = self._rendered.get(id(item))
        if found is not None and found[0] is item:
            return found[1]
        request = self._render(item)
        self._rendered[id(item)] = (item, request)
        return request

    def _render(self, item) -> ClassifyRequest:
        text, pair = self._seen(item)
        if self.args.marker != "pme":
            return ClassifyRequest(text=text, labels=self._labels, text_pair=pair)
        # A request carries what its view shows and nothing it hides: the masked view hides the expression,
        # so its requests carry no expression key (an expression-keyed lookup is then skipped, not scored).
        shown = self.args.view != "masked"
        return ClassifyRequest(text=text, labels=self._labels, text_pair=pair,
                               expression=expression_key(item, getattr(item, self.args.text_field)) if shown else None)

    def _seen(self, item) -> tuple[str, str | None]:
        """(text, second text) as the model sees them: the view rendered, the PME marked."""
        args = self.args
        pair = getattr(item, args.pair_field) if args.pair_field else None
        text = getattr(item, args.text_field)
        return (render(item, text, args.view, args.mask) if args.marker == "pme" else text), pair

    def _input_key(self, item) -> str:
        """``ClassifyRequest.key`` of the item's request, without building the request unless it was built
        (a model that reads no requests, ``majority``, has none)."""
        found = self._rendered.get(id(item))
        if found is not None and found[0] is item:
            return found[1].key
        text, pair = self._seen(item)
        return text if pair is None else f"{text}\t{pair}"

    def metric_context(self, items: list) -> LazyContext:
        """``inputs``: what the model saw of each item (the collision ceiling groups identical inputs), built
        only for a task that asks for the collision ceiling (rendering every item showed in `--tasks all`)."""
        return LazyContext(inputs=lambda: [self._input_key(item) for item in items])

    def score(self, item, gold, prediction) -> dict[str, float]:
        return {"correct": float(gold == prediction)}
