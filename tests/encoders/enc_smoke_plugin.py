"""Test plugin: a small Meta4XNLI EN detection task for the real-model smoke test."""

from pathlib import Path

from metabench.hookspecs import hookimpl


@hookimpl
def metabench_register_tasks(register):
    register(str(Path(__file__).parent / "fixtures" / "smoke_tasks"))
