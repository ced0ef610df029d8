"""Test-wide settings: offline model hub, a private cache, and the toy plugin on the import path."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))  # makes `toy_plugin` importable, also for subprocesses via PYTHONPATH

from mirror import mirror_dir  # noqa: E402 - needs the path above

for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")
#: The tests' cache: a folder of this session's, never the user's (~/.cache/metabench or an exported
#: METABENCH_CACHE_DIR), removed at the session's end; a test that needs a fresh one sets its own.
SESSION_CACHE = tempfile.mkdtemp(prefix="metabench-test-cache-")
os.environ["METABENCH_CACHE_DIR"] = SESSION_CACHE
os.environ.setdefault("METABENCH_ALLOW_DOWNLOAD", "0")
#: One thread for torch and BLAS, in the test processes and the CLI processes they start (set before torch is
#: imported, which reads it once). The tests' models are tiny, and on a busy 2-core machine (two xdist workers,
#: or any other load) several threads per process spin-wait on each other: three decoder-tagger tests took 162 s
#: with torch's default threads at load 4 and 11 s with one. Export OMP_NUM_THREADS to choose otherwise.
for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_name, "1")


if mirror_dir() is not None:
    os.environ.setdefault("METABENCH_DATA_DIR", str(mirror_dir()))


def pytest_configure(config):
    import clean_tree  # lists (under CI: fails on) the files the session leaves in the working tree

    # Under pytest-xdist only the controller looks: it starts before the workers and finishes after them, while a
    # worker's before/after would count the files another worker's test has open at that moment.
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(clean_tree, "metabench-clean-tree")


def pytest_addoption(parser):
    import shuffle_order

    shuffle_order.add_option(parser)


def pytest_report_header(config):
    seed = config.getoption("--shuffle")
    return None if seed is None else f"tests shuffled with --shuffle {seed} (tests/shuffle_order.py)"


def pytest_collection_modifyitems(config, items):
    """`heavy` tests first, the rest in their order (or, with ``--shuffle SEED``, each group in an order drawn from
    the seed: tests/shuffle_order.py). scripts/test.sh has pytest-xdist hand each worker two tests at a time, so
    tests of minutes run side by side from the start; one that starts last would set the wall time alone (the
    README's fine-tune, the calibration replay and the GPU smoke run are each minutes)."""
    import shuffle_order

    def heavy(item) -> bool:
        return item.get_closest_marker("heavy") is not None

    seed = config.getoption("--shuffle")
    items[:] = (sorted(items, key=lambda item: not heavy(item)) if seed is None
                else shuffle_order.shuffled(items, seed, heavy))


def pytest_unconfigure(config):
    shutil.rmtree(SESSION_CACHE, ignore_errors=True)


@pytest.fixture
def toy_env(monkeypatch, tmp_path):
    """Environment for running the CLI on the toy plugin in a subprocess, with a fresh cache."""
    import toy_plugin

    monkeypatch.setenv("METABENCH_PLUGIN_MODULES", "toy_plugin")
    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    env = dict(os.environ)
    return env


@pytest.fixture
def toy_registry(monkeypatch, tmp_path):
    """A registry with the built-ins and the toy plugin, reading the toy data, with a fresh cache."""
    import toy_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin,))
