"""Artifact-controlled sampling (Boisson et al. 2023, §2.4, their VUAC_BO) for any token-level corpus.

Constructed datasets let a model guess the label from the expression or the context alone. VUAC_BO removes
the cheapest cue by drawing each literal instance from an expression that also occurs as a metaphor:
"we sample literal instances from the set of expressions that also occur as metaphors, whenever possible.
When the same word sequence is not found, we rely on identical lemma sequences, and finally on identical
PoS sequences." This module applies that rule to any corpus of ``TaggedSentence`` items (B-/I-METAPHOR
tags): every metaphorical expression (a B tag and the I tags after it) gets one literal partner, a span of
the same length whose words are all untagged, matched at the first level that has an unused candidate:

1. ``words``: the same lower-cased word sequence;
2. ``lemmas``: the same lemma sequence — the corpora in the registry carry no lemmas, so this level uses a
   normalised form (lower-cased, punctuation stripped), which merges inflections only when they differ in
   attached punctuation or case (stated in every sample's counts);
3. ``pos``: the same part-of-speech sequence, where the corpus has POS tags (VUA does; Meta4XNLI and CoMeta
   do not, so their unmatched metaphors stay without a partner and the ratio falls below 1:1).

The control it is measured against (``RANDOM``, level ``any``): the same metaphors, each with a literal
partner drawn from *any* untagged span of the same length whose words all contain a letter — the corpus's
own literal distribution at the same 1:1 ratio. Only the matching differs, so the gap between a view's
score on the two samples is the part the matching removes.

Candidates are drawn without replacement in the order of a hash of (seed, sentence id, span), metaphors are
served in the order of a hash of (seed, metaphor id): the sample is a pure function of the corpus and the
seed.
"""

from __future__ import annotations

import string
from collections import Counter, defaultdict
from dataclasses import dataclass

from .regimes import digest

LEVELS = ("words", "lemmas", "pos")
#: the uncontrolled sample: literal partners of the same length, otherwise unmatched
RANDOM = ("any",)
#: sampling name (a recipe's ``sampling``) -> the levels tried in order
SAMPLINGS = {"bo": LEVELS, "random": RANDOM}
_PUNCT = str.maketrans("", "", string.punctuation + "¿¡«»“”‘’")


@dataclass(frozen=True)
class Span:
    sentence: int
    start: int
    end: int


def metaphor_spans(tags: tuple[str, ...]) -> list[tuple[int, int]]:
    """(start, end) of each metaphorical expression: a B- tag and the I- tags that follow it."""
    out, i = [], 0
    while i < len(tags):
        if tags[i].startswith("B-"):
            j = i + 1
            while j < len(tags) and tags[j].startswith("I-"):
                j += 1
            out.append((i, j))
            i = j
        elif tags[i].startswith("I-"):  # an I- without its B- still marks a metaphorical word
            out.append((i, i + 1))
            i += 1
        else:
            i += 1
    return out


class _Keys:
    """A sentence's per-word matching forms, computed once: a span's key at each level is then a slice
    (building them per candidate span was most of a cold ``--tasks all``'s sampling time)."""

    def __init__(self, sentence):
        lower = [w.lower() for w in sentence.words]
        pos = sentence.meta.get("pos")
        self.forms = {
            "words": lower,
            "lemmas": [w.translate(_PUNCT) or w for w in lower],
            "pos": list(pos) if pos and len(pos) == len(sentence.words) else None,
        }
        self.alpha = [any(c.isalpha() for c in w) for w in sentence.words]

    def key(self, level: str, start: int, end: int) -> tuple | None:
        if level == "any":
            return (end - start,) if all(self.alpha[start:end]) else None
        forms = self.forms[level]
        return tuple(forms[start:end]) if forms is not None else None


def sample(sentences: list, seed: int, levels: tuple[str, ...] = LEVELS) -> tuple[list[tuple[Span, str, str]], Counter]:
    """[(span, label, level)] — every metaphor (level '') and its literal partner, matched at the first of
    ``levels`` with an unused candidate — and counts per level."""
    keys = [_Keys(sent) for sent in sentences]
    metaphors = [Span(s, a, b) for s, sent in enumerate(sentences) for a, b in metaphor_spans(sent.tags)]
    wanted = {(level, key) for m in metaphors for level in levels
              if (key := keys[m.sentence].key(level, m.start, m.end)) is not None}
    lengths = sorted({m.end - m.start for m in metaphors})
    pools: dict[tuple, list[Span]] = defaultdict(list)
    for s, sent in enumerate(sentences):
        literal = [not t.startswith(("B-", "I-")) for t in sent.tags]
        for n in lengths:
            for a in range(len(sent.words) - n + 1):
                if all(literal[a : a + n]):
                    for level in levels:
                        if (level, key := keys[s].key(level, a, a + n)) in wanted:
                            pools[(level, key)].append(Span(s, a, a + n))
    order: dict[Span, str] = {}  # a span is a candidate at several levels: hashed once

    def rank(sp: Span) -> str:
        if sp not in order:
            order[sp] = digest(seed, sentences[sp.sentence].id, sp.start, sp.end)
        return order[sp]

    for candidates in pools.values():
        candidates.sort(key=rank)
    cursor: dict[tuple, int] = defaultdict(int)
    used: set[Span] = set()
    out: list[tuple[Span, str, str]] = []
    counts: Counter = Counter()
    for m in sorted(metaphors, key=rank):
        out.append((m, "metaphor", ""))
        counts["metaphor"] += 1
        partner = None
        for level in levels:
            key = keys[m.sentence].key(level, m.start, m.end)
            if key is None:
                continue
            pool_key = (level, key)
            candidates = pools.get(pool_key, [])
            while cursor[pool_key] < len(candidates) and candidates[cursor[pool_key]] in used:
                cursor[pool_key] += 1
            if cursor[pool_key] < len(candidates):
                partner = candidates[cursor[pool_key]]
                used.add(partner)
                out.append((partner, "literal", level))
                counts[f"literal:{level}"] += 1
                break
        if partner is None:
            counts["unmatched"] += 1
    return out, counts


def to_items(sentences: list, sampled: list[tuple[Span, str, str]], source: str) -> list:
    """TextItems (text = the sentence joined by spaces, span = the expression) in the sample's order."""
    from ..data.items import TextItem  # noqa: PLC0415

    items = []
    for span, label, level in sampled:
        sent = sentences[span.sentence]
        start = sum(len(w) + 1 for w in sent.words[: span.start])
        end = start + len(" ".join(sent.words[span.start : span.end]))
        pos = sent.meta.get("pos")
        items.append(
            TextItem(
                id=f"{sent.id}@{span.start}-{span.end}",
                text=" ".join(sent.words),
                label=label,
                spans=((start, end),),
                lemma=" ".join(sent.words[span.start : span.end]).lower(),
                pos=" ".join(pos[span.start : span.end]) if pos and len(pos) == len(sent.words) else "",
                group=str(sent.id),
                language=sent.language,
                source=source,
                meta={"level": level},
            )
        )
    return items
