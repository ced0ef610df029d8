"""A fixture registry where a baseline cannot serve every task: the toy plugin's tasks, the prompted toy tasks
(generation and ranking), a choice task without a training split and a task on a derived dataset that has
not been built. Load with the toy plugin."""

from pathlib import Path

from metabench.data.spec import DatasetSpec
from metabench.errors import NotBuiltError
from metabench.hookspecs import hookimpl

TESTS = Path(__file__).parent


def load_unbuilt(ctx, split):
    raise NotBuiltError("toy_unbuilt: not built yet", hint="build it once: metabench toy build")


@hookimpl
def metabench_register_datasets(register):
    register(DatasetSpec(name="toy_unbuilt", files=(), loader="skips_plugin:load_unbuilt", splits=("train", "test")))


@hookimpl
def metabench_register_tasks(register):
    register(str(TESTS / "decoders" / "fixtures" / "tasks"))
    register(str(TESTS / "fixtures" / "skips"))
