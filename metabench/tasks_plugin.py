"""Registers the built-in task folder, and ``metabench export``, which writes those tasks for lm-eval.

In a source checkout (and an editable install) it is the top-level ``tasks/``; a wheel ships the same
files as ``metabench/builtin_tasks`` (see pyproject.toml).
"""

from pathlib import Path

from .hookspecs import hookimpl


def builtin_task_dir() -> Path:
    packaged = Path(__file__).parent / "builtin_tasks"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "tasks"


@hookimpl
def metabench_register_tasks(register):
    register(str(builtin_task_dir()))


@hookimpl
def metabench_register_commands(register):
    register("export", "metabench.commands.export:add_commands", description="prompted tasks as lm-eval tasks")
