"""Hashing data files and saying so when a hash is wrong (what resolving, downloading and verifying share).

On its own so that ``download.py`` and ``resolve.py`` need not import each other.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
import time
from pathlib import Path

from ..errors import DataError
from .spec import DataFile


_SECONDS = [0.0]  # time spent hashing in this process (a job's timings charge it to data_hash_s)


def hashing_seconds() -> float:
    """Seconds this process has spent hashing data files so far."""
    return _SECONDS[0]


def sha256_of(path: Path, compressed: str = "") -> str:
    """sha256 of a file's content; of the decompressed bytes for a gzipped mirror copy."""
    started = time.perf_counter()
    try:
        return _sha256_of(path, compressed)
    finally:
        _SECONDS[0] += time.perf_counter() - started


def _sha256_of(path: Path, compressed: str) -> str:
    digest = hashlib.sha256()
    opener = gzip.open if compressed == "gzip" else open
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a symlink to /dev/zero or a pipe would be read for ever
            raise DataError(f"data file '{path}' is not a regular file (a device, pipe or socket)",
                            hint="restore the file in the mirror, or delete it and run `metabench data pull` again")
        with opener(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError; a cut gzip stream is an EOFError
        raise DataError(f"data file '{path}' cannot be read: {exc}") from None
    return digest.hexdigest()


def hash_mismatch(path, declared: DataFile, actual: str, *, hint: str = "") -> DataError:
    what = " (of the decompressed bytes)" if declared.compressed else ""
    return DataError(
        f"data file '{path}' has sha256 {actual}{what}, but the manifest pins {declared.sha256} for "
        f"'{declared.path}'",
        hint=hint
        or "the file is corrupt or from another upstream version: restore it from the mirror, or delete it and "
        "run `metabench data pull` again",
    )
