"""Fetching a declared file into the cache: retries, progress bar, hash check, atomic write.

Why each piece:

- the source is the raw upstream file at the pinned commit (``DataFile.url``), so every user gets the bytes
  the manifest hashes; ``METABENCH_DATA_URL`` replaces it with ``<base>/<DataFile.path>`` for a mirror
  served over HTTP (or ``file://``): offline sites, and the tests' local server;
- retries with exponential backoff on connection errors, timeouts, short reads and HTTP 5xx/429 only: a 404
  will not fix itself, and a retry storm on it would only slow the error down;
- short timeouts (``METABENCH_DOWNLOAD_TIMEOUT``, default 15 s per attempt) and a bounded number of attempts
  (``METABENCH_DOWNLOAD_RETRIES``, default 3 retries) so that an offline machine fails fast;
- the bytes go to a temporary file in the destination folder, are fsynced and hashed, and only a file with
  the right hash is moved into place with ``os.replace``: an interrupted or corrupt download never leaves a
  file that a later run would trust;
- a file the mirror keeps gzipped (``compressed="gzip"``) is stored gzipped in the cache too, so a loader
  reads the same form whatever the source; its hash is over the decompressed (upstream) bytes.

Only the standard library (urllib) is used; tqdm draws the progress bar on a terminal.
"""

from __future__ import annotations

import gzip
import http.client
import os
import socket
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from ..version import __version__
from ..connections import DOWNLOAD
from ..errors import DataError
from .hashing import hash_mismatch, sha256_of
from .spec import DataFile

_CHUNK = 1 << 16
_RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}
_sleep = time.sleep  # replaced in tests


class _Retryable(Exception):
    """A failure that another attempt may not have (network trouble, server overload)."""


def mirror_url() -> str:
    """The ``METABENCH_DATA_URL`` base, with a trailing slash, or ''."""
    base = os.environ.get("METABENCH_DATA_URL", "").strip()
    return base if not base or base.endswith("/") else base + "/"


def source_url(declared: DataFile) -> tuple[str, bool]:
    """(URL to fetch, whether it serves the mirror layout) for a declared file."""
    base = mirror_url()
    if base:
        return base + declared.path, True
    return declared.url, False


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        return float(raw) if raw else default
    except ValueError:
        raise DataError(f"{name}={raw!r} is not a number") from None


def download_file(
    declared: DataFile,
    dest: Path,
    *,
    progress: bool = True,
    retries: int | None = None,
    timeout: float | None = None,
    backoff: float = 1.0,
) -> Path:
    """Download ``declared`` to ``dest`` (verified, atomically), or raise DataError saying why not."""
    url, from_mirror = source_url(declared)
    if not url:
        raise DataError(
            f"data file '{declared.path}' has no upstream location in its spec and METABENCH_DATA_URL is not set",
            hint="get it from a mirror (METABENCH_DATA_DIR / --data-dir), or set METABENCH_DATA_URL to a server "
            "laid out like shared/data",
        )
    retries = int(_env_number("METABENCH_DOWNLOAD_RETRIES", 3)) if retries is None else retries
    timeout = DOWNLOAD.value if timeout is None else timeout
    # the mirror serves the stored (possibly gzipped) form; upstream serves plain bytes we may have to gzip
    gzip_on_write = declared.compressed == "gzip" and not from_mirror
    dest = Path(dest)
    created = [p for p in (dest.parent, *dest.parent.parents) if not p.exists()]
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _attempts(url, declared, dest, retries, timeout, backoff, gzip_on_write, progress)
    except BaseException:
        for folder in created:  # leave no empty folders behind a failed download (innermost first)
            try:
                folder.rmdir()
            except OSError:
                break
        raise


def _attempts(url, declared, dest, retries, timeout, backoff, gzip_on_write, progress) -> Path:
    last = ""
    for attempt in range(retries + 1):
        if attempt:
            _sleep(backoff * 2 ** (attempt - 1))
        tmp = _temp_path(dest)
        try:
            _fetch(url, tmp, timeout=timeout, gzip_on_write=gzip_on_write, label=declared.path, progress=progress)
            actual = sha256_of(tmp, declared.compressed)
            if actual != declared.sha256:
                raise hash_mismatch(
                    url, declared, actual,
                    hint="the download was rejected and nothing was stored; the source holds another version of "
                    "the file, or the transfer was corrupted",
                )
            os.replace(tmp, dest)
            _fsync_dir(dest.parent)
            return dest
        except _Retryable as exc:
            last = str(exc)
        finally:
            tmp.unlink(missing_ok=True)
    raise DataError(
        f"could not download '{declared.path}' from {url} after {retries + 1} attempts: {last}",
        hint="check the network (or set METABENCH_DATA_DIR to a local mirror); METABENCH_DOWNLOAD_TIMEOUT and "
        "METABENCH_DOWNLOAD_RETRIES tune the attempts",
    )


def _temp_path(dest: Path) -> Path:
    handle, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    os.close(handle)
    return Path(name)


def _fetch(url: str, tmp: Path, *, timeout: float, gzip_on_write: bool, label: str, progress: bool) -> None:
    """One attempt: stream ``url`` into ``tmp`` (fsynced). Raises _Retryable or DataError."""
    request = urllib.request.Request(url, headers={"User-Agent": f"metabench/{__version__}"})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 - http(s)/file URLs only
    except urllib.error.HTTPError as exc:
        if exc.code in _RETRY_STATUS:
            raise _Retryable(f"HTTP {exc.code} {exc.reason}") from None
        raise DataError(
            f"could not download '{label}' from {url}: HTTP {exc.code} {exc.reason}",
            hint="the pinned upstream location is gone or wrong; use a mirror (METABENCH_DATA_DIR) and report it",
        ) from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, FileNotFoundError):
            raise DataError(f"could not download '{label}': {url} does not exist") from None
        if isinstance(exc.reason, socket.gaierror):  # no DNS: offline, and retrying will not change that
            raise DataError(
                f"could not download '{label}' from {url}: cannot resolve the host ({exc.reason})",
                hint="this machine looks offline: use a local mirror (METABENCH_DATA_DIR / --data-dir), or set "
                "METABENCH_ALLOW_DOWNLOAD=0 to fail at once without trying",
            ) from None
        raise _Retryable(f"{exc.reason}") from None
    except (TimeoutError, ConnectionError, http.client.HTTPException) as exc:
        raise _Retryable(f"{type(exc).__name__}: {exc}") from None

    with response:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        bar = _progress(total, label, progress)
        received = 0
        try:
            with open(tmp, "wb") as raw:
                sink = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if gzip_on_write else raw
                try:
                    while True:
                        block = response.read(_CHUNK)
                        if not block:
                            break
                        sink.write(block)
                        received += len(block)
                        if bar is not None:
                            bar.update(len(block))
                finally:
                    if sink is not raw:
                        sink.close()
                raw.flush()
                os.fsync(raw.fileno())
        except (TimeoutError, ConnectionError, http.client.HTTPException) as exc:
            raise _Retryable(f"transfer interrupted after {received} bytes: {type(exc).__name__}: {exc}") from None
        finally:
            if bar is not None:
                bar.close()
    if total is not None and received != total:
        raise _Retryable(f"truncated transfer: {received} of {total} bytes")


def _progress(total: int | None, label: str, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm import tqdm  # noqa: PLC0415 - only when a download happens
    except ImportError:
        return None
    # disable=None: no bar when stderr is not a terminal (CI logs stay clean)
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=label, leave=False, disable=None)


def _fsync_dir(folder: Path) -> None:
    """Make the rename durable; not every platform can open a directory, which is fine."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

