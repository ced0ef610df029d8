"""Hashing data files and saying so when a hash is wrong (what resolving, downloading and verifying share).

On its own so that ``download.py`` and ``resolve.py`` need not import each other.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

from ..errors import DataError
from .spec import DataFile


def sha256_of(path: Path, compressed: str = "") -> str:
    """sha256 of a file's content; of the decompressed bytes for a gzipped mirror copy."""
    digest = hashlib.sha256()
    opener = gzip.open if compressed == "gzip" else open
    try:
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
