"""The kind interface: items → requests → predictions → per-item scores → aggregate metrics.

A kind is the Python behind a family of tasks. It knows how to read gold answers off its items, what
request to send a model, how to score one answer and which context its metrics need. It never sees a
model: the runner carries requests to the adapter and answers back.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ..config.schema import TaskConfig


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Kind:
    """Base class. Subclasses set ``name``, ``Args`` (their ``kind_args`` schema) and the four methods."""

    name: ClassVar[str] = ""
    Args: ClassVar[type[BaseModel]] = NoArgs

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

    def request(self, item):
        raise NotImplementedError

    def score(self, item, gold, prediction) -> dict[str, float]:
        """Per-item scores: the input of paired significance tests."""
        raise NotImplementedError

    def fit_context(self, train_items: list) -> None:
        """See the training split (e.g. the training metaphor vocabulary for in/out-of-vocabulary F1)."""

    def metric_context(self, items: list) -> dict[str, Any]:
        """Extra keyword arguments metrics may take (passed only to metrics that accept them)."""
        return {}

    def aggregate(self, items: list, golds: list, preds: list) -> dict[str, float]:
        context = self.metric_context(items)
        out: dict[str, float] = {}
        for spec in self.config.metric_specs():
            fn = self.metric_fns[spec.name]
            accepted = inspect.signature(fn).parameters
            extra = {k: v for k, v in context.items() if k in accepted and k not in spec.args}
            value = fn(golds, preds, **spec.args, **extra)
            if isinstance(value, dict):
                out.update({f"{spec.name}/{k}" if not k.startswith(spec.name) else k: v for k, v in value.items()})
            else:
                out[spec.name] = float(value)
        return out
