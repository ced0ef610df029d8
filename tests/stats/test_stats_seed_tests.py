"""Paired t-test and Wilcoxon signed-rank test on per-seed scores, against scipy and statsmodels."""

import math

import numpy as np
import pytest
import scipy.stats
from statsmodels.stats.weightstats import DescrStatsW

from metabench.stats import paired_t, wilcoxon

TOL = 1e-9


def _seed_scores(seed, n):
    rng = np.random.default_rng(seed)
    a = rng.normal(0.70, 0.02, n)
    return a, a + rng.normal(0.01, 0.015, n)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [2, 3, 5, 10, 30])
def test_paired_t_matches_scipy_and_statsmodels(seed, n):
    a, b = _seed_scores(seed, n)
    result = paired_t(a, b)
    reference = scipy.stats.ttest_rel(b, a)
    low, high = DescrStatsW(b - a).tconfint_mean(alpha=0.05)
    assert result.mean_difference == pytest.approx(np.mean(b - a), abs=TOL)
    assert result.statistic == pytest.approx(reference.statistic, abs=TOL)
    assert result.pvalue == pytest.approx(reference.pvalue, abs=TOL)
    assert (result.ci_low, result.ci_high) == pytest.approx((low, high), abs=TOL)
    assert (result.df, result.n, result.note) == (n - 1, n, None)


def test_paired_t_confidence_level_and_sign():
    a, b = _seed_scores(1, 8)
    result = paired_t(a, b, confidence=0.9)
    assert (result.ci_low, result.ci_high) == pytest.approx(DescrStatsW(b - a).tconfint_mean(alpha=0.1), abs=TOL)
    assert paired_t(b, a).statistic == pytest.approx(-result.statistic, abs=TOL)
    assert paired_t([0.5, 0.6, 0.7], [0.6, 0.8, 0.75]).mean_difference > 0  # candidate better -> positive


def test_paired_t_single_seed_is_nan_not_an_error():
    result = paired_t([0.71], [0.74])
    assert result.mean_difference == pytest.approx(0.03)
    assert math.isnan(result.pvalue) and math.isnan(result.statistic) and math.isnan(result.ci_low)
    assert result.df == 0 and "n=1" in result.note
    assert result.as_dict()["pvalue"] is None


def test_paired_t_identical_runs_give_p_one():
    result = paired_t([0.7, 0.71, 0.69], [0.7, 0.71, 0.69])
    assert (result.statistic, result.pvalue, result.ci_low, result.ci_high) == (0.0, 1.0, 0.0, 0.0)
    assert "identical" in result.note


def test_paired_t_constant_non_zero_difference_is_the_zero_variance_limit():
    result = paired_t([1.0, 2.0, 3.0], [1.5, 2.5, 3.5])
    assert result.statistic == math.inf and result.pvalue == 0.0
    assert (result.ci_low, result.ci_high) == (0.5, 0.5)
    assert paired_t([1.5, 2.5, 3.5], [1.0, 2.0, 3.0]).statistic == -math.inf


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [1, 4, 10, 25, 60])
def test_wilcoxon_matches_scipy(seed, n):
    a, b = _seed_scores(seed, n)
    result = wilcoxon(a, b)
    reference = scipy.stats.wilcoxon(b, a, zero_method="wilcox")
    assert result.statistic == pytest.approx(reference.statistic, abs=TOL)
    assert result.pvalue == pytest.approx(reference.pvalue, abs=TOL)
    assert result.median_difference == pytest.approx(np.median(b - a), abs=TOL)
    assert (result.n, result.n_nonzero, result.zero_method, result.note) == (n, n, "wilcox", None)


def test_wilcoxon_with_ties_and_zeros_matches_scipy():
    a = np.array([0.70, 0.71, 0.72, 0.73, 0.74, 0.75, 0.76, 0.77])
    b = a + np.array([0.01, 0.01, 0.0, 0.02, -0.01, 0.0, 0.03, 0.02])
    result = wilcoxon(a, b)
    reference = scipy.stats.wilcoxon(b - a, zero_method="wilcox")
    assert (result.statistic, result.pvalue) == pytest.approx((reference.statistic, reference.pvalue), abs=TOL)
    assert result.n_nonzero == 6


@pytest.mark.parametrize("runs", [([0.7, 0.8, 0.9], [0.7, 0.8, 0.9]), ([0.5], [0.5])])
def test_wilcoxon_all_zero_differences_give_p_one(runs):
    result = wilcoxon(*runs)
    assert (result.statistic, result.pvalue, result.n_nonzero) == (0.0, 1.0, 0)
    assert "zero" in result.note


@pytest.mark.parametrize("test", [paired_t, wilcoxon])
def test_seed_tests_validate_inputs(test):
    with pytest.raises(ValueError, match=r"lengths 3 and 2"):
        test([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="empty"):
        test([], [])
    with pytest.raises(ValueError, match="NaN or infinite"):
        test([1.0, float("nan")], [1.0, 2.0])
    with pytest.raises(ValueError, match="must contain numbers"):
        test(["a", "b"], [1.0, 2.0])


def test_paired_t_rejects_bad_confidence():
    with pytest.raises(ValueError, match="confidence must be strictly between 0 and 1"):
        paired_t([0.7, 0.8], [0.75, 0.85], confidence=1.0)
