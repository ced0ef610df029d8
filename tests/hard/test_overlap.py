"""phi = s/k on constructed vectors: the paper's worked examples (Fig 3: 1/19 and 18/19), ties, dropped senses."""

from __future__ import annotations

import numpy as np
import pytest

from metabench_hard.overlap import nearest, overlap_ratios, query_overlap, same_sense_in_top_k


def at(*degrees: float) -> np.ndarray:
    """Unit vectors in the plane at the given angles: cosine similarity falls with the angle between them."""
    radians = np.radians(degrees)
    return np.stack([np.cos(radians), np.sin(radians)], axis=1)


def fig3_word():
    """'act' with 20 instances of sense A (S2 at 0 degrees, S1 misplaced at 60) and 31 of sense B.

    S2's 19 nearest: the 18 A instances at 1..18 degrees and the B intruder at -5: phi = 18/19.
    S1's 19 nearest: the 18 B instances at 61..78 and then the A instance at 18 degrees: phi = 1/19.
    """
    a = [0.0, *range(1, 19), 60.0]  # index 0 = S2, index 19 = S1
    b = [-5.0, *range(61, 79), *range(170, 182)]
    return at(*a, *b), ["A"] * len(a) + ["B"] * len(b)


def test_paper_worked_examples_1_19_and_18_19():
    vectors, senses = fig3_word()
    phi = overlap_ratios(vectors, senses).phi
    assert phi[0] == pytest.approx(18 / 19)
    assert phi[19] == pytest.approx(1 / 19)
    assert np.all((phi >= 0) & (phi <= 1))


def test_literal_k_rule_can_never_reach_one():
    vectors, senses = fig3_word()
    # k = n_g = 20 with self excluded: S2's 20 nearest add S1 (sense A) at 60 degrees: 19/20
    assert overlap_ratios(vectors, senses, k_rule="n").phi[0] == pytest.approx(19 / 20)
    clean = at(0, 1, 2, 3, 90, 91, 92, 93)
    phi = overlap_ratios(clean, ["A"] * 4 + ["B"] * 4, k_rule="n").phi
    assert phi.max() == pytest.approx(3 / 4)
    assert overlap_ratios(clean, ["A"] * 4 + ["B"] * 4).phi.min() == pytest.approx(1.0)


def test_ties_at_the_boundary_count_by_expectation_and_ignore_order():
    # a0 = a1 at 0 degrees; a2 and b0..b3 all at 10; a3 at 90. For a0 (k = 3): a1 above the boundary, then
    # 2 slots among 5 tied candidates of which 1 is A: s = 1 + 2 * 1/5.
    vectors = at(0, 0, 10, 90, 10, 10, 10, 10)
    senses = ["A"] * 4 + ["B"] * 4
    phi = overlap_ratios(vectors, senses).phi
    assert phi[0] == pytest.approx((1 + 2 / 5) / 3)
    order = np.random.default_rng(0).permutation(len(senses))
    shuffled = overlap_ratios(vectors[order], [senses[i] for i in order]).phi
    np.testing.assert_allclose(shuffled, phi[order])


def test_same_sense_in_top_k_without_ties_is_a_plain_count():
    sims = np.array([0.9, 0.8, 0.7, 0.6])
    same = np.array([True, False, True, True])
    assert same_sense_in_top_k(sims, same, 2) == 1
    assert same_sense_in_top_k(sims, same, 3) == 2


def test_senses_below_the_pool_gate_are_dropped_from_the_pool():
    # C (3 instances) sits inside A's cluster: kept, it would take A's neighbour slots.
    vectors = at(0, 2, 4, 6, 1, 3, 5, 90, 92, 94, 96)
    senses = ["A"] * 4 + ["C"] * 3 + ["B"] * 4
    result = overlap_ratios(vectors, senses, pool_min_instances=4)
    assert np.isnan(result.phi[4:7]).all() and not result.kept[4:7].any()
    assert result.senses == {"A": 4, "B": 4}
    np.testing.assert_allclose(result.phi[:4], 1.0)
    assert_equal_nan(overlap_ratios(vectors, senses, min_instances=4).phi, result.phi)  # legacy: both gates 4
    lowered = overlap_ratios(vectors, senses, pool_min_instances=3).phi
    assert lowered[:4].max() < 1.0  # with C in the pool, A's neighbours are mostly C


def test_the_two_gates_act_separately():
    """Default (pool 2, rate 4): C (3 instances) is a neighbour but gets no phi; the rate gate alone decides who is
    rated, the pool gate alone who is a neighbour."""
    vectors = at(0, 2, 4, 6, 1, 3, 5, 90, 92, 94, 96)
    senses = ["A"] * 4 + ["C"] * 3 + ["B"] * 4
    default = overlap_ratios(vectors, senses)
    assert default.kept.all() and default.senses == {"A": 4, "C": 3, "B": 4}
    assert np.isnan(default.phi[4:7]).all() and not default.rated[4:7].any() and default.rated[:4].all()
    assert default.phi[:4].max() < 1.0  # C in the pool takes A's neighbour slots although C is not rated
    rate3 = overlap_ratios(vectors, senses, rate_min_instances=3)  # same pool, C now rated
    assert not np.isnan(rate3.phi[4:7]).any()
    np.testing.assert_allclose(rate3.phi[[*range(4), *range(7, 11)]], default.phi[[*range(4), *range(7, 11)]])
    with pytest.raises(ValueError, match="rate_min_instances=2 < pool_min_instances=3"):
        overlap_ratios(vectors, senses, pool_min_instances=3, rate_min_instances=2)


def test_a_query_is_rated_under_the_rate_gate_among_the_pool_gates_neighbours():
    vectors = at(0, 2, 4, 6, 1, 3, 5, 90, 92, 94, 96)
    senses = ["A"] * 4 + ["C"] * 3 + ["B"] * 4
    queries, query_senses = at(3, 4), ["C", "A"]
    phi = query_overlap(queries, query_senses, vectors, senses)  # C: 3 pool instances < 4, not rated
    assert np.isnan(phi[0]) and phi[1] < 1.0  # ... but C's instances are A's query's neighbours
    assert not np.isnan(query_overlap(queries, query_senses, vectors, senses, rate_min_instances=3)[0])
    assert query_overlap(queries, query_senses, vectors, senses, pool_min_instances=4)[1] == pytest.approx(1.0)


def assert_equal_nan(a, b):
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)])


def test_query_phi_matches_the_instance_computed_inside_the_pool():
    vectors, senses = fig3_word()
    inside = overlap_ratios(vectors, senses).phi
    for i in (0, 19, 25):
        rest = [j for j in range(len(senses)) if j != i]
        outside = query_overlap(vectors[[i]], [senses[i]], vectors[rest], [senses[j] for j in rest])
        assert outside[0] == pytest.approx(inside[i])


def test_query_of_a_rare_or_unknown_sense_is_nan():
    vectors, senses = fig3_word()
    phi = query_overlap(at(0, 0), ["Z", "A"], vectors, senses)
    assert np.isnan(phi[0]) and not np.isnan(phi[1])


def test_bad_arguments_are_explained():
    with pytest.raises(ValueError, match="k_rule"):
        overlap_ratios(at(0, 1), ["A", "A"], k_rule="k")
    with pytest.raises(ValueError, match="zero vector"):
        overlap_ratios(np.zeros((4, 2)), ["A"] * 4)
    with pytest.raises(ValueError, match="3 vectors but 2 senses"):
        overlap_ratios(at(0, 1, 2), ["A", "A"])


def test_nearest_is_by_cosine_not_length():
    assert nearest(np.array([1.0, 0.0]), np.array([[0.0, 5.0], [0.1, 0.0], [1.0, 1.0]])) == 1
