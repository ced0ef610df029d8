"""Groups with ``aggregate: mean``: one averaged row over their member tasks (k-fold CV, a paper's 'average' row).

For each model, every seed that all members ran is averaged across members first (unweighted, one value per
member task), then mean ± sample std over those seeds, like a task's own aggregate. A group is reported only
when every member ran successfully with that model; otherwise its row says which members are missing.
"""

from __future__ import annotations

import math
import statistics

from ..run_record import RunRecord
from ..stats.seeds import mean_std_n


def group_rows(records: list[RunRecord]) -> list[dict]:
    """One dict per (group with aggregate: mean, model) among the records of successful runs.

    Group membership comes from the runs themselves (``task.groups``, written by the runner), so group means
    are computed the same way by `metabench run`, `compare` and the leaderboard, with or without the plugin
    that defined the group. Every run's account counts, not the first one read: a group's members are the union
    of all its runs' lists, so one run that lists fewer folds cannot shrink a k-fold mean to the folds it does
    well on (a run listing more only leaves every model's row incomplete, which the row then says).
    """
    by_key = {(r.task.name, r.model.spec): r for r in records}
    groups: dict[str, list[str]] = {}
    models: dict[str, list[str]] = {}
    for r in records:
        for group in r.groups:
            members = groups.setdefault(group.name, [])
            members += [m for m in group.members if m not in members]
            models.setdefault(group.name, [])
            if r.model.spec not in models[group.name]:
                models[group.name].append(r.model.spec)
    rows = []
    for name, members in sorted(groups.items()):
        for model in models[name]:
            missing = [m for m in members if (m, model) not in by_key]
            if missing:
                rows.append({"group": name, "model": model, "members": len(members), "missing": missing})
                continue
            runs = [by_key[(m, model)] for m in members]
            primary = runs[0].primary_metric
            rows.append({"group": name, "model": model, "members": len(members), "missing": [],
                         "member_tasks": members, "primary_metric": primary, "aggregate": mean_over_members(runs),
                         "n_items": sum(r.n_items for r in runs),
                         "member_values": {m: r.mean(primary) for m, r in zip(members, runs)}})
    return rows


def compare_groups(results: list[RunRecord], baseline: str | None, confidence: float = 0.95) -> list[dict]:
    """Each model's group mean against the baseline model's (default: the group's first model), with a paired
    t-test over the member tasks (folds): the usual test for k-fold results, which treats each fold as one
    paired observation. Groups the baseline model did not complete are left out."""
    from ..stats import paired_t

    by_group: dict[str, list[dict]] = {}
    for row in group_rows(results):
        if not row["missing"]:
            by_group.setdefault(row["group"], []).append(row)
    out = []
    for name, rows in by_group.items():
        reference = next((r for r in rows if r["model"] == baseline), None) if baseline else rows[0]
        if reference is None:
            continue
        metric = reference["primary_metric"]
        for row in rows:
            if row is reference or None in row["member_values"].values() or None in reference["member_values"].values():
                continue
            members = list(reference["member_values"])
            test = paired_t([reference["member_values"][m] for m in members], [row["member_values"][m] for m in members],
                            confidence=confidence)
            a, b = reference["aggregate"][metric]["mean"], row["aggregate"][metric]["mean"]
            out.append({"group": name, "metric": metric, "baseline": reference["model"], "candidate": row["model"],
                        "baseline_value": a, "candidate_value": b, "delta": b - a, "members": len(members),
                        "test": "paired_t over members", "pvalue": _finite(test.pvalue),
                        "ci_low": _finite(test.ci_low), "ci_high": _finite(test.ci_high), "note": test.note})
    return out


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def group_comparison_table(rows: list[dict]) -> str:
    from tabulate import tabulate

    from .compare import format_ci, format_p

    table = [[r["group"], r["metric"], r["baseline"], r["candidate"], f"{r['baseline_value']:.4f}",
              f"{r['candidate_value']:.4f}", f"{r['delta']:+.4f}", format_ci(r["ci_low"], r["ci_high"]),
              r["members"], format_p(r["pvalue"])] for r in rows]
    return tabulate(table, headers=["group (mean of members)", "metric", "baseline", "candidate", "A", "B", "Δ (B−A)",
                                    "CI", "members", "p (paired t over members)"], disable_numparse=True)


def mean_over_members(runs: list[RunRecord]) -> dict[str, dict]:
    """{metric: {mean, std, n, per_seed}} from the members' records (seeds all members share)."""
    seeds = set.intersection(*(set(r.metrics.per_seed) for r in runs))
    metrics = set.intersection(*(set(m) for r in runs for m in r.metrics.per_seed.values()))
    out = {}
    for metric in sorted(metrics):
        per_seed = {}
        for seed in sorted(seeds, key=lambda s: int(s) if s.lstrip("-").isdigit() else s):
            found = [r.metrics.per_seed[seed].get(metric) for r in runs]
            values = [v for v in found if isinstance(v, (int, float))]
            if len(values) == len(found):  # every member has this seed's value
                per_seed[seed] = statistics.fmean(values)
        out[metric] = {**mean_std_n(list(per_seed.values())), "per_seed": per_seed}
    return out


def group_table(rows: list[dict]) -> str:
    from tabulate import tabulate

    from .summary import format_metric

    table = []
    for row in rows:
        if row["missing"]:
            table.append([row["group"], row["model"], "", f"missing {len(row['missing'])}/{row['members']} members", ""])
        else:
            primary = row["primary_metric"]
            table.append([row["group"], row["model"], primary, format_metric(row["aggregate"].get(primary, {})),
                          row["members"]])
    return tabulate(table, headers=["group (mean of members)", "model", "metric", "value", "members"])
