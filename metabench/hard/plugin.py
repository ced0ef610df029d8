"""Registers the derived ``hard_metaphors`` dataset through the same hook a third-party plugin uses."""

from __future__ import annotations

from ..hookspecs import hookimpl


@hookimpl
def metabench_register_datasets(register):
    from .dataset import specs  # noqa: PLC0415 - only builds a DatasetSpec; nothing is read

    for spec in specs():
        register(spec)
