"""The hard family's section in leaderboard.md (registered with ``markdown=``, `hard`): VUA-Verb
runs per phi bin of a SOR model, one table per run, after the gaps. The site shows the same rows through
``templates/hardness.html``."""

from __future__ import annotations

from metabench.plugin_api import Board, markdown_escape as escape, markdown_table as table, MISSING
from .board import HardnessSection


def lines(board: Board, name: str) -> list[str]:
    """The section ``board.section(name)`` (`board.HardnessSection`; its JSON in a board read from a file) as
    Markdown; nothing when it has no row."""
    hardness = board.sections().get(name)
    if isinstance(hardness, dict):
        hardness = HardnessSection.model_validate(hardness)
    if hardness is None or not hardness.rows:
        return []
    out = ["## Hardness: recall on the metaphors that confuse a SOR model", "",
           "Each VUA-Verb test item's WordNet sense gets the overlap phi of a sense-only representation (beyond Li et "
           f"al.; docs/hard-metaphors.md); per phi bin, counts and {board.confidence:.0%} Wilson intervals, the "
           "run's first seed.", ""]
    for table_info in hardness.tables:
        partial = f" PARTIAL SOR: {table_info.sor_steps} of the paper's 900 steps." if table_info.sor_steps != 900 else ""
        if table_info.differs:
            partial += f" SOR settings that differ from the paper's: {table_info.differs}."
        out += [f"phi source: {escape(table_info.label)}; {table_info.items_with_phi} items with a phi.{partial}", ""]
    for row in hardness.rows:
        out += [f"### {escape(row.task)} · {escape(row.model)}{' (partial run)' if row.partial else ''} · "
                f"seed {row.seed} · phi of {escape(row.phi_source)}", ""]
        rows = [[b["phi_bin"], b["items"], b["metaphors"], _rate(b["recall"], b["recall_ci"]), b["predicted_metaphors"],
                 _rate(b["precision"], b["precision_ci"])] for b in row.bins]
        out += table(["phi bin", "items", "metaphors", "recall (CI)", "predicted metaphors", "precision (CI)"], rows)
    return out


def _rate(value, ci) -> str:
    if value is None:
        return MISSING
    return f"{value:.3f} ({ci[0]:.3f}, {ci[1]:.3f})"
