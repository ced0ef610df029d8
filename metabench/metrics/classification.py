"""Classification metrics: accuracy, positive-class precision/recall/F1, macro F1 and a per-class table.

Golds and predictions are aligned sequences of hashable labels (strings such as ``"entailment"``, ints,
bools...). Labels are compared with ``==`` and never converted, so ``1`` and ``"1"`` are different labels:
kinds are expected to hand over gold and predicted labels in the same vocabulary.

Conventions (the same as ``sklearn.metrics`` with ``zero_division=0``, which the tests check):

- Any 0/0 is 0.0: precision with no predicted positives, recall with no gold positives, F1 when
  P + R = 0. A class that never occurs in gold or predictions therefore scores 0 and, when it is part
  of the label set, pulls the macro average down. That is deliberate: a macro F1 over a *declared*
  label set must not rise because a model never predicts a hard class.
- Empty input is an error (``MetricInputError``, a ``ValueError``), not 0.0.

Per-item counterparts are not needed here: the classification kind records ``correct`` per item, which is
what McNemar and the bootstrap resample.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

from .common import MetricInputError, check_pair, prf


def accuracy(golds: Sequence[Hashable], preds: Sequence[Hashable]) -> float:
    """Fraction of items whose prediction equals the gold label."""
    golds, preds = check_pair(golds, preds, "accuracy")
    return sum(map(operator.eq, golds, preds)) / len(golds)


def _pairs(golds: list, preds: list) -> list[tuple[tuple, int]]:
    """((gold, pred), count) of each distinct pair, counted in C: every label's counts then take a pass over
    a handful of pairs instead of over all items. An unhashable prediction leaves the pairs uncounted."""
    try:
        return list(Counter(zip(golds, preds)).items())
    except TypeError:
        return [(pair, 1) for pair in zip(golds, preds)]


def _counts(pairs: list[tuple[tuple, int]], label: Hashable) -> tuple[int, int, int, int]:
    """(tp, fp, fn, support) of one label treated as the positive class (one-vs-rest)."""
    tp = fp = fn = 0
    for (g, p), n in pairs:
        if p == label:
            if g == label:
                tp += n
            else:
                fp += n
        elif g == label:
            fn += n
    return tp, fp, fn, tp + fn


def _positive_prf(golds, preds, positive, metric: str) -> dict[str, float]:
    golds, preds = check_pair(golds, preds, metric)
    tp, fp, fn, _ = _counts(_pairs(golds, preds), positive)
    return prf(tp, fp, fn)


def precision(golds: Sequence[Hashable], preds: Sequence[Hashable], *, positive: Hashable) -> float:
    """Precision of the ``positive`` class: TP / (TP + FP); 0.0 when nothing is predicted positive.

    ``positive`` is required because no default is right for every task (``"metaphor"``, ``1``,
    ``"entailment"``...), and a wrong guess would silently score the other class.
    """
    return _positive_prf(golds, preds, positive, "precision")["precision"]


def recall(golds: Sequence[Hashable], preds: Sequence[Hashable], *, positive: Hashable) -> float:
    """Recall of the ``positive`` class: TP / (TP + FN); 0.0 when no gold item is positive."""
    return _positive_prf(golds, preds, positive, "recall")["recall"]


def f1(golds: Sequence[Hashable], preds: Sequence[Hashable], *, positive: Hashable) -> float:
    """F1 of the ``positive`` class, 2PR / (P + R); 0.0 when P + R = 0."""
    return _positive_prf(golds, preds, positive, "f1")["f1"]


def _sorted_labels(labels: Iterable[Hashable]) -> list[Hashable]:
    """Labels in a stable order (sorted when comparable, by repr otherwise), for reproducible key order."""
    labels = list(dict.fromkeys(labels))
    try:
        return sorted(labels)
    except TypeError:  # mixed types such as 0 and "O"
        return sorted(labels, key=repr)


def _label_set(golds: list, preds: list, labels: Sequence[Hashable] | None, metric: str) -> list[Hashable]:
    """The label set: ``labels`` when given (order kept, duplicates dropped), else golds ∪ preds.

    The default includes labels that occur only in predictions (a hallucinated class counts as a class
    with F1 0), as sklearn does. Passing ``labels`` fixes the set, e.g. to the task's declared labels, so
    that the average is comparable across subsets where some class happens to be absent.
    """
    if labels is None:
        return _sorted_labels([*golds, *preds])
    if isinstance(labels, (str, bytes)):
        raise MetricInputError(f"{metric}: labels must be a list of labels, got the string {labels!r}")
    chosen = list(dict.fromkeys(labels))
    if not chosen:
        raise MetricInputError(f"{metric}: labels is empty; pass at least one label or leave it unset")
    return chosen


def macro_f1(
    golds: Sequence[Hashable], preds: Sequence[Hashable], *, labels: Sequence[Hashable] | None = None
) -> float:
    """Unweighted mean over the label set of each label's one-vs-rest F1.

    The label set is ``labels`` if given, otherwise the union of gold and predicted labels. With
    ``labels`` given, items whose labels fall outside it still count as false positives/negatives of
    the listed labels they are confused with, but their own class is not averaged (sklearn semantics).
    """
    golds, preds = check_pair(golds, preds, "macro_f1")
    chosen = _label_set(golds, preds, labels, "macro_f1")
    pairs = _pairs(golds, preds)
    scores = [prf(*_counts(pairs, label)[:3])["f1"] for label in chosen]
    return sum(scores) / len(scores)


def per_class(
    golds: Sequence[Hashable], preds: Sequence[Hashable], *, labels: Sequence[Hashable] | None = None
) -> dict[str, float]:
    """Precision, recall, F1 and support of every label, as flat keys ``per_class/<label>/<stat>``.

    Flat keys keep results tables one level deep (``per_class/entailment/f1``). ``support`` is the number
    of gold items with that label, stored as a float like every other value; it is a count, not a score,
    so higher is not better for it. The label set is chosen as in `macro_f1`.
    """
    golds, preds = check_pair(golds, preds, "per_class")
    chosen = _label_set(golds, preds, labels, "per_class")
    pairs = _pairs(golds, preds)
    out: dict[str, float] = {}
    for label in chosen:
        tp, fp, fn, support = _counts(pairs, label)
        scores = prf(tp, fp, fn)
        for stat in ("precision", "recall", "f1"):
            out[f"per_class/{label}/{stat}"] = scores[stat]
        out[f"per_class/{label}/support"] = float(support)
    return out


__all__ = ["accuracy", "precision", "recall", "f1", "macro_f1", "per_class"]
