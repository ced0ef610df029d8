"""Finding a declared file: the mirror, then the user cache, then (when allowed) upstream.

Order, first hit wins:

1. the mirror: the ``data_dir`` argument (``--data-dir``), else ``METABENCH_DATA_DIR``; laid out like
   ``shared/data`` (``<root>/<DataFile.path>``);
2. the user cache: ``$METABENCH_CACHE_DIR/data`` (default ``~/.cache/metabench/data``), same layout;
3. a download into the cache (``download=True`` only): the raw upstream file at its pinned commit, or
   ``$METABENCH_DATA_URL`` + ``DataFile.path`` when that mirror URL is set (see ``download.py``).

Every file found is checked against its declared sha256 once per process (hashing is cheap next to
reading, and a silently changed file would make results incomparable). A mirror file stored gzipped
(``compressed="gzip"``) is hashed on its decompressed bytes, which are the upstream bytes.

``resolve_file`` does not download unless asked: loading goes through ``DataContext``, which asks for a
download when ``download_allowed()`` (env ``METABENCH_ALLOW_DOWNLOAD`` is not ``"0"``). Offline CI sets
``METABENCH_ALLOW_DOWNLOAD=0`` (or points ``METABENCH_DATA_DIR`` at a complete mirror) so that nothing ever
waits on the network; where it is allowed, timeouts are short and retries bounded.
"""

from __future__ import annotations

import atexit
from contextlib import contextmanager
import json
import os
from functools import lru_cache
from pathlib import Path

from ..atomic import write_atomically
from ..bounded_read import read_text
from ..cache import cache_root, writable
from ..errors import DataError, MetabenchError
from ..filelock import locked
from .hashing import hash_mismatch, sha256_of
from .spec import DataFile

_verified: dict[Path, str] = {}


def data_dir_from_env() -> Path | None:
    raw = os.environ.get("METABENCH_DATA_DIR")
    return _resolved(raw) if raw else None


@lru_cache(maxsize=8)
def _resolved(raw: str) -> Path:
    """The mirror folder, resolved once per value (a fully cached ``--tasks all`` checks ~12k files)."""
    return Path(raw).expanduser().resolve()


def cache_dir() -> Path:
    """Where downloaded data files go: ``data/`` under the one cache root (:func:`metabench.cache.cache_root`)."""
    return cache_root() / "data"


def download_allowed() -> bool:
    """Whether loaders may fetch missing files: yes unless ``METABENCH_ALLOW_DOWNLOAD=0`` or inside
    :func:`no_downloads`."""
    if _NO_DOWNLOADS[0]:
        return False
    return os.environ.get("METABENCH_ALLOW_DOWNLOAD", "1").strip().lower() not in ("0", "false", "no", "off")


_NO_DOWNLOADS = [False]


@contextmanager
def no_downloads():
    """Read data from the mirror and the cache only: a report checking runs against the data must not fetch
    gigabytes or wait on the network; data it cannot find leaves the run unverified instead."""
    before, _NO_DOWNLOADS[0] = _NO_DOWNLOADS[0], True
    try:
        yield
    finally:
        _NO_DOWNLOADS[0] = before


def search_roots(data_dir: Path | None = None) -> list[tuple[str, Path]]:
    """(kind, root) in lookup order: ``("mirror", ...)`` when one is set, then ``("cache", ...)``."""
    mirror = Path(data_dir).expanduser() if data_dir is not None else data_dir_from_env()
    roots = [("mirror", mirror)] if mirror is not None else []
    return roots + [("cache", cache_dir())]


def locate(declared: DataFile, data_dir: Path | None = None) -> tuple[str, Path] | None:
    """Where a file is present locally, as (``"mirror"``/``"cache"``, path), without verifying it."""
    for kind, root in search_roots(data_dir):
        candidate = root / declared.path
        if candidate.is_file():
            return kind, candidate
    return None


def locate_declared(declared: DataFile, data_dir: Path | None = None, root: str = "") -> tuple[str, Path] | None:
    """:func:`locate` for a dataset: a spec with its own folder (``root``: a plugin's package, a datasets
    source) has its files there and nowhere else (``("folder", path)``), as its loader reads them."""
    if root:
        local = Path(root) / declared.path
        return ("folder", local) if local.is_file() else None
    return locate(declared, data_dir)


def resolve_file(
    declared: DataFile,
    data_dir: Path | None = None,
    *,
    download: bool = False,
    dataset: str = "",
    progress: bool = True,
) -> Path:
    """Local, verified path of a declared file; downloaded into the cache first if missing and ``download``.

    Raises DataError on a hash mismatch (naming the file and both hashes) or when the file is nowhere
    (saying where it looked and how to fetch it).
    """
    found = locate(declared, data_dir)
    if found is not None:
        verify_file(found[1], declared)
        return found[1]
    if download:
        from .download import download_file  # noqa: PLC0415 - urllib/tqdm only when actually fetching

        target = cache_dir() / declared.path
        try:
            download_file(declared, target, progress=progress)
        except DataError as exc:
            looked = ", ".join(str(root / declared.path) for _, root in search_roots(data_dir))
            raise DataError(f"data file '{declared.path}' is not present locally (looked in: {looked}) and "
                            f"{exc.message}", hint=exc.hint) from None
        _verified[target] = declared.sha256
        return target
    raise missing_error(declared, data_dir, dataset)


def missing_error(declared: DataFile, data_dir: Path | None = None, dataset: str = "") -> DataError:
    looked = ", ".join(f"{root / declared.path} ({kind})" for kind, root in search_roots(data_dir))
    pull = f"`metabench data pull {dataset}`" if dataset else "`metabench data pull <dataset>`"
    return DataError(
        f"data file '{declared.path}' not found (looked in: {looked})",
        hint=f"fetch it with {pull}, or point METABENCH_DATA_DIR (or --data-dir) at a mirror laid out like "
        "shared/data; loaders download missing files themselves unless METABENCH_ALLOW_DOWNLOAD=0",
    )


def verify_file(path: Path, declared: DataFile) -> None:
    """Check a local file against its pinned hash: once per process and path, and across processes while
    the file's stamp (:func:`_stamp`) is unchanged (as git's index does), so a fully cached run does not
    re-read 165 MB of data to hash it."""
    if _verified.get(path) == declared.sha256:
        return
    stamp = _stamp(path)
    if stamp is not None and _hash_stamps().get(str(path)) == [*stamp, declared.sha256]:
        _verified[path] = declared.sha256
        return
    actual = sha256_of(path, declared.compressed)
    if actual != declared.sha256:
        raise hash_mismatch(path, declared, actual)
    _verified[path] = declared.sha256
    if stamp is not None:
        _remember_stamp(path, stamp, actual)


def stamped_sha256(path: Path) -> str:
    """sha256 of a file that pins no hash of its own (a `datasets` source's files make its manifest): the
    recorded hash while the file's stamp (:func:`_stamp`) is unchanged, else hashed and recorded."""
    stamp = _stamp(path)
    record = _hash_stamps().get(str(path)) if stamp is not None else None
    if isinstance(record, list) and record[:-1] == stamp and isinstance(record[-1], str):
        return record[-1]  # (a damaged record, or one stamped before the change time counted, is only a re-hash)
    actual = sha256_of(path)
    if stamp is not None:
        _remember_stamp(path, stamp, actual)
    return actual


def _stamp(path: Path) -> list[int] | None:
    """What a file's recorded hash stays valid under: size, mtime, inode and the inode's change time. Size, mtime
    and inode alone miss an in-place edit that keeps the size and sets the mtime back (``os.utime``); any write,
    ``utime``, ``chmod`` or rename sets the change time to the clock's now, and no system call sets it back."""
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]


_stamps: dict[str, list] | None = None
_added: dict[str, list] = {}  # stamps this process verified since its last flush
_written: list[int] | None = None  # the stamps file's stamp as this process last wrote it


def _stamps_file() -> Path:
    return cache_root() / "verified-files.json"


def _read_stamps() -> dict[str, list]:
    try:
        stamps = json.loads(read_text(_stamps_file()))
    except (OSError, ValueError, MetabenchError):  # unreadable, damaged or not a file: re-hash, then rewrite
        return {}
    return stamps if isinstance(stamps, dict) else {}


def _hash_stamps() -> dict[str, list]:
    global _stamps
    if _stamps is None:
        _stamps = _read_stamps()
    return _stamps


def _remember_stamp(path: Path, stamp: list[int], sha256: str) -> None:
    """Record a verified file in memory; :func:`flush_stamps` writes the record.

    Writing the whole file per verified file was quadratic: in a cProfile of a cold ``--tasks all`` it took 63
    of 331 profiled seconds (MAGPIE alone reads 1,727 documents). A stamp lost to a killed process only costs a re-hash next time."""
    if not writable():  # a dry run (cache.read_only): not even in memory, a real run later in this process
        return          # must still record it
    record = [*stamp, sha256]
    _hash_stamps()[str(path)] = record
    if not _added:
        atexit.register(flush_stamps)
    _added[str(path)] = record


def flush_stamps() -> None:
    """Add the stamps verified since the last flush to the file: read, merged and replaced atomically under a
    lock, so worker processes flushing side by side (``--launcher processes``) keep each other's stamps
    (replacing the file with one process's view lost the others', and the next run re-hashed their files).
    Called after each dataset parse, after each batch of a worker and at exit."""
    global _written
    if not _added:
        return
    pending = dict(_added)
    _added.clear()
    target = _stamps_file()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with locked(target.parent / ".verified-files.lock"):
            # Another process wrote since this one last did: read its stamps (else the file holds only ours)
            merged = {**_hash_stamps(), **(_read_stamps() if _stamp(target) != _written else {}), **pending}
            try:
                write_atomically(target, json.dumps(merged))  # one-shot dumps uses the C encoder; json.dump does not
            except OSError:
                return
            _written = _stamp(target)
    except OSError:
        return  # a read-only cache: the files are hashed again next time
    _hash_stamps().update(merged)
