"""The format-failure rate beside a generated run's number, the same few words wherever the number is printed.

A decoder that answers by generating text (``answer=generated``, every chat API) is read by a strict parser, and
an answer no parser reads counts as wrong (`kinds.answered`). A low F1 can therefore mean a model that cannot
detect metaphor or a model that cannot follow the answer format; the run's ``format_failure_rate`` tells the two
apart, so every surface that prints a generated run's primary metric prints the rate beside it ("0.412 · 3.1 %
unread"): the board's cells (every table), ``metabench compare``, the table a run prints at its end, ``metabench
report`` and the Hub export's notes. One helper, so they never word it differently. A run that is not generated
has no such metric and gets nothing beside its number.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..kinds.answered import FORMAT_FAILURE

#: How the rate reads beside a number; the board's legend and the docs quote it.
LEGEND = ("N % unread: the share of a generated run's answers that no parser read (its format_failure_rate; "
          "such an answer counts as wrong), printed beside its number")


def rate_of(metrics: Mapping[str, Any] | None) -> float | None:
    """The mean format-failure rate among ``metrics`` (metric -> a summary with ``mean``, a dict with ``"mean"``
    or a plain number), or None where the run is not generated (no such metric, or no value)."""
    if not metrics or FORMAT_FAILURE not in metrics:
        return None
    found = metrics[FORMAT_FAILURE]
    if isinstance(found, Mapping):
        found = found.get("mean")
    elif not isinstance(found, (int, float)) and found is not None:
        found = getattr(found, "mean", None)
    return None if found is None else float(found)


def unread(rate: float | None) -> str:
    """``3.1 % unread`` for a rate of 0.031; "" for None (not a generated run)."""
    return "" if rate is None else f"{rate * 100:.1f} % unread"


def beside(text: str, rate: float | None) -> str:
    """``text`` (a number as its surface prints it) with the rate beside it: ``0.412 · 3.1 % unread``."""
    return text if rate is None else f"{text} · {unread(rate)}"


def run_rate(run) -> float | None:
    """A stored run's format-failure rate (`runs.stored.Run`, or a `RunRecord`), None where it is not generated."""
    record = getattr(run, "record", run)
    return rate_of(record.metrics.aggregate)
