"""A fixture registry where a baseline cannot serve every task: the toy plugin's tasks, the prompted toy tasks
(generation and ranking) and a choice task without a training split. Load with the toy plugin."""

from pathlib import Path

from metabench.hookspecs import hookimpl

TESTS = Path(__file__).parent


@hookimpl
def metabench_register_tasks(register):
    register(str(TESTS / "decoders" / "fixtures" / "tasks"))
    register(str(TESTS / "fixtures" / "skips"))
