"""Paper-layout views: the papers' result tables rebuilt from runs, with the papers' own numbers alongside.

Each view declares which task and metric fill each cell, by task name. The names follow the built-in task
conventions (``m4x_det_{test language}_{setup}``, ``m4x_nli_{protocol}_{language}_{source}_{met|no_met}``,
``munch_...``); a task
that has no run yet shows "—", so a view fills in as tasks are added. Each row of a view is shown once per
model: first the papers' models as printed (labelled ``paper``), then every metabench model with a run on
one of the view's tasks.

Cells over several tasks (MUNCH reports the mean (SD) over three prompt variants, each a task) show the
mean and the sample SD of the tasks' values; a single-task cell shows the mean ± std over seeds. An
``average`` row, where the paper has one, is the unweighted mean of the rows above, as in the paper.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from .paper_numbers import PAPER_NUMBERS

MISSING = "—"
META4XNLI = "Meta4XNLI (Sanchez-Bayona & Agerri, Computational Linguistics 2025)"
MUNCH = "MUNCH: Metaphor Understanding Challenge Dataset for LLMs"


@dataclass(frozen=True)
class Cell:
    """What fills one cell: a metric of one task, or the mean (SD) of that metric over several tasks."""

    tasks: tuple[str, ...]
    metric: str


@dataclass(frozen=True)
class PaperTable:
    key: str
    paper: str
    number: str
    title: str
    row_header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    columns: tuple[str, ...]
    cells: dict
    percent: bool  # Meta4XNLI prints percentages "67.17 ± 0.72"; MUNCH prints fractions ".28 (.18)"
    average_row: tuple[str, ...] | None = None

    @property
    def tasks(self) -> list[str]:
        return sorted({task for cell in self.cells.values() for task in cell.tasks})


_DETECTION = {"F1": "span_f1", "Inv": "inv_f1", "Oov": "oov_f1", "P": "span_precision", "R": "span_recall"}


def _grid(rows: dict, columns: dict) -> dict:
    """Cells of a table whose rows are tasks and whose columns are metrics."""
    return {(row, col): Cell((task,), metric) for row, task in rows.items() for col, metric in columns.items()}


def _table_11() -> PaperTable:
    rows = {
        ("M4X_ES", "M4X_ES"): "m4x_det_es_mono",
        ("M4X_ES", "CoMeta"): "m4x_det_es_mono_cometa",
        ("M4X_EN", "M4X_EN"): "m4x_det_en_mono",
        ("M4X_EN", "VUAM"): "m4x_det_en_mono_vuam",
    }
    return PaperTable("meta4xnli_table_11", META4XNLI, "Table 11", "Monolingual metaphor detection (span F1, %)",
                      ("Train", "Test"), tuple(rows), tuple(_DETECTION), _grid(rows, _DETECTION), percent=True)


def _table_13() -> PaperTable:
    row = ("M4X_ES+EN",)
    columns = {f"{lang.upper()} {col}": (f"m4x_det_{lang}_multi", metric) for lang in ("es", "en") for col, metric in _DETECTION.items()}
    cells = {(row, col): Cell((task,), metric) for col, (task, metric) in columns.items()}
    return PaperTable("meta4xnli_table_13", META4XNLI, "Table 13", "Multilingual metaphor detection (%)",
                      ("Train",), (row,), tuple(columns), cells, percent=True)


def _table_14() -> PaperTable:
    rows = {("ES → EN",): "m4x_det_en_xling", ("EN → ES",): "m4x_det_es_xling"}
    columns = {"F1": "span_f1", "P": "span_precision", "R": "span_recall"}
    return PaperTable("meta4xnli_table_14", META4XNLI, "Table 14", "Zero-shot cross-lingual metaphor detection (%)",
                      ("Train → Test",), tuple(rows), tuple(columns), _grid(rows, columns), percent=True)


def _nli_table(key: str, number: str, title: str, row_header, rows: dict, columns: dict) -> PaperTable:
    """NLI tables: rows are subsets, cells accuracy; ``columns`` maps a column to the ``{protocol}`` and
    ``{lang}`` that fill the row's task name."""
    cells = {(row, col): Cell((task.format(**fill),), "accuracy") for row, task in rows.items() for col, fill in columns.items()}
    return PaperTable(key, META4XNLI, number, title, row_header, tuple(rows), tuple(columns), cells, percent=True,
                      average_row=("average", ""))


_LANGUAGES = {"EN": {"lang": "en"}, "ES": {"lang": "es"}}


def _source_rows(protocol: str) -> dict:
    sources = {"XNLI_dev": "xnli_dev", "XNLI_test": "xnli_test", "esXNLI": "esxnli"}
    subsets = {"metaphor": "met", "no metaphor": "no_met"}
    return {(label, subset): f"m4x_nli_{protocol}_{{lang}}_{source}_{token}"
            for label, source in sources.items() for subset, token in subsets.items()}


def _table_15() -> PaperTable:
    return _nli_table("meta4xnli_table_15", "Table 15", "NLI accuracy, encoders fine-tuned on MultiNLI (%)",
                      ("Source", "Subset"), _source_rows("mnli"), _LANGUAGES)


def _table_16() -> PaperTable:
    columns = {f"{prompt} {lang.upper()}": {"protocol": protocol, "lang": lang}
               for prompt, protocol in (("zs", "zs"), ("chain", "3shot")) for lang in ("en", "es")}
    return _nli_table("meta4xnli_table_16", "Table 16", "NLI accuracy, LLMs prompted zero-shot (zs) or with the "
                      "3-example 'chain' prompt (%)", ("Source", "Subset"), _source_rows("{protocol}"), columns)


def _table_17() -> PaperTable:
    rows = {(train, test): f"m4x_nli_ft_{train_token}_{{lang}}_{test_token}"
            for train, train_token in (("No Met", "nomet"), ("All", "all"))
            for test, test_token in (("Met", "met"), ("No Met", "no_met"))}
    return _nli_table("meta4xnli_table_17", "Table 17", "NLI accuracy, encoders fine-tuned on Meta4XNLI (%)",
                      ("Train", "Test"), rows, _LANGUAGES)


def _munch_table_2() -> PaperTable:
    setups = {"Word-judge": "word", "Sent-judge": "sent"}
    conditions = {"Implicit": "implicit", "M-Sent": "msent", "M-Word": "mword"}
    cells = {
        ((setup, condition), "accuracy"): Cell(tuple(f"munch_{s}_judge_{c}_p{p}" for p in (1, 2, 3)), "accuracy")
        for setup, s in setups.items() for condition, c in conditions.items()
    }
    rows = tuple(dict.fromkeys(row for row, _ in cells))
    return PaperTable("munch_table_2", MUNCH, "Table 2", "Paraphrase judgement accuracy, mean (SD) over 3 prompts",
                      ("Setup", "Condition"), rows, ("accuracy",), cells, percent=False)


def _munch_table_3() -> PaperTable:
    row = ("all prompts",)
    columns = {"MRR": "mrr", "Recall@5": "recall_at_k[k=5]", "Recall@10": "recall_at_k[k=10]"}
    tasks = tuple(f"munch_generation_p{p}" for p in (1, 2, 3))
    cells = {(row, col): Cell(tasks, metric) for col, metric in columns.items()}
    return PaperTable("munch_table_3", MUNCH, "Table 3", "Paraphrase generation, mean (SD) over 3 prompts",
                      ("Prompts",), (row,), tuple(columns), cells, percent=False)


VIEWS: tuple[PaperTable, ...] = (
    _table_11(), _table_13(), _table_14(), _table_15(), _table_16(), _table_17(), _munch_table_2(), _munch_table_3()
)

#: (task, model) -> that run's metrics aggregate {metric: {"mean", "std", "n"}}
Aggregates = dict[tuple[str, str], dict[str, dict]]


def _value(table: PaperTable, row, column, model: str, runs: Aggregates) -> tuple[float, float | None] | None:
    cell = table.cells.get((row, column))
    if cell is None:
        return None
    found = [runs.get((task, model), {}).get(cell.metric) or {} for task in cell.tasks]
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


def fill(table: PaperTable, models: list[str], runs: Aggregates) -> dict:
    """The view as JSON-ready rows: for each table row, the paper's models then the ``models`` with runs."""
    tasks = table.tasks
    present = [m for m in models if any((t, m) in runs for t in tasks)]
    rows = []
    for row in table.rows:
        rows.extend(_paper_rows(table, row))
        for model in present:
            values = [_value(table, row, col, model, runs) for col in table.columns]
            rows.append(_row(row, model, "metabench", [format_value(v, table.percent) for v in values]))
    if table.average_row:
        rows.extend(_paper_rows(table, table.average_row))
        for model in present:
            cells = []
            for col in table.columns:
                values = [_value(table, row, col, model, runs) for row in table.rows]
                cells.append(format_value(None if None in values else (statistics.fmean(v[0] for v in values), None),
                                          table.percent))
            rows.append(_row(table.average_row, model, "metabench", cells))
    return {
        "key": table.key, "paper": table.paper, "number": table.number, "title": table.title,
        "header": [*table.row_header, "model", *table.columns], "rows": rows, "tasks": tasks,
        "missing_tasks": [t for t in tasks if not any((t, m) in runs for m in models)],
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
