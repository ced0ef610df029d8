"""Input views of an expression-level item (Boisson et al. 2023, §3.1 and Appendix A.2/A.8).

A view decides how much of an item a model sees. ``default`` shows the context with the potentially
metaphorical expression (PME) wrapped in ``<PME>…</PME>``; ``pme_only`` shows the expression alone;
``masked`` shows the context with the expression replaced by one mask string. If a model scores almost as
well on an incomplete view as on ``default``, the dataset can be solved without the information the task
claims to test — the paper's construction artifact.

The expression is the item's character span, from the first start to the last end when it is
discontinuous (A.8: "rock the political boat" keeps "the political"), else the whitespace word at
``target_index``. Adjective–noun datasets have no sentence: their text *is* the pair, so the same rule
yields A.2's inputs (``<PME>adj</PME> noun``, ``adj``, ``<masked> noun``).
"""

from __future__ import annotations

import re

from ..errors import DataError

VIEWS = ("default", "pme_only", "masked")
PME_OPEN, PME_CLOSE = "<PME>", "</PME>"
DEFAULT_MASK = "<masked>"


def expression_span(item, text: str) -> tuple[int, int]:
    """(start, end) of the item's expression in ``text``: outer character span, else the target word."""
    spans = getattr(item, "spans", None)
    if spans and len(spans) == 1:  # most items: one contiguous expression
        (start, end), = spans
    elif spans:
        start, end = min(s for s, _ in spans), max(e for _, e in spans)
    else:
        index = getattr(item, "target_index", None)
        words = list(re.finditer(r"\S+", text))
        if index is None or not 0 <= index < len(words):
            raise DataError(
                f"item '{getattr(item, 'id', '?')}': an expression view needs the item's target (spans or "
                f"target_index), and it has {'none' if index is None else f'index {index} of {len(words)} words'}",
                hint="use marker: none (and no views) for datasets without a marked expression",
            )
        start, end = words[index].span()
    if not 0 <= start < end <= len(text):
        raise DataError(f"item '{getattr(item, 'id', '?')}': span ({start}, {end}) is outside its text")
    return start, end


def render(item, text: str, view: str = "default", mask: str = DEFAULT_MASK) -> str:
    """``text`` as ``view`` shows it (see the module docstring)."""
    start, end = expression_span(item, text)
    if view == "default":
        return f"{text[:start]}{PME_OPEN}{text[start:end]}{PME_CLOSE}{text[end:]}"
    if view == "pme_only":
        return text[start:end]
    if view == "masked":
        return f"{text[:start]}{mask}{text[end:]}"
    raise DataError(f"unknown view '{view}'", hint=f"views are: {', '.join(VIEWS)}")


def expression_key(item, text: str) -> str:
    """The lexical identity of the item's expression: its lemma, else its surface string, lower-cased."""
    lemma = (getattr(item, "lemma", "") or "").strip()
    if lemma:
        return lemma.lower()
    start, end = expression_span(item, text)
    return text[start:end].lower()
