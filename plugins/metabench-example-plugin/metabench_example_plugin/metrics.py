"""A plugin metric that paired tests can use: balanced accuracy, declared with its per-item decomposition.

Balanced accuracy (the mean over labels of each label's recall) is not a mean of per-item values, so a
bootstrap must recompute it from the items it draws. ``per_item`` tells metabench how: each item contributes
(is gold label L, is gold label L and predicted L) for every label L, and ``combine`` rebuilds the metric
from the contributions of any set of items. The runner stores the contributions in samples.jsonl and
``metabench compare`` / ``gate`` resample them (see metabench.metrics.decomposition).
"""

from __future__ import annotations

import numpy as np

from metabench.plugin_api import per_item


def _contribution(gold, prediction, labels):
    return [value for label in labels for value in (float(gold == label), float(gold == label == prediction))]


def _combine(rows, labels):
    totals = np.asarray(rows, dtype=float).reshape(len(rows), len(labels), 2).sum(axis=0)
    recalls = [hit / seen for seen, hit in totals if seen > 0]
    return float(sum(recalls) / len(recalls)) if recalls else 0.0


@per_item(_contribution, _combine)
def balanced_accuracy(golds, preds, labels):
    """Mean recall over ``labels`` (labels with no gold item left out)."""
    return _combine([_contribution(g, p, labels) for g, p in zip(golds, preds)], labels)
