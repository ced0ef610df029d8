"""Parsed items kept on disk, so a run does not re-parse the same upstream files every time it starts.

Parsing the ~115 dataset slices that ``--tasks all`` reads (~245k items) took 5.8 to 8.8 CPU s in two
measurements on the shared 2-core machine; unpickling them 2.2 to 2.4 s. The key is the dataset's manifest
(the sha256 of every file its spec declares), the split, the loader arguments and the source code of the loader, of the modules beside it, of every metabench module
it imports (at any depth) and of ``metabench.data``: a new file version, an edited loader (or a function it
calls, such as the Boisson pools' dedup key in ``kinds/views.py``) or another metabench cannot be served stale
items. A hit still resolves and verifies every
file the loader read (``DataContext.path``), so a missing or altered mirror file fails exactly as before and
results.json still lists the files' hashes.

Why pickle and not HF ``datasets`` (Arrow, memory-mapped), which the design card names: on the same slices
(``benchmarks/bench_item_cache.py``, load average 21) Arrow took 18.0 s to write and 4.4 s to read back and
rebuild the typed items (tuples come back as lists, ``meta`` dicts must be JSON-encoded), pickle 1.4 s and
2.4 s (parsing: 8.8 s). Items are small frozen dataclasses read whole; memory-mapping columns buys nothing.

Only slices whose loader read nothing but declared files are stored: a derived dataset (files built at run
time, such as ``hard_metaphors``) is parsed every time, since its manifest cannot tell one build from another.

A dataset whose spec sets ``caches_items`` keeps its own entries here (:func:`read` / :func:`write`, under a
key with its own ``part``): the Boisson datasets store each pool once, with its folds, and cut every
(regime, fold, split) from it by index, where a copy per split took 244 MB and 9 % of a run to unpickle.
Their split keys then hold only a marker (:func:`mark`: no items, the files read), so that :func:`exists`
still tells the job memo which slices have been loaded.

The cache lives in ``$METABENCH_CACHE_DIR/items``. Each entry is sealed with this user's secret for its key
(``cache_seal.py``): a file another user or a restored CI cache put there, or one pickled again under its key, is
never unpickled but read as a miss and rebuilt, like an unreadable one; a failed write only costs speed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import pickle
import re
from functools import lru_cache
from pathlib import Path

from .. import cache_seal
from ..version import __version__
from ..cache import cache_root
from ..filelock import locked

FORMAT = 2


def cache_folder() -> Path:
    return cache_root() / "items"


@lru_cache(maxsize=None)
def _source_hash(module: str) -> str:
    """sha256 of a loader module's source, of the modules beside it (a derived dataset's loader calls its
    package's sampler and fold assignment), of every metabench.data module it may call into, and of every
    metabench module the loader imports, at any depth (a Boisson pool's dedup and lexical keys come from
    ``kinds/views.py``: an edit there must not serve the pool built before it)."""
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    paths = sorted([*here.glob("*.py"), *here.glob("datasets/*.py")])
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a module made at run time: the metabench.data sources still count
        spec = None
    if spec is not None and spec.origin and spec.origin.endswith(".py"):
        origin = Path(spec.origin)
        paths += sorted({origin, *origin.parent.glob("*.py")} - set(paths))
        paths += sorted(_imported([origin]) - set(paths))
    for path in paths:
        digest.update(str(path.name).encode() + b"\0" + _file_digest(path))
    return digest.hexdigest()


@lru_cache(maxsize=None)
def _file_digest(path: Path) -> bytes:
    """One source file's sha256, read once per process: the ~20 loader modules share most of their sources,
    and reading them per module took 0.10 CPU s a run, once per file 0.03 s."""
    return hashlib.sha256(path.read_bytes()).digest()


#: ``from .x import y``, ``from metabench.x import y``, ``import metabench.x``, at any indentation (imports inside
#: functions count): what a module may call into.
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.+[\w.]*|metabench(?:\.[\w.]+)?)[ \t]+import[ \t]+([\w., ()]+)"
                     r"|import[ \t]+(metabench(?:\.[\w.]+)?))", re.MULTILINE)


def _imported(paths: list[Path]) -> set[Path]:
    """Every metabench source file the given ones import, directly or through one another (a text scan, so it
    can only count more than is used: a name that is no module counts its package's ``__init__.py``; the
    package root's, which only re-exports the version, the hook marker and, lazily, the API, is not followed)."""
    seen: set[Path] = set()
    todo = list(paths)
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo += _imports_of(path)
    return seen


@lru_cache(maxsize=None)
def _imports_of(path: Path) -> tuple[Path, ...]:
    """The metabench source files one file imports (scanned once per process)."""
    package = Path(__file__).resolve().parents[1]  # the metabench folder
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return ()
    out: list[Path] = []
    for relative, names, absolute in _IMPORT.findall(text):
        target = relative or absolute
        if target.startswith("."):
            base = path.parents[len(target) - len(target.lstrip(".")) - 1]
            parts = [p for p in target.lstrip(".").split(".") if p]
        else:
            base, parts = package.parent, target.split(".")
        folder = base.joinpath(*parts)
        found = [c for c in [folder.with_suffix(".py"), *(folder / f"{n.strip(' ()')}.py" for n in names.split(","))]
                 if c.is_file()]
        if not found and folder != package:  # names defined in a package's __init__.py
            found = [folder / "__init__.py"]
        out += [c for c in found if c.is_file() and c.is_relative_to(package)]
    return tuple(out)


def key(spec, split: str, args: dict, *, part: str = "") -> str:
    """The entry of one slice; ``part`` names another kind of entry of the same dataset (a loader's own, such
    as a Boisson pool), keyed on the same manifest and sources."""
    payload = {
        "format": FORMAT,
        "metabench": __version__,
        "dataset": spec.name,
        "split": split,
        "args": args,
        "manifest": sorted((f.path, f.sha256) for f in spec.files),
        "root": spec.root,
        "loader": spec.loader,
        "source": _source_hash(spec.loader.partition(":")[0]),
    }
    if spec.source is not None:  # a datasets source: its revision, config and columns shape the items
        payload["source"] = {k: v for k, v in spec.source.items() if k != "where"}
    if part:
        payload["part"] = part
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def read(entry: str) -> object | None:
    """What :func:`write` stored under a key, or None (absent, unreadable or not sealed by this user: the caller
    checks its shape)."""
    return cache_seal.load(cache_folder() / f"{entry}.pkl", f"items\0{entry}")


def write(entry: str, payload: object) -> None:
    """Store a payload under a key (atomically); a read-only cache or a full disk only costs speed."""
    try:
        cache_seal.dump(cache_folder() / f"{entry}.pkl", f"items\0{entry}", payload)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        pass  # a read-only or full disk, or an unpicklable plugin item: parse next time


def get(entry: str) -> tuple[list, list[str]] | None:
    """(items, relative paths the loader read) for a key, or None (absent, unreadable or a marker)."""
    payload = read(entry)
    if not (isinstance(payload, tuple) and len(payload) == 2 and isinstance(payload[0], list)):
        return None
    return payload


def put(entry: str, items: list, used: list[str]) -> None:
    write(entry, (items, used))


def mark(entry: str, used: list[str]) -> None:
    """Record that a slice whose loader caches itself was loaded from these files (no items: :func:`get`
    misses it, :func:`exists` finds it)."""
    if not exists(entry):
        write(entry, (None, used))


def building(entry: str):
    """Hold a key's build lock: a process about to parse (or build) an entry takes it and looks the entry up
    again inside, so processes that miss the same entry at once build it once — the others wait, then read
    it — instead of each parsing the same corpus (two workers of a cold `--tasks all` did, at random)."""
    folder = cache_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass  # a read-only cache: locked() runs the block unlocked
    return locked(folder / f"{entry}.lock")


def exists(entry: str) -> bool:
    """Whether a key has an entry (what :mod:`metabench.job_memo` asks before keying a job on it). Its seal is not
    checked here (that reads the whole file): a planted file only lets the memo look the job up in the answer
    cache (plain data, not code), and a remembered job's data files are re-verified before it is served."""
    return (cache_folder() / f"{entry}.pkl").is_file()
