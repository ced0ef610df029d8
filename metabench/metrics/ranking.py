"""Ranking metrics for generation (MUNCH paraphrase generation): MRR, recall@k and accuracy@1.

``golds`` holds one set of acceptable answers per item (MUNCH: the crowd's substitutes for the highlighted
word), ``preds`` one ranked candidate list per item, best first. A bare string is read as a one-element
set or list, so a model that returns a single word scores naturally.

Matching (``normalise``). MUNCH only says a completion must be a "complete match" with a human answer;
case, hyphens and lemmas are unspecified (munch.md §2.2, §8.4). Choices:

- Default ``"lower"``: Unicode NFKC, lower case, surrounding whitespace and punctuation stripped (never
  inner characters). Case is not meaningful there: the released answers are capitalised when the target
  word starts the sentence and contain case duplicates (``team TEAM``), so an exact-case match would
  score a model by the position of the word in the sentence. Stripping edge punctuation absorbs the
  closing quote or asterisk of the prompt formats (``bathed"``) if an adapter leaves it on.
- ``"exact"``: the raw strings, for reproducing a strict reading.
- ``"lower_hyphen"``: ``"lower"`` plus hyphens and underscores read as spaces and runs of spaces collapsed
  (``well-known`` == ``well known``). Not the default: the gold answers are space-separated in the
  release, so no gold answer contains a space and the rule only helps predictions from adapters that
  split words. No lemmatisation and no British/American folding in any mode (the answers are inflected
  surface forms, and ``organisation``/``organization`` both occur as separate answers).
- Or a callable ``str -> str``.

Both golds and candidates are normalised; answers that normalise to ``""`` are dropped from gold sets,
and an item left with no answer is an error. Candidates are de-duplicated after normalisation, first
occurrence kept, so ranks count *distinct* answers (``["Team", "team", "group"]`` puts ``group`` at
rank 2): two spellings of one word are one guess, not two.

Per-item functions (`reciprocal_rank`, `hit_at_k`, `answer_recall_at_k`) give the scores that paired tests
resample; every corpus metric here is the plain mean of them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence

from .common import MetricInputError, check_pair, named

Normaliser = Callable[[str], str]
Answers = str | Iterable[str]  # acceptable answers of one item
Candidates = str | Sequence[str]  # ranked candidates of one item, best first
_SPACES = re.compile(r"\s+")


def _strip_edges(text: str) -> str:
    start, end = 0, len(text)

    def junk(ch: str) -> bool:
        return ch.isspace() or unicodedata.category(ch).startswith("P")

    while start < end and junk(text[start]):
        start += 1
    while end > start and junk(text[end - 1]):
        end -= 1
    return text[start:end]


def _lower(text: str) -> str:
    return _strip_edges(unicodedata.normalize("NFKC", text).lower())


def _lower_hyphen(text: str) -> str:
    return _SPACES.sub(" ", _lower(text).replace("-", " ").replace("_", " ")).strip()


NORMALISERS: dict[str, Normaliser] = {"exact": lambda s: s, "lower": _lower, "lower_hyphen": _lower_hyphen}


def get_normaliser(normalise: str | Normaliser) -> Normaliser:
    """The answer normaliser named ``normalise`` (``exact``, ``lower``, ``lower_hyphen``) or a callable."""
    return named(normalise, NORMALISERS, "normalise")


def _as_list(value: str | Iterable[str], what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if value is None:
        return []
    try:
        items = list(value)
    except TypeError:
        raise MetricInputError(f"{what} must be a string or a collection of strings, got {value!r}") from None
    for v in items:
        if not isinstance(v, str):
            raise MetricInputError(f"{what} contains {v!r} ({type(v).__name__}); answers must be strings")
    return items


def _gold_set(gold, norm: Normaliser) -> set[str]:
    answers = {norm(a) for a in _as_list(gold, "a gold answer set")} - {""}
    if not answers:
        raise MetricInputError(
            f"gold answer set {gold!r} is empty after normalisation; every item needs an acceptable answer"
        )
    return answers


def _ranked(pred, norm: Normaliser) -> list[str]:
    """Distinct normalised candidates in rank order (first occurrence wins)."""
    return list(dict.fromkeys(norm(c) for c in _as_list(pred, "a candidate list")))


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise MetricInputError(f"k must be a positive integer, got {k!r}")
    return k


# --------------------------------------------------------------------------------------- per item


def rank(gold, pred, normalise: str | Normaliser = "lower") -> int | None:
    """1-based rank of the first candidate that is an acceptable answer, or None if none is."""
    norm = get_normaliser(normalise)
    answers = _gold_set(gold, norm)
    for i, candidate in enumerate(_ranked(pred, norm), start=1):
        if candidate in answers:
            return i
    return None


def reciprocal_rank(gold, pred, normalise: str | Normaliser = "lower") -> float:
    """1 / rank of the first correct candidate; 0.0 when no candidate is correct."""
    r = rank(gold, pred, normalise)
    return 0.0 if r is None else 1.0 / r


def hit_at_k(gold, pred, k: int, normalise: str | Normaliser = "lower") -> float:
    """1.0 if any of the top ``k`` distinct candidates is an acceptable answer, else 0.0."""
    r = rank(gold, pred, normalise)
    return float(r is not None and r <= _check_k(k))


def answer_recall_at_k(gold, pred, k: int, normalise: str | Normaliser = "lower") -> float:
    """Share of the item's distinct acceptable answers found among the top ``k`` distinct candidates."""
    norm = get_normaliser(normalise)
    answers = _gold_set(gold, norm)
    top = set(_ranked(pred, norm)[: _check_k(k)])
    return len(answers & top) / len(answers)


# ----------------------------------------------------------------------------------- corpus level


def mrr(golds: Sequence[Answers], preds: Sequence[Candidates], *, normalise: str | Normaliser = "lower") -> float:
    """Mean reciprocal rank over items: each item scores 1/rank of its first correct candidate, or 0.

    Per item (sentence), not per gold answer: an item with five acceptable answers is one query.
    """
    golds, preds = check_pair(golds, preds, "mrr")
    return sum(reciprocal_rank(g, p, normalise) for g, p in zip(golds, preds)) / len(golds)


def recall_at_k(
    golds: Sequence[Answers],
    preds: Sequence[Candidates],
    *,
    k: int,
    normalise: str | Normaliser = "lower",
    mode: str = "any",
) -> float:
    """Mean over items of recall at cut-off ``k``.

    ``mode="any"`` (default, also called hit@k or success@k): an item scores 1 if any acceptable answer is
    among the top ``k`` candidates. ``mode="fraction"``: the share of the item's distinct acceptable answers
    among the top ``k`` (the IR definition of recall). MUNCH does not define its Recall@k, and its Table 3
    has Recall@5 below MRR (.32 vs .54 for GPT-3.5), which ``"any"`` cannot produce (hit@5 >= MRR - 1/6)
    but ``"fraction"`` can; use ``"fraction"`` when comparing with the paper's numbers.
    """
    golds, preds = check_pair(golds, preds, "recall_at_k")
    _check_k(k)
    if mode == "any":
        per_item = (hit_at_k(g, p, k, normalise) for g, p in zip(golds, preds))
    elif mode == "fraction":
        per_item = (answer_recall_at_k(g, p, k, normalise) for g, p in zip(golds, preds))
    else:
        raise MetricInputError(f"recall_at_k: unknown mode={mode!r}; choose 'any' or 'fraction'")
    return sum(per_item) / len(golds)


def accuracy_at_1(
    golds: Sequence[Answers], preds: Sequence[Candidates], *, normalise: str | Normaliser = "lower"
) -> float:
    """Share of items whose top candidate is an acceptable answer (MUNCH's generation "accuracy",
    inferred as a top-1 match; munch.md §8.3)."""
    return recall_at_k(golds, preds, k=1, normalise=normalise, mode="any")


__all__ = [
    "NORMALISERS",
    "accuracy_at_1",
    "answer_recall_at_k",
    "get_normaliser",
    "hit_at_k",
    "mrr",
    "rank",
    "recall_at_k",
    "reciprocal_rank",
]
