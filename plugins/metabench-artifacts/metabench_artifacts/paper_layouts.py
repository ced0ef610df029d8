"""Boisson et al.'s printed result tables (Tables 2-5) as paper views: the artifacts family's own layouts.

Registered by ``artifacts/plugin.py`` (``metabench_register_paper_views``) like a third party's views, and rendered
by `metabench_artifacts.report.tables` (their ``filled_by``): each row is filled by a *cell* (a k-fold group or a
task declaring views), whose ``metadata.paper_view`` names the row and the columns; a column's last word is the
view (Def, PME, Masked). ``metabench validate`` checks a task's binding against them through the registry.
"""

from __future__ import annotations

from metabench.plugin_api import PaperTable

BOISSON = "Construction Artifacts in Metaphor Identification Datasets (Boisson et al., EMNLP 2023)"
_BOISSON_VIEWS = ("Def", "PME", "Masked")
_BOISSON_ROWS = tuple((r,) for r in ("CARD_N", "JANK", "TroFi", "TSV_AN", "TSV_AN_L2", "MOH", "MAGPIE", "VUAC_ST1",
                                     "VUAC_ST2", "VUAC_BO"))
_BOISSON_METRICS = {"Maj": "majority_accuracy", **{f"{name} {v}": metric for name, metric in (
    ("Acc", "accuracy"), ("P", "precision"), ("R", "recall"), ("F1", "f1")) for v in _BOISSON_VIEWS}}
_ARTIFACTS = "metabench_artifacts.report.tables"

VIEWS: tuple[PaperTable, ...] = (
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
