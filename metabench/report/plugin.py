"""Registers the leaderboard's output formats (``metabench leaderboard build --format NAME``), the report verbs,
the filled paper views and the docs tables that belong to no paper family.

A reporter is ``write(board: dict, out_dir: Path) -> list[Path]``; ``board`` is the content of
``leaderboard.json`` (see ``metabench.report.leaderboard.board``).
"""

from __future__ import annotations

from metabench.hookspecs import hookimpl, register_each

_L = "metabench.report.leaderboard"
#: generated docs tables that belong to no paper family (the families register their own): name -> (target, what)
_D = "metabench.report.docs"
DOCS_BLOCKS = {
    "paired-effects": (f"{_D}.paraphrase:paired_effects_table", "paired metaphor effects, original vs paraphrase"),
    "headline": (f"{_D}.headline:headline_table",
                 "one model's primary metric per task or k-fold group, beside published numbers"),
    "suite": (f"{_D}.suite:suite_table", "what `--tasks SUITE --model M` gives, from the committed runs"),
    "dry-run": (f"{_D}.suite:dry_run_block", "what `metabench run --dry-run` prints for a selection"),
    "decoder-taggers": (f"{_D}.decoders:taggers_table",
                        "decoders fine-tuned as taggers: scores, budget, training and decoding cost"),
    "calibration": (f"{_D}.calibration:calibration_table", "the tests' simulated type-I error, coverage and power"),
    "gate-false-fails": (f"{_D}.calibration:gate_table", "null comparisons replayed through the gate"),
}


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


metabench_register_docs_blocks = register_each(DOCS_BLOCKS)
