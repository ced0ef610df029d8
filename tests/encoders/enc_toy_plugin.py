"""Test plugin: encoder tasks over the toy datasets of ``toy_plugin`` (load both)."""

from pathlib import Path

from metabench.hookspecs import hookimpl


@hookimpl
def metabench_register_tasks(register):
    register(str(Path(__file__).parent / "fixtures" / "toy_tasks"))
