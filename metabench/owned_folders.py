"""Scratch folders metabench makes, marked, so that it only ever empties or deletes folders it made itself.

A work folder named by a variable or option (``GPU_CHECK_WORK``, a pack's scratch folder) may be mistyped, or
name ``$HOME``: deleting whatever it names would lose the user's files with exit status 0. A folder metabench
creates gets a mark file; it empties or removes a folder only while the mark is there. An absent or empty folder
is created (or taken) and marked; a non-empty folder without the mark, a file or a symlink is refused, naming the
path and the fix.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from .errors import MetabenchError

MARK = ".metabench-made"


def fresh(folder: Path, *, variable: str) -> Path:
    """``folder`` empty and marked: created if absent, emptied if metabench made it. ``variable`` names the option
    or environment variable the folder came from, for the error."""
    _check_owned(folder, variable)
    if folder.is_dir():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / MARK).write_text(json.dumps({"made_by": "metabench", "pid": os.getpid()}) + "\n", encoding="utf-8")
    return folder


def remove(folder: Path, *, variable: str) -> None:
    """Delete ``folder`` if metabench made it (an absent one is fine); anything else is refused."""
    if not os.path.lexists(folder):
        return
    _check_owned(folder, variable)
    shutil.rmtree(folder)


def _check_owned(folder: Path, variable: str) -> None:
    hint = f"point {variable} at a new or empty folder (metabench marks the folders it makes with {MARK})"
    if folder.is_symlink():
        raise MetabenchError(f"{variable}={folder}: is a symlink; refusing to empty what it points to", hint=hint)
    if not os.path.lexists(folder):
        return
    if not folder.is_dir():
        raise MetabenchError(f"{variable}={folder}: is a file, not a folder", hint=hint)
    mark = folder / MARK
    if mark.is_file() and not mark.is_symlink():
        return
    if any(folder.iterdir()):
        raise MetabenchError(f"{variable}={folder}: is a folder metabench did not make and it is not empty; "
                             "refusing to delete its contents", hint=hint)
