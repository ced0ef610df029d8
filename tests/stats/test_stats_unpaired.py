"""Tests for independent groups, against statsmodels and scipy."""

import numpy as np
import pytest
import scipy.stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportions_ztest

from metabench.stats import fisher_exact, permutation_test, proportion_difference_ci, two_proportion_z

TOL = 1e-9


def _random_counts(seed):
    rng = np.random.default_rng(seed)
    n1, n2 = (int(v) for v in rng.integers(1, 600, size=2))
    return int(rng.integers(0, n1 + 1)), n1, int(rng.integers(0, n2 + 1)), n2


SEEDS = range(8)
EDGE_COUNTS = [(0, 10, 3, 10), (10, 10, 7, 10), (0, 1, 1, 1), (5, 7, 0, 3), (1, 546, 0, 546), (546, 546, 500, 546)]


@pytest.mark.parametrize("counts", [_random_counts(seed) for seed in SEEDS] + EDGE_COUNTS)
def test_two_proportion_z_matches_statsmodels(counts):
    k1, n1, k2, n2 = counts
    result = two_proportion_z(k1, n1, k2, n2)
    statistic, pvalue = proportions_ztest([k2, k1], [n2, n1])
    assert result.statistic == pytest.approx(statistic, abs=TOL)
    assert result.pvalue == pytest.approx(pvalue, abs=TOL)
    assert (result.p1, result.p2, result.difference) == pytest.approx((k1 / n1, k2 / n2, k2 / n2 - k1 / n1), abs=TOL)
    assert result.pooled == pytest.approx((k1 + k2) / (n1 + n2), abs=TOL)


@pytest.mark.parametrize("counts", [(10, 10, 20, 20), (0, 5, 0, 9), (1, 1, 1, 1)])
def test_two_proportion_z_zero_variance_gives_p_one(counts):
    result = two_proportion_z(*counts)
    assert (result.statistic, result.pvalue, result.difference) == (0.0, 1.0, 0.0)


@pytest.mark.parametrize("counts", [_random_counts(seed) for seed in SEEDS] + EDGE_COUNTS + [(10, 10, 20, 20)])
def test_fisher_exact_matches_scipy(counts):
    k1, n1, k2, n2 = counts
    result = fisher_exact(k1, n1, k2, n2)
    odds_ratio, pvalue = scipy.stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]])
    assert result.pvalue == pytest.approx(pvalue, abs=TOL)
    if 0 < odds_ratio < np.inf:  # candidate (group 2) relative to baseline: the reciprocal of scipy's orientation
        assert result.odds_ratio == pytest.approx(1 / odds_ratio, rel=TOL)


def test_fisher_odds_ratio_orientation_and_degenerate_tables():
    assert fisher_exact(5, 10, 8, 10).odds_ratio == pytest.approx((8 / 2) / (5 / 5))
    result = fisher_exact(10, 10, 20, 20)
    assert result.pvalue == 1.0 and np.isnan(result.odds_ratio) and result.as_dict()["odds_ratio"] is None


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99])
@pytest.mark.parametrize("counts", [_random_counts(seed) for seed in SEEDS] + EDGE_COUNTS + [(10, 10, 20, 20)])
def test_proportion_difference_ci_matches_statsmodels_newcombe(counts, confidence):
    k1, n1, k2, n2 = counts
    result = proportion_difference_ci(k1, n1, k2, n2, confidence=confidence)
    low, high = confint_proportions_2indep(k2, n2, k1, n1, method="newcomb", compare="diff", alpha=1 - confidence)
    assert (result.ci_low, result.ci_high) == pytest.approx((low, high), abs=TOL)
    assert -1.0 <= result.ci_low <= result.difference <= result.ci_high <= 1.0
    assert (result.method, result.confidence) == ("newcombe", confidence)


def test_proportion_difference_ci_has_width_at_perfect_accuracy():
    result = proportion_difference_ci(20, 20, 20, 20)
    assert result.difference == 0.0 and result.ci_low < 0.0 < result.ci_high  # a Wald interval would be [0, 0]


@pytest.mark.parametrize("test", [two_proportion_z, fisher_exact, proportion_difference_ci])
def test_proportion_inputs_are_validated(test):
    with pytest.raises(ValueError, match="k1=11 successes cannot exceed n1=10"):
        test(11, 10, 3, 10)
    with pytest.raises(ValueError, match="n2 must be at least 1"):
        test(1, 10, 0, 0)
    with pytest.raises(ValueError, match="k2 must be a non-negative integer"):
        test(1, 10, -1, 10)
    with pytest.raises(ValueError, match="n1 must be a non-negative integer"):
        test(1, 10.0, 1, 10)


@pytest.mark.parametrize("seed", range(4))
def test_permutation_test_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(0.7, 0.05, 15), rng.normal(0.74, 0.05, 20)
    result = permutation_test(x, y, n_resamples=2000, seed=seed)
    reference = scipy.stats.permutation_test(
        (x, y), lambda a, b, axis: np.mean(b, axis=axis) - np.mean(a, axis=axis),
        n_resamples=2000, random_state=np.random.default_rng(seed),
    )
    assert result.statistic == pytest.approx(np.mean(y) - np.mean(x), abs=TOL)
    assert result.pvalue == pytest.approx(reference.pvalue, abs=TOL)
    assert (result.n_resamples, result.seed) == (2000, seed)


def test_permutation_test_exact_for_small_samples_and_custom_statistic():
    x, y = [0.61, 0.64, 0.66], [0.70, 0.72, 0.69, 0.75]
    result = permutation_test(x, y)  # 35 partitions < n_resamples: scipy enumerates them all
    assert result.pvalue == pytest.approx(2 / 35, abs=TOL)

    def median_difference(a, b):
        return np.median(b) - np.median(a)

    custom = permutation_test(x, y, statistic=median_difference)
    reference = scipy.stats.permutation_test((np.array(x), np.array(y)), median_difference, vectorized=False)
    assert (custom.statistic, custom.pvalue) == pytest.approx((reference.statistic, reference.pvalue), abs=TOL)


def test_permutation_test_edge_cases():
    assert permutation_test([0.5, 0.5], [0.5, 0.5]).pvalue == 1.0  # identical samples
    with pytest.raises(ValueError, match="at least two values each.*got 1 and 3"):
        permutation_test([0.4], [0.6, 0.7, 0.8])
    with pytest.raises(ValueError, match="x is empty"):
        permutation_test([], [1.0])
    with pytest.raises(ValueError, match="statistic must be a callable"):
        permutation_test([1.0], [2.0], statistic="mean")
