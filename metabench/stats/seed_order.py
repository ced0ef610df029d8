"""Almost stochastic order (ASO) of two score distributions over training seeds (Dror, Shlomov & Reichart 2019).

A fine-tuned encoder is a distribution over seeds, not one number. A paired t-test on five seeds asks
whether the mean moved; ASO asks whether one model's seed distribution lies above the other's, allowing a
share of violation: ``eps_min`` is a (1 - alpha) upper bound on the violation ratio

    eps_W2(F, G) = integral over {t : F^-1(t) < G^-1(t)} of (F^-1(t) - G^-1(t))^2 dt  /  W2(F, G)^2

(del Barrio et al. 2018), where F and G are the empirical score distributions of the model claimed better
and of the other one. ``eps_min`` = 0 means the first dominates at every quantile; ``eps_min`` < 0.5 that it
is better (Dror et al. recommend claiming almost stochastic dominance below 0.2); 1 that the other
dominates. The bound is eps + z_{1-alpha} * sd(eps*), where eps* are the violation ratios of bootstrap
resamples of both score sets (deepsig's estimator: ``const * sd(eps* - eps) / const`` reduces to sd(eps*)).

deepsig (the reference implementation) imports torch at module level and loops in Python; this is the same
estimator in a few numpy operations, checked against deepsig in ``tests/stats/test_stats_seed_order.py``.
Seeds need not be paired or equal in number.

Where it differs from deepsig (so the two agree within these, not exactly):

- the grid: deepsig integrates the violation over quantiles t = dt, 2 dt, ... but leaves its first point
  (t = dt, the lowest scores) out of the numerator while keeping it in W2; here every grid point counts in both,
  so the two violation ratios differ by at most that point's share of W2 (the test bounds it);
- the bootstrap: both resample each score set with replacement, but with their own random streams and counts
  (here ``n_resamples``, default 1000 in one numpy draw; deepsig ``num_bootstrap_iterations``), so ``eps_min``
  agrees as two Monte Carlo estimates of one bound do (within 0.05 in the test), not digit for digit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.stats

from metabench.stats import validation
from metabench.stats.results import JsonResult

#: Dror et al. (2019): claim that A is almost stochastically dominant over B when eps_min < this.
THRESHOLD = 0.2


@dataclass(frozen=True)
class ASOResult(JsonResult):
    """ASO of candidate B over baseline A: ``eps_min`` bounds the violation of "B is better than A";
    ``eps_min_reverse`` that of "A is better than B" (the two violation ratios sum to 1, their bounds need not).
    ``violation_ratio`` is the point estimate for "B better"."""

    eps_min: float
    eps_min_reverse: float
    violation_ratio: float
    confidence: float
    n_a: int
    n_b: int
    n_resamples: int
    seed: int


def violation_ratio(better: np.ndarray, other: np.ndarray, dt: float = 0.005) -> np.ndarray:
    """eps_W2 of "``better`` stochastically dominates ``other``", along the last axis (batched).

    Quantiles are the empirical ones, Q(t) = the ceil(n t)-th smallest score, on the grid t = dt, 2 dt, ...
    < 1; where the two distributions are equal (W2 = 0) the ratio is 0.5, neither dominating.
    """
    grid = np.arange(dt, 1.0, dt)
    f = _quantiles(np.sort(better, axis=-1), grid)
    g = _quantiles(np.sort(other, axis=-1), grid)
    squared = (f - g) ** 2
    total = squared.sum(axis=-1)
    violated = np.where(f < g, squared, 0.0).sum(axis=-1)
    return np.divide(violated, total, out=np.full_like(total, 0.5), where=total > 0)


def _quantiles(ordered: np.ndarray, grid: np.ndarray) -> np.ndarray:
    n = ordered.shape[-1]
    return ordered[..., np.clip(np.ceil(n * grid).astype(int) - 1, 0, n - 1)]


def almost_stochastic_order(
    scores_a: Sequence[float], scores_b: Sequence[float], *, confidence: float = 0.95, n_resamples: int = 1000,
    seed: int = 0, dt: float = 0.005,
) -> ASOResult:
    """ASO of candidate B (``scores_b``, one metric value per seed) over baseline A (``scores_a``).

    Higher scores are better (pass negated losses). Both directions are bounded from the same bootstrap
    resamples (numpy ``default_rng(seed)``), so reruns print the same numbers.
    """
    a = validation.score_vector(scores_a, "scores_a")
    b = validation.score_vector(scores_b, "scores_b")
    confidence = validation.confidence(confidence)
    n_resamples = validation.n_resamples(n_resamples)
    seed = validation.seed(seed)
    rng = np.random.default_rng(seed)
    resampled_a = a[rng.integers(0, len(a), size=(n_resamples, len(a)))]
    resampled_b = b[rng.integers(0, len(b), size=(n_resamples, len(b)))]
    z = scipy.stats.norm.ppf(confidence)

    def bound(better, other, boot_better, boot_other) -> tuple[float, float]:
        point = float(violation_ratio(better, other, dt))
        spread = float(np.std(violation_ratio(boot_better, boot_other, dt)))
        return point, float(np.clip(point + z * spread, 0.0, 1.0))

    point, eps_min = bound(b, a, resampled_b, resampled_a)
    _, eps_reverse = bound(a, b, resampled_a, resampled_b)
    return ASOResult(eps_min=eps_min, eps_min_reverse=eps_reverse, violation_ratio=point, confidence=confidence,
                     n_a=len(a), n_b=len(b), n_resamples=n_resamples, seed=seed)
