"""Registers the built-in task folder.

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
