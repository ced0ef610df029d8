"""A 95 % interval around one run's value, for what publishes a number beside its uncertainty: the Hub export's
notes and the leaderboard's headline table, one rule for both so the two never print different intervals.
"""

from __future__ import annotations

import math

import numpy as np

from ..runs.align import pair
from ..runs.decompose import item_metrics
from ..runs.stored import Run

#: The scale every value is on: an interval is clipped to it.
RANGE = (0.0, 1.0)
#: Resamples of the one-seed interval (a percentile bootstrap over items, seeded: an interval is reproducible).
N_RESAMPLES = 2000
CONFIDENCE = 0.95
#: Resample indices drawn at once: one (2000, n) array took 8.9 GiB for a 600k-item run; rows of at most this many
#: indices (32 MB) give the same draws, as the generator's stream does not depend on how it is cut.
DRAW_CHUNK = 4_000_000


def interval(registry, run: Run, metric: str) -> tuple[float | None, float | None, str]:
    """A 95 % interval of the run's mean: a t interval over seeds (2+ seeds), else a percentile bootstrap over
    items (``N_RESAMPLES``, seed 0); (None, None, why) where neither applies. The interval is clipped to the
    scale the value is on (``RANGE``: a t interval around an F1 of 0.98 over noisy seeds reaches past 1, which
    no F1 can), and its method says so."""
    values = [v for v in run.record.per_seed(metric) if v is not None]
    if len(values) >= 2:
        return over_seeds(values)
    _, items = item_metrics(pair(run, run), metric, registry)
    if items is None:
        return None, None, f"none: {metric} cannot be rebuilt from the samples and the run has one seed"
    n = len(items.records)
    resampled = _resampled(items, n)
    low, high = np.percentile(resampled, [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2])
    return _clipped(float(low), float(high), f"percentile bootstrap over {n} items ({N_RESAMPLES} resamples, seed 0)")


def over_seeds(values: list[float]) -> tuple[float, float, str]:
    """The t interval of the mean of 2+ per-seed values (a k-fold group: the folds' mean at each seed), clipped."""
    from scipy import stats  # noqa: PLC0415

    mean, sem = float(np.mean(values)), float(np.std(values, ddof=1) / math.sqrt(len(values)))
    half = float(stats.t.ppf((1 + CONFIDENCE) / 2, len(values) - 1)) * sem
    return _clipped(mean - half, mean + half, f"t over {len(values)} seeds")


def _resampled(items, n: int) -> np.ndarray:
    """The metric over ``N_RESAMPLES`` resamples of the ``n`` items (seed 0), drawn ``DRAW_CHUNK`` indices at a time."""
    rng = np.random.default_rng(0)
    rows = max(1, DRAW_CHUNK // max(n, 1))
    records = np.asarray(items.records, dtype=float) if items.metric == "mean" else None
    out = []
    for start in range(0, N_RESAMPLES, rows):
        draws = rng.integers(0, n, size=(min(rows, N_RESAMPLES - start), n))
        if records is not None:
            out.append(records[draws].mean(axis=1))
        else:
            out.append(np.array([items.metric(items.records[index]) for index in draws]))
    return np.concatenate(out)


def _clipped(low: float, high: float, method: str) -> tuple[float, float, str]:
    """``(low, high)`` within ``RANGE``, the method naming the clip where there was one."""
    bottom, top = RANGE
    if low >= bottom and high <= top:
        return low, high, method
    return max(low, bottom), min(high, top), f"{method}, clipped to [{bottom:g}, {top:g}]"
