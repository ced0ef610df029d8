"""Corrections for comparisons over few units, where the textbook formulas are measurably off (issue 38).

`metabench stats calibrate` (docs/reporting.md, "Calibration") counts how often each printed figure is wrong on
simulated test sets shaped like the committed tasks. Two procedures missed their targets because their units
are few, and are corrected here, where `compare` and `gate` (and the simulation) take them from:

* **The MDE of the paired t over 2-3 seeds.** The spread of n per-seed differences is a chi-distributed
  estimate whose median lies below the true spread (by a factor 0.67 for n = 2, 0.83 for n = 3), so an MDE
  computed from it is usually too small and a difference of that size is found with 63-74 % power instead of
  80 %. `seeds_mde` scales the spread by `median_unbiased_spread` first, so half of all runs print an MDE at or
  above the one the true spread gives; measured, that restores 80 % power at the printed MDE.
* **The bootstrap over a few dozen clusters** (VUA-18's 27 documents). The percentile interval is a normal
  interval in disguise and too narrow with few units, as a z interval is on few observations. `t_reference`
  reads the bootstrap's standard error against t with K - 1 degrees of freedom (K clusters), the usual
  small-cluster correction for clustered standard errors (Cameron & Miller 2015, sec. VI; statsmodels'
  cluster-robust t uses the same reference): interval, p-value and MDE.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import scipy.stats

from metabench.stats.power import PowerResult, paired_t_mde
from metabench.stats.results import JsonResult


def median_unbiased_spread(n: int) -> float:
    """The factor that makes the standard deviation of ``n`` normal values median-unbiased for sigma:
    sqrt((n - 1) / chi2_{n-1}(0.5)), since (n - 1) s^2 / sigma^2 is chi-square with n - 1 degrees of freedom.
    For n = 2 it is 1 / Phi^-1(0.75) = 1.4826, the constant that makes the median absolute deviation consistent."""
    if n < 2:
        raise ValueError(f"a spread needs 2 or more values; got n = {n}")
    return math.sqrt((n - 1) / scipy.stats.chi2.ppf(0.5, n - 1))


def seeds_mde(differences, *, alpha: float = 0.05, power: float = 0.8) -> PowerResult:
    """The MDE `compare` prints for the paired t over seeds: `paired_t_mde` at the spread of the per-seed
    differences scaled to be median-unbiased (``nuisance`` holds the scaled spread)."""
    differences = np.asarray(differences, dtype=float)
    if len(differences) < 2:
        return paired_t_mde(len(differences), math.nan, alpha=alpha, power=power)
    spread = float(np.std(differences, ddof=1)) * median_unbiased_spread(len(differences))
    result = paired_t_mde(len(differences), spread, alpha=alpha, power=power)
    return replace(result, method="paired t (noncentral t), spread of the seeds' differences made median-unbiased")


@dataclass(frozen=True)
class TReference(JsonResult):
    """A bootstrap's delta and standard error read against t with ``df`` = units - 1 degrees of freedom."""

    delta: float
    std_error: float
    df: int
    ci_low: float
    ci_high: float
    confidence: float
    pvalue: float
    mde: float
    alpha: float
    power: float


def t_reference(delta: float, std_error: float, units: int, *, confidence: float = 0.95, alpha: float = 0.05,
                power: float = 0.8) -> TReference:
    """delta ± t_{K-1, (1+confidence)/2} SE, the two-sided p-value of delta / SE against t_{K-1}, and the MDE
    (t_{K-1, 1-alpha/2} + t_{K-1, power}) SE, for a bootstrap over ``units`` = K clusters. A standard error of 0
    (identical outputs) gives the interval [delta, delta], p = 1 for delta = 0 (else 0) and an MDE of 0."""
    if units < 2:
        raise ValueError(f"a t reference needs 2 or more units; got {units}")
    if not std_error >= 0:
        raise ValueError(f"std_error must be 0 or more; got {std_error}")
    df = units - 1
    half = float(scipy.stats.t.ppf(0.5 + confidence / 2, df)) * std_error
    if std_error > 0:
        pvalue = float(2 * scipy.stats.t.sf(abs(delta) / std_error, df))
    else:
        pvalue = 1.0 if delta == 0 else 0.0
    mde = float((scipy.stats.t.ppf(1 - alpha / 2, df) + scipy.stats.t.ppf(power, df)) * std_error)
    return TReference(delta=float(delta), std_error=float(std_error), df=df, ci_low=float(delta - half),
                      ci_high=float(delta + half), confidence=confidence, pvalue=pvalue, mde=mde, alpha=alpha,
                      power=power)
