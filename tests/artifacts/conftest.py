"""Artifact tests run on the real Boisson datasets: each pool is read once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metabench import plugins
from metabench_artifacts.recipes import RECIPES
from metabench.data.load import load_split


@pytest.fixture(scope="session")
def registry():
    raw = os.environ.get("METABENCH_DATA_DIR")
    if not raw or not (Path(raw) / "boisson_construction_artifacts").is_dir():
        pytest.skip(f"data mirror with the Boisson datasets not found (METABENCH_DATA_DIR={raw!r})")
    return plugins.load()


_POOLS: dict = {}


@pytest.fixture(scope="session")
def pool(registry):
    """pool(name, regime) -> items of split ``all`` of boisson_<name> (memoised)."""

    def get(name: str, regime: str = "random") -> list:
        key = (name, "original" if regime == "original" else "pool")
        if key not in _POOLS:
            _POOLS[key] = load_split(registry, f"boisson_{name}", "all", {"regime": regime}).items
        return _POOLS[key]

    return get


ALL = sorted(RECIPES)
