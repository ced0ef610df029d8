"""The plugin: each hook gets a ``register`` callback; targets are lazy "module:attr" strings."""

from __future__ import annotations

import hashlib
from pathlib import Path

from metabench.data import DataFile, DatasetSpec
from metabench.hookspecs import hookimpl

HERE = Path(__file__).parent


@hookimpl
def metabench_register_tasks(register):
    register(str(HERE / "tasks"))


@hookimpl
def metabench_register_datasets(register):
    data = HERE / "data" / "sentences.tsv"
    register(
        DatasetSpec(
            name="example_sentences",
            files=(DataFile(path="sentences.tsv", sha256=hashlib.sha256(data.read_bytes()).hexdigest()),),
            loader="metabench_example_plugin.dataset:load",
            splits=("train", "test"),
            licence="CC0-1.0",
            root=str(HERE / "data"),
            description="sentences written for the example plugin, half with a metaphorical verb",
        )
    )


@hookimpl
def metabench_register_models(register):
    register("cue-words", "metabench_example_plugin.adapter:CueWords", description="metaphorical if a cue word occurs")
