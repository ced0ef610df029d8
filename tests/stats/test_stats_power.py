"""Minimum detectable effects, against statsmodels (t-test power) and exact power sums written here (McNemar)."""

import math

import numpy as np
import pytest
import scipy.stats
from statsmodels.stats.power import TTestPower

from metabench.stats import paired_bootstrap
from metabench.stats.power import discordance, mcnemar_mde, normal_mde, paired_t_mde


def _exact_chi2_mcnemar_power(n: int, psi: float, delta: float, alpha: float) -> float:
    """Power of the uncorrected McNemar chi-square test, summed exactly over the multinomial outcomes.

    Independent of the formula under test: m ~ Binomial(n, psi) discordant items, of which c ~ Binomial(m, q)
    favour the candidate, q = (psi + delta) / (2 psi); the test rejects when (c - b)^2 / m > chi2_{1-alpha}(1).
    """
    critical = scipy.stats.chi2.ppf(1 - alpha, 1)
    q = (psi + delta) / (2 * psi)
    total = 0.0
    for m in range(1, n + 1):
        weight = scipy.stats.binom.pmf(m, n, psi)
        if weight < 1e-14:
            continue
        c = np.arange(m + 1)
        reject = (2 * c - m) ** 2 / m > critical
        total += weight * scipy.stats.binom.pmf(c[reject], m, q).sum()
    return total


@pytest.mark.parametrize("n, psi", [(647, 0.2), (2000, 0.1), (400, 0.3)])
def test_mcnemar_mde_has_the_nominal_power(n, psi):
    result = mcnemar_mde(n, psi)
    assert 0 < result.mde < psi
    assert _exact_chi2_mcnemar_power(n, psi, result.mde, 0.05) == pytest.approx(0.80, abs=0.02)
    # a smaller effect is detected less often, a larger one more often
    assert _exact_chi2_mcnemar_power(n, psi, 0.7 * result.mde, 0.05) < 0.7
    assert _exact_chi2_mcnemar_power(n, psi, min(1.3 * result.mde, psi), 0.05) > 0.88


def test_mcnemar_mde_solves_connors_sample_size_formula():
    z_a, z_b = scipy.stats.norm.ppf(0.995), scipy.stats.norm.ppf(0.9)
    psi, delta = 0.25, 0.05
    n = (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - delta**2)) ** 2 / delta**2
    assert mcnemar_mde(math.ceil(n), psi, alpha=0.01, power=0.9).mde == pytest.approx(delta, rel=2e-3)


def test_mcnemar_mde_shrinks_with_items_and_grows_with_discordance():
    assert mcnemar_mde(2000, 0.2).mde < mcnemar_mde(500, 0.2).mde
    assert mcnemar_mde(500, 0.1).mde < mcnemar_mde(500, 0.3).mde
    identical = mcnemar_mde(100, 0.0)  # no discordance observed: a difference of delta needs delta discordance
    assert 0 < identical.mde < 1 and identical.nuisance == 0
    assert mcnemar_mde(2, 0.5).mde == math.inf  # two items: no difference is detectable at 80 % power


@pytest.mark.parametrize("n, alpha, power", [(3, 0.05, 0.8), (5, 0.05, 0.8), (10, 0.05, 0.8), (30, 0.05, 0.8),
                                             (5, 0.01, 0.9), (10, 0.01, 0.9), (30, 0.01, 0.9)])
def test_paired_t_mde_matches_statsmodels(n, alpha, power):
    sd = 0.013
    effect = TTestPower().solve_power(nobs=n, alpha=alpha, power=power, alternative="two-sided")
    result = paired_t_mde(n, sd, alpha=alpha, power=power)
    assert result.mde == pytest.approx(effect * sd, rel=1e-5)  # statsmodels solves to ~1e-6
    assert TTestPower().power(result.mde / sd, nobs=n, alpha=alpha) == pytest.approx(power, abs=1e-6)


def test_paired_t_mde_by_simulation_where_statsmodels_does_not_converge():
    # statsmodels' solve_power returns a wrong root for 3 seeds at alpha 0.01, power 0.9; simulate instead
    n, sd = 3, 0.02
    mde = paired_t_mde(n, sd, alpha=0.01, power=0.9).mde
    rng = np.random.default_rng(0)
    differences = rng.normal(mde, sd, size=(40000, n))
    t = differences.mean(axis=1) / (differences.std(axis=1, ddof=1) / math.sqrt(n))
    rejected = np.abs(t) > scipy.stats.t.ppf(0.995, n - 1)
    assert rejected.mean() == pytest.approx(0.9, abs=0.01)


def test_paired_t_mde_degenerate_inputs():
    assert paired_t_mde(1, 0.01).mde == math.inf
    assert paired_t_mde(5, 0.0).mde == 0.0


def test_bootstrap_mde_agrees_with_the_analytic_mcnemar_one_on_accuracy():
    rng = np.random.default_rng(3)
    n = 1500
    a = rng.random(n) < 0.7
    b = np.where(rng.random(n) < 0.15, ~a, a)  # flip 15 % of the baseline's answers
    boot = paired_bootstrap(a.astype(float), b.astype(float), n_resamples=4000, seed=1)
    psi = discordance(a, b)
    observed = abs(boot.delta)
    by_simulation = normal_mde(boot.std_error, n).mde
    analytic = mcnemar_mde(n, psi).mde
    # the bootstrap's spread is sqrt((psi - delta^2) / n): the MDE formula at the observed difference
    z = scipy.stats.norm.ppf(0.975) + scipy.stats.norm.ppf(0.8)
    assert by_simulation == pytest.approx(z * math.sqrt((psi - observed**2) / n), rel=0.05)
    assert by_simulation == pytest.approx(analytic, rel=0.08)


def test_normal_mde_and_argument_checks():
    assert normal_mde(0.01, 100).mde == pytest.approx(0.01 * (1.959964 + 0.841621), rel=1e-5)
    with pytest.raises(ValueError, match="alpha"):
        mcnemar_mde(100, 0.2, alpha=1.5)
    with pytest.raises(ValueError, match="power"):
        paired_t_mde(5, 0.1, power=0)
    with pytest.raises(ValueError, match="discordance"):
        mcnemar_mde(100, 1.2)
    assert discordance([1, 0, 1, 1], [1, 1, 0, 1]) == 0.5
