"""Ranking metrics for generation, on hand-worked cases."""

from __future__ import annotations

import pytest

from metabench.metrics.ranking import (
    accuracy_at_1,
    answer_recall_at_k,
    hit_at_k,
    mrr,
    rank,
    recall_at_k,
    reciprocal_rank,
)

GOLDS = [{"soaked", "washed"}, {"Team"}, ["hierarchy", "ladder"], "gone"]
PREDS = [["covered", "washed", "soaked"], ["TEAM", "group"], ["steps", "Hierarchy ", "ladder"], ["went"]]


def test_mrr_recall_accuracy_default_lowercase():
    # ranks (lower): washed 2, TEAM 1, "Hierarchy " 2, none -> RR .5, 1, .5, 0 -> MRR 2/4
    assert [rank(g, p) for g, p in zip(GOLDS, PREDS)] == [2, 1, 2, None]
    assert mrr(GOLDS, PREDS) == pytest.approx(0.5)
    # any-hit: @1 only item 2 -> 1/4; @2 items 1-3 -> 3/4
    assert accuracy_at_1(GOLDS, PREDS) == pytest.approx(0.25)
    assert recall_at_k(GOLDS, PREDS, k=1) == pytest.approx(0.25)
    assert recall_at_k(GOLDS, PREDS, k=2) == pytest.approx(0.75)
    assert recall_at_k(GOLDS, PREDS, k=10) == pytest.approx(0.75)
    # fraction of answers: @2 -> 1/2, 1/1, 1/2, 0 -> 2/4; @3 -> 1, 1, 1, 0 -> 3/4
    assert recall_at_k(GOLDS, PREDS, k=2, mode="fraction") == pytest.approx(0.5)
    assert recall_at_k(GOLDS, PREDS, k=3, mode="fraction") == pytest.approx(0.75)


def test_exact_matching():
    # exact: "TEAM" != "Team" and "group" no -> 0; "Hierarchy " no, "ladder" at 3 -> 1/3
    # MRR = (1/2 + 0 + 1/3 + 0) / 4 = 5/24
    assert mrr(GOLDS, PREDS, normalise="exact") == pytest.approx(5 / 24)
    assert accuracy_at_1(GOLDS, PREDS, normalise="exact") == 0.0


def test_fraction_can_fall_below_mrr_but_any_hit_cannot_by_much():
    # one item, 3 answers, the model's first guess is one of them: RR 1, hit@5 1, fraction@5 1/3
    golds, preds = [{"a", "b", "c"}], [["a", "x"]]
    assert mrr(golds, preds) == 1.0
    assert recall_at_k(golds, preds, k=5) == 1.0
    assert recall_at_k(golds, preds, k=5, mode="fraction") == pytest.approx(1 / 3)


def test_duplicates_after_normalisation_count_once():
    assert rank(["group"], ["Team", "team", "group"]) == 2
    assert rank(["group"], ["Team", "team", "group"], normalise="exact") == 3
    # fraction counts distinct answers: "team"/"TEAM" are one answer under lower
    assert answer_recall_at_k(["team", "TEAM", "crew"], ["Team"], k=1) == pytest.approx(0.5)


def test_hyphen_and_punctuation_modes():
    assert reciprocal_rank({"well-known"}, ["well known"]) == 0.0
    assert reciprocal_rank({"well-known"}, ["well known"], normalise="lower_hyphen") == 1.0
    assert reciprocal_rank({"well_known"}, ["Well-Known"], normalise="lower_hyphen") == 1.0
    # a closing quote or asterisk left on by an adapter does not matter; inner apostrophes do
    assert reciprocal_rank({"bathed"}, ['bathed"', "x"]) == 1.0
    assert reciprocal_rank({"bathed"}, ["*Bathed*"]) == 1.0
    assert reciprocal_rank({"don't"}, ["dont"]) == 0.0
    # NFKC: a full-width or ligature form matches the plain one
    assert reciprocal_rank({"flow"}, ["ﬂow"]) == 1.0
    # a callable normaliser
    assert reciprocal_rank({"colour"}, ["color"], normalise=lambda s: s.replace("ou", "o")) == 1.0


def test_bare_strings_and_empty_candidates():
    assert mrr(["gone"], ["gone"]) == 1.0  # a single prediction string is a one-element list
    assert mrr(["gone"], [[]]) == 0.0  # no candidates: RR 0
    assert reciprocal_rank({"gone"}, ["", "gone"]) == 0.5  # an empty guess still used up rank 1
    assert hit_at_k({"gone"}, ["", "gone"], k=1) == 0.0


def test_errors():
    with pytest.raises(ValueError, match="no items"):
        mrr([], [])
    with pytest.raises(ValueError, match="empty after normalisation"):
        mrr([{" "}], [["x"]])
    with pytest.raises(ValueError, match="empty after normalisation"):
        mrr([set()], [["x"]])
    with pytest.raises(ValueError, match="k must be a positive integer"):
        recall_at_k(GOLDS, PREDS, k=0)
    with pytest.raises(ValueError, match="unknown mode"):
        recall_at_k(GOLDS, PREDS, k=1, mode="all")
    with pytest.raises(ValueError, match="unknown normalise"):
        mrr(GOLDS, PREDS, normalise="stem")
    with pytest.raises(ValueError, match="answers must be strings"):
        mrr([{1}], [["1"]])
    with pytest.raises(ValueError, match="4 golds but 3 predictions"):
        mrr(GOLDS, PREDS[:3])
    with pytest.raises(TypeError):
        recall_at_k(GOLDS, PREDS)  # k= is required
