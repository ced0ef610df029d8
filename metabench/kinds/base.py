"""The kind interface: items → requests → predictions → per-item scores → aggregate metrics.

A kind is the Python behind a family of tasks. It knows how to read gold answers off its items, what
request to send a model, how to score one answer and which context its metrics need. It never sees a
model: the runner carries requests to the adapter and answers back.
"""

from __future__ import annotations

import inspect
import json
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ..config.schema import TaskConfig
from ..errors import MetabenchError
from ..metrics.decomposition import decomposition_of


class KindArgs(BaseModel):
    """``kind_args`` every kind takes (a kind's own ``Args`` subclass this and add their fields)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    breakdown: list[str] = Field(default_factory=list, description="item fields (or meta keys) to report metrics by")
    breakdown_metrics: list[str] | None = Field(None, description="metrics reported per group; default: the primary metric")


class Kind:
    """Base class. Subclasses set ``name``, ``Args`` (their ``kind_args`` schema) and the four methods
    ``gold``, ``request``, ``score`` and (if their metrics read something else than the raw answer)
    ``metric_input``."""

    name: ClassVar[str] = ""
    Args: ClassVar[type[BaseModel]] = KindArgs
    #: The ``protocol`` section of the task the model answering through this kind follows (``encoder``,
    #: ``decoder``...; set by `metabench.jobs.build_kind`; None for a kind built without a model in view).
    protocol: str | None = None

    def __init__(self, config: TaskConfig, metric_fns: dict[str, Any]):
        self.config = config
        self.args = self.Args.model_validate(config.kind_args)
        self.metric_fns = metric_fns

    @classmethod
    def check_config(cls, config: TaskConfig, raw) -> None:
        """Extra semantic checks a kind needs (raise ConfigError naming ``raw.where(...)``)."""

    def labels(self) -> tuple[str, ...]:
        return tuple(self.config.labels.names or ())

    def gold(self, item) -> Any:
        raise NotImplementedError

    def gold_key(self):
        """A hashable value equal for two kinds that read the same golds off the same items, or None (the
        default: golds are read per job). Lets jobs sharing a training split share its golds."""
        return None

    def golds(self, items: list) -> list:
        """``gold`` of every item. A kind whose gold is one attribute overrides it with a loop that does not call
        a method per item: the runner reads the golds of every training split (~2 million in ``--tasks all``)."""
        return [self.gold(item) for item in items]

    def request(self, item):
        raise NotImplementedError

    def request_type(self) -> type | None:
        """The request class every item of this task becomes, when the config alone decides it: the runner
        then turns away a model that cannot answer it before loading any data. None (the default, for a kind
        that does not say): the runner renders the first test item to find out."""
        return None

    def score(self, item, gold, prediction) -> dict[str, float]:
        """Per-item scores: the input of paired significance tests."""
        raise NotImplementedError

    def answer_key(self, item, prediction) -> str:
        """What two draws of one item share when they give the same answer (``--repeat`` votes on it, see
        :mod:`metabench.launch.repeats`): the answer's JSON by default; kinds whose answers are read off text
        override it with what they read."""
        return json.dumps(prediction, sort_keys=True, ensure_ascii=False)

    def metric_input(self, item, gold, prediction) -> tuple[Any, Any]:
        """(gold, prediction) as the task's metric functions read them: the answer itself by default; kinds
        that parse or map answers (an option index to its label, generated text to tags) override it."""
        return gold, prediction

    def item_scores(self, item, gold, prediction) -> dict[str, float]:
        """What samples.jsonl records for an item: ``score`` plus the contribution of every metric that
        declares a per-item decomposition (``<metric>#<j>``, see :mod:`metabench.metrics.decomposition`)."""
        scores = dict(self.score(item, gold, prediction))
        decomposed = self._decomposed()
        if decomposed:
            metric_gold, metric_pred = self.metric_input(item, gold, prediction)
            for key, spec, found in decomposed:
                scores.update(found.item_scores(key, metric_gold, metric_pred, spec.args))
        return scores

    def _decomposed(self) -> list[tuple[str, Any, Any]]:
        """(key, spec, decomposition) of the metrics that declare one; worked out once per kind, not per item."""
        if getattr(self, "_decomposed_memo", None) is None:
            self._decomposed_memo = [(key, spec, found) for key, spec in self.metric_keys()
                                     if (found := decomposition_of(self.metric_fns[spec.name])) is not None]
        return self._decomposed_memo

    def fit_context(self, train_items: list) -> None:
        """See the training split (e.g. the training metaphor vocabulary for in/out-of-vocabulary F1)."""

    def fit_fewshot(self, items: list) -> None:
        """See the task's ``splits.fewshot`` slice, called after :meth:`fit_context` only when the task names one:
        the items few-shot examples are drawn from instead of the training split (prompted kinds)."""

    def metric_context(self, items: list) -> dict[str, Any]:
        """Extra keyword arguments metrics may take (passed only to metrics that accept them)."""
        return {}

    def warn_unusable(self, items: list, preds_by_seed: dict[int, list]) -> None:
        """Warn once per job about answers the kind could not use, over all its seeds (nothing by default).

        Called after every seed is scored rather than from :meth:`aggregate`, which runs once per seed and on
        the validation split at every epoch: a warning there repeats for each of them."""

    def aggregate(self, items: list, golds: list, preds: list) -> dict[str, float]:
        """Every metric of the task (``metric_values``) and its per-group breakdowns (``breakdown``)."""
        pairs = [self.metric_input(i, g, p) for i, g, p in zip(items, golds, preds)]
        metric_golds, metric_preds = [g for g, _ in pairs], [p for _, p in pairs]
        out = self.metric_values(items, metric_golds, metric_preds)
        out.update(self.breakdown(items, metric_golds, metric_preds))
        return out

    def metric_keys(self) -> list[tuple[str, Any]]:
        """(key, spec) per metric of the task. A metric listed twice with other arguments (``recall_at_k`` with
        k=5 and k=10) is keyed by the arguments that differ: ``recall_at_k[k=5]``, ``recall_at_k[k=10]``."""
        specs = self.config.metric_specs()
        counts = Counter(spec.name for spec in specs)
        out = []
        for spec in specs:
            key = spec.name
            if counts[key] > 1:
                others = [s.args for s in specs if s.name == key]
                differing = sorted(k for k in {k for a in others for k in a} if len({repr(a.get(k)) for a in others}) > 1)
                key = f"{key}[{','.join(f'{k}={spec.args.get(k)}' for k in differing)}]"
            out.append((key, spec))
        return out

    def metric_values(self, items: list, golds: list, preds: list) -> dict[str, float]:
        """Every metric of the task on metric inputs (see ``metric_input``); a metric returning a dict gives
        one entry per key (``per_class/<label>/f1``)."""
        context = self.metric_context(items)
        out: dict[str, float] = {}
        for key, spec in self.metric_keys():
            fn = self.metric_fns[spec.name]
            accepted = inspect.signature(fn).parameters
            extra = {k: context[k] for k in context if k in accepted and k not in spec.args}
            value = fn(golds, preds, **spec.args, **extra)
            if isinstance(value, dict):
                out.update({k if k.startswith(spec.name) else f"{key}/{k}": float(v) for k, v in value.items()})
            else:
                out[key] = float(value)
        return out

    def breakdown(self, items: list, golds: list, preds: list) -> dict[str, float]:
        """Metrics per group of each ``kind_args.breakdown`` field (only ``breakdown_metrics``, default the
        primary metric), keyed ``<metric>@<field>=<value>``, with the group size ``n@<field>=<value>``."""
        fields = getattr(self.args, "breakdown", None) or []
        keep = getattr(self.args, "breakdown_metrics", None) or [self.config.primary]
        out: dict[str, float] = {}
        for field in fields:
            groups: dict[str, list[int]] = {}
            for index, item in enumerate(items):
                groups.setdefault(str(item_field(item, field)), []).append(index)
            for value, indices in sorted(groups.items()):
                part = self.metric_values([items[i] for i in indices], [golds[i] for i in indices],
                                          [preds[i] for i in indices])
                out.update({f"{name}@{field}={value}": v for name, v in part.items()
                            if any(name == m or name.startswith(m + "[") or name.startswith(m + "/") for m in keep)})
                out[f"n@{field}={value}"] = float(len(indices))
        return out


class LazyContext(Mapping):
    """A ``metric_context`` whose values are computed only if some metric of the task takes them (and then
    once): ``LazyContext(inputs=lambda: ...)``. The keys are known up front, the values are not built."""

    def __init__(self, **makers: Callable[[], Any]):
        self._makers, self._values = makers, {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            self._values[key] = self._makers[key]()
        return self._values[key]

    def __iter__(self):
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


def item_field(item, name: str):
    """An item attribute, or a key of its ``meta``."""
    if hasattr(item, name):
        return getattr(item, name)
    meta = getattr(item, "meta", None) or {}
    if name in meta:
        return meta[name]
    raise MetabenchError(f"item '{getattr(item, 'id', '?')}' has no field '{name}'",
                         hint="kind_args name item fields or keys of the item's meta")
