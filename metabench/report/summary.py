"""What a run prints at the end: a table of the jobs that ran and one line counting ok, skipped and failed.

Skipped jobs (a model that cannot serve a task) are expected in a run over many tasks, so they are counted
by reason in the closing line rather than listed one by one; failed jobs keep their full message.
"""

from __future__ import annotations

from collections import Counter

from tabulate import tabulate

from .unread import beside, run_rate


def format_metric(aggregate: dict) -> str:
    """'0.8123 ± 0.0042 (n=5)' — or just the mean for a single seed."""
    mean, std, n = aggregate.get("mean"), aggregate.get("std"), aggregate.get("n", 0)
    if mean is None:
        return "n/a"
    return f"{mean:.4f}" if n <= 1 else f"{mean:.4f} ± {std:.4f} (n={n})"


def summary_table(outcomes: list) -> str:
    """One row per job that ran or failed (skipped jobs are only counted, see `count_line`)."""
    rows = []
    for o in outcomes:
        if o.status == "skipped":
            continue
        if o.status != "ok":
            rows.append([o.task, o.model, "", o.status, "", "", ""])
            continue
        r = o.record
        primary = r.primary_metric
        timings, draws = r.timings, r.draws
        summary = r.aggregate(primary)
        rows.append([
            o.task,
            o.model,
            primary,
            beside(format_metric(summary.model_dump() if summary is not None else {}), run_rate(r)) + (
                f" majority of {draws} draws, flip rate {r.repeat.mean_flip_rate:.3f}" if draws > 1 else ""),
            r.n_items,
            f"{timings.cached_items}/{r.n_items * len(r.seeds) * draws}",
            f"{timings.total_s:.1f}s",
        ])
    return tabulate(rows, headers=["task", "model", "metric", "value", "items", "cached", "time"])


def count_line(outcomes: list) -> str:
    """'74 ok · 52 skipped (reasons: 30 needs a training split, 22 cannot answer GenerateRequest) · 0 failed'."""
    status = Counter(o.status for o in outcomes)
    reasons = Counter(o.reason for o in outcomes if o.status == "skipped")
    skipped = f"{status['skipped']} skipped"
    if reasons:
        skipped += " (reasons: " + ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items(), key=lambda r: (-r[1], r[0]))) + ")"
    return f"{status['ok']} ok · {skipped} · {status['failed']} failed"


def skip_lines(outcomes: list, shown: int = 3) -> list[str]:
    """One line per skip reason: how many jobs, the first few, and the hint of the first one."""
    by_reason: dict[str, list] = {}
    for o in outcomes:
        if o.status == "skipped":
            by_reason.setdefault(o.reason, []).append(o)
    lines = []
    for reason, jobs in by_reason.items():
        named = ", ".join(f"{o.task} with {o.model}" for o in jobs[:shown]) + (", ..." if len(jobs) > shown else "")
        hint = f"; hint: {jobs[0].hint}" if jobs[0].hint else ""
        lines.append(f"skipped ({reason}): {named}{hint}" if len(jobs) > 1 else f"skipped: {jobs[0].message}{hint}")
    return lines
