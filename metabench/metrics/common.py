"""Shared input checks and the P/R/F1 arithmetic used by every metric module.

One error type for bad metric input, so that the CLI prints a message instead of a traceback
(``MetabenchError``) while callers and tests can still catch the conventional ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import MetabenchError


class MetricInputError(MetabenchError, ValueError):
    """Golds/predictions that a metric cannot score (empty, misaligned, wrong shape or missing argument)."""


def check_pair(golds: Sequence[Any], preds: Sequence[Any], metric: str) -> tuple[list[Any], list[Any]]:
    """Materialise golds and predictions as lists and check they are non-empty and of equal length.

    Empty input is an error rather than 0.0 or NaN: a score over no items is always a pipeline bug
    (an empty split, a filter that matched nothing), and a silent number would end up in a table.
    """
    if isinstance(golds, (str, bytes)) or isinstance(preds, (str, bytes)):
        raise MetricInputError(
            f"{metric}: golds and preds must be sequences of items, got a single string",
            hint="wrap a single item in a list",
        )
    golds, preds = list(golds), list(preds)
    if len(golds) != len(preds):
        raise MetricInputError(
            f"{metric}: {len(golds)} golds but {len(preds)} predictions; they must be aligned item by item"
        )
    if not golds:
        raise MetricInputError(
            f"{metric}: no items to score (golds and preds are empty)",
            hint="check that the evaluation split and any subset filter select at least one item",
        )
    return golds, preds


def safe_div(num: float, den: float) -> float:
    """``num / den``, or 0.0 when ``den == 0`` (sklearn's and seqeval's ``zero_division=0``)."""
    return num / den if den else 0.0


def prf(tp: float, fp: float, fn: float) -> dict[str, float]:
    """Precision, recall and F1 from counts, with every 0/0 defined as 0.0.

    F1 is the harmonic mean 2PR/(P+R) of the two ratios, as seqeval computes it; sklearn's
    2TP/(2TP+FP+FN) is the same number up to the last bit or two (the tests allow 1e-12).
    """
    precision = safe_div(tp, tp + fp)
    recall = safe_div(tp, tp + fn)
    f1 = safe_div(2 * precision * recall, precision + recall)
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1)}


def named(choice, table: dict, what: str):
    """``choice`` itself if callable, else ``table[choice]``, with an error listing the valid names."""
    if callable(choice):
        return choice
    try:
        return table[choice]
    except (KeyError, TypeError):
        raise MetricInputError(f"unknown {what}={choice!r}; choose one of {', '.join(table)}") from None
