"""Paired resampling tests on 10,000 items × 10,000 resamples: metabench's vectorised mean path vs scipy.

The mean statistic (accuracy) runs as array operations over all resamples at once; this script times it
against scipy's ``permutation_test`` (paired, ``permutation_type="samples"``) and ``bootstrap`` on the same
arrays, which also vectorise. A loop over resamples in Python would take minutes; the tests used to assert a
time bound, which belongs here instead (timings depend on the machine and its load).

Run: .venv/bin/python benchmarks/bench_resampling.py
"""

from __future__ import annotations

import time

import numpy as np
import scipy.stats
from tabulate import tabulate

from metabench.stats import approximate_randomisation, paired_bootstrap

N_ITEMS = N_RESAMPLES = 10_000


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random(N_ITEMS) < 0.7, rng.random(N_ITEMS) < 0.75
    x, y = a.astype(float), b.astype(float)

    def mean_diff(u, v, axis=-1):
        return np.mean(u, axis=axis) - np.mean(v, axis=axis)

    rows = [
        ["approximate randomisation", timed(lambda: approximate_randomisation(a, b, n_resamples=N_RESAMPLES)),
         timed(lambda: scipy.stats.permutation_test((x, y), mean_diff, permutation_type="samples",
                                                    n_resamples=N_RESAMPLES, vectorized=True, random_state=0))],
        ["paired bootstrap", timed(lambda: paired_bootstrap(a, b, n_resamples=N_RESAMPLES)),
         timed(lambda: scipy.stats.bootstrap((x, y), mean_diff, paired=True, n_resamples=N_RESAMPLES,
                                             vectorized=True, method="percentile", random_state=0))],
    ]
    print(f"{N_ITEMS} items, {N_RESAMPLES} resamples")
    print(tabulate([[name, f"{ours:.2f}", f"{ref:.2f}", f"{ref / ours:.1f}x"] for name, ours, ref in rows],
                   headers=["test", "metabench s", "scipy s", "scipy / metabench"]))


if __name__ == "__main__":
    main()
