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


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory):
    """Point METABENCH_CACHE_DIR and HF_HOME at temporary folders for the whole session."""
    saved = {k: os.environ.get(k) for k in ("METABENCH_CACHE_DIR", "HF_HOME")}
    os.environ["METABENCH_CACHE_DIR"] = str(tmp_path_factory.mktemp("metabench-cache"))
    os.environ["HF_HOME"] = str(tmp_path_factory.mktemp("hf-home"))
    yield Path(os.environ["METABENCH_CACHE_DIR"])
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
