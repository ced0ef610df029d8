"""The corrections for few units against their references: the median-unbiased spread against the normal
distribution's quartile and a simulation, the t reference against statsmodels' cluster-robust t test."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from lazy import lazy

from metabench.stats.few_units import median_unbiased_spread, seeds_mde, t_reference
from metabench.stats.power import paired_t_mde

sm = lazy("statsmodels.api")


def test_the_median_unbiased_spread_of_two_values_is_the_mad_constant():
    # the spread of two normal values is sigma |Z|, whose median is Phi^-1(0.75) sigma
    assert median_unbiased_spread(2) == pytest.approx(1 / scipy.stats.norm.ppf(0.75), rel=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_the_scaled_spread_has_median_sigma(n):
    spreads = np.std(np.random.default_rng(n).standard_normal((40_000, n)), axis=1, ddof=1)
    assert np.median(spreads * median_unbiased_spread(n)) == pytest.approx(1.0, abs=0.015)


def test_seeds_mde_is_the_paired_t_mde_at_the_scaled_spread():
    differences = [0.01, -0.02, 0.005]
    expected = paired_t_mde(3, np.std(differences, ddof=1) * median_unbiased_spread(3), alpha=0.01, power=0.9)
    result = seeds_mde(differences, alpha=0.01, power=0.9)
    assert result.mde == pytest.approx(expected.mde) and "median-unbiased" in result.method
    # linear in the spread, as the simulation uses it
    assert result.mde == pytest.approx(paired_t_mde(3, 1.0, alpha=0.01, power=0.9).mde
                                       * np.std(differences, ddof=1) * median_unbiased_spread(3))
    assert seeds_mde([0.01]).mde == float("inf")


def test_t_reference_matches_statsmodels_cluster_robust_t():
    """Per-item differences in 12 clusters: statsmodels' cluster-robust t test of their mean (t with G - 1
    degrees of freedom) gives the same interval and p-value as t_reference fed its standard error."""
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(12), 8)
    differences = rng.normal(0.05, 0.2, 96) + np.repeat(rng.normal(0, 0.1, 12), 8)
    fit = sm.OLS(differences, np.ones(96)).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    read = t_reference(float(fit.params[0]), float(fit.bse[0]), 12)
    assert read.df == 11
    assert (read.ci_low, read.ci_high) == pytest.approx(tuple(fit.conf_int(0.05)[0]), rel=1e-9)
    assert read.pvalue == pytest.approx(float(fit.pvalues[0]), rel=1e-9)
    assert read.mde == pytest.approx((scipy.stats.t.ppf(0.975, 11) + scipy.stats.t.ppf(0.8, 11)) * fit.bse[0])


def test_t_reference_of_identical_outputs_and_bad_input():
    assert (t_reference(0.0, 0.0, 5).pvalue, t_reference(0.0, 0.0, 5).mde) == (1.0, 0.0)
    with pytest.raises(ValueError, match="2 or more units"):
        t_reference(0.1, 0.1, 1)
