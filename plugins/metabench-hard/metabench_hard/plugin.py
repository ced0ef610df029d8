"""Registers the hard-metaphor tasks (``tasks/`` beside this module), the derived ``hard_metaphors`` dataset, the
``metabench hard`` verbs and ``compare hardness``, the leaderboard's hardness section and the hard-metaphor docs
tables, through the hooks a third-party plugin uses."""

from __future__ import annotations

from pathlib import Path

from metabench.plugin_api import hookimpl, register_each, register_folder

_R = "metabench_hard.report"


metabench_register_tasks = register_folder(Path(__file__).parent / "tasks")


@hookimpl
def metabench_register_datasets(register):
    from .dataset import specs  # noqa: PLC0415 - only builds a DatasetSpec; nothing is read

    for spec in specs():
        register(spec)


_C = "metabench_hard.commands"
metabench_register_commands = register_each({
    "hard": (f"{_C}:add_commands", "hard metaphors: SOR training, phi mining, HARD(M) statistics, breakdowns by phi")})
metabench_register_compare_analyses = register_each({
    "hardness": (f"{_C}:COMPARE_HARDNESS", "detectors' recall and precision per phi bin of a SOR model (hard metaphors)")})


@hookimpl
def metabench_register_board_sections(register):
    from .phi_table import TABLE_FILE  # noqa: PLC0415 - a file name; the tables are read when the board is built

    register("hardness", f"{_R}.board:hardness_section", reads=TABLE_FILE,
             family=("hard_metaphors", "Hard metaphors", ("hard_metaphors",)),
             html=f"{_R}:templates/hardness.html", markdown=f"{_R}.markdown:lines",
             description="VUA-Verb runs by phi bin of each SOR model's phi table found beside the runs")


#: generated docs tables (docs/hard-metaphors.md): name -> (target, description)
metabench_register_docs_blocks = register_each({
    "hard-gap": (f"{_R}.docs:gap_table", "one detector on HARD(M) vs VUA-Verb: the gap and its tests, per gap report"),
    "hard-bins": (f"{_R}.docs:bins_table", "recall on HARD(M) by phi bin (the paper's Fig 5b), per gap report"),
    "hard-detector": (f"{_R}.docs:detector_table", "every committed run of one HARD task"),
    "hard-phi-bins": (f"{_R}.docs:phi_bins_table", "one VUA-Verb run by phi bin of each committed phi table"),
})
