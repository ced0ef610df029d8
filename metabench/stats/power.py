"""Minimum detectable effects: the smallest difference a paired test would find, given the items and seeds.

A non-significant result means "no regression" only when the test could have seen one. The minimum
detectable effect (MDE) is the smallest true |delta| that the two-sided test at level ``alpha`` detects with
probability ``power`` (80 % by convention, Cohen 1988; Card et al. 2020, "With Little Power Comes Great
Responsibility", show that most NLP comparisons are far below it). Each function matches one test:

* `mcnemar_mde`: McNemar's test on per-item correctness, from the number of items and the discordance
  (share of items the two systems disagree on): Connor's (1987) normal approximation, solved for delta.
* `paired_t_mde`: the paired t-test over seeds, from the number of seeds and the spread of the per-seed
  differences: the noncentral t distribution, exactly.
* `normal_mde`: any test whose delta is approximately normal with a known standard error, e.g. the paired
  bootstrap (the standard error is the spread of the resampled deltas): (z_{1-alpha/2} + z_power) * SE.

All return a `PowerResult`; an effect no difference of the metric's range can reach is ``inf``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.optimize
import scipy.stats

from metabench.stats import validation
from metabench.stats.results import JsonResult


@dataclass(frozen=True)
class PowerResult(JsonResult):
    """The minimum detectable |delta| of one test (``mde``; ``inf`` when nothing in range is detectable).

    ``n`` counts what the test pairs (items or seeds); ``method`` names the formula; ``nuisance`` is the
    quantity the MDE was computed from besides ``n`` (the discordance for McNemar, the standard deviation of
    the differences for the t-test, the standard error for the normal approximation).
    """

    mde: float
    alpha: float
    power: float
    n: int
    method: str
    nuisance: float


def _level(alpha: float, power: float) -> tuple[float, float]:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha}")
    if not 0 < power < 1:
        raise ValueError(f"power must lie strictly between 0 and 1; got {power}")
    return float(alpha), float(power)


def mcnemar_mde(n: int, discordance: float, *, alpha: float = 0.05, power: float = 0.8) -> PowerResult:
    """The smallest accuracy difference McNemar's test detects on ``n`` items with this discordance.

    With discordance psi (share of items where exactly one system is right) and difference delta, the
    two-sided test needs n = (z_{1-alpha/2} sqrt(psi) + z_power sqrt(psi - delta^2))^2 / delta^2 items
    (Connor 1987). Solved for delta with psi replaced by max(psi, delta): a difference of delta needs at
    least delta discordant items, so identical runs (psi = 0) still get a finite MDE, the one for a
    candidate that changes only the items it fixes or breaks.
    """
    alpha, power = _level(alpha, power)
    n = validation.count(n, "n")
    if not 0 <= discordance <= 1:
        raise ValueError(f"discordance must lie between 0 and 1; got {discordance}")
    z_a, z_b = scipy.stats.norm.ppf(1 - alpha / 2), scipy.stats.norm.ppf(power)

    def shortfall(delta: float) -> float:
        psi = max(discordance, delta)
        return z_a * math.sqrt(psi) + z_b * math.sqrt(max(psi - delta * delta, 0.0)) - delta * math.sqrt(n)

    if n == 0 or shortfall(1.0) > 0:
        mde = math.inf
    else:
        mde = float(scipy.optimize.brentq(shortfall, 1e-12, 1.0, xtol=1e-12))
    return PowerResult(mde=mde, alpha=alpha, power=power, n=n, method="mcnemar (Connor 1987)",
                       nuisance=float(discordance))


def paired_t_mde(n: int, sd: float, *, alpha: float = 0.05, power: float = 0.8) -> PowerResult:
    """The smallest mean difference the two-sided paired t-test detects over ``n`` seeds.

    ``sd`` is the standard deviation of the per-seed differences B - A (ddof = 1). Power at delta is
    P(|T| > t_{1-alpha/2, n-1}) with T noncentral t with n - 1 degrees of freedom and noncentrality
    delta sqrt(n) / sd; the MDE solves power(delta) = ``power``. Needs n >= 2; sd = 0 gives 0.
    """
    alpha, power = _level(alpha, power)
    n = validation.count(n, "n")
    if n < 2 or not math.isfinite(sd):
        return PowerResult(mde=math.inf, alpha=alpha, power=power, n=n, method="paired t (noncentral t)",
                           nuisance=float(sd))
    df = n - 1
    critical = scipy.stats.t.ppf(1 - alpha / 2, df)

    def shortfall(effect: float) -> float:  # effect size d = delta / sd
        noncentrality = effect * math.sqrt(n)
        # the lower tail vanishes for large effects, where scipy may return NaN for it
        lower = np.nan_to_num(scipy.stats.nct.cdf(-critical, df, noncentrality))
        return float(scipy.stats.nct.sf(critical, df, noncentrality) + lower) - power

    high = 1.0
    while shortfall(high) < 0:
        high *= 2
    effect = float(scipy.optimize.brentq(shortfall, 0.0, high, xtol=1e-12))
    return PowerResult(mde=effect * abs(sd), alpha=alpha, power=power, n=n, method="paired t (noncentral t)",
                       nuisance=float(sd))


def normal_mde(std_error: float, n: int, *, alpha: float = 0.05, power: float = 0.8,
               method: str = "normal approximation") -> PowerResult:
    """(z_{1-alpha/2} + z_power) * ``std_error``: the MDE of a test on an approximately normal delta.

    For the paired bootstrap, ``std_error`` is the standard deviation of the resampled deltas, i.e. the
    MDE is found by simulation over the paired samples themselves (whatever the metric), assuming the
    spread under the alternative is the observed one.
    """
    alpha, power = _level(alpha, power)
    if not std_error >= 0:
        raise ValueError(f"std_error must be 0 or more; got {std_error}")
    z = scipy.stats.norm.ppf(1 - alpha / 2) + scipy.stats.norm.ppf(power)
    return PowerResult(mde=float(z * std_error), alpha=alpha, power=power, n=validation.count(n, "n"),
                       method=method, nuisance=float(std_error))


def bootstrap_std_error(items, metric="mean", *, n_resamples: int = 2000, seed: int = 0) -> float:
    """The standard deviation of ``metric`` over bootstrap resamples of one system's items: the spread a
    planned paired comparison inherits from each side (``metric`` and ``items`` as in `paired_bootstrap`)."""
    from metabench.stats.paired import _evaluate, _index_blocks, _is_mean, _selector

    n = len(items)
    rng = np.random.default_rng(validation.seed(seed))
    n_resamples = validation.n_resamples(n_resamples)
    if _is_mean(metric):
        values = validation.score_vector(items, "items")
        resampled = np.concatenate([values[block].mean(axis=1) for block in _index_blocks(rng, n, n_resamples)])
    else:
        take = _selector(items)
        resampled = np.array([_evaluate(metric, take(indices), "items")
                              for block in _index_blocks(rng, n, n_resamples) for indices in block])
    return float(np.std(resampled, ddof=1))


def discordance(correct_a, correct_b) -> float:
    """The share of items on which exactly one of two systems is right."""
    a = validation.correctness_vector(correct_a, "correct_a")
    b = validation.correctness_vector(correct_b, "correct_b")
    validation.same_length(a, b, "correct_a", "correct_b")
    return float(np.mean(a != b))
