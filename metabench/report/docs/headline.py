"""The headline runs table (docs/headline-runs.md), generated from committed runs (`metabench report docs`).

One row per task or k-fold group for one model: the primary metric's mean ± std over seeds (a group: the
unweighted mean of its folds per seed, as `groups.group_rows` computes it), the seeds against the task's
protocol (fewer is labelled partial), the wall time the runs cost (``_cost``, summed over folds), and the published
numbers of the same protocol beside it (`published.py`), never typed by hand, and the best constant answer's
score on the same items with the ≈ chance mark (`trivial.py`). The last column says when a run is degenerate
under the task's recipe (#35 item 5), by `seed_stability.STABILITY_RULE` (the rule the leaderboard's pages print
too): the per-seed values, *unstable across seeds* where they span more than ``UNSTABLE_RANGE``, and
*constant-like at seed s* where a seed's most common answer is given for more than ``SKEW_MARGIN`` more of the
items than the golds give it (single-label tasks; a k-fold group pools its folds' answers per seed).
"""

from __future__ import annotations

from .blocks import names
from .blocks import markdown
from ..groups import group_rows
from ..published import load_published
from ..analyses.seed_stability import stability
from ..trivial import beside as constant_beside
from ..unread import beside as unread_beside, rate_of



def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{seconds / 60:.1f} min"


def _cost(run) -> tuple[float, int]:
    """Wall seconds the run cost, and how many of its seeds' fine-tunes have no record.

    A fine-tuned run's own ``timings`` count only what that process did: a seed whose checkpoint came from the
    cache adds its load time, not its training, so a run re-assembled from checkpoints would look almost free.
    Each seed's fine-tune is therefore counted from the checkpoint's own record (``model.info.checkpoints``,
    kept with the checkpoint and copied into every run that loads it) and the rest (loading, test, scoring)
    from the run's timings. A seed whose answers were read from the answer cache loaded no checkpoint and
    leaves no record: it is counted as unrecorded, never as free.
    """
    timings = run.record.timings
    total = timings.total_s if timings is not None and timings.total_s is not None else 0.0
    fit = timings.fit_s if timings is not None and timings.fit_s is not None else 0.0
    checkpoints = run.record.model.info.checkpoints
    if checkpoints is None:  # a model that is not fine-tuned: its timings are the whole cost
        return total, 0
    records = [checkpoints[str(seed)] for seed in run.record.seeds if str(seed) in checkpoints]
    fits = sum(record.get("fit_s", 0.0) for record in records)
    return total - fit + fits, len(run.record.seeds) - len(records)


def headline_table(context, model: str, tasks: str) -> list[str]:
    """The model's headline rows (module docstring); a task or group without a complete run says so."""
    runs = [r for r in context.runs if r.record.model.spec == model and not r.partial]
    by_task = {r.record.task.name: r for r in sorted(runs, key=lambda r: r.record.created or "")}  # the newest run of a task
    groups = {row["group"]: row for row in group_rows([r.record for r in by_task.values()]) if not row["missing"]}
    published = load_published()
    rows = []
    for name in names(tasks):
        members = groups[name]["member_tasks"] if name in groups else [name]
        found = [by_task[m] for m in members if m in by_task]
        if len(found) < len(members):
            rows.append([name, "—", "—", "—", "—", "no complete committed run", "—"])
            continue
        first = found[0]
        metric = first.record.primary_metric
        value = groups[name]["aggregate"][metric] if name in groups else first.record.aggregate(metric).model_dump()
        protocol = first.record.protocol_seeds
        seeds = f"{len(first.record.seeds)} of {protocol}" + (" (partial: seeds)" if protocol and len(first.record.seeds) < protocol else "")
        costs = [_cost(r) for r in found]
        wall = _duration(sum(seconds for seconds, _ in costs))
        unrecorded = sum(n for _, n in costs)
        if unrecorded:
            wall += f" ({unrecorded} of {sum(len(r.record.seeds) for r in found)} fine-tunes unrecorded)"
        trivial = constant_beside(context.registry, found, value["mean"])
        same = sorted((p for p in published if p.task == name and p.metric == metric and p.protocol == "same"),
                      key=lambda p: -p.fraction)
        beside = "; ".join(f"{p.system} {p.fraction:.3f} (Δ {value['mean'] - p.fraction:+.3f})" for p in same) or "—"
        per_seed = (list(value.get("per_seed", {}).values()) if name in groups else first.record.per_seed(metric))
        rows.append([name + (f" ({len(members)} folds)" if name in groups else ""), metric,
                     unread_beside(f"{value['mean']:.4f} ± {value['std']:.4f}",
                                   rate_of(groups[name]["aggregate"] if name in groups else first.record.metrics.aggregate)),
                     trivial, seeds, f"{sum(r.record.n_items for r in found):,}",
                     wall, beside, stability(per_seed, found)])
    return markdown(["task", "metric", "mean ± std over seeds", "best constant answer, same items", "seeds",
                     "test items", "wall time (fine-tunes' own records + test)",
                     "published, same protocol (Δ = ours − published)",
                     "per seed; degenerate under the recipe? (rule: docs/headline-runs.md)"], rows)
