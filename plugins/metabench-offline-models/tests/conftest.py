"""Test set-up: no model hub, a fresh metabench cache per test session, the package importable uninstalled."""

from __future__ import annotations

import os
import sys
from pathlib import Path

for _var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import pytest  # noqa: E402


def _session_folder(tmp_path_factory) -> Path:
    """This test session's temporary folder, the same for every pytest-xdist worker of the session."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def plugin_cache(tmp_path_factory) -> dict[str, str]:
    """Temporary METABENCH_CACHE_DIR and HF_HOME for this plugin's tests, made once per session and shared by its
    pytest-xdist workers: a real model converted into it by one worker is a cache hit for the others (SmolLM2's
    GGUF conversion was ~35 s of CPU on each worker)."""
    root = _session_folder(tmp_path_factory) / "offline-models"
    folders = {"METABENCH_CACHE_DIR": root / "metabench-cache", "HF_HOME": root / "hf-home"}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    return {name: str(folder) for name, folder in folders.items()}


@pytest.fixture(autouse=True)
def _session_cache(plugin_cache, monkeypatch):
    """Point METABENCH_CACHE_DIR and HF_HOME at the session's temporary folders while each of this plugin's tests
    runs, and only then. A session-wide switch outlived these tests: run inside the whole suite in a shuffled
    order (scripts/test.sh), it moved the cache of every test after the first of them, so toy runs whose data
    a session fixture had copied into the suite's cache were looked up in this one and "not checked against
    the data". Session fixtures that build into the cache set it themselves (`in_plugin_cache`)."""
    for name, value in plugin_cache.items():
        monkeypatch.setenv(name, value)
    yield Path(plugin_cache["METABENCH_CACHE_DIR"])


@pytest.fixture(scope="session")
def in_plugin_cache(plugin_cache, tmp_path_factory):
    """A context manager: the plugin's cache folders in the environment for a session fixture's build of ``model``,
    holding the session's lock on that model, so a second worker waits for the first one's build and reads it from
    the cache (cached_build alone lets racing builders each build, the first to finish winning)."""
    import contextlib

    from metabench.filelock import locked

    session = _session_folder(tmp_path_factory)

    @contextlib.contextmanager
    def entered(model: str):
        with pytest.MonkeyPatch.context() as patch, locked(session / f"offline-models-{model}.lock"):
            for name, value in plugin_cache.items():
                patch.setenv(name, value)
            yield

    return entered
