"""Fixtures for the encoder tests: a tiny random BERT (built once per session), one torch thread, a fresh cache."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # enc_helpers, tiny_bert and the test plugins


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread: these models are tiny, and several threads on a busy 2-core machine spin-wait badly."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    from tiny_bert import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture
def cache_dir(monkeypatch, tmp_path) -> Path:
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"
