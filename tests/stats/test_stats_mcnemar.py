"""McNemar's test against statsmodels, on random and edge inputs, and the NewsMet reproduction."""

import numpy as np
import pytest
import scipy.stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from metabench.stats import mcnemar, mcnemar_from_counts

TOL = 1e-9
STATSMODELS_ARGS = {"exact": {"exact": True}, "chi2": {"exact": False, "correction": False},
                    "chi2_cc": {"exact": False, "correction": True}}


def _table(a, b):
    a, b = np.asarray(a, bool), np.asarray(b, bool)
    return [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]


def _correctness(b, c, both_right, both_wrong):
    """Per-item correctness vectors with exactly the given cell counts, in shuffled order."""
    a = [True] * b + [False] * c + [True] * both_right + [False] * both_wrong
    bb = [False] * b + [True] * c + [True] * both_right + [False] * both_wrong
    order = np.random.default_rng(0).permutation(len(a))
    return np.array(a)[order], np.array(bb)[order]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("method", ["exact", "chi2", "chi2_cc"])
def test_matches_statsmodels_on_random_inputs(seed, method):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 400))
    a = rng.random(n) < rng.uniform(0.3, 0.9)
    b = rng.random(n) < rng.uniform(0.3, 0.9)
    result = mcnemar(a, b, method=method)
    reference = sm_mcnemar(_table(a, b), **STATSMODELS_ARGS[method])
    assert result.b + result.c > 0
    assert result.statistic == pytest.approx(reference.statistic, abs=TOL)
    assert result.pvalue == pytest.approx(reference.pvalue, abs=TOL)
    assert (result.b, result.c, result.n, result.method) == (int(np.sum(a & ~b)), int(np.sum(~a & b)), n, method)


@pytest.mark.parametrize("b,c", [(0, 1), (1, 0), (3, 3), (10, 2), (0, 25), (40, 60), (500, 470)])
def test_exact_matches_scipy_binomtest(b, c):
    result = mcnemar_from_counts(b, c)
    assert result.statistic == min(b, c)
    assert result.pvalue == pytest.approx(scipy.stats.binomtest(b, b + c, 0.5).pvalue, abs=TOL)


@pytest.mark.parametrize("method", ["exact", "chi2", "chi2_cc"])
def test_from_counts_equals_from_vectors(method):
    a, b = _correctness(b=7, c=15, both_right=30, both_wrong=8)
    from_vectors = mcnemar(a, b, method=method)
    from_counts = mcnemar_from_counts(7, 15, method=method, n=60)
    assert from_vectors == from_counts


def test_b_is_baseline_right_candidate_wrong():
    result = mcnemar([True, True, False], [False, True, True])
    assert (result.b, result.c) == (1, 1)
    result = mcnemar([True, True, True, False], [False, False, True, True])
    assert (result.b, result.c) == (2, 1)


@pytest.mark.parametrize("method", ["exact", "chi2", "chi2_cc"])
@pytest.mark.parametrize("runs", [
    ([True, False, True, True], [True, False, True, True]),  # identical runs
    ([True] * 5, [True] * 5),  # all correct
    ([False] * 5, [False] * 5),  # all wrong
    ([True], [True]),  # n = 1
])
def test_no_discordant_pairs_gives_p_one(method, runs):
    result = mcnemar(*runs, method=method)
    assert (result.b, result.c, result.statistic, result.pvalue) == (0, 0, 0.0, 1.0)


def test_single_discordant_item():
    assert mcnemar([True], [False]).pvalue == 1.0
    assert mcnemar([True], [False], method="chi2").statistic == 1.0


def test_accepts_zero_one_integers():
    assert mcnemar([1, 0, 1, 1], [0, 0, 1, 0]) == mcnemar([True, False, True, True], [False, False, True, False])


def test_newsmet_example():
    """NewsMet reports McNemar statistic 57, p < 0.01, comparing two models on its 546 test headlines.

    The exact statistic is min(b, c) = 57; with c = 96 (and 393 concordant items) the exact p is 0.002.
    """
    a, b = _correctness(b=57, c=96, both_right=300, both_wrong=93)
    assert len(a) == 546
    result = mcnemar(a, b, method="exact")
    assert result.statistic == 57
    assert result.pvalue < 0.01
    assert result.pvalue == pytest.approx(0.0020248987802002, abs=1e-12)
    assert result.n == 546
    reference = sm_mcnemar(_table(a, b), exact=True)
    assert (result.statistic, result.pvalue) == pytest.approx((reference.statistic, reference.pvalue), abs=TOL)


def test_length_mismatch_names_both_lengths():
    with pytest.raises(ValueError, match=r"lengths 3 and 2"):
        mcnemar([True, False, True], [True, False])


def test_empty_input_is_rejected():
    with pytest.raises(ValueError, match="empty"):
        mcnemar([], [])


@pytest.mark.parametrize(
    "bad,shown", [([0.9, 1.0], "0.9"), ([1, 2], "2"), (["yes", "no"], "'yes'"), ([None, True], "None")]
)
def test_non_boolean_correctness_is_rejected(bad, shown):
    with pytest.raises(ValueError, match=f"correct_a must contain only booleans.*found {shown}"):
        mcnemar(bad, [True, False])


def test_invalid_method_and_counts():
    with pytest.raises(ValueError, match="unknown McNemar method 'midp'"):
        mcnemar([True], [False], method="midp")
    with pytest.raises(ValueError, match="b must be a non-negative integer"):
        mcnemar_from_counts(-1, 3)
    with pytest.raises(ValueError, match="c must be a non-negative integer"):
        mcnemar_from_counts(1, 2.5)
    with pytest.raises(ValueError, match="cannot hold"):
        mcnemar_from_counts(5, 6, n=10)
