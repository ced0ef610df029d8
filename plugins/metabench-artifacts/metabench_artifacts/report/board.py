"""The leaderboard's gameability section: Boisson et al.'s Tables 2-5 rebuilt from runs, and the gameability flag.

Registered by ``artifacts/plugin.py`` as the board section ``gameability``: its rows go into
``board.section("gameability")`` and its tables, in the paper-view layout, join the board's paper tables.
"""

from __future__ import annotations

from metabench.plugin_api import BoardInputs, BoardSection
from .tables import artifact_report


def gameability_section(inputs: BoardInputs) -> BoardSection:
    """One run per task and model (the whole split where there is one), as every paired analysis of the board."""
    rows, tables = artifact_report(inputs.registry, inputs.one_per_model, alpha=inputs.alpha)
    return BoardSection(rows, tables)
