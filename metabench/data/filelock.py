"""An exclusive lock on a file, for the cache files that several processes on one machine share (the
workers of ``--launcher processes``, or two ``metabench`` commands run side by side)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive POSIX ``flock`` on ``path`` (created if missing) for the block; released by the
    kernel if the process dies. Where there is no ``fcntl`` (Windows) or the file cannot be opened (a
    read-only cache), the block runs unlocked: every use here only loses speed without the lock."""
    try:
        import fcntl  # noqa: PLC0415 - POSIX only
        handle = open(path, "a+b")  # noqa: SIM115 - closed below
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        handle.close()  # closing releases the lock
