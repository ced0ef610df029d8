"""Authenticating the pickled caches: a file in the cache is unpickled only if this user's secret sealed it.

The task-index cache and the parsed-item cache pickle what they store, and unpickling runs whatever code a file
names. The cache folder (``METABENCH_CACHE_DIR``) may be shared between users, restored from a CI cache or
copied from another machine, so a file there is input, not code. Every such file starts with an HMAC-SHA256 of
its payload and of the entry it is stored under, keyed with a per-user secret; a file whose HMAC does not check
(planted, copied from another entry, sealed on another machine, damaged) is never unpickled: it is a miss, and
the entry is rebuilt and sealed again.

Why an HMAC and not a format that cannot run code (JSON, msgpack): the item cache holds the typed items of any
registered dataset, a plugin's own dataclasses included, with the objects they share stored once (MAGPIE's
train slice: 16.3 MB pickled); a plain-data encoding would need every item class, built-in or a plugin's, to
round-trip through it, and the measured alternative (Arrow, ``data/itemcache.py``) took 3x as long to read back.
Checking an HMAC costs one sha256 pass over the bytes before they are unpickled.

The secret is 32 random bytes in ``$METABENCH_SECRET_FILE``, by default ``$XDG_CONFIG_HOME/metabench/cache-secret``
(``~/.config/...``): created on first use with mode 0600 in a 0700 folder, never inside the cache folder, and
used only while it is a regular file owned by this user that no one else may read or write. Otherwise the caches
are off for the process (nothing is read from or written to them; a warning says why and how to fix it), which
costs speed only. A cache restored on a machine with another secret is rebuilt, entry by entry.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import secrets
import stat
import warnings
from pathlib import Path

from .atomic import write_atomically
from .cache_dir import cache_root

SECRET_ENV = "METABENCH_SECRET_FILE"
#: What a sealed file starts with: the format, then the 32-byte HMAC, then the payload.
MAGIC = b"metabench-sealed-v1\0"
_MAC_BYTES = hashlib.sha256().digest_size
_SECRET_BYTES = 32

_secrets: dict[str, bytes | None] = {}  # per secret file: its bytes, or None when it was refused


def secret_file() -> Path:
    """Where this user's secret lives: ``$METABENCH_SECRET_FILE``, else ``$XDG_CONFIG_HOME/metabench/cache-secret``."""
    named = os.environ.get(SECRET_ENV)
    if named:
        return Path(named).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config).expanduser() / "metabench" / "cache-secret"


def seal(purpose: str, payload: bytes) -> bytes | None:
    """``payload`` with its HMAC in front, bound to ``purpose`` (the entry it is stored under), or None when
    there is no usable secret (then nothing is cached)."""
    key = _secret()
    if key is None:
        return None
    return MAGIC + _mac(key, purpose, payload) + payload


def mac(purpose: str, payload: bytes) -> str | None:
    """The hex HMAC of ``payload`` for ``purpose`` under this user's secret, or None without a usable secret: for
    a store that keeps its own rows (the job memo, `cache.AnswerCache.put_run`) and needs only the seal."""
    key = _secret()
    return None if key is None else _mac(key, purpose, payload).hex()


def unseal(purpose: str, blob: bytes) -> memoryview | None:
    """The payload of a sealed ``blob`` if its HMAC is this user's for ``purpose``, else None (never unpickle it)."""
    key = _secret()
    head = len(MAGIC) + _MAC_BYTES
    if key is None or len(blob) < head or not blob.startswith(MAGIC):
        return None
    payload = memoryview(blob)[head:]
    if not hmac.compare_digest(blob[len(MAGIC):head], _mac(key, purpose, payload)):
        return None
    return payload


def dump(path: Path, purpose: str, value: object) -> None:
    """Pickle ``value`` into ``path``, sealed for ``purpose``; without a secret, nothing is written. Raises what
    pickling or writing raises (``OSError``, ``pickle.PicklingError``...): a cache's caller only loses speed."""
    sealed = seal(purpose, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    if sealed is not None:
        write_atomically(path, sealed)


def load(path: Path, purpose: str) -> object | None:
    """What :func:`dump` stored in ``path`` for ``purpose``, or None: absent, not a regular file, not sealed by
    this user's secret for this purpose (then it is never unpickled), or damaged."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device planted under an entry's name
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            blob = handle.read()
    finally:
        os.close(fd)
    payload = unseal(purpose, blob)
    if payload is None:
        return None
    try:
        return pickle.loads(payload)
    except Exception:  # noqa: BLE001 - sealed by us but unreadable now (a class since renamed): a miss
        return None


def _mac(key: bytes, purpose: str, payload) -> bytes:
    mac = hmac.new(key, purpose.encode("utf-8") + b"\0", hashlib.sha256)
    mac.update(payload)
    return mac.digest()


def _secret() -> bytes | None:
    path = secret_file()
    if str(path) not in _secrets:
        try:
            _secrets[str(path)] = _load_or_create(path)
        except _Refused as exc:
            warnings.warn(f"the task-index and parsed-item caches are off: {exc.args[0]}", RuntimeWarning, stacklevel=3)
            _secrets[str(path)] = None
    return _secrets[str(path)]


class _Refused(Exception):
    pass


def _load_or_create(path: Path) -> bytes:
    absolute = Path(os.path.abspath(path))
    root = Path(os.path.abspath(cache_root()))
    if absolute.is_relative_to(root) or Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root)):
        raise _Refused(f"{SECRET_ENV}={path} lies inside the cache folder {root}, which others may write; "
                       f"name a file outside it (unset {SECRET_ENV} for ~/.config/metabench/cache-secret)")
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:  # another process created it first
        return _read(path)
    except OSError as exc:
        raise _Refused(f"cannot create the cache secret {path} ({exc.strerror}); set {SECRET_ENV} to a writable "
                       "place outside the cache folder") from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(secrets.token_bytes(_SECRET_BYTES))
        handle.flush()
        os.fsync(handle.fileno())
    return _read(path)


def _read(path: Path) -> bytes:
    """The secret, if ``path`` is a regular file (not a link) owned by this user, closed to everyone else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _Refused(f"cannot read the cache secret {path} ({exc.strerror}; a link is refused): "
                       f"remove it, or set {SECRET_ENV} to a file of your own") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise _Refused(f"the cache secret {path} is not a regular file owned by you: remove it (a new one is "
                           f"made), or set {SECRET_ENV} to a file of your own")
        if info.st_mode & 0o077:
            raise _Refused(f"the cache secret {path} can be read or written by others (mode "
                           f"{stat.S_IMODE(info.st_mode):04o}): remove it (a new one is made) or `chmod 600 {path}`")
        data = os.read(fd, _SECRET_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != _SECRET_BYTES:
        raise _Refused(f"the cache secret {path} holds {len(data)} bytes, not {_SECRET_BYTES}: remove it "
                       "(a new one is made)")
    return data
