"""Registers the prompted toy tasks of tests/decoders/fixtures/tasks (on the toy plugin's datasets)."""

from pathlib import Path

from metabench.hookspecs import hookimpl

TASKS = Path(__file__).parent / "fixtures" / "tasks"


@hookimpl
def metabench_register_tasks(register):
    register(str(TASKS))
