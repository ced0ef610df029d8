"""Registers the derived ``hard_metaphors`` dataset and the ``metabench hard`` verbs through the hooks a
third-party plugin uses."""

from __future__ import annotations

from ..hookspecs import hookimpl


@hookimpl
def metabench_register_datasets(register):
    from .dataset import specs  # noqa: PLC0415 - only builds a DatasetSpec; nothing is read

    for spec in specs():
        register(spec)


@hookimpl
def metabench_register_commands(register):
    register("hard", "metabench.commands.hard:add_commands",
             description="hard metaphors: SOR training, phi mining, HARD(M) statistics, breakdowns by phi")
