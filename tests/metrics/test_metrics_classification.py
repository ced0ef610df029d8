"""Classification metrics against sklearn (the reference) and on hand-checked edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from lazy import lazy

from metabench.errors import MetabenchError
from metabench.metrics.classification import accuracy, f1, macro_f1, per_class, precision, recall

skm = lazy("sklearn.metrics")

TOL = 1e-12
NLI = ["entailment", "neutral", "contradiction"]


def _random_pair(seed: int, labels: list, n: int, extra_pred: list = ()):
    rng = np.random.default_rng(seed)
    golds = list(rng.choice(labels, size=n))
    preds = list(rng.choice(list(labels) + list(extra_pred), size=n))
    return golds, preds


CASES = [
    (seed, labels, n, extra)
    for seed in range(6)
    for labels, extra in ((["0", "1"], []), (NLI, []), (NLI, ["other"]), ([0, 1], []))
    for n in (1, 7, 50)
]


@pytest.mark.parametrize("seed,labels,n,extra", CASES)
def test_matches_sklearn(seed, labels, n, extra):
    golds, preds = _random_pair(seed, labels, n, extra)
    assert abs(accuracy(golds, preds) - skm.accuracy_score(golds, preds)) < TOL

    union = sorted(set(golds) | set(preds))
    for positive in list(labels) + list(extra):
        p, r, f, _ = skm.precision_recall_fscore_support(
            golds, preds, labels=[positive], average=None, zero_division=0
        )
        assert abs(precision(golds, preds, positive=positive) - p[0]) < TOL
        assert abs(recall(golds, preds, positive=positive) - r[0]) < TOL
        assert abs(f1(golds, preds, positive=positive) - f[0]) < TOL

    assert abs(macro_f1(golds, preds) - skm.f1_score(golds, preds, average="macro", zero_division=0)) < TOL
    declared = list(labels)
    ref = skm.f1_score(golds, preds, average="macro", labels=declared, zero_division=0)
    assert abs(macro_f1(golds, preds, labels=declared) - ref) < TOL

    table = per_class(golds, preds)
    p, r, f, s = skm.precision_recall_fscore_support(golds, preds, labels=union, average=None, zero_division=0)
    for i, label in enumerate(union):
        assert abs(table[f"per_class/{label}/precision"] - p[i]) < TOL
        assert abs(table[f"per_class/{label}/recall"] - r[i]) < TOL
        assert abs(table[f"per_class/{label}/f1"] - f[i]) < TOL
        assert table[f"per_class/{label}/support"] == s[i]
    assert len(table) == 4 * len(union)


def test_hand_worked_three_class():
    golds = ["entailment", "entailment", "neutral", "contradiction", "neutral"]
    preds = ["entailment", "neutral", "neutral", "neutral", "contradiction"]
    # accuracy: items 0 and 2 right -> 2/5.
    assert accuracy(golds, preds) == pytest.approx(0.4)
    # entailment: tp 1, fp 0, fn 1 -> P 1, R 1/2, F1 2/3.
    assert precision(golds, preds, positive="entailment") == 1.0
    assert recall(golds, preds, positive="entailment") == 0.5
    # neutral: tp 1, fp 2, fn 1 -> P 1/3, R 1/2, F1 2/5; contradiction: tp 0 -> F1 0.
    assert f1(golds, preds, positive="neutral") == pytest.approx(0.4)
    # macro: (2/3 + 2/5 + 0) / 3 = 16/45.
    assert macro_f1(golds, preds) == pytest.approx(16 / 45)


def test_empty_input_is_a_clear_value_error():
    for fn in (accuracy, macro_f1, per_class):
        with pytest.raises(ValueError, match="no items to score"):
            fn([], [])
    with pytest.raises(ValueError, match="no items"):
        f1([], [], positive="a")
    # also a MetabenchError, so the CLI prints it without a traceback
    with pytest.raises(MetabenchError):
        accuracy([], [])


def test_misaligned_and_string_inputs():
    with pytest.raises(ValueError, match="2 golds but 1 predictions"):
        accuracy(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="single string"):
        accuracy("ab", "ab")
    with pytest.raises(ValueError, match="labels is empty"):
        macro_f1(["a"], ["a"], labels=[])
    with pytest.raises(TypeError):
        f1(["a"], ["a"])  # positive= is required


def test_all_one_class():
    golds = preds = ["neutral"] * 4
    assert accuracy(golds, preds) == 1.0
    assert macro_f1(golds, preds) == 1.0  # the label set is just {neutral}
    # over a declared label set the two absent classes score 0 (0/0 -> 0), as sklearn does
    assert macro_f1(golds, preds, labels=NLI) == pytest.approx(1 / 3)
    assert f1(golds, preds, positive="entailment") == 0.0
    assert f1(["a", "a"], ["b", "b"], positive="a") == 0.0  # recall 0, precision 0/0 -> 0


def test_predicted_labels_never_in_gold():
    golds = ["a", "a", "b", "b"]
    preds = ["a", "junk", "b", "junk"]
    table = per_class(golds, preds)
    assert table["per_class/junk/support"] == 0.0
    assert table["per_class/junk/f1"] == 0.0
    # the hallucinated class is part of the default label set: (2/3 + 2/3 + 0) / 3
    assert macro_f1(golds, preds) == pytest.approx(4 / 9)
    # but not of a declared one
    assert macro_f1(golds, preds, labels=["a", "b"]) == pytest.approx(2 / 3)
    assert precision(golds, preds, positive="junk") == 0.0


def test_mixed_type_labels_are_keyed_stably():
    table = per_class([0, "x", 0], [0, "x", "x"])
    stats = ("precision", "recall", "f1", "support")
    assert set(table) == {f"per_class/{label}/{s}" for label in ("0", "x") for s in stats}


def test_an_unhashable_prediction_is_scored_as_wrong_not_a_crash():
    # pairs are counted in a Counter; a list from a faulty adapter falls back to counting item by item
    golds, preds = ["a", "b", "a", "b"], ["a", ["b"], "b", "b"]
    assert accuracy(golds, preds) == 0.5
    assert f1(golds, preds, positive="b") == 2 * (1 / 2 * 1 / 2) / (1 / 2 + 1 / 2)  # TP 1, FP 1, FN 1
    assert per_class(golds, preds, labels=["a", "b"])["per_class/a/support"] == 2.0
