"""The headline runs table (docs/headline-runs.md), generated from committed runs (`metabench report docs`).

One row per task or k-fold group for one model: the primary metric's mean ± std over seeds (a group: the
unweighted mean of its folds per seed, as `groups.group_rows` computes it), the seeds against the task's
protocol (fewer is labelled partial), the wall time the runs cost (``_cost``, summed over folds), and the published
numbers of the same protocol beside it (`published.py`), never typed by hand, and the best constant answer's
score on the same items with the ≈ chance mark (`trivial.py`). The last column says when a run is degenerate
under the task's recipe (#35 item 5), by ``STABILITY_RULE``: the per-seed values, *unstable across seeds* where
they span more than ``UNSTABLE_RANGE``, and *constant-like at seed s* where a seed's most common answer is given
for more than ``SKEW_MARGIN`` more of the items than the golds give it (single-label tasks; a k-fold group pools
its folds' answers per seed).
"""

from __future__ import annotations

from .docs_blocks import names
from .docs_blocks import markdown
from .groups import group_rows
from .published import load_published
from .trivial import beside as constant_beside

#: Unstable across seeds: max − min of the per-seed headline values above this (absolute, on the 0–1 scale):
#: a seed-to-seed spread this large is more than the reported mean can summarise, whatever the std says (with
#: 3 seeds the range is always ≈ 2 × std, so a relative rule would flag every run).
UNSTABLE_RANGE = 0.10
#: Constant-like seed: its most common answer's share of the items exceeds the golds' share of that answer by
#: more than this (MOH-X seed 0 answers "literal" for 79 % of the items where the golds have 52 %: the table).
SKEW_MARGIN = 0.20
STABILITY_RULE = (f"unstable across seeds: the per-seed values span more than {UNSTABLE_RANGE:.2f}; constant-like "
                  f"at a seed: its most common answer's share of the items exceeds the golds' share of it by more "
                  f"than {SKEW_MARGIN:.2f} (single-label answers; a k-fold group pools its folds per seed)")


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
    timings = run.results.get("timings", {})
    checkpoints = run.results.get("model", {}).get("info", {}).get("checkpoints")
    if checkpoints is None:  # a model that is not fine-tuned: its timings are the whole cost
        return timings.get("total_s", 0.0), 0
    records = [checkpoints[str(seed)] for seed in run.seeds if str(seed) in checkpoints]
    fits = sum(record.get("fit_s", 0.0) for record in records)
    return timings.get("total_s", 0.0) - timings.get("fit_s", 0.0) + fits, len(run.seeds) - len(records)


def headline_table(context, model: str, tasks: str) -> list[str]:
    """The model's headline rows (module docstring); a task or group without a complete run says so."""
    runs = [r for r in context.runs if r.model == model and not r.partial]
    by_task = {r.task: r for r in sorted(runs, key=lambda r: r.results["created"])}  # the newest run of a task
    groups = {row["group"]: row for row in group_rows([r.results for r in by_task.values()]) if not row["missing"]}
    published = load_published()
    rows = []
    for name in names(tasks):
        members = groups[name]["member_tasks"] if name in groups else [name]
        found = [by_task[m] for m in members if m in by_task]
        if len(found) < len(members):
            rows.append([name, "—", "—", "—", "—", "no complete committed run", "—"])
            continue
        first = found[0]
        metric = first.primary_metric
        value = groups[name]["aggregate"][metric] if name in groups else first.aggregate(metric)
        protocol = first.protocol_seeds
        seeds = f"{len(first.seeds)} of {protocol}" + (" (partial: seeds)" if protocol and len(first.seeds) < protocol else "")
        costs = [_cost(r) for r in found]
        wall = _duration(sum(seconds for seconds, _ in costs))
        unrecorded = sum(n for _, n in costs)
        if unrecorded:
            wall += f" ({unrecorded} of {sum(len(r.seeds) for r in found)} fine-tunes unrecorded)"
        trivial = constant_beside(context.registry, found, value["mean"])
        same = sorted((p for p in published if p.task == name and p.metric == metric and p.protocol == "same"),
                      key=lambda p: -p.fraction)
        beside = "; ".join(f"{p.system} {p.fraction:.3f} (Δ {value['mean'] - p.fraction:+.3f})" for p in same) or "—"
        per_seed = (list(value.get("per_seed", {}).values()) if name in groups else first.per_seed(metric))
        rows.append([name + (f" ({len(members)} folds)" if name in groups else ""), metric,
                     f"{value['mean']:.4f} ± {value['std']:.4f}", trivial, seeds, f"{sum(r.n_items for r in found):,}",
                     wall, beside, stability(per_seed, found)])
    return markdown(["task", "metric", "mean ± std over seeds", "best constant answer, same items", "seeds",
                     "test items", "wall time (fine-tunes' own records + test)",
                     "published, same protocol (Δ = ours − published)",
                     "per seed; degenerate under the recipe? (rule: docs/headline-runs.md)"], rows)


def stability(per_seed: list, runs: list) -> str:
    """The per-seed values and the marks of ``STABILITY_RULE``: 'unstable across seeds' and 'constant-like at
    seed s'; '—' for a value a seed did not record."""
    values = [v for v in per_seed if isinstance(v, (int, float))]
    text = " / ".join(f"{v:.3f}" if isinstance(v, (int, float)) else "—" for v in per_seed) or "—"
    marks = []
    if len(values) >= 2 and max(values) - min(values) > UNSTABLE_RANGE:
        marks.append(f"unstable across seeds (range {max(values) - min(values):.3f} > {UNSTABLE_RANGE:.2f})")
    marks += [f"constant-like at seed {s['seed']} ({s['share']:.0%} {s['answer']}, golds {s['gold_share']:.0%})"
              for s in skewed_seeds(runs)]
    return text + (": " + "; ".join(marks) if marks else "")


def skewed_seeds(runs: list) -> list[dict]:
    """Seeds whose most common answer (pooled over the runs, e.g. a group's folds) is given for more than
    ``SKEW_MARGIN`` more of the items than the golds give it; single-label answers only (tag sequences: [])."""
    import json  # noqa: PLC0415
    from collections import Counter  # noqa: PLC0415

    answers: dict = {}
    golds: dict = {}
    for run in runs:
        for row in run.samples:
            if isinstance(row.get("prediction"), (list, dict)) or isinstance(row.get("gold"), (list, dict)):
                return []
            answers.setdefault(row["seed"], []).append(json.dumps(row["prediction"], ensure_ascii=False))
            golds.setdefault(row["seed"], []).append(json.dumps(row["gold"], ensure_ascii=False))
    out = []
    for seed in sorted(answers):
        answer, count = Counter(answers[seed]).most_common(1)[0]
        share = count / len(answers[seed])
        gold_share = golds[seed].count(answer) / len(golds[seed])
        if share - gold_share > SKEW_MARGIN:
            out.append({"seed": seed, "answer": answer, "share": share, "gold_share": gold_share})
    return out
