"""The per-item answer cache: what makes a killed run resume and a rerun nearly free.

Answers are keyed by (model fingerprint, task config hash, data hash, item id, seed, protocol), so another
model, an edited task or changed data never reuses a stale answer. A later draw of ``--repeat`` keys its
answers by ``"<seed>~draw<r>"`` in the seed's place (:mod:`metabench.launch.repeats`): no draw is served another's. SQLite commits each batch atomically:
after a SIGKILL, every batch committed before it is there and nothing half-written is.

Once a job's seed has an answer for every test item, the whole set is also stored as one row of the ``jobs``
table (keyed by the same things but the item id; the data hash already covers the item ids and ``--limit``),
so a fully cached job costs one query and one JSON parse instead of a sha256 and a row per item.

The ``runs`` table holds finished jobs whole (results record and samples.jsonl bytes, zlib-compressed),
keyed before any data is loaded: see :mod:`metabench.job_memo`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sqlite3
import zlib
from contextlib import contextmanager
from pathlib import Path

from .cache_dir import cache_root  # noqa: F401 - where every cache lives; imported from here by most callers
from .errors import MetabenchError




_READ_ONLY = [False]


@contextmanager
def read_only():
    """Inside, the small on-disk records beside the answers (the verified-files stamps, the task index) are read
    but never written: a dry run leaves the cache as it found it. Writers ask :func:`writable`."""
    before, _READ_ONLY[0] = _READ_ONLY[0], True
    try:
        yield
    finally:
        _READ_ONLY[0] = before


def writable() -> bool:
    """False inside :func:`read_only` (a dry run)."""
    return not _READ_ONLY[0]


def item_key(fingerprint: str, config_hash: str, data_hash: str, item_id: str, seed: int | str, protocol: str) -> str:
    """``seed``: the run seed, or ``"<seed>~draw<r>"`` for a later draw of ``--repeat`` (its own answers)."""
    raw = "\x00".join((fingerprint, config_hash, data_hash, item_id, str(seed), protocol))
    return hashlib.sha256(raw.encode()).hexdigest()


def job_key(fingerprint: str, config_hash: str, data_hash: str, seed: int | str, protocol: str) -> str:
    """The key of one seed of one job's complete answer set (the ``jobs`` table)."""
    raw = "\x00".join(("job", fingerprint, config_hash, data_hash, str(seed), protocol))
    return hashlib.sha256(raw.encode()).hexdigest()


def _seal(key: str, record: dict, run_name: str, blob: bytes) -> str | None:
    """The job memo's seal: an HMAC under the user's cache secret (`cache_seal`), so that a row rewritten in the
    database with a matching plain digest is not served; None without a usable secret (then no memo is kept)."""
    from . import cache_seal

    text = json.dumps(record, ensure_ascii=False, allow_nan=False, sort_keys=True)
    return cache_seal.mac(f"job-memo\0{key}", "\x00".join((text, run_name)).encode() + b"\x00" + blob)


class AnswerCache:
    """A key → JSON answer store. ``AnswerCache(None)`` is a no-op (``--no-cache``)."""

    def __init__(self, path: Path | None):
        self.path = path
        self._db = None
        if path is not None:
            with self._guard():
                path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(str(path), timeout=60)
                self._db.execute("PRAGMA journal_mode=WAL")
                # WAL + NORMAL: a committed batch survives the process being killed (what resuming needs); only
                # an OS crash can lose the last batches. FULL fsyncs every batch: 8.8 of `--tasks all`'s seconds.
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                self._db.execute("CREATE TABLE IF NOT EXISTS jobs (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                self._db.execute("CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, record TEXT NOT NULL, "
                                 "run_name TEXT NOT NULL, samples BLOB NOT NULL)")
                self._db.commit()

    @property
    def enabled(self) -> bool:
        """False for ``AnswerCache(None)``, which stores nothing (callers then skip computing keys)."""
        return self._db is not None

    @contextmanager
    def _guard(self):
        """A damaged or unreadable cache file is named, with the two ways out, instead of a raw sqlite error."""
        try:
            yield
        except (sqlite3.DatabaseError, OSError, ValueError, zlib.error) as exc:
            raise MetabenchError(
                f"{self.path}: the answer cache cannot be used ({type(exc).__name__}: {exc})",
                hint=f"run with --no-cache, or delete {self.path} to rebuild it (it only holds cached answers; "
                "runs already written are not affected)",
            ) from None

    def get_many(self, keys: list[str]) -> dict[str, object]:
        if self._db is None or not keys:
            return {}
        found: dict[str, object] = {}
        with self._guard():
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for key, value in self._db.execute(f"SELECT key, value FROM answers WHERE key IN ({marks})", chunk):
                    found[key] = json.loads(value)
        return found

    def put_many(self, pairs: list[tuple[str, object]]) -> None:
        if self._db is None or not pairs:
            return
        with self._guard(), self._db:  # one transaction: the whole batch or nothing
            self._db.executemany(
                "INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)",
                [(k, json.dumps(v, ensure_ascii=False)) for k, v in pairs],
            )

    def get_job(self, key: str) -> dict[str, object] | None:
        """A job's complete answers, item id -> answer (one row, one query), or None."""
        if self._db is None:
            return None
        with self._guard():
            row = self._db.execute("SELECT value FROM jobs WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row is not None else None

    def put_job(self, key: str, answers: dict[str, object]) -> None:
        """Record a job's complete answers once every item has one (the per-item rows stay: they are what
        an interrupted or partly cached job resumes from)."""
        if self._db is None:
            return
        with self._guard(), self._db:
            self._db.execute("INSERT OR REPLACE INTO jobs (key, value) VALUES (?, ?)",
                             (key, json.dumps(answers, ensure_ascii=False)))

    def get_run(self, key: str) -> tuple[dict, str, bytes] | None:
        """A remembered job: (results record without its volatile keys, run folder name, samples.jsonl bytes)."""
        if self._db is None:
            return None
        with self._guard():
            row = self._db.execute("SELECT record, run_name, samples FROM runs WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            sealed = json.loads(row[0])
            record = sealed.get("record") if isinstance(sealed, dict) else None
            if not isinstance(record, dict) or not isinstance(sealed.get("hmac"), str) \
                    or not hmac.compare_digest(sealed["hmac"], _seal(key, record, row[1], row[2]) or ""):
                return None  # edited, resealed without the secret, or sealed before the HMAC: computed again
            return record, row[1], zlib.decompress(row[2])

    def put_run(self, key: str, record: dict, run_name: str, lines: bytes) -> None:
        """Remember a finished job. The record is sealed with an HMAC (the caches' secret, `cache_seal`) of
        everything served back (key, record, folder name, samples): a record edited in the file, and resealed by
        anyone without the secret, is not served as the run's numbers."""
        if self._db is None:
            return
        blob = zlib.compress(lines, 1)
        seal = _seal(key, record, run_name, blob)
        if seal is None:  # no usable secret: a memo that could not be checked is not kept
            return
        sealed = {"record": record, "hmac": seal}
        with self._guard(), self._db:
            self._db.execute("INSERT OR REPLACE INTO runs (key, record, run_name, samples) VALUES (?, ?, ?, ?)",
                             (key, json.dumps(sealed, ensure_ascii=False, allow_nan=False), run_name, blob))

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
