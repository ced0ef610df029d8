"""A corpus metric rebuilt from per-item records, which is what item-level tests resample.

Accuracy is a mean of per-item correctness, but F1 is not a mean of per-item F1s: a bootstrap must
resample items and recompute F1 from the summed counts of the resample. This module finds, for a metric
of a run, per-item records and a function of a set of records that gives back the metric:

- a mean of a per-item score: ``accuracy`` from ``correct``, or any metric whose name is also a per-item
  score key (e.g. a ranking kind's reciprocal rank). Records: the item's score averaged over seeds.
- ``span_*`` / ``token_*`` precision, recall and F1 from the per-item ``{span,token}_{tp,fp,fn}`` counts.
- classification ``precision``/``recall``/``f1`` (``positive=``) and ``macro_f1`` (``labels=`` or, like
  the metric itself, the labels seen in gold or predictions) from one-vs-rest counts of gold and prediction.

With several seeds the function returns the mean over seeds of the per-seed metric, resampling the same
items for every seed, so it reproduces results.json's ``aggregate.mean``; that is checked, so samples that
do not belong to their results.json are caught. Metrics needing context the samples do not hold
(in/out-of-vocabulary F1 needs the words) have no decomposition: seed-level tests remain for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import MetabenchError
from ..metrics._common import prf
from .align import Pair
from .runs import Run

_COUNTS = re.compile(r"^(span|token)_(precision|recall|f1)$")
_LABEL_METRICS = ("precision", "recall", "f1", "macro_f1")
_SCORE_OF = {"accuracy": "correct"}
_TOLERANCE = 1e-6


@dataclass(frozen=True)
class ItemMetric:
    """A metric as a function of per-item records (first axis: items, in the pair's order).

    ``metric`` is what `metabench.stats.paired_bootstrap` takes: ``"mean"`` or a callable. ``correct`` is
    the per-item 0/1 vector when the metric is a proportion of correct items at a single seed (McNemar's
    input), else None.
    """

    records: np.ndarray
    metric: Callable[[np.ndarray], float] | str
    value: float
    correct: np.ndarray | None


def metric_args(run: Run, metric: str) -> dict | None:
    """The arguments of ``metric`` in the run's task config, or None when the task does not list it."""
    for spec in run.results["task"]["config"]["metrics"]:
        name, args = (spec, {}) if isinstance(spec, str) else (spec["name"], spec.get("args", {}))
        if name == metric:
            return args
    return None


def item_metrics(aligned: Pair, metric: str) -> tuple[ItemMetric | None, ItemMetric | None]:
    """Per-item records of ``metric`` for both runs of a pair, or None where the samples cannot give them.

    Records of the two runs line up (one label set for both), so tests that exchange them item by item work.
    """
    labels = _labels(aligned) if metric in _LABEL_METRICS else None
    return (_checked(aligned.a, aligned.rows_a, metric, labels), _checked(aligned.b, aligned.rows_b, metric, labels))


def _labels(aligned: Pair) -> list | None:
    """Every gold and predicted answer of the pair, in first-seen order; None if answers are not single labels
    (tag sequences, rankings)."""
    answers = [r[key] for rows in (aligned.rows_a, aligned.rows_b) for item in rows for r in item
               for key in ("gold", "prediction")]
    if not all(isinstance(v, (str, int, float, bool)) or v is None for v in answers):
        return None
    return list(dict.fromkeys(answers))


def _checked(run: Run, rows, metric: str, labels: list | None) -> ItemMetric | None:
    built = _build(run, rows, metric, labels)
    if built is None:
        return None
    stored = (run.aggregate(metric) or {}).get("mean")
    if stored is not None and abs(built.value - stored) > _TOLERANCE:
        raise MetabenchError(
            f"{run.path}: {metric} recomputed from samples.jsonl is {built.value:.6f} but results.json "
            f"reports {stored:.6f}; the two files do not belong together",
            hint="copy both files of one run, or rerun it",
        )
    return built


def _build(run: Run, rows, metric: str, labels: list | None) -> ItemMetric | None:
    scores = rows[0][0]["scores"]
    score = _SCORE_OF.get(metric, metric)
    if score in scores:
        return _mean_of(rows, score)
    match = _COUNTS.match(metric)
    if match and f"{match[1]}_tp" in scores:
        positive = run.results["task"]["config"]["labels"].get("positive")
        if (metric_args(run, metric) or {}).get("positive", positive) != positive:
            return None  # the per-item counts were taken for the task's positive class, not this one
        unit, stat = match[1], match[2]
        records = np.array([[[r["scores"][f"{unit}_{c}"] for c in ("tp", "fp", "fn")] for r in item] for item in rows])
        return _from_counts(records[:, :, None, :], stat, fixed_labels=True)
    if metric in _LABEL_METRICS:
        return _label_counts(run, rows, metric, labels)
    return None


def _mean_of(rows, score: str) -> ItemMetric:
    values = np.array([[r["scores"][score] for r in item] for item in rows], dtype=float)
    correct = None
    if values.shape[1] == 1 and np.isin(values, (0.0, 1.0)).all():
        correct = values[:, 0].astype(bool)
    per_item = values.mean(axis=1)
    return ItemMetric(per_item, "mean", float(per_item.mean()), correct)


def _label_counts(run: Run, rows, metric: str, seen: list | None) -> ItemMetric | None:
    """One-vs-rest counts per label; ``seen`` (every gold and predicted answer of the pair) is the label set
    of ``macro_f1`` without ``labels=``: labels absent from a resample drop out, as in the metric itself."""
    args = metric_args(run, metric)
    if args is None or seen is None:
        return None
    if metric == "macro_f1":
        fixed = args.get("labels") is not None
        labels, stat = (list(dict.fromkeys(args["labels"])) if fixed else seen), "f1"
    elif "positive" in args:
        fixed, labels, stat = True, [args["positive"]], metric
    else:
        return None
    # records[i, j, l] = (tp, fp, fn) of label l, one-vs-rest, for item i at seed j
    records = np.array([
        [[_one_vs_rest(r["gold"], r["prediction"], label) for label in labels] for r in item] for item in rows
    ], dtype=float)
    return _from_counts(records, stat, fixed_labels=fixed)


def _one_vs_rest(gold, prediction, label) -> tuple[int, int, int]:
    return (int(prediction == label and gold == label), int(prediction == label and gold != label),
            int(prediction != label and gold == label))


def _from_counts(records: np.ndarray, stat: str, *, fixed_labels: bool) -> ItemMetric:
    """Records (items, seeds, labels, 3) of tp/fp/fn; the metric averages ``stat`` over labels, then seeds.

    Without a fixed label set a label counts only where it occurs (as gold or prediction) in the resample
    at that seed, which is how the metric itself chooses its labels.
    """

    def metric(sample: np.ndarray) -> float:
        per_seed = []
        for seed in sample.sum(axis=0):
            counts = seed if fixed_labels else seed[seed.sum(axis=1) > 0]
            per_seed.append(np.mean([prf(*c)[stat] for c in counts]))
        return float(np.mean(per_seed))

    return ItemMetric(records, metric, metric(records), None)
