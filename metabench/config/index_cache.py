"""The task index (every task and group file read, parsed and checked) kept on disk, so a command that lists
or selects tasks does not re-read hundreds of YAML files when none changed.

Reading the ~400 built-in task files (includes merged, positions kept, pydantic validation, group checks) took
0.60 CPU s, unpickling the finished index 0.10 s (measured on the shared 2-core machine); `metabench ls
tasks` spent most of its time there, and every run builds the index before its first job.

The key is everything the index is made of: each registered task folder (plugin, version, path) and the
path and bytes of every ``*.yaml`` under it (includes can only name files there), the source of
``metabench.config`` (reader, schema, checks), metabench's version, and the paper views the group checks bind
to (name, plugin, version and the view itself or its module's source). The files' bytes, not their stat:
reading them took 12 ms CPU (the index: 0.05-0.10 s from here) and cannot be fooled by an edit within the file system's timestamp tick. Task
files a run is about to use are still validated against the registry when loaded (``TaskIndex.load``), and
`metabench validate` reads the files it is given itself, so the cache never stands in for a check.

The index's quarantined files are stored with it and reported again on every hit (a warning, or the error
under ``--strict``), exactly as a fresh read reports them. One file, ``$METABENCH_CACHE_DIR/task-index.pkl``,
holds the last index, sealed with this user's secret for its key (``cache_seal.py``): a file another user or a
restored CI cache put there, or one pickled again under the key, is never unpickled, but read as a miss and
replaced, like an unreadable one; a failed write only costs speed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import pickle
from functools import lru_cache
from pathlib import Path

from .. import cache_seal
from ..cache import cache_root, writable
from ..version import __version__

FORMAT = 2


def cache_file() -> Path:
    return cache_root() / "task-index.pkl"


@lru_cache(maxsize=None)
def _config_source() -> str:
    """sha256 of every ``metabench.config`` module: how files are read, merged, validated and checked."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _module_source(target: str) -> bytes:
    """The source of a lazy ``module:attr`` target's module, found without importing it (b"" if none)."""
    try:
        spec = importlib.util.find_spec(target.partition(":")[0])
    except (ImportError, ValueError):
        return b""
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return b""
    try:
        return Path(spec.origin).read_bytes()
    except OSError:
        return b""


def key(registry) -> str:
    """The index's key for this registry's task folders and paper views and the files in those folders now."""
    digest = hashlib.sha256(f"{FORMAT}\0{__version__}\0{_config_source()}".encode())
    for folder, entry in registry.task_dirs():
        digest.update(f"\0dir\0{entry.plugin}\0{entry.plugin_version}\0{folder}\0{folder.resolve()}".encode())
        for path in sorted(folder.rglob("*.yaml")):
            try:
                content = path.read_bytes()
            except OSError:  # a dangling link or unreadable file: the fresh read reports it
                content = b"\0unreadable"
            digest.update(f"\0{path}\0{len(content)}\0".encode() + content)
    for view in registry.entries("paper_view"):
        shown = view.target if isinstance(view.target, str) else repr(view.target)
        digest.update(f"\0view\0{view.name}\0{view.plugin}\0{view.plugin_version}\0{shown}".encode())
        if isinstance(view.target, str):
            digest.update(_module_source(view.target))
    return digest.hexdigest()


def read(entry: str) -> dict | None:
    """The index content stored under ``entry``, or None (absent, another key, not sealed by this user)."""
    stored = cache_seal.load(cache_file(), f"task-index\0{entry}")
    return stored if isinstance(stored, dict) else None


def write(entry: str, content: dict) -> None:
    """Store an index's content (atomically); a read-only cache, a full disk or an unpicklable plugin's
    config only cost speed."""
    if not writable():  # a dry run writes nothing (cache.read_only)
        return
    try:
        cache_seal.dump(cache_file(), f"task-index\0{entry}", content)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        pass
