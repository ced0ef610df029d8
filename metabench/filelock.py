"""The one exclusive lock on a file or folder, for what several processes on one machine share: cache files
(the workers of ``--launcher processes``, or two ``metabench`` commands side by side) and a task's run folder.

A POSIX ``flock``: the kernel releases it when the holder dies, so a killed process never leaves a stale lock.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def locked(path: Path, *, wait_s: float | None = None,
           timed_out: Callable[[], Exception] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (a folder, or a file created if missing) for the block.

    ``wait_s`` None: wait as long as it takes, and where the lock cannot be had at all (no ``fcntl`` on Windows,
    a read-only cache) run the block unlocked, since every such use only loses speed without it. With
    ``wait_s``, the lock is required: poll for it that long, then raise ``timed_out()``."""
    try:
        import fcntl  # noqa: PLC0415 - POSIX only

        fd = os.open(path, os.O_RDONLY) if path.is_dir() else os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except (ImportError, OSError):
        if wait_s is not None:
            raise
        yield
        return
    try:
        if wait_s is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise (timed_out or (lambda: TimeoutError(f"{path}: still locked after {wait_s} s")))() from None
                    time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
