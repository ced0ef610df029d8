"""The leaderboard's content: computed once from the runs, then written by every reporter (md, json, html).

The board is a plain JSON-ready dict (``leaderboard.json`` is exactly this), so a third-party reporter
registered through ``metabench_register_reporters`` gets the same numbers as the built-in ones and never
needs to know how they were computed.

Per task, models are ranked by the primary metric (mean over seeds). Every model is tested against the
best one on the shared items with the test `compare` would choose, and the p-values are corrected within
the task (the family a reader scans when asking "who is tied with the best here?").
"""

from __future__ import annotations

import hashlib
import re

from ... import __version__
from ...errors import MetabenchError
from ...registry import Registry
from ..compare import CORRECTIONS, Options, adjust, compare_pair
from ..gaps import gap_pairs, subset_gap
from ..paper_views import VIEWS, fill
from ..runs import Run, by_task

SCHEMA_VERSION = 1


def slug(name: str) -> str:
    """A page file name for a task or model: lowercase ASCII, with a hash suffix when the name had to change."""
    base = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")[:60] or "x"
    return base if base == name else f"{base}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def latest_runs(runs: list[Run]) -> tuple[list[Run], list[dict]]:
    """One run per (task, model): the newest by ``created``; the others are listed as ignored."""
    chosen: dict[tuple[str, str], Run] = {}
    for run in runs:
        key = (run.task, run.model)
        if key not in chosen or run.results["created"] > chosen[key].results["created"]:
            chosen[key] = run
    kept = list(chosen.values())
    ignored = [{"run": str(r.path), "reason": f"a newer run of task '{r.task}' with model '{r.model}' is shown"}
               for r in runs if all(r is not k for k in kept)]
    return kept, ignored


def _dataset(registry: Registry, name: str) -> dict:
    """Licence and citation from the dataset's registration; empty when the dataset is not registered here."""
    try:
        spec = registry.get("dataset", name).target
    except MetabenchError:
        return {"licence": "", "citation": ""}
    return {"licence": getattr(spec, "licence", "") or "", "citation": getattr(spec, "citation", "") or ""}


def _entry(run: Run, metric: str) -> dict:
    aggregate = run.results["metrics"]["aggregate"]
    names = [metric] + sorted(n for n in aggregate if n != metric)
    return {
        "model": run.model, "model_slug": slug(run.model), "run": str(run.path), "seeds": run.seeds,
        "n_items": run.results["n_items"],
        "metrics": {n: aggregate.get(n, {"mean": None, "std": None, "n": 0}) for n in names},
        "per_seed": dict(zip((str(s) for s in run.seeds), run.per_seed(metric))),
        "vs_best": None,
    }


def _task(registry: Registry, name: str, group: list[Run], correction: str, alpha: float, options: Options) -> dict:
    first = group[0]
    metric = first.primary_metric
    higher = first.higher_is_better(metric)

    def sort_key(run: Run):
        mean = (run.aggregate(metric) or {}).get("mean")
        return (mean is None, -(mean or 0.0) if higher else (mean or 0.0), run.model)

    ordered = sorted(group, key=sort_key)
    entries = [_entry(run, metric) for run in ordered]
    best = ordered[0]
    comparisons = []
    for run, entry in zip(ordered[1:], entries[1:]):
        try:
            comparison = compare_pair(registry, best, run, metric, options)
        except MetabenchError as exc:
            entry["vs_best"] = {"error": exc.message}
            continue
        comparisons.append((entry, comparison))
    adjust([c for _, c in comparisons], correction)
    for entry, c in comparisons:
        entry["vs_best"] = {
            "test": c.test, "delta": c.delta, "ci_low": c.ci_low, "ci_high": c.ci_high, "ci_method": c.ci_method,
            "pvalue": c.pvalue, "p_adjusted": c.p_adjusted, "notes": c.notes,
            "significant": c.p_adjusted is not None and c.p_adjusted <= alpha and c.drop > 0,
        }
    _rank(entries, metric)
    task = first.results["task"]
    return {
        "name": name, "slug": slug(name), "kind": task["kind"], "dataset": task["dataset"], "source": task["source"],
        "version": task["version"], "config_hash": task["config_hash"], "primary_metric": metric,
        "higher_is_better": higher, "n_items": first.results["n_items"], "best": best.model,
        **_dataset(registry, task["dataset"]), "entries": entries,
    }


def _rank(entries: list[dict], metric: str) -> None:
    """Competition ranking (1, 2, 2, 4): equal means share a rank."""
    previous, rank = object(), 0
    for position, entry in enumerate(entries, 1):
        mean = entry["metrics"][metric]["mean"]
        if mean != previous:
            rank, previous = position, mean
        entry["rank"] = rank


def _models(tasks: list[dict]) -> list[dict]:
    models: dict[str, dict] = {}
    for task in tasks:
        for entry in task["entries"]:
            model = models.setdefault(entry["model"], {"name": entry["model"], "slug": entry["model_slug"], "results": []})
            model["results"].append({
                "task": task["name"], "task_slug": task["slug"], "metric": task["primary_metric"],
                "value": entry["metrics"][task["primary_metric"]], "rank": entry["rank"],
                "n_models": len(task["entries"]), "vs_best": entry["vs_best"],
            })
    return sorted(models.values(), key=lambda m: m["name"])


def _gaps(runs: list[Run], correction: str, alpha: float, confidence: float) -> dict:
    """Every subset gap (one row per seed) and, per model and task pair, the mean over seeds."""
    gaps, errors = [], []
    for reference, subset in gap_pairs(runs):
        try:
            gaps.extend(subset_gap(reference, subset, confidence=confidence))
        except MetabenchError as exc:
            errors.append(exc.message)
    adjust(gaps, correction)
    summary: dict[tuple, dict] = {}
    for gap in gaps:
        key = (gap.model, gap.reference_task, gap.subset_task)
        summary.setdefault(key, {"model": gap.model, "model_slug": slug(gap.model), "reference_task": gap.reference_task,
                                 "subset_task": gap.subset_task, "seeds": []})["seeds"].append(gap.as_dict())
    for row in summary.values():
        seeds = row["seeds"]
        for name in ("accuracy_a", "accuracy_b", "gap"):
            row[name] = sum(s[name] for s in seeds) / len(seeds)
        row["significant_seeds"] = sum(s["p_adjusted"] is not None and s["p_adjusted"] <= alpha for s in seeds)
    return {"rows": list(summary.values()), "errors": errors}


def build_board(registry: Registry, runs: list[Run], *, title: str = "metabench leaderboard", correction: str = "holm",
                alpha: float = 0.05, options: Options = Options()) -> dict:
    """Everything the reporters write, from the runs (one per task and model; newer runs win)."""
    runs, ignored = latest_runs(runs)
    tasks = [_task(registry, name, group, correction, alpha, options) for name, group in sorted(by_task(runs).items())]
    models = _models(tasks)
    aggregates = {(r.task, r.model): r.results["metrics"]["aggregate"] for r in runs}
    return {
        "schema_version": SCHEMA_VERSION,
        "title": title,
        "latest_run": max(r.results["created"] for r in runs),
        "metabench": __version__,
        "correction": {"method": correction, "name": CORRECTIONS[correction][0]},
        "alpha": alpha,
        "confidence": options.confidence,
        "n_runs": len(runs),
        "ignored_runs": ignored,
        "tasks": tasks,
        "models": models,
        "gaps": _gaps(runs, correction, alpha, options.confidence),
        "paper_tables": [fill(view, [m["name"] for m in models], aggregates) for view in VIEWS],
    }
