"""Writing and deleting inside an output folder, and nowhere else.

A command given ``-o DIR`` may only change files below DIR. Names that come from elsewhere (a list of
generated files kept in DIR, a reporter's file names) and symlinks inside DIR (a symlinked ``assets/`` or
``tasks/``) could otherwise make a write or a delete land outside it. Every path is therefore resolved
(symlinks followed) before it is used, and one whose real location leaves DIR's real location is refused
with the path, where it leads and the fix. A file is replaced by renaming a new file over its name, so a
symlink at the name itself is replaced, never followed.
"""

from __future__ import annotations

import os
from pathlib import Path

from .atomic import write_atomically
from .errors import MetabenchError


class OutsideOutputError(MetabenchError):
    """A path would lead outside the output folder."""


def inside(root: Path, path: Path, *, action: str) -> Path:
    """The real location of ``path``; refused when it is not ``root``'s real location or below it."""
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    if real != real_root and not real.is_relative_to(real_root):
        raise OutsideOutputError(
            f"{path}: leads to {real}, outside the output folder {real_root}; refusing to {action} it",
            hint=f"remove the symlink (or the '..') that leads out of {root}, or choose another output folder",
        )
    return real


def make_folder(root: Path, folder: Path) -> Path:
    """``folder`` (below ``root``) created one level at a time, each level checked before the next is made."""
    real = Path(os.path.realpath(root))
    for part in folder.relative_to(root).parts:
        real = inside(root, real / part, action="create")
        real.mkdir(exist_ok=True)
        real = inside(root, real, action="write into")
    return real


def _destination(root: Path, target: Path) -> Path:
    """Where ``target`` lands below ``root`` (its folder made, checked to stay inside); never a folder."""
    destination = make_folder(root, target.parent) / target.name
    if destination.is_dir() and not destination.is_symlink():
        raise MetabenchError(f"{target}: is a folder where a file goes", hint="move the folder away, or choose another output folder")
    return destination


def replace_file(root: Path, source: Path, target: Path) -> Path:
    """Move ``source`` to ``target`` below ``root`` by a rename over the name (a symlink there is replaced)."""
    destination = _destination(root, target)
    os.replace(source, destination)
    return destination


def write_text(root: Path, target: Path, text: str) -> Path:
    """``text`` written to ``target`` below ``root``, atomically (``atomic.write_atomically``: a temporary file
    renamed over the name, so a symlink there is replaced, never followed)."""
    destination = _destination(root, target)
    write_atomically(destination, text)
    return destination


def remove_file(root: Path, target: Path) -> None:
    """Delete ``target`` (a file, or a symlink itself) when its folder's real location is below ``root``."""
    parent = inside(root, target.parent, action="delete files in")
    try:
        (parent / target.name).unlink(missing_ok=True)
    except IsADirectoryError:
        pass  # a folder now stands where a generated file was: the user's, so kept
