"""The plugin: each hook gets a ``register`` callback; targets are lazy "module:attr" strings."""

from __future__ import annotations

from pathlib import Path

from metabench.plugin_api import DatasetSpec, hookimpl, manifest_files

HERE = Path(__file__).parent


@hookimpl
def metabench_register_tasks(register):
    register(str(HERE / "tasks"))


@hookimpl
def metabench_register_datasets(register):
    # data/manifest.json was written by `metabench data manifest metabench_example_plugin/data`: the spec
    # declares the hashes recorded there, so a changed or corrupted file is refused when it is read.
    register(
        DatasetSpec(
            name="example_sentences",
            files=manifest_files(HERE / "data" / "manifest.json", "sentences.tsv"),
            loader="metabench_example_plugin.dataset:load",
            splits=("train", "test"),
            licence="CC0-1.0",
            root=str(HERE / "data"),
            description="sentences written for the example plugin, half with a metaphorical verb",
            # what `metabench data verify example_sentences` recomputes through the loader
            counts={"items": {"train": 12, "test": 12}},
        )
    )


@hookimpl
def metabench_register_metrics(register):
    register("balanced_accuracy", "metabench_example_plugin.metrics:balanced_accuracy",
             description="mean recall over labels= (declares its per-item decomposition: paired tests work on it)")


@hookimpl
def metabench_register_models(register):
    register("cue-words", "metabench_example_plugin.adapter:CueWords", description="metaphorical if a cue word occurs")


@hookimpl
def metabench_register_commands(register):
    register("cue-words", "metabench_example_plugin.commands:add_commands",
             description="`metabench cue-words SENTENCE...`: the cue words the cue-words model finds")


@hookimpl
def metabench_register_board_sections(register):
    register("cue_words", "metabench_example_plugin.board:cue_words_section",
             html="metabench_example_plugin:templates/cue_words.html",
             description="every model's run of example_cue_words beside the cue-words rule")
