"""Reading a file a user handed over: a regular file, read with a bound.

A path from a user (a run folder's ``samples.jsonl``, ``--phi-table``, a manifest) may be a symlink to
``/dev/zero``, a FIFO that never sends end-of-file, or a file of many gigabytes. ``Path.read_bytes`` would
read any of them until memory runs out or block for ever. Every such read goes through :func:`read_bytes`:
the file is opened without blocking, must be a regular file once symlinks are followed, and is read up to
``limits.INPUT_BYTES`` (``METABENCH_MAX_INPUT_BYTES``) and no further, even if it grows while being read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import limits
from .errors import ExplainedError, MetabenchError


def read_bytes(path: Path, *, error: type[ExplainedError] = MetabenchError, limit: limits.Limit = limits.INPUT_BYTES) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes; otherwise ``error`` naming the file.

    A missing file raises ``FileNotFoundError`` and a folder ``IsADirectoryError``, as ``Path.read_bytes``
    does, so callers keep their own messages for those. ``error`` is the caller's error class: a damaged run
    file is a ``RunFileError``, which no report may skip.
    """
    cap = int(limit.value)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))  # a FIFO must not block the open
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{path}: not a regular file (a {_kind(info.st_mode)}{_target(path)})",
                        hint="pass a file metabench wrote, not a device, pipe or socket")
        if info.st_size > cap:
            raise _too_large(path, limit, error)
        chunks, total = [], 0
        while total <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:  # it grew while being read
            raise _too_large(path, limit, error)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: Path, *, error: type[ExplainedError] = MetabenchError, limit: limits.Limit = limits.INPUT_BYTES) -> str:
    """:func:`read_bytes` decoded as UTF-8 (``UnicodeDecodeError`` for the caller to name, as ``read_text``)."""
    return read_bytes(path, error=error, limit=limit).decode("utf-8")


def _too_large(path: Path, limit: limits.Limit, error: type[ExplainedError]) -> ExplainedError:
    return error(f"{path}: larger than {int(limit.value):,} bytes, the limit on the {limit.name}",
                 hint=f"check that this is the file you meant; raise the limit with {limit.env}=BYTES")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"


def _target(path: Path) -> str:
    real = os.path.realpath(path)
    return f", reached through a symlink to {real}" if real != os.path.abspath(path) else ""
