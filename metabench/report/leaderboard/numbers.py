"""How numbers read on the leaderboard, shared by the Markdown and HTML reporters."""

from __future__ import annotations

import math

from ..paper_views import MISSING
from .schema import GroupSummary, Summary


def number(value, digits: int = 4) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def signed(value) -> str:
    return MISSING if value is None else f"{value:+.4f}"


def mean_std(aggregate: Summary | GroupSummary | dict | None) -> str:
    """'0.8123 ± 0.0042' over several seeds, '0.8123' for one, '—' for none. The board's `Summary`, or a
    section's own JSON (``{"mean", "std", "n"}``: the ``pm`` filter of a plugin's template)."""
    if isinstance(aggregate, dict):
        aggregate = Summary.model_validate(aggregate)
    if aggregate is None or aggregate.mean is None:
        return MISSING
    if (aggregate.n or 1) > 1:
        return f"{aggregate.mean:.4f} ± {aggregate.std:.4f}"
    return f"{aggregate.mean:.4f}"


def sort_value(value) -> str:
    """A ``data-value`` for the sorting script: a plain number, or empty for a missing value."""
    return "" if value is None or not math.isfinite(value) else repr(float(value))
