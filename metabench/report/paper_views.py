"""Paper-layout views: the papers' result tables rebuilt from runs, with the papers' own numbers alongside.

A view is the layout of one printed table: its rows, its columns and the metric each column shows. Which
task fills which cell is not written here but in the task's YAML (``metadata.paper_view: {table, row,
column}``), recorded in every run's results (``task.paper_view``): so a renamed task keeps its cells,
`metabench validate` rejects a binding to a row or column the view lacks, a test fails when a cell has no
task, and a leaderboard fills the views from run files alone. A plugin's tasks bind to the views the same
way; a plugin adds a view by appending a `PaperTable` to `VIEWS` together with its `PAPER_NUMBERS`. A view
whose cells need more than a mean over bound tasks names the module that renders it (``filled_by``: Boisson
et al.'s tables, rendered by ``metabench.artifacts.tables`` with fold counts and relative gaps); its rows and
columns are declared and its bindings validated here all the same.

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

from .paper_numbers import PAPER_NUMBERS

MISSING = "—"
META4XNLI = "Meta4XNLI (Sanchez-Bayona & Agerri, Computational Linguistics 2025)"
MUNCH = "MUNCH: Metaphor Understanding Challenge Dataset for LLMs"


@dataclass(frozen=True)
class PaperTable:
    """One printed table: rows (tuples of labels), columns, and the metric shown in each column."""

    key: str
    paper: str
    number: str
    title: str
    row_header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    metrics: dict  # column label -> metric name, in the printed column order
    percent: bool  # Meta4XNLI prints percentages "67.17 ± 0.72"; MUNCH prints fractions ".28 (.18)"
    average_row: tuple[str, ...] | None = None
    tasks_per_cell: int = 1  # tasks averaged in one cell (MUNCH: 3 prompt variants)
    #: module that renders the view instead of ``fill`` (its cells need more than a mean over bound tasks);
    #: bindings to it are still declared and validated here
    filled_by: str | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.metrics)

    def check(self, row, columns) -> str | None:
        """Why a binding to ``row`` and ``columns`` does not fit this view (None when it does)."""
        if tuple(row) not in self.rows:
            return f"view '{self.key}' has no row {list(row)}; its rows are: " + "; ".join(str(list(r)) for r in self.rows)
        unknown = [c for c in columns if c not in self.metrics]
        if unknown:
            return f"view '{self.key}' has no column '{unknown[0]}'; its columns are: {', '.join(self.columns)}"
        return None


_DETECTION = {"F1": "span_f1", "Inv": "inv_f1", "Oov": "oov_f1", "P": "span_precision", "R": "span_recall"}
_SOURCES = tuple((source, subset) for source in ("XNLI_dev", "XNLI_test", "esXNLI") for subset in ("metaphor", "no metaphor"))
_AVERAGE = ("average", "")

# Boisson et al.'s tables: each row is filled by a *cell* (a k-fold group or a task declaring views), whose
# `metadata.paper_view` names the row and the columns; a column's last word is the view (Def, PME, Masked).
BOISSON = "Construction Artifacts in Metaphor Identification Datasets (Boisson et al., EMNLP 2023)"
_BOISSON_VIEWS = ("Def", "PME", "Masked")
_BOISSON_ROWS = tuple((r,) for r in ("CARD_N", "JANK", "TroFi", "TSV_AN", "TSV_AN_L2", "MOH", "MAGPIE", "VUAC_ST1",
                                     "VUAC_ST2", "VUAC_BO"))
_BOISSON_METRICS = {"Maj": "majority_accuracy", **{f"{name} {v}": metric for name, metric in (
    ("Acc", "accuracy"), ("P", "precision"), ("R", "recall"), ("F1", "f1")) for v in _BOISSON_VIEWS}}
_ARTIFACTS = "metabench.artifacts.tables"
VIEWS: tuple[PaperTable, ...] = (
    PaperTable("meta4xnli_table_11", META4XNLI, "Table 11", "Monolingual metaphor detection (span F1, %)",
               ("Train", "Test"), (("M4X_ES", "M4X_ES"), ("M4X_ES", "CoMeta"), ("M4X_EN", "M4X_EN"), ("M4X_EN", "VUAM")),
               _DETECTION, percent=True),
    PaperTable("meta4xnli_table_12", META4XNLI, "Table 12", "Monolingual metaphor detection, decoders fine-tuned as "
               "taggers (%)", ("Train", "Test"), (("M4X_ES", "M4X_ES"), ("M4X_ES", "CoMeta"), ("M4X_EN", "M4X_EN"),
                                                 ("M4X_EN", "VUAM")), _DETECTION, percent=True),
    PaperTable("meta4xnli_table_13", META4XNLI, "Table 13", "Multilingual metaphor detection (%)", ("Train",),
               (("M4X_ES+EN",),), {f"{lang} {col}": m for lang in ("ES", "EN") for col, m in _DETECTION.items()},
               percent=True),
    PaperTable("meta4xnli_table_14", META4XNLI, "Table 14", "Zero-shot cross-lingual metaphor detection (%)",
               ("Train → Test",), (("ES → EN",), ("EN → ES",)),
               {"F1": "span_f1", "P": "span_precision", "R": "span_recall"}, percent=True),
    PaperTable("meta4xnli_table_15", META4XNLI, "Table 15", "NLI accuracy, encoders fine-tuned on an NLI corpus (%)",
               ("Source", "Subset"), _SOURCES, {"EN": "accuracy", "ES": "accuracy"}, percent=True, average_row=_AVERAGE),
    PaperTable("meta4xnli_table_16", META4XNLI, "Table 16", "NLI accuracy, LLMs prompted zero-shot (zs) or with the "
               "3-example 'chain' prompt (%)", ("Source", "Subset"), _SOURCES,
               {f"{prompt} {lang}": "accuracy" for prompt in ("zs", "chain") for lang in ("EN", "ES")}, percent=True,
               average_row=_AVERAGE),
    PaperTable("meta4xnli_table_17", META4XNLI, "Table 17", "NLI accuracy, encoders fine-tuned on Meta4XNLI (%)",
               ("Train", "Test"), tuple((train, test) for train in ("No Met", "All") for test in ("Met", "No Met")),
               {"EN": "accuracy", "ES": "accuracy"}, percent=True, average_row=_AVERAGE),
    PaperTable("munch_table_2", MUNCH, "Table 2", "Paraphrase judgement accuracy, mean (SD) over 3 prompts",
               ("Setup", "Condition"),
               tuple((setup, condition) for setup in ("Word-judge", "Sent-judge") for condition in ("Implicit", "M-Sent", "M-Word")),
               {"accuracy": "accuracy"}, percent=False, tasks_per_cell=3),
    PaperTable("munch_table_3", MUNCH, "Table 3", "Paraphrase generation, mean (SD) over 3 prompts", ("Prompts",),
               (("all prompts",),), {"MRR": "mrr", "Recall@5": "recall_at_k[k=5]", "Recall@10": "recall_at_k[k=10]"},
               percent=False, tasks_per_cell=3),
    PaperTable("boisson_table_2", BOISSON, "Table 2", "Original splits, macro-F1 (%)", ("Dataset",),
               (("TroFi",), ("TSV_AN",), ("TSV_SVO",), ("VUAC_ST1",)), {v: "macro_f1" for v in _BOISSON_VIEWS},
               percent=True, filled_by=_ARTIFACTS),
    PaperTable("boisson_table_3", BOISSON, "Table 3", "Random and lexical 5-fold splits, macro-F1 (%), fold mean",
               ("Dataset",), _BOISSON_ROWS,
               {f"{regime} {v}": "macro_f1" for regime in ("Random", "Lexical") for v in _BOISSON_VIEWS},
               percent=True, filled_by=_ARTIFACTS),
    PaperTable("boisson_table_4", BOISSON, "Table 4", "Random splits: majority-class accuracy, accuracy and "
               "metaphor-class P/R/F1 (%)", ("Dataset",), tuple(r for r in _BOISSON_ROWS if r != ("TSV_AN_L2",)),
               _BOISSON_METRICS, percent=True,
               filled_by=_ARTIFACTS),
    PaperTable("boisson_table_5", BOISSON, "Table 5", "Lexical splits: as Table 4", ("Dataset",), _BOISSON_ROWS,
               _BOISSON_METRICS, percent=True, filled_by=_ARTIFACTS),
)
VIEW_BY_KEY = {view.key: view for view in VIEWS}
#: the views ``fill`` renders (the others name the module that does)
FILLED_VIEWS = tuple(view for view in VIEWS if view.filled_by is None)


def check_binding(binding) -> str | None:
    """Why a task's ``metadata.paper_view`` entry names no cell of a known view (None when it does)."""
    view = VIEW_BY_KEY.get(binding.table)
    if view is None:
        return f"no paper view '{binding.table}'; the views are: {', '.join(VIEW_BY_KEY)}"
    return view.check(binding.row, binding.columns(view.columns))


@dataclass
class Cells:
    """Which tasks fill each cell of each view, and the notes they carry: gathered from task bindings."""

    tasks: dict  # (view key, row, column) -> sorted task names
    notes: dict  # view key -> {note: sorted task names}

    @classmethod
    def from_bindings(cls, bindings) -> "Cells":
        """``bindings``: (task name, binding dict as recorded in results.json ``task.paper_view``) pairs."""
        tasks: dict = {}
        notes: dict = {}
        for task, binding in bindings:
            view = VIEW_BY_KEY.get(binding["table"])
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
    for model, numbers in PAPER_NUMBERS[table.key].items():
        printed = numbers.get(row)
        cells = [c.strip() for c in printed.split("|")] if printed else [MISSING] * len(table.columns)
        rows.append(_row(row, model, "paper", cells))
    return rows
