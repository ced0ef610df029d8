"""Fixtures for the decoder tests: a tiny random GPT-2 folder (built once per session) and a registry with
toy prompted tasks on the toy plugin's data."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory) -> Path:
    from tiny import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="session")
def tiny_gpt2_chat(tmp_path_factory) -> Path:
    from tiny import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2-chat"), chat=True)


@pytest.fixture(scope="session")
def tiny_decoder(tiny_gpt2):
    """One loaded HFDecoder on the tiny model, shared by tests that only read from it."""
    from metabench.models.hf_decoder import HFDecoder

    adapter = HFDecoder({"pretrained": str(tiny_gpt2), "batch_size": "4"})
    adapter.lm  # noqa: B018 - load once
    return adapter


@pytest.fixture
def decoder_registry(monkeypatch, tmp_path):
    """Built-ins + toy plugin + the prompted toy tasks in fixtures/tasks, with a fresh answer cache."""
    import toy_plugin
    import decoder_tasks_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin, decoder_tasks_plugin))


@pytest.fixture(scope="session")
def real_registry():
    """The built-in registry (real task YAMLs), for checks that need no data."""
    from metabench import plugins

    return plugins.load()
