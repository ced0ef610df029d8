"""Where metabench keeps its caches: ``$METABENCH_CACHE_DIR``, else ``~/.cache/metabench``.

A module of its own on the lowest floor, so that the answer cache (`cache`) and the sealing of cached files
(`cache_seal`), which the cache uses for its job memo, both read it without importing each other.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("METABENCH_CACHE_DIR") or Path.home() / ".cache" / "metabench").expanduser()
