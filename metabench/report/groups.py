"""Groups with ``aggregate: mean``: one averaged row over their member tasks (k-fold CV, a paper's 'average' row).

For each model, every seed that all members ran is averaged across members first (unweighted, one value per
member task), then mean ± sample std over those seeds, like a task's own aggregate. A group is reported only
when every member ran successfully with that model; otherwise its row says which members are missing.
"""

from __future__ import annotations

import statistics


def group_rows(index, outcomes: list) -> list[dict]:
    """One dict per (group with aggregate: mean whose members were run, model)."""
    ok = {(o.task, o.model): o for o in outcomes if o.status == "ok"}
    ran = {o.task for o in outcomes}
    models = list(dict.fromkeys(o.model for o in outcomes))
    rows = []
    for name, group in sorted(index.groups.items()):
        if getattr(group, "aggregate", "none") != "mean":
            continue
        members = index.select(name)
        if not set(members) & ran:
            continue
        for model in models:
            missing = [m for m in members if (m, model) not in ok]
            if missing:
                rows.append({"group": name, "model": model, "members": len(members), "missing": missing})
                continue
            runs = [ok[(m, model)].results for m in members]
            rows.append({"group": name, "model": model, "members": len(members), "missing": [],
                         "primary_metric": runs[0]["task"]["primary_metric"], "aggregate": mean_over_members(runs)})
    return rows


def mean_over_members(runs: list[dict]) -> dict[str, dict]:
    """{metric: {mean, std, n, per_seed}} from member results.json dicts (seeds all members share)."""
    seeds = set.intersection(*(set(r["metrics"]["per_seed"]) for r in runs))
    metrics = set.intersection(*(set(m) for r in runs for m in r["metrics"]["per_seed"].values()))
    out = {}
    for metric in sorted(metrics):
        per_seed = {}
        for seed in sorted(seeds, key=lambda s: int(s) if s.lstrip("-").isdigit() else s):
            values = [r["metrics"]["per_seed"][seed].get(metric) for r in runs]
            if all(isinstance(v, (int, float)) for v in values):
                per_seed[seed] = statistics.fmean(values)
        values = list(per_seed.values())
        out[metric] = {
            "mean": statistics.fmean(values) if values else None,
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "n": len(values),
            "per_seed": per_seed,
        }
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
