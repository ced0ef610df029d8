"""Corpus statistics in the shape of the Meta4XNLI paper's tables, for any tagging or NLI dataset.

- ``tagging_rows``: Tables 3/4 — metaphor tokens (B- and I- tags), tokens, %, metaphor sentences,
  sentences, %, grouped by source x subset (premise/hypothesis, from ``item.meta["subset"]``);
- ``nli_rows``: Table 5 — per source x gold label, pairs in each metaphor class (met / nonrelevant /
  no_met) with their share of the row;
- ``metaphor_overlap``: the share of test metaphor tokens whose lowercased word is also a metaphor token in
  train (how much of the test set a model can solve by memorising words).

Pure functions over items returning lists of dicts (one per table row, keys = column names, in display
order), so ``metabench data stats`` and the reporter print the same numbers their own way.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence

LITERAL_TAGS = frozenset({"O", "0", "", "_", "L", "literal"})
NLI_CLASSES = ("met", "nonrelevant", "no_met")


def is_metaphor_tag(tag: str) -> bool:
    """True for B-/I- metaphor tags and binary positive labels ('1', 'M'); False for O/0/literal."""
    return tag not in LITERAL_TAGS


def field_of(item, name: str) -> str:
    """An item's attribute, else its ``meta`` entry, else '' (so ``subset``, ``split`` work as group keys)."""
    if name != "meta" and hasattr(item, name):
        return str(getattr(item, name))
    return str((getattr(item, "meta", None) or {}).get(name, ""))


def _pct(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 2) if whole else 0.0


def tagging_rows(
    items: Iterable,
    *,
    by: Sequence[str] = ("source", "subset"),
    total: bool = True,
    is_metaphor: Callable[[str], bool] = is_metaphor_tag,
) -> list[dict]:
    """Meta4XNLI Tables 3/4: per group, metaphor tokens / tokens / % and metaphor sentences / sentences / %."""
    groups: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # met tokens, tokens, met sents, sents
    for item in items:
        counts = groups[tuple(field_of(item, k) for k in by)]
        met = sum(1 for tag in item.tags if is_metaphor(tag))
        counts[0] += met
        counts[1] += len(item.tags)
        counts[2] += 1 if met else 0
        counts[3] += 1
    keys = sorted(groups)
    rows = [_tagging_row(by, key, groups[key]) for key in keys]
    if total and len(rows) > 1:
        sums = [sum(groups[k][i] for k in keys) for i in range(4)]
        rows.append(_tagging_row(by, ("total",) + ("",) * (len(by) - 1), sums))
    return rows


def _tagging_row(by, key, c) -> dict:
    row = dict(zip(by, key))
    row.update(
        {
            "metaphor_tokens": c[0],
            "tokens": c[1],
            "token_pct": _pct(c[0], c[1]),
            "metaphor_sentences": c[2],
            "sentences": c[3],
            "sentence_pct": _pct(c[2], c[3]),
        }
    )
    return row


def nli_rows(pairs: Iterable, *, by: Sequence[str] = ("source", "label"), total: bool = True) -> list[dict]:
    """Meta4XNLI Table 5: per group, the pairs in each metaphor class and their % of the group."""
    groups: dict[tuple, Counter] = defaultdict(Counter)
    for pair in pairs:
        groups[tuple(field_of(pair, k) for k in by)][pair.metaphor or "unknown"] += 1
    seen = set().union(*groups.values()) if groups else set()
    classes = [c for c in NLI_CLASSES if c in seen] + sorted(seen - set(NLI_CLASSES))
    keys = sorted(groups)
    rows = [_nli_row(by, key, groups[key], classes) for key in keys]
    if total and len(rows) > 1:
        overall = sum((groups[k] for k in keys), Counter())
        rows.append(_nli_row(by, ("total",) + ("",) * (len(by) - 1), overall, classes))
    return rows


def _nli_row(by, key, counter: Counter, classes) -> dict:
    row = dict(zip(by, key))
    whole = sum(counter.values())
    for name in classes:
        row[name] = counter[name]
        row[f"{name}_pct"] = _pct(counter[name], whole)
    row["pairs"] = whole
    return row


def metaphor_overlap(train: Iterable, test: Iterable, *, is_metaphor: Callable[[str], bool] = is_metaphor_tag) -> dict:
    """Share of test metaphor tokens (and word types) whose lowercased word is a metaphor token in train."""
    seen = {w.lower() for item in train for w, t in zip(item.words, item.tags) if is_metaphor(t)}
    test_words = [w.lower() for item in test for w, t in zip(item.words, item.tags) if is_metaphor(t)]
    hits = sum(1 for w in test_words if w in seen)
    types = set(test_words)
    type_hits = len(types & seen)
    return {
        "test_metaphor_tokens": len(test_words),
        "in_train": hits,
        "token_pct": _pct(hits, len(test_words)),
        "test_metaphor_types": len(types),
        "types_in_train": type_hits,
        "type_pct": _pct(type_hits, len(types)),
    }
