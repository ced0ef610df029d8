"""Significance tests and intervals for two *independent* groups.

Use these only when the two results come from different items (e.g. a model's accuracy on two test
sets, or two papers' numbers on different splits); results on the same items belong in
`metabench.stats.paired`, because ignoring the pairing wastes power and miscalibrates p-values.

Conventions match `metabench.stats.paired`: group 1 is the baseline, group 2 the candidate, every
signed difference is ``group 2 - group 1`` (candidate - baseline), and every test is two-sided.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.stats

from metabench.stats import validation
from metabench.stats.results import JsonResult


@dataclass(frozen=True)
class TwoProportionResult(JsonResult):
    """Pooled two-proportion z-test; ``difference = p2 - p1`` and ``statistic`` has its sign."""

    difference: float
    statistic: float
    pvalue: float
    p1: float
    p2: float
    pooled: float


@dataclass(frozen=True)
class FisherResult(JsonResult):
    """Fisher's exact test on the 2x2 table of successes and failures.

    ``odds_ratio`` is the sample odds ratio of group 2 relative to group 1; it is +inf, 0 or NaN
    (``None`` in `as_dict`) when a cell of the table is zero.
    """

    odds_ratio: float
    pvalue: float


@dataclass(frozen=True)
class ProportionDifferenceCI(JsonResult):
    """Confidence interval for ``difference = p2 - p1`` (Newcombe's hybrid score interval)."""

    difference: float
    ci_low: float
    ci_high: float
    confidence: float
    method: str


@dataclass(frozen=True)
class PermutationResult(JsonResult):
    """Two-sample permutation test; ``statistic`` is the observed value (by default mean(y) - mean(x))."""

    statistic: float
    pvalue: float
    n_resamples: int
    seed: int


def two_proportion_z(k1: int, n1: int, k2: int, n2: int) -> TwoProportionResult:
    """Two-sided z-test that k1/n1 and k2/n2 estimate the same proportion, with the pooled variance.

    Matches ``statsmodels.stats.proportion.proportions_ztest([k2, k1], [n2, n1])``. When the pooled
    proportion is 0 or 1 (both groups all wrong or all right) the variance is zero and the proportions
    are equal, so the statistic is 0 and p = 1 instead of undefined.
    """
    k1, n1 = validation.successes_and_trials(k1, n1, "k1", "n1")
    k2, n2 = validation.successes_and_trials(k2, n2, "k2", "n2")
    p1, p2, pooled = k1 / n1, k2 / n2, (k1 + k2) / (n1 + n2)
    standard_error = np.sqrt(pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2))
    if standard_error == 0.0:
        statistic, pvalue = 0.0, 1.0
    else:
        statistic = (p2 - p1) / standard_error
        pvalue = float(2.0 * scipy.stats.norm.sf(abs(statistic)))
    return TwoProportionResult(
        difference=p2 - p1, statistic=float(statistic), pvalue=pvalue, p1=p1, p2=p2, pooled=pooled
    )


def fisher_exact(k1: int, n1: int, k2: int, n2: int) -> FisherResult:
    """Two-sided Fisher's exact test of k1/n1 vs k2/n2 (`scipy.stats.fisher_exact`).

    Exact at any sample size, so prefer it to `two_proportion_z` for small groups or rare outcomes.
    """
    k1, n1 = validation.successes_and_trials(k1, n1, "k1", "n1")
    k2, n2 = validation.successes_and_trials(k2, n2, "k2", "n2")
    result = scipy.stats.fisher_exact([[k2, n2 - k2], [k1, n1 - k1]], alternative="two-sided")
    return FisherResult(odds_ratio=float(result.statistic), pvalue=float(result.pvalue))


def proportion_difference_ci(k1: int, n1: int, k2: int, n2: int, *, confidence: float = 0.95) -> ProportionDifferenceCI:
    """Confidence interval for p2 - p1 by Newcombe's hybrid score method (Newcombe, 1998, method 10).

    Combines the two groups' Wilson score intervals. Chosen over the Wald interval, which collapses to
    zero width at 0% or 100% accuracy and undercovers for small n; Newcombe's interval stays inside
    [-1, 1] and has near-nominal coverage. Matches statsmodels'
    ``confint_proportions_2indep(k2, n2, k1, n1, method="newcomb")``.
    """
    k1, n1 = validation.successes_and_trials(k1, n1, "k1", "n1")
    k2, n2 = validation.successes_and_trials(k2, n2, "k2", "n2")
    confidence = validation.confidence(confidence)
    z = float(scipy.stats.norm.isf((1.0 - confidence) / 2.0))
    p1, p2 = k1 / n1, k2 / n2
    low1, high1 = _wilson(p1, n1, z)
    low2, high2 = _wilson(p2, n2, z)
    difference = p2 - p1
    return ProportionDifferenceCI(
        difference=difference,
        ci_low=difference - float(np.hypot(p2 - low2, high1 - p1)),
        ci_high=difference + float(np.hypot(high2 - p2, p1 - low1)),
        confidence=confidence,
        method="newcombe",
    )


def _wilson(p: float, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion p observed on n trials."""
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half_width = z / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return centre - half_width, centre + half_width


def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """mean(y) - mean(x) along ``axis``: the default statistic of `permutation_test` (candidate - baseline)."""
    return np.mean(y, axis=axis) - np.mean(x, axis=axis)


def permutation_test(
    x: Sequence[float],
    y: Sequence[float],
    *,
    statistic: Callable[..., float] = mean_difference,
    n_resamples: int = 10000,
    seed: int = 0,
) -> PermutationResult:
    """Two-sided permutation test that samples x (baseline) and y (candidate) come from one distribution.

    Thin wrapper over `scipy.stats.permutation_test` with ``permutation_type="independent"``: group
    labels are reshuffled ``n_resamples`` times with ``default_rng(seed)`` (scipy enumerates all
    partitions instead when there are fewer than that). ``statistic(x, y)`` returns a float; if it also
    accepts an ``axis`` keyword scipy evaluates it vectorised. scipy's randomised p-value counts the
    observed statistic, so it is never 0. Each sample needs at least two values (a scipy requirement).
    """
    x_array = validation.score_vector(x, "x")
    y_array = validation.score_vector(y, "y")
    n_resamples = validation.n_resamples(n_resamples)
    seed = validation.seed(seed)
    if not callable(statistic):
        raise ValueError(f"statistic must be a callable statistic(x, y); got {statistic!r}")
    if min(x_array.size, y_array.size) < 2:
        raise ValueError(
            f"x and y need at least two values each for a permutation test; got {x_array.size} and {y_array.size}"
        )
    result = scipy.stats.permutation_test(
        (x_array, y_array), statistic, permutation_type="independent", n_resamples=n_resamples,
        alternative="two-sided", random_state=np.random.default_rng(seed),
    )
    return PermutationResult(
        statistic=float(result.statistic), pvalue=float(result.pvalue), n_resamples=n_resamples, seed=seed
    )
