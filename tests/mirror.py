"""Where the repository and the real data mirror are, for tests that need them.

A module of its own, not ``conftest``: several test folders have a ``conftest.py`` and put their folder on
``sys.path``, so ``from conftest import ...`` reaches whichever was imported first and fails in a full run.
"""

from __future__ import annotations

import os
from pathlib import Path

TESTS = Path(__file__).parent
REPO = TESTS.parent


def mirror_dir() -> Path | None:
    """The real data mirror, if this machine has it (METABENCH_DATA_DIR or ../shared/data)."""
    raw = os.environ.get("METABENCH_DATA_DIR")
    candidate = Path(raw) if raw else REPO.parent / "shared" / "data"
    return candidate.resolve() if (candidate / "meta4xnli").is_dir() else None
