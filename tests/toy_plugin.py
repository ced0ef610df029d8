"""A test plugin: two toy datasets, their tasks, and an adapter that logs every item it answers.

Loaded in-process with ``metabench.plugins.load(extra_plugins=(toy_plugin,))`` or in a subprocess with
``METABENCH_PLUGIN_MODULES=toy_plugin`` and ``tests/`` on PYTHONPATH.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path

from metabench.data.items import TaggedSentence, TextItem
from metabench.data.readers import read_conll, read_table
from metabench.data.spec import DataFile, DatasetSpec
from metabench.hookspecs import hookimpl
from metabench.models.baselines import Majority

HERE = Path(__file__).parent / "fixtures" / "toy"
DATA_DIR = HERE / "data"
TASK_DIR = HERE / "tasks"


def _file(name: str) -> DataFile:
    path = f"toy/{name}"
    return DataFile(path=path, sha256=hashlib.sha256((DATA_DIR / path).read_bytes()).hexdigest())


def load_tagging(ctx, split):
    path = ctx.path(f"toy/tag_{split}.tsv")
    return [
        TaggedSentence(id=f"tag_{split}:{n}", words=tuple(w for w, _ in rows), tags=tuple(t for _, t in rows))
        for n, (_line, rows) in enumerate(read_conll(path))
    ]


def load_classification(ctx, split):
    path = ctx.path(f"toy/cls_{split}.tsv")
    return [TextItem(id=row["id"], text=row["text"], label=row["label"]) for _line, row in read_table(path, delimiter="\t")]


class CountingMajority(Majority):
    """The majority baseline, answering one item at a time slowly and logging each answered input."""

    name = "counting"
    allowed_args = ("delay", "batch_size")
    cache_answers = True  # it stands in for a model, whose answers are worth caching (baselines' are not)

    def predict(self, requests, seed):
        log = os.environ.get("TOY_COUNT_LOG")
        for request in requests:
            time.sleep(float(self.args.get("delay", 0)))
            if log:
                with open(log, "a", encoding="utf-8") as handle:
                    handle.write(request.key + "\n")
        return super().predict(requests, seed)


class KillingMajority(CountingMajority):
    """CountingMajority whose process kills itself (SIGKILL) once, on entering its third batch (or the batch
    after ``TOY_KILL_AFTER`` answers): a process lost in the middle of a job, at a point no timing decides.
    ``TOY_KILL_MARK`` names the file that records the kill, so the retry survives; with ``TOY_KILL_ALWAYS``
    set, every retry dies too."""

    name = "killing"

    def predict(self, requests, seed):
        mark, log = os.environ.get("TOY_KILL_MARK"), os.environ.get("TOY_COUNT_LOG")
        answered = len(Path(log).read_text().splitlines()) if log and Path(log).is_file() else 0
        again = os.environ.get("TOY_KILL_ALWAYS") or not Path(mark or ".").exists()
        if mark and again and answered >= int(os.environ.get("TOY_KILL_AFTER", 2 * len(requests))):
            Path(mark).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return super().predict(requests, seed)


@hookimpl
def metabench_register_datasets(register):
    register(DatasetSpec(name="toy_tagging", files=tuple(_file(f"tag_{s}.tsv") for s in ("train", "test")),
                         loader="toy_plugin:load_tagging", splits=("train", "test"), licence="CC0"))
    register(DatasetSpec(name="toy_cls", files=tuple(_file(f"cls_{s}.tsv") for s in ("train", "test")),
                         loader="toy_plugin:load_classification", splits=("train", "test"), licence="CC0"))


@hookimpl
def metabench_register_tasks(register):
    register(str(TASK_DIR))


@hookimpl
def metabench_register_models(register):
    register("counting", "toy_plugin:CountingMajority", description="majority, slowly, logging each item")
    register("killing", "toy_plugin:KillingMajority", description="counting, killing its process once mid-job")
