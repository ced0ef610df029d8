"""The table printed at the end of a run."""

from __future__ import annotations

from tabulate import tabulate


def format_metric(aggregate: dict) -> str:
    """'0.8123 ± 0.0042 (n=5)' — or just the mean for a single seed."""
    mean, std, n = aggregate.get("mean"), aggregate.get("std"), aggregate.get("n", 0)
    if mean is None:
        return "n/a"
    return f"{mean:.4f}" if n <= 1 else f"{mean:.4f} ± {std:.4f} (n={n})"


def summary_table(outcomes: list) -> str:
    rows = []
    for o in outcomes:
        if o.status != "ok":
            rows.append([o.task, o.model, "", o.status, "", "", ""])
            continue
        r = o.results
        primary = r["task"]["primary_metric"]
        timings = r["timings"]
        rows.append([
            o.task,
            o.model,
            primary,
            format_metric(r["metrics"]["aggregate"].get(primary, {})),
            r["n_items"],
            f"{timings['cached_items']}/{r['n_items'] * len(r['seeds'])}",
            f"{timings['total_s']:.1f}s",
        ])
    return tabulate(rows, headers=["task", "model", "metric", "value", "items", "cached", "time"])
