"""The leaderboard's hardness section: every VUA-Verb run by phi bin of each phi table found beside the runs.

Registered by ``hard/plugin.py`` as the board section ``hardness`` (``reads="hard_phi.json"``: the tables
``metabench hard vua-phi --save`` writes), with its own views: ``templates/hardness.html`` on the site and
``markdown.lines`` in leaderboard.md (the reporters call them through the board's ``section_views``).
"""

from __future__ import annotations

from ...report.leaderboard.board import slug
from ...report.leaderboard.sections import BoardInputs, BoardSection
from ..phi_table import find_tables
from .hardness import hardness_rows


def hardness_section(inputs: BoardInputs) -> BoardSection:
    """Per phi table (a SOR model's phi of VUA-Verb test items), every ranked VUA-Verb run by phi bin."""
    phi_tables = find_tables(list(inputs.sources))
    tables = [{"label": t["label"], "sor_model": t["sor_model"], "sor_steps": t["sor_steps"],
               "sor_wall_seconds": t.get("sor_wall_seconds"), "items_with_phi": len(t["phi"]),
               "differs": ", ".join(f"{k}={v}" for k, v in sorted(t.get("sor_changed", {}).items()) if k != "steps"),
               "dataset": t["dataset"], "split": t["split"]} for t in phi_tables]
    rows = hardness_rows(inputs.runs, phi_tables, inputs.options.confidence)
    for row in rows:
        row["model_slug"], row["task_slug"] = slug(row["model"]), slug(row["task"])
        row.pop("run"), row.pop("table")  # local paths: the published files name none
    return BoardSection({"tables": tables, "rows": rows})
