"""The built-in datasets, registered through the same hook a third-party plugin uses.

Registration only builds ``DatasetSpec`` objects from code and the JSON manifests in ``manifest/`` (no
data file is opened or hashed), so ``metabench ls`` stays fast.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from ..hookspecs import hookimpl
from .spec import DatasetSpec

# One module per dataset family under metabench.data.datasets; each exposes ``specs() -> list[DatasetSpec]``.
FAMILIES = (
    "meta4xnli",
    "cometa",
    "vua",
    "trofi",
    "moh",
    "boisson",
    "munch",
    "newsmet",
    "flute",
    "impli",
    "figqa",
    "llm_paraphrases",
    "esxnli",
    "bizzoni",
    "hmd",
    "sick",
    "rte",
    "magpie",
    "semcor",
)


def all_specs() -> list:
    specs = []
    for family in FAMILIES:
        module = importlib.import_module(f"metabench.data.datasets.{family}")
        specs.extend(module.specs())
    return specs


@lru_cache(maxsize=None)
def _builtin_by_name() -> dict[str, DatasetSpec]:
    return {spec.name: spec for spec in all_specs()}


def builtin_dataset(name: str) -> DatasetSpec:
    """A built-in dataset's spec by name, without a registry: a plugin's dataset derived from built-in ones (the
    artifacts family's Boisson recipes) names their files while the registry is still being built."""
    specs = _builtin_by_name()
    if name not in specs:
        raise KeyError(f"no built-in dataset '{name}' (built-in: {', '.join(sorted(specs))})")
    return specs[name]


@hookimpl
def metabench_register_datasets(register):
    for spec in all_specs():
        register(spec)


@hookimpl
def metabench_register_commands(register):
    register("data", "metabench.commands.data:add_commands", description="data files: ls, fetch, verify, stats, manifest")
