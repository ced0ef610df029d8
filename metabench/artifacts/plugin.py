"""Registers the artifact datasets (Boisson recipes, artifact-controlled samples) and diagnostics metrics."""

from __future__ import annotations

from metabench.hookspecs import hookimpl

_M = "metabench.artifacts.metrics"
METRICS = {
    "majority_accuracy": (f"{_M}:majority_accuracy", "share of the test set's most frequent gold label (Boisson's Maj)"),
    "collision_ceiling": (
        f"{_M}:collision_ceiling",
        "best accuracy any model could reach from the view's input string alone (identical inputs, one answer)",
    ),
}


@hookimpl
def metabench_register_datasets(register):
    from .derived import specs  # noqa: PLC0415

    for spec in specs():
        register(spec)


@hookimpl
def metabench_register_commands(register):
    register("artifacts", "metabench.commands.artifacts:add_commands",
             description="construction artifacts: gameability of input views")


@hookimpl
def metabench_register_metrics(register):
    for name, (target, description) in METRICS.items():
        register(name, target, description=description)


@hookimpl
def metabench_register_paper_views(register):
    """Boisson et al.'s Tables 2-5 (rendered by ``metabench.report.artifact_tables``, their ``filled_by``)."""
    from ..config.paper_layouts import VIEWS  # noqa: PLC0415 - layouts only, no data

    for view in VIEWS:
        if view.filled_by is not None:
            register(view)
