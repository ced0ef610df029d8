"""The one way a launcher opens the answer cache, on the driver or in a worker.

The location travels as a string (``None``: ``--no-cache``) because it is handed to worker processes and Ray
actors, which open the SQLite file themselves: a connection cannot be pickled, and each process needs its own.
"""

from __future__ import annotations

from pathlib import Path

from ..cache import AnswerCache, cache_root


def answers_path(use_cache: bool) -> str | None:
    """Where this run's answers live: ``answers.sqlite`` under the cache root, or None without a cache."""
    return str(cache_root() / "answers.sqlite") if use_cache else None


def open_answers(path: str | None) -> AnswerCache:
    """The answer cache at ``path`` (from :func:`answers_path`); ``None`` gives one that stores nothing."""
    return AnswerCache(None if path is None else Path(path))
