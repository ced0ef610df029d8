"""Registers the leaderboard's output formats (``metabench leaderboard build --format NAME``).

A reporter is ``write(board: dict, out_dir: Path) -> list[Path]``; ``board`` is the content of
``leaderboard.json`` (see ``metabench.report.leaderboard.board``).
"""

from __future__ import annotations

from metabench.hookspecs import hookimpl

_L = "metabench.report.leaderboard"


@hookimpl
def metabench_register_reporters(register):
    register("markdown", f"{_L}.markdown:write", description="leaderboard.md: overview, per-task tables, gaps, paper tables")
    register("json", f"{_L}.jsonfile:write", description="leaderboard.json: everything the other formats show")
    register("html", f"{_L}.site:write", description="static site: sortable tables, task and model pages, SVG plots")


@hookimpl
def metabench_register_commands(register):
    register("report", "metabench.commands.report:add_commands", description="compare, gate, leaderboard")
    register("explore", "metabench.commands.explore:add_commands", description="a local page of a run's per-item answers")
    register("stats", "metabench.commands.stats:add_commands", description="calibrate: simulated error rates of the tests")


@hookimpl
def metabench_register_paper_views(register):
    """Meta4XNLI's and MUNCH's result tables, filled by ``report/paper_views.py`` (Boisson et al.'s come with
    the artifacts family)."""
    from metabench.config.paper_layouts import FILLED_VIEWS  # noqa: PLC0415 - layouts only, no data

    for view in FILLED_VIEWS:
        register(view)
