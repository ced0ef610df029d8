"""Registers the artifact tasks (``tasks/`` beside this module, with the core suite's Boisson members), the artifact
datasets (Boisson recipes, artifact-controlled samples), diagnostics metrics, the
``metabench artifacts`` verbs and ``compare artifacts``, Boisson et al.'s paper views, the leaderboard's gameability
section and the artifact docs tables, through the hooks a third-party plugin uses."""

from __future__ import annotations

from pathlib import Path

from metabench.plugin_api import hookimpl, register_each, register_folder

_M = "metabench_artifacts.metrics"
METRICS = {
    "majority_accuracy": (f"{_M}:majority_accuracy", "share of the test set's most frequent gold label (Boisson's Maj)"),
    "collision_ceiling": (
        f"{_M}:collision_ceiling",
        "best accuracy any model could reach from the view's input string alone (identical inputs, one answer)",
    ),
}
_R = "metabench_artifacts.report"
#: generated docs tables (docs/artifacts.md): name -> (target, description)
DOCS_BLOCKS = {
    "boisson-views": (f"{_R}.docs:views_table", "fold-mean macro-F1 per view of one model, beside the paper's"),
    "boisson-gameability": (f"{_R}.docs:gameability_table", "`compare artifacts` for the committed runs"),
    "boisson-majority": (f"{_R}.docs:majority_table", "the paper's Maj beside the fold majority and the baseline"),
    "boisson-baselines": (f"{_R}.docs:baselines_table", "the model-free baselines' fold-mean macro-F1 per view"),
    "boisson-samples": (f"{_R}.docs:samples_table", "matched vs random literal partners: Def, PME, lookups, ceiling"),
    "boisson-paper-f1": (f"{_R}.docs:paper_f1_table", "the paper's F1 cells that do not follow from their P and R"),
}


metabench_register_tasks = register_folder(Path(__file__).parent / "tasks")


@hookimpl
def metabench_register_datasets(register):
    from .derived import specs  # noqa: PLC0415

    for spec in specs():
        register(spec)


metabench_register_commands = register_each({
    "artifacts": ("metabench_artifacts.commands:add_commands",
                  "construction artifacts: gameability of input views"),
})


metabench_register_compare_analyses = register_each({
    "artifacts": ("metabench_artifacts.commands:COMPARE_ARTIFACTS",
                  "input views of Boisson et al.'s cells: relative gaps and the gameability flag"),
})


metabench_register_metrics = register_each(METRICS)


@hookimpl
def metabench_register_paper_views(register):
    """Boisson et al.'s Tables 2-5 (rendered by ``metabench_artifacts.report.tables``, their ``filled_by``)."""
    from .paper_layouts import VIEWS  # noqa: PLC0415 - layouts only, no data

    for view in VIEWS:
        register(view)


@hookimpl
def metabench_register_board_sections(register):
    register("gameability", f"{_R}.board:gameability_section",
             family=("artifacts", "Construction artifacts", ("artifacts",)),
             description="Boisson et al.'s Tables 2-5 rebuilt from runs, and the gameability flag per cell and model")


metabench_register_docs_blocks = register_each(DOCS_BLOCKS)
