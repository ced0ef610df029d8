"""Boisson et al.'s Tables 2-5 in the paper's layout, rebuilt from runs, with the paper's BERT-base numbers.

The layouts (rows, columns) are declared in ``artifacts.paper_layouts`` (``filled_by`` this module) and each row
is bound, like every paper view of the project, by the ``metadata.paper_view`` of the cell that fills it: a
k-fold group with views (``boisson_trofi_random``) or a single-split task with views
(``boisson_vuac_st1_random``), e.g. ``{table: boisson_table_3, row: [TroFi], column: [Random Def, Random
PME, Random Masked]}``. A column's last word names the view it reads (Def, PME, Masked; ``Maj`` reads
Def). ``Maj`` is the paper's: the majority class's share of the whole dataset (the pooled test folds), equal
in both regimes; each fold's own majority share, averaged, is an oracle and has its own row. A value is the mean over the folds that were run, then ``(rel. %)`` = (view − default) / default
for the incomplete views, and ``[k/n]`` when only k of n folds were run. Beside each model's row,
``collision ceiling`` gives the best accuracy any model could reach from that view's input alone.
The output has the shape of ``report.paper_views.fill`` so the leaderboard renders it like the other views.
"""

from __future__ import annotations

import statistics
from collections import Counter

from .. import paper_numbers as paper
from metabench.plugin_api import PaperTable
from ..paper_layouts import VIEW_BY_KEY
from .gameability import cells

PAPER = VIEW_BY_KEY["boisson_table_3"].paper
CEILING = "collision ceiling (accuracy)"
VIEW_OF_LABEL = {"Def": "default", "PME": "pme_only", "Masked": "masked"}
NUMBERS = {"boisson_table_2": paper.TABLE_2, "boisson_table_3": paper.TABLE_3, "boisson_table_4": paper.TABLE_4,
           "boisson_table_5": paper.TABLE_5}


def _view_of(column: str) -> str:
    return VIEW_OF_LABEL.get(column.split()[-1], "default")


def bound_cells(index) -> dict[tuple[str, tuple, str], str]:
    """(table, row, column) -> the cell that fills it, from the cells' ``metadata.paper_view``."""
    out: dict[tuple[str, tuple, str], str] = {}
    for cell in cells(index):
        group = index.groups.get(cell)
        for binding in group.metadata.paper_views() if group is not None else ():
            table = VIEW_BY_KEY.get(binding.table)
            if table is not None and table.filled_by == __name__:
                for column in binding.columns(table.columns):
                    out[(table.key, tuple(binding.row), column)] = cell
    return out


def _members(table: PaperTable, row, bound: dict, cell_map: dict) -> list[list[str]]:
    """Per column, the tasks (folds of the bound cell, in the column's view) whose runs fill it."""
    return [cell_map.get(bound.get((table.key, row, column), ""), {}).get(_view_of(column), [])
            for column in table.columns]


def _cell(runs_by_key, members: list[str], model: str, metric: str) -> tuple[float, int, int] | None:
    found = [runs_by_key[(t, model)].record.mean(metric) for t in members if (t, model) in runs_by_key]
    found = [mean for mean in found if mean is not None]
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


def _lookups(index, runs):
    """What both table builders read: runs by (task, model), the models, and the paper_view bindings."""
    return {(r.record.task.name, r.record.model.spec): r for r in runs}, sorted({r.record.model.spec for r in runs}), bound_cells(index), cells(index)


def _view_table(table: PaperTable, index, runs) -> dict:
    """macro-F1 per view (Tables 2 and 3): columns in blocks of Def, PME, Masked, gaps relative to the block's Def."""
    by_key, models, bound, cell_map = _lookups(index, runs)
    numbers = NUMBERS[table.key]
    out_rows, tasks = [], set()
    for row in table.rows:
        if row[0] in numbers:
            out_rows.append(_row(row, paper.MODEL, "paper", _paper_cells(numbers[row[0]])))
        members = _members(table, row, bound, cell_map)
        tasks.update(t for column in members for t in column)
        for model in models:
            values = [_cell(by_key, column, model, "macro_f1") for column in members]
            if all(v is None for v in values):
                continue
            mine = [by_key[(t, model)] for column in members for t in column if (t, model) in by_key]
            out_rows.append(_row(row, _label(model, mine), "metabench",
                                 [_text(v, values[i - i % 3] if i % 3 else None) for i, v in enumerate(values)]))
            ceilings = [_cell(by_key, column, model, "collision_ceiling") for column in members]
            out_rows.append(_row(row, CEILING, "metabench", [_text(v) for v in ceilings]))
    return _table(table, out_rows, tasks, cell_map, by_key, models)


def dataset_majority(runs: list, folds: int) -> tuple[float, int, int] | None:
    """The paper's "Maj": the majority class's share of the data, here of the test items of the folds run,
    pooled (the five test folds partition the pool, so 5/5 folds give the dataset's share, the same in every
    regime). Not the mean of each fold's own majority share, which picks the better class per fold."""
    golds = [s["gold"] for r in runs for s in r.samples if s["seed"] == r.record.seeds[0]]
    return (max(Counter(golds).values()) / len(golds), len(runs), folds) if golds else None


FOLD_MAJORITY = "fold majority share, mean of folds (an oracle, not the paper's Maj)"


def _metrics_table(table: PaperTable, index, runs) -> dict:
    """Maj, accuracy and metaphor-class P/R/F1 per view (Tables 4 and 5)."""
    by_key, models, bound, cell_map = _lookups(index, runs)
    numbers = NUMBERS[table.key]
    out_rows, tasks = [], set()
    for row in table.rows:
        members = _members(table, row, bound, cell_map)
        tasks.update(t for column in members for t in column)
        if row[0] in numbers:
            printed = numbers[row[0]]
            marked = paper.inconsistent_f1(printed)
            out_rows.append(_row(row, paper.MODEL, "paper",
                                 [f"{v:.1f}" + (paper.F1_MARK if i in marked else "") for i, v in enumerate(printed)]))
        for model in models:
            values = [_cell(by_key, column, model, table.metrics[name]) for name, column in zip(table.columns, members)]
            if all(v is None for v in values):
                continue
            mine = [by_key[(t, model)] for column in members for t in column if (t, model) in by_key]
            maj = table.columns.index("Maj")
            values[maj] = dataset_majority([by_key[(t, model)] for t in members[maj] if (t, model) in by_key],
                                           len(members[maj]))
            out_rows.append(_row(row, _label(model, mine), "metabench", [_text(v) for v in values]))
            fold_majority = _cell(by_key, members[maj], model, "majority_accuracy")
            out_rows.append(_row(row, FOLD_MAJORITY, "metabench",
                                 [_text(fold_majority) if i == maj else "—" for i in range(len(values))]))
    out = _table(table, out_rows, tasks, cell_map, by_key, models)
    if any(paper.inconsistent_f1(numbers[row[0]]) for row in table.rows if row[0] in numbers):
        out["notes"].append(paper.F1_NOTE)
    return out


def _table(table: PaperTable, rows: list[dict], tasks: set, cell_map: dict, by_key: dict, models: list[str]) -> dict:
    return {"key": table.key, "paper": table.paper, "number": table.number, "title": table.title,
            "header": [*table.row_header, "model", *table.columns], "rows": _dedupe(rows), "tasks": sorted(tasks),
            "missing_tasks": [], "notes": _notes(cell_map, by_key, models)}


def _notes(cell_map: dict, by_key: dict, models: list[str]) -> list[str]:
    """How to read the cells, and the cells (not their many fold × view tasks) without any run."""
    missing = sorted(cell for cell, views in cell_map.items() if cell.startswith("boisson_")
                     and not any((t, m) in by_key for members in views.values() for t in members for m in models))
    notes = ["[k/n]: only k of the n folds were run (mean over those); '(partial)': a --limit run on part of the "
             "test split; 'collision ceiling': the best accuracy any model could reach from that view's input alone; "
             "Maj: the majority class's share of the pooled test folds (the dataset's, with every fold run)"]
    return notes + ([f"no runs yet for: {', '.join(missing)}"] if missing else [])


def _label(model: str, runs: list) -> str:
    """The model, marked '(partial)' when one of its runs here scored only part of a test split."""
    return model + (" (partial)" if any(getattr(r, "partial", False) for r in runs) else "")


def _dedupe(rows: list[dict]) -> list[dict]:
    """The ceiling and the fold majority do not depend on the model: keep them once per dataset row."""
    seen, out = set(), []
    for row in rows:
        key = (tuple(row["labels"]), row["model"], tuple(row["cells"]))
        if row["model"] in (CEILING, FOLD_MAJORITY) and key in seen:
            continue
        seen.add(key)
        out.append(row)
    return out


def boisson_tables(index, runs: list) -> list[dict]:
    """Tables 2, 3, 4 and 5 (only those with at least one run)."""
    tables = [_view_table(VIEW_BY_KEY[key], index, runs) for key in ("boisson_table_2", "boisson_table_3")]
    tables += [_metrics_table(VIEW_BY_KEY[key], index, runs) for key in ("boisson_table_4", "boisson_table_5")]
    return [t for t in tables if any(row["source"] == "metabench" for row in t["rows"])]


def gameability_table(rows: list[dict]) -> dict:
    """The gameability rows (``gameability.assess``) as one more paper-layout table."""
    header = ["Cell", "model", "folds", "Def", "PME", "Masked", "best view", "best / Def", "Δ macro-F1 (95% CI)", "p",
              "gameable (< 5 % loss)", "rules that fired"]
    out = []
    for r in rows:
        v, rel, b = r["values"], r["relative"], r["bootstrap"]
        view = lambda name: "—" if name not in v else f"{100 * v[name]:.2f}" + (f" ({100 * rel[name]:+.1f}%)" if name in rel else "")  # noqa: E731
        out.append(_row((r["cell"],), r["model"], "metabench", [
            r["folds"], view("default"), view("pme_only"), view("masked"), r["best_view"], f"{100 * r['share_of_default']:.1f}%",
            f"{100 * b['delta']:+.2f} [{100 * b['ci_low']:+.2f}, {100 * b['ci_high']:+.2f}]", f"{b['pvalue']:.3g}",
            "yes" if r["gameable"] else "no", r["why"]]))
    return {"key": "boisson_gameability", "paper": PAPER, "number": "Gameability",
            "title": "Per cell and model: does the best incomplete-information view lose less than 5 % of Def's "
                     "macro-F1 (the paper's 'competitive')? Beside it, the rules that fired: not significantly worse "
                     "(paired bootstrap, same test items; metabench's test, the paper has none) and ≥ 90 % of Def",
            "header": header, "rows": out, "tasks": [], "missing_tasks": [],
            "notes": ["folds k/n: only k of the n folds were run in every compared view; the flag uses those"]}


def artifact_report(registry, runs: list, *, alpha: float = 0.05, n_resamples: int = 2000) -> tuple[list[dict], list[dict]]:
    """(gameability rows, tables for the leaderboard's paper views); empty when no run has views."""
    from metabench.plugin_api import TaskIndex  # noqa: PLC0415
    from .gameability import assess  # noqa: PLC0415

    if not any("@" in r.record.task.name for r in runs):
        return [], []
    index = TaskIndex(registry)
    rows = assess(index, runs, alpha=alpha, n_resamples=n_resamples)
    tables = boisson_tables(index, runs)
    return rows, tables + ([gameability_table(rows)] if rows else [])
