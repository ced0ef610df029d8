"""Multiple-comparison corrections for a benchmark that tests many (task, model) pairs at once.

With 20 comparisons at alpha = 0.05 one "significant" result is expected by chance alone, so reported
p-values should be adjusted. Both functions return adjusted p-values in the input order, to be compared
with the unadjusted alpha; they match ``statsmodels.stats.multitest.multipletests`` ('holm', 'fdr_bh').

NaN p-values (a test that could not be run, e.g. a t-test on one seed) stay NaN in the output and are
*excluded* from the number of tests m: a test that produced no p-value cannot produce a false positive.
An empty input gives an empty output.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment: controls the family-wise error rate, uniformly better than Bonferroni.

    Sorted ascending, the i-th smallest of m p-values becomes max over j <= i of min(1, (m - j + 1) p_(j)).
    """
    p, valid = _pvalue_vector(pvalues)
    adjusted = np.full(p.shape, np.nan)
    if valid.any():
        q = p[valid]
        order = np.argsort(q, kind="stable")
        m = q.size
        stepped = np.maximum.accumulate((m - np.arange(m)) * q[order])
        adjusted[np.flatnonzero(valid)[order]] = np.minimum(stepped, 1.0)
    return adjusted


def benjamini_hochberg(pvalues: Sequence[float]) -> np.ndarray:
    """Benjamini-Hochberg step-up adjustment: controls the false discovery rate (for independent or
    positively dependent tests), less conservative than Holm when many comparisons are real.

    Sorted ascending, the i-th smallest of m p-values becomes min over j >= i of min(1, m p_(j) / j).
    """
    p, valid = _pvalue_vector(pvalues)
    adjusted = np.full(p.shape, np.nan)
    if valid.any():
        q = p[valid]
        order = np.argsort(q, kind="stable")
        m = q.size
        scaled = q[order] * m / np.arange(1, m + 1)
        stepped = np.minimum.accumulate(scaled[::-1])[::-1]
        adjusted[np.flatnonzero(valid)[order]] = np.minimum(stepped, 1.0)
    return adjusted


def _pvalue_vector(pvalues: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The p-values as a float array and the mask of non-NaN entries; rejects values outside [0, 1]."""
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be a flat sequence; got an array of shape {p.shape}")
    valid = ~np.isnan(p)
    out_of_range = valid & ((p < 0.0) | (p > 1.0))
    if out_of_range.any():
        raise ValueError(
            f"pvalues must lie in [0, 1] (or be NaN); "
            f"got {p[out_of_range][0]} at position {np.flatnonzero(out_of_range)[0]}"
        )
    return p, valid
