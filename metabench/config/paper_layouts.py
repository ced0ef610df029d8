"""The layouts of the papers' printed result tables (paper views): rows, columns and the metric each column shows.

They live with the task configuration because a task binds to them: ``metadata.paper_view: {table, row,
column}`` in its YAML names a cell, and ``metabench validate`` rejects a binding to a row or column the view
lacks (:func:`check_binding`). The reporter fills the views from run files (``report/paper_views.py``); a view
whose cells need more than a mean over bound tasks names the module that renders it (``filled_by``).
Meta4XNLI's and MUNCH's tables are here; a paper family's own tables live in its package and are registered
like a plugin's (Boisson et al.'s: `metabench_artifacts.paper_layouts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

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
    #: the paper's printed numbers, model -> row -> "cell | cell | ..." (a plugin's view brings its own; the
    #: built-in views' are in ``metabench/report/paper_numbers.py``)
    numbers: dict | None = field(default=None, compare=False)

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
)
VIEW_BY_KEY = {view.key: view for view in VIEWS}
#: the views ``fill`` renders: every built-in one here (a family's own views, Boisson et al.'s in
#: `metabench_artifacts.paper_layouts`, name the module that renders them)
FILLED_VIEWS = tuple(view for view in VIEWS if view.filled_by is None)


def registered_views(registry) -> dict[str, PaperTable]:
    """The paper views plugins registered (``metabench_register_paper_views``; the built-in ones and the
    families' too), by key; without a registry, the built-in views here."""
    if registry is None:
        return dict(VIEW_BY_KEY)
    return {name: registry.resolve("paper_view", name) for name in registry.names("paper_view")}


def check_binding(binding, views: Mapping[str, PaperTable] | None = None) -> str | None:
    """Why a task's ``metadata.paper_view`` entry names no cell of a known view (None when it does); ``views``:
    the registered ones (:func:`registered_views`), by default the built-in ones."""
    views = VIEW_BY_KEY if views is None else views
    view = views.get(binding.table)
    if view is None:
        return f"no paper view '{binding.table}'; the views are: {', '.join(views)}"
    return view.check(binding.row, binding.columns(view.columns))
