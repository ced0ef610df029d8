"""Paper-layout views: the papers' result tables rebuilt from runs, with the papers' own numbers alongside.

A view is the layout of one printed table: its rows, its columns and the metric each column shows
(:mod:`metabench.config.paper_layouts`, beside the task configuration that binds to it). Which task fills
which cell is not written there but in the task's YAML (``metadata.paper_view: {table, row,
column}``), recorded in every run's results (``task.paper_view``): so a renamed task keeps its cells,
`metabench validate` rejects a binding to a row or column the view lacks, a test fails when a cell has no
task, and a leaderboard fills the views from run files alone. A plugin's tasks bind to the views the same
way. A view whose cells need more than a mean over bound tasks names the module that renders it
(``filled_by``: Boisson et al.'s tables, rendered by ``metabench_artifacts.report.tables`` with fold counts and
relative gaps); its rows and columns are declared and its bindings validated all the same.

Each row of a view is shown once per model: first the papers' models as printed (labelled ``paper``), then
every metabench model with a complete run on one of the view's tasks (runs with ``--limit`` stay out: the
papers print full test sets). A cell without a run shows "—".

A cell bound to several tasks (MUNCH reports the mean (SD) over three prompt variants, each a task) shows
the mean and the sample SD of the tasks' values once ``tasks_per_cell`` of them have runs; a single-task
cell shows the mean ± std over seeds. An ``average`` row, where the paper has one, is the unweighted mean
of the rows above, as in the paper.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..config.paper_layouts import VIEW_BY_KEY, PaperTable
from .paper_numbers import PAPER_NUMBERS

MISSING = "—"


@dataclass
class Cells:
    """Which tasks fill each cell of each view, and the notes they carry: gathered from task bindings."""

    tasks: dict  # (view key, row, column) -> sorted task names
    notes: dict  # view key -> {note: sorted task names}

    @classmethod
    def from_bindings(cls, bindings, views: dict[str, PaperTable] | None = None) -> "Cells":
        """``bindings``: (task name, binding dict as recorded in results.json ``task.paper_view``) pairs;
        ``views``: the registered paper views by key (default: the built-in ones)."""
        tasks: dict = {}
        notes: dict = {}
        views = VIEW_BY_KEY if views is None else views
        for task, binding in bindings:
            view = views.get(binding["table"])
            if view is None:
                continue  # a view this metabench does not have (a newer one, or a plugin's)
            column = binding.get("column")
            columns = view.columns if column is None else [column] if isinstance(column, str) else column
            for col in columns:
                key = (view.key, tuple(binding["row"]), col)
                tasks[key] = sorted({*tasks.get(key, ()), task})
            if binding.get("note"):
                named = notes.setdefault(view.key, {}).setdefault(binding["note"], [])
                named[:] = sorted({*named, task})
        return cls(tasks, notes)

    def of(self, view: PaperTable, row, column) -> list[str]:
        return self.tasks.get((view.key, tuple(row), column), [])

    def view_tasks(self, view: PaperTable) -> list[str]:
        return sorted({t for (key, _, _), names in self.tasks.items() if key == view.key for t in names})

#: (task, model) -> that run's metrics aggregate {metric: {"mean", "std", "n"}}
Aggregates = dict[tuple[str, str], dict[str, dict]]


def _value(table: PaperTable, cells: Cells, row, column, model: str, runs: Aggregates):
    """(mean, std or None) of one cell for one model, or None while the cell lacks a complete set of runs."""
    tasks = cells.of(table, row, column)
    if len(tasks) != table.tasks_per_cell:
        return None
    metric = table.metrics[column]
    found = [runs.get((task, model), {}).get(metric) or {} for task in tasks]
    if any(f.get("mean") is None for f in found):
        return None
    if len(found) == 1:
        return found[0]["mean"], found[0]["std"] if found[0].get("n", 1) > 1 else None
    means = [f["mean"] for f in found]
    return statistics.fmean(means), statistics.stdev(means)


def format_value(value: tuple[float, float | None] | None, percent: bool) -> str:
    if value is None:
        return MISSING
    mean, std = value
    if percent:
        return f"{100 * mean:.2f}" + ("" if std is None else f" ± {100 * std:.2f}")
    short = f"{mean:.2f}".replace("0.", ".", 1)
    return short + ("" if std is None else f" ({std:.2f})".replace("0.", ".", 1))


def fill(table: PaperTable, cells: Cells, models: list[str], runs: Aggregates, labels: dict[str, str] | None = None) -> dict:
    """The view as JSON-ready rows: for each table row, the paper's models then the ``models`` with runs.

    ``runs`` holds complete runs only (the caller leaves out runs with ``--limit``); ``labels`` names a model
    differently where its runs need a word beside their numbers (a budget run is marked partial)."""
    labels = labels or {}
    tasks = cells.view_tasks(table)
    present = [m for m in models if any((t, m) in runs for t in tasks)]
    rows = []
    for row in table.rows:
        rows.extend(_paper_rows(table, row))
        for model in present:
            values = [_value(table, cells, row, col, model, runs) for col in table.columns]
            rows.append(_row(row, labels.get(model, model), "metabench", [format_value(v, table.percent) for v in values]))
    if table.average_row:
        rows.extend(_paper_rows(table, table.average_row))
        for model in present:
            averages = []
            for col in table.columns:
                values = [_value(table, cells, row, col, model, runs) for row in table.rows]
                averages.append(format_value(None if None in values else (statistics.fmean(v[0] for v in values), None),
                                             table.percent))
            rows.append(_row(table.average_row, labels.get(model, model), "metabench", averages))
    unbound = [(row, col) for row in table.rows for col in table.columns
               if len(cells.of(table, row, col)) != table.tasks_per_cell]
    return {
        "key": table.key, "paper": table.paper, "number": table.number, "title": table.title,
        "header": [*table.row_header, "model", *table.columns], "rows": rows, "tasks": tasks,
        "missing_tasks": [t for t in tasks if not any((t, m) in runs for m in models)],
        "cells_without_runs": len(unbound), "cells": len(table.rows) * len(table.columns),
        "notes": [f"{note} ({', '.join(tasks)})" if len(tasks) <= 2 else f"{note} ({len(tasks)} tasks)"
                  for note, tasks in sorted(cells.notes.get(table.key, {}).items())],
    }


def _row(labels, model: str, source: str, cells: list[str]) -> dict:
    return {"labels": list(labels), "model": model, "source": source, "cells": cells}


def _paper_rows(table: PaperTable, row) -> list[dict]:
    rows = []
    paper = table.numbers if table.numbers is not None else PAPER_NUMBERS.get(table.key, {})
    for model, numbers in paper.items():
        printed = numbers.get(row)
        cells = [c.strip() for c in printed.split("|")] if printed else [MISSING] * len(table.columns)
        rows.append(_row(row, model, "paper", cells))
    return rows
