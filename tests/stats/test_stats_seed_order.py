"""Almost stochastic order against deepsig (the reference implementation of Dror et al. 2019)."""

import numpy as np
import pytest

from metabench.stats.seed_order import almost_stochastic_order, violation_ratio

from needs import needs

pytestmark = needs("deepsig")  # imported by the tests that use it: it imports torch (~10 s)

# (baseline seeds, candidate seeds): candidate better, overlapping with unequal seed counts, candidate worse
SCENARIOS = {
    "better": (np.random.default_rng(1).normal(0.70, 0.02, 5), np.random.default_rng(2).normal(0.74, 0.02, 5)),
    "overlap": (np.random.default_rng(3).normal(0.70, 0.03, 8), np.random.default_rng(4).normal(0.71, 0.03, 5)),
    "worse": (np.random.default_rng(5).normal(0.70, 0.01, 6), np.random.default_rng(6).normal(0.66, 0.04, 6)),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_violation_ratio_matches_deepsig(name):
    from deepsig.aso import compute_violation_ratio

    a, b = SCENARIOS[name]
    # deepsig leaves the first grid point (t = dt, the lowest scores) out of the violation integral, not out of
    # W2: the two differ by at most that point's share of W2
    grid = np.arange(0.005, 1, 0.005)
    quantiles = [np.sort(x)[np.clip(np.ceil(len(x) * grid).astype(int) - 1, 0, len(x) - 1)] for x in (b, a)]
    first_share = (quantiles[0][0] - quantiles[1][0]) ** 2 / ((quantiles[0] - quantiles[1]) ** 2).sum()
    assert abs(violation_ratio(b, a) - compute_violation_ratio(b, a, dt=0.005)) <= first_share + 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("name", SCENARIOS)
def test_eps_min_matches_deepsig(name):
    import deepsig

    a, b = SCENARIOS[name]
    ours = almost_stochastic_order(a, b, n_resamples=5000, seed=0)
    theirs = deepsig.aso(b, a, num_bootstrap_iterations=400, num_jobs=1, show_progress=False, seed=0)
    reverse = deepsig.aso(a, b, num_bootstrap_iterations=400, num_jobs=1, show_progress=False, seed=0)
    assert ours.eps_min == pytest.approx(theirs, abs=0.05)  # two Monte Carlo estimates of one bound
    assert ours.eps_min_reverse == pytest.approx(reverse, abs=0.05)


def test_direction_and_extremes():
    better = almost_stochastic_order([0.70, 0.71, 0.69, 0.70], [0.80, 0.81, 0.79, 0.82], n_resamples=500)
    assert better.eps_min == 0.0 and better.eps_min_reverse == 1.0 and better.violation_ratio == 0.0
    same = almost_stochastic_order([0.7, 0.7, 0.7], [0.7, 0.7, 0.7], n_resamples=200)
    assert same.violation_ratio == 0.5  # equal distributions: neither dominates
    rerun = almost_stochastic_order(*SCENARIOS["overlap"], seed=3)
    assert rerun == almost_stochastic_order(*SCENARIOS["overlap"], seed=3)
