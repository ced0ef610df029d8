"""Metrics that say how they decompose over items, so that paired tests can resample items for them.

A corpus metric such as F1 or balanced accuracy is not a mean of per-item values: a bootstrap has to draw
items and recompute the metric from what the drawn items contribute. Built-in span/token F1 and accuracy are
rebuilt that way by ``metabench.runs.decompose``; any other metric declares its decomposition with
:func:`per_item`:

- ``contribution(gold, prediction, **args) -> sequence of numbers``: what one item contributes, a vector of
  the same length for every item (e.g. ``(tp, fp, fn)``). ``args`` are the metric's arguments in the task YAML.
- ``combine(rows, **args) -> float``: the metric from the contributions of any set of items, given as a 2-D
  numpy array with one row per item (rows may repeat: a bootstrap draws with replacement).

``combine(rows of all items)`` must equal the metric itself. The runner stores every item's contribution in
samples.jsonl (``scores`` keys ``<metric>#0``, ``<metric>#1``, ...); ``metabench compare`` and ``metabench gate``
read them back, check that they reproduce results.json, and run a paired bootstrap (or, with ``--test
randomisation``, an approximate randomisation test) over items::

    from metabench.metrics.decomposition import per_item

    def _counts(gold, prediction, positive):
        return (gold == prediction == positive, prediction == positive != gold, gold == positive != prediction)

    def _f1(rows, positive):
        tp, fp, fn = rows.sum(axis=0)
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0

    @per_item(_counts, _f1)
    def my_f1(golds, preds, positive):
        return _f1(numpy.array([_counts(g, p, positive) for g, p in zip(golds, preds)]), positive)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

#: Separates a metric's key from the index of a contribution component in samples.jsonl scores.
SEPARATOR = "#"


@dataclass(frozen=True)
class Decomposition:
    """How a metric decomposes: one item's ``contribution`` and the ``combine`` that rebuilds the metric."""

    contribution: Callable[..., Sequence[float]]
    combine: Callable[..., float]

    def item_scores(self, key: str, gold, prediction, args: dict) -> dict[str, float]:
        """One item's contribution as samples.jsonl score entries ``<key>#<j>``."""
        values = self.contribution(gold, prediction, **_accepted(self.contribution, args))
        return {f"{key}{SEPARATOR}{j}": float(v) for j, v in enumerate(values)}

    def value(self, rows, args: dict) -> float:
        """The metric from contribution rows (items × components)."""
        return float(self.combine(rows, **_accepted(self.combine, args)))


def per_item(contribution: Callable[..., Sequence[float]], combine: Callable[..., float]):
    """Decorator declaring a metric function's per-item decomposition (see the module docstring)."""

    def mark(fn):
        fn.decomposition = Decomposition(contribution, combine)
        return fn

    return mark


def decomposition_of(fn: Any) -> Decomposition | None:
    """The decomposition a metric function declares, or None."""
    found = getattr(fn, "decomposition", None)
    return found if isinstance(found, Decomposition) else None


def contribution_keys(scores: dict, key: str) -> list[str]:
    """The score keys holding ``key``'s contribution in one sample, in component order ([] if none)."""
    out, j = [], 0
    while f"{key}{SEPARATOR}{j}" in scores:
        out.append(f"{key}{SEPARATOR}{j}")
        j += 1
    return out


def _accepted(fn: Callable, args: dict) -> dict:
    """The arguments ``fn`` takes (all of them if it takes ``**kwargs``)."""
    names = _parameter_names(fn)
    if names is None:
        return dict(args)
    return {k: v for k, v in args.items() if k in names}


@lru_cache(maxsize=256)
def _parameter_names(fn: Callable) -> frozenset[str] | None:
    """``fn``'s keyword names, or None when it takes ``**kwargs``; memoised, since ``item_scores`` asks once per
    item and ``inspect.signature`` costs more than the contribution itself."""
    parameters = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return frozenset(parameters)
