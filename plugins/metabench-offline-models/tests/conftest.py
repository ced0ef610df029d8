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


@pytest.fixture(scope="session")
def plugin_cache(tmp_path_factory) -> dict[str, str]:
    """Temporary METABENCH_CACHE_DIR and HF_HOME for this plugin's tests, made once per session."""
    return {"METABENCH_CACHE_DIR": str(tmp_path_factory.mktemp("metabench-cache")),
            "HF_HOME": str(tmp_path_factory.mktemp("hf-home"))}


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
def in_plugin_cache(plugin_cache):
    """A context manager: the plugin's cache folders in the environment for a session fixture's build."""
    import contextlib

    @contextlib.contextmanager
    def entered():
        with pytest.MonkeyPatch.context() as patch:
            for name, value in plugin_cache.items():
                patch.setenv(name, value)
            yield

    return entered
