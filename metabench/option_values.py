"""Whole-number options checked one way wherever they enter: the command line, a run config, the Python API.

``--limit 20.5`` on the command line, ``limit: true`` in a run config and ``evaluate(limit="20")`` are one
mistake: each is refused with the same message and exit status 2, instead of being coerced (``true`` became
``--limit 1``) or failing later as a bare ``TypeError``.
"""

from __future__ import annotations

from .errors import MetabenchError


def whole_number(value: object, option: str, low: int = 1, high: int | None = None, *, hint: str | None = None) -> int:
    """``value`` as an int from ``low`` to ``high``; anything else (a bool, a float, text) is refused."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetabenchError(f"{option} {value!r}: must be a whole number ({_range(low, high)})", hint=hint)
    if value < low or (high is not None and value > high):
        raise MetabenchError(f"{option} {value}: must be {_range(low, high)}", hint=hint)
    return value


def number_text(text: str) -> int | float | str:
    """A number given on the command line as the Python API would be given it (``20``, ``20.5``), so that
    :func:`whole_number` says the same of both; text that is no number stays text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _range(low: int, high: int | None) -> str:
    return f"{low} or more" if high is None else f"between {low} and {high}"
