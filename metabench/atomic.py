"""The one atomic file write: the bytes go to a temporary file beside the target, which is then renamed over it,
so a reader (or a process killed mid-write) sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8), creating its folder. Raises ``OSError`` (a
    read-only or full disk) with nothing left behind; callers for whom the file is only a cache catch it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; the file is readable as any other written here
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
