"""Mean, sample standard deviation and count of a metric's values over seeds: the one definition a run's
results record (``metrics.aggregate``) and the group means share, so the two always agree."""

from __future__ import annotations

import statistics


def mean_std_n(values: list[float]) -> dict:
    """``{"mean", "std", "n"}``: the mean (None without values), the sample standard deviation (0.0 for one
    value: a single seed has no spread to report) and how many values there were."""
    return {
        "mean": statistics.fmean(values) if values else None,
        "std": statistics.stdev(values) if len(values) > 1 else 0.0,
        "n": len(values),
    }


def seed_summary(per_seed: dict[str, dict[str, float | None]]) -> dict[str, dict]:
    """Each metric's mean, std and n over the seeds that gave it a value (``metrics.aggregate``): what a run
    records, and what a merge of runs over other seeds computes again (`runs.merge`)."""
    names = sorted({name for metrics in per_seed.values() for name in metrics})
    return {name: mean_std_n([m[name] for m in per_seed.values() if name in m and m[name] is not None])
            for name in names}
