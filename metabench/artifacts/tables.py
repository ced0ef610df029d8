"""Boisson et al.'s Tables 2-5 in the paper's layout, rebuilt from runs, with the paper's BERT-base numbers.

Rows are the paper's dataset labels; each is bound to the cells (see ``gameability.cells``) of the
``boisson_<recipe>`` tasks: ``boisson_<recipe>_original`` (Table 2), ``boisson_<recipe>_random`` and
``..._lexical`` (Tables 3-5; ``TSV_AN_L2`` reads ``lexical_l2``; ``VUAC_BO`` reads our re-sampled
``vua18_bo``). A cell is the mean over the folds that were run, then ``(rel. %)`` = (view − default) /
default for the incomplete views, and ``[k/n]`` when only k of n folds were run. Beside each model's row,
``collision ceiling`` gives the best accuracy any model could reach from that view's input alone.
The output has the shape of ``report.paper_views.fill`` so the leaderboard renders it like the other views.
"""

from __future__ import annotations

import statistics

from . import paper_numbers as paper
from .gameability import cells

PAPER = "Construction Artifacts in Metaphor Identification Datasets (Boisson et al., EMNLP 2023)"
VIEW_LABELS = {"default": "Def", "pme_only": "PME", "masked": "Masked"}
# paper row -> (recipe, random regime, lexical regime)
ROWS = {
    "CARD_N": ("card_n", "random", "lexical"), "JANK": ("jank", "random", "lexical"),
    "TroFi": ("trofi", "random", "lexical"), "TSV_AN": ("tsv_an", "random", "lexical"),
    "TSV_AN_L2": ("tsv_an", "random", "lexical_l2"), "MOH": ("moh", "random", "lexical"),
    "MAGPIE": ("magpie", "random", "lexical"), "VUAC_ST1": ("vuac_st1", "random", "lexical"),
    "VUAC_ST2": ("vuac_st2", "random", "lexical"), "VUAC_BO": ("vua18_bo", "random", "lexical"),
}
ORIGINAL = {"TroFi": "trofi", "TSV_AN": "tsv_an", "TSV_SVO": "tsv_svo", "VUAC_ST1": "vuac_st1"}
METRIC_COLUMNS = (("Acc", "accuracy"), ("P", "precision"), ("R", "recall"), ("F1", "f1"))


def _cell(runs_by_key, members: list[str], model: str, metric: str) -> tuple[float, int, int] | None:
    found = [runs_by_key[(t, model)].aggregate(metric) for t in members if (t, model) in runs_by_key]
    found = [f["mean"] for f in found if f and f.get("mean") is not None]
    return (statistics.fmean(found), len(found), len(members)) if found else None


def _text(value, default=None) -> str:
    if value is None:
        return "—"
    mean, k, n = value
    out = f"{100 * mean:.2f}"
    if default is not None and default[0]:
        out += f" ({100 * (mean - default[0]) / default[0]:+.1f}%)"
    return out + (f" [{k}/{n}]" if k < n else "")


def _paper_cells(numbers: tuple, views: int = 3) -> list[str]:
    out = []
    for start in range(0, len(numbers), views):
        block = numbers[start:start + views]
        out.append(f"{block[0]:.2f}")
        out.extend(f"{v:.2f} ({100 * (v - block[0]) / block[0]:+.1f}%)" for v in block[1:])
    return out


def _row(labels, model, source, cells_):
    return {"labels": list(labels), "model": model, "source": source, "cells": cells_}


def _view_table(key, number, title, rows: dict, regimes: tuple[str, ...], numbers: dict, index, runs) -> dict:
    """macro-F1 per view and regime (Tables 2 and 3)."""
    by_key = {(r.task, r.model): r for r in runs}
    models = sorted({r.model for r in runs})
    cell_map = cells(index)
    columns = [f"{regime.split('_')[0].capitalize()} {VIEW_LABELS[v]}" for regime in regimes for v in VIEW_LABELS]
    out_rows, tasks = [], set()
    for label, cell_names in rows.items():
        if label in numbers:
            out_rows.append(_row((label,), paper.MODEL, "paper", _paper_cells(numbers[label])))
        views_per_cell = [cell_map.get(name, {}) for name in cell_names]
        for views in views_per_cell:
            tasks.update(t for members in views.values() for t in members)
        for model in models:
            values = [[_cell(by_key, views.get(v, []), model, "macro_f1") for v in VIEW_LABELS] for views in views_per_cell]
            if all(v is None for block in values for v in block):
                continue
            mine = [by_key[(t, model)] for views in views_per_cell for members in views.values() for t in members
                    if (t, model) in by_key]
            out_rows.append(_row((label,), _label(model, mine), "metabench",
                                 [_text(v, block[0] if i else None) for block in values for i, v in enumerate(block)]))
            ceilings = [[_cell(by_key, views.get(v, []), model, "collision_ceiling") for v in VIEW_LABELS] for views in views_per_cell]
            out_rows.append(_row((label,), "collision ceiling (accuracy)", "metabench",
                                 [_text(v) for block in ceilings for v in block]))
    return {"key": key, "paper": PAPER, "number": number, "title": title, "header": ["Dataset", "model", *columns],
            "rows": _dedupe(out_rows), "tasks": sorted(tasks), "missing_tasks": [],
            "notes": _notes(cell_map, by_key, models)}


def _notes(cell_map: dict, by_key: dict, models: list[str]) -> list[str]:
    """How to read the cells, and the cells (not their many fold × view tasks) without any run."""
    missing = sorted(cell for cell, views in cell_map.items() if cell.startswith("boisson_")
                     and not any((t, m) in by_key for members in views.values() for t in members for m in models))
    notes = ["[k/n]: only k of the n folds were run (mean over those); '(partial)': a --limit run on part of the "
             "test split; 'collision ceiling': the best accuracy any model could reach from that view's input alone"]
    return notes + ([f"no runs yet for: {', '.join(missing)}"] if missing else [])


def _label(model: str, runs: list) -> str:
    """The model, marked '(partial)' when one of its runs here scored only part of a test split."""
    return model + (" (partial)" if any(getattr(r, "partial", False) for r in runs) else "")


def _dedupe(rows: list[dict]) -> list[dict]:
    """The ceiling does not depend on the model: keep it once per dataset row."""
    seen, out = set(), []
    for row in rows:
        key = (tuple(row["labels"]), row["model"], tuple(row["cells"]))
        if row["model"].startswith("collision") and key in seen:
            continue
        seen.add(key)
        out.append(row)
    return out


def _metrics_table(key, number, title, regime_index: int, numbers: dict, index, runs) -> dict:
    """Maj, accuracy and metaphor-class P/R/F1 per view (Tables 4 and 5)."""
    by_key = {(r.task, r.model): r for r in runs}
    models = sorted({r.model for r in runs})
    cell_map = cells(index)
    columns = ["Maj"] + [f"{name} {VIEW_LABELS[v]}" for name, _ in METRIC_COLUMNS for v in VIEW_LABELS]
    out_rows, tasks = [], set()
    for label, spec in ROWS.items():
        views = cell_map.get(f"boisson_{spec[0]}_{spec[1 + regime_index]}", {})
        tasks.update(t for members in views.values() for t in members)
        if label in numbers:
            out_rows.append(_row((label,), paper.MODEL, "paper", [f"{v:.1f}" for v in numbers[label]]))
        for model in models:
            maj = _cell(by_key, views.get("default", []), model, "majority_accuracy")
            values = [_cell(by_key, views.get(v, []), model, metric) for _, metric in METRIC_COLUMNS for v in VIEW_LABELS]
            if maj is None and all(v is None for v in values):
                continue
            mine = [by_key[(t, model)] for members in views.values() for t in members if (t, model) in by_key]
            out_rows.append(_row((label,), _label(model, mine), "metabench", [_text(maj)] + [_text(v) for v in values]))
    return {"key": key, "paper": PAPER, "number": number, "title": title, "header": ["Dataset", "model", *columns],
            "rows": out_rows, "tasks": sorted(tasks), "missing_tasks": [], "notes": _notes(cell_map, by_key, models)}


def boisson_tables(index, runs: list) -> list[dict]:
    """Tables 2, 3, 4 and 5 (only those with at least one run)."""
    table_3_rows = {label: (f"boisson_{r}_{a}", f"boisson_{r}_{b}") for label, (r, a, b) in ROWS.items()}
    tables = [
        _view_table("boisson_table_2", "Table 2", "Original splits, macro-F1 (%)",
                    {label: (f"boisson_{r}_original",) for label, r in ORIGINAL.items()}, ("original",),
                    paper.TABLE_2, index, runs),
        _view_table("boisson_table_3", "Table 3", "Random and lexical 5-fold splits, macro-F1 (%), fold mean",
                    table_3_rows, ("random", "lexical"), paper.TABLE_3, index, runs),
        _metrics_table("boisson_table_4", "Table 4", "Random splits: majority-class accuracy, accuracy and metaphor-class "
                       "P/R/F1 (%)", 0, paper.TABLE_4, index, runs),
        _metrics_table("boisson_table_5", "Table 5", "Lexical splits: as Table 4", 1, paper.TABLE_5, index, runs),
    ]
    return [t for t in tables if any(row["source"] == "metabench" for row in t["rows"])]


def gameability_table(rows: list[dict]) -> dict:
    """The gameability rows (``gameability.assess``) as one more paper-layout table."""
    header = ["Cell", "model", "folds", "Def", "PME", "Masked", "best view", "best / Def", "Δ macro-F1 (95% CI)", "p",
              "gameable"]
    out = []
    for r in rows:
        v, rel, b = r["values"], r["relative"], r["bootstrap"]
        view = lambda name: "—" if name not in v else f"{100 * v[name]:.2f}" + (f" ({100 * rel[name]:+.1f}%)" if name in rel else "")  # noqa: E731
        out.append(_row((r["cell"],), r["model"], "metabench", [
            r["folds"], view("default"), view("pme_only"), view("masked"), r["best_view"], f"{100 * r['share_of_default']:.1f}%",
            f"{100 * b['delta']:+.2f} [{100 * b['ci_low']:+.2f}, {100 * b['ci_high']:+.2f}]", f"{b['pvalue']:.3g}",
            ("yes: " + r["why"]) if r["gameable"] else "no"]))
    return {"key": "boisson_gameability", "paper": PAPER, "number": "Gameability",
            "title": "Per cell and model: is the best incomplete-information view not significantly worse than Def "
                     "(paired bootstrap on macro-F1, same test items) or ≥ 90 % of it? (metabench's test; the paper has none)",
            "header": header, "rows": out, "tasks": [], "missing_tasks": [],
            "notes": ["folds k/n: only k of the n folds were run in every compared view; the flag uses those"]}


def artifact_report(registry, runs: list, *, alpha: float = 0.05, n_resamples: int = 2000) -> tuple[list[dict], list[dict]]:
    """(gameability rows, tables for the leaderboard's paper views); empty when no run has views."""
    from ..config.index import TaskIndex  # noqa: PLC0415
    from .gameability import assess  # noqa: PLC0415

    if not any("@" in r.task for r in runs):
        return [], []
    index = TaskIndex(registry)
    rows = assess(index, runs, alpha=alpha, n_resamples=n_resamples)
    tables = boisson_tables(index, runs)
    return rows, tables + ([gameability_table(rows)] if rows else [])
