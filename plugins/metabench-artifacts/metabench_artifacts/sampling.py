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

import hashlib
import heapq
import string
from collections import Counter, defaultdict
from functools import cached_property
from itertools import accumulate
from sys import intern
from typing import NamedTuple

LEVELS = ("words", "lemmas", "pos")
#: the uncontrolled sample: literal partners of the same length, otherwise unmatched
RANDOM = ("any",)
#: sampling name (a recipe's ``sampling``) -> the levels tried in order
SAMPLINGS = {"bo": LEVELS, "random": RANDOM}
_PUNCT = str.maketrans("", "", string.punctuation + "¿¡«»“”‘’")


class Span(NamedTuple):
    sentence: int
    start: int
    end: int


def metaphor_spans(tags: tuple[str, ...]) -> list[tuple[int, int]]:
    """(start, end) of each metaphorical expression: a B- tag and the I- tags that follow it."""
    out: list[tuple[int, int]] = []
    open_b = False  # whether the last span began with a B- and has run up to here
    for i, tag in enumerate(tags):
        if tag == "O":  # most tags: one comparison
            open_b = False
        elif tag.startswith("B-"):
            out.append((i, i + 1))
            open_b = True
        elif tag.startswith("I-"):
            if open_b:
                out[-1] = (out[-1][0], i + 1)
            else:  # an I- without its B- still marks a metaphorical word
                out.append((i, i + 1))
        else:
            open_b = False
    return out


def _runs(flags: tuple[bool, ...]) -> list[int]:
    """For each position, how many consecutive true flags start there (a span [a, a+n) is all true iff
    ``runs[a] >= n``)."""
    out, run = [0] * len(flags), 0
    for i in range(len(flags) - 1, -1, -1):
        run = run + 1 if flags[i] else 0
        out[i] = run
    return out


def _word_forms(word: str) -> tuple[str, str, bool]:
    lower = word.lower()
    return lower, lower.translate(_PUNCT) or lower, any(c.isalpha() for c in word)


class _Keys:
    """A sentence's per-word matching forms, computed once (and once per distinct word with a shared
    ``memo``): a span's key at each level is then a slice."""

    def __init__(self, sentence, memo: dict | None = None):
        memo = {} if memo is None else memo
        words = sentence.words
        forms = [memo[w] if w in memo else memo.setdefault(w, _word_forms(w)) for w in words]
        lower, lemmas, self.alpha = tuple(zip(*forms)) if forms else ((), (), ())
        pos = sentence.meta.get("pos")
        self.forms = {"words": lower, "lemmas": lemmas, "pos": tuple(pos) if pos and len(pos) == len(words) else None}

    @cached_property
    def alpha_runs(self) -> list[int]:
        return _runs(self.alpha)

    def key(self, level: str, start: int, end: int) -> tuple | None:
        if level == "any":
            return (end - start,) if all(self.alpha[start:end]) else None
        forms = self.forms[level]
        return forms[start:end] if forms is not None else None


def _gaps(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """The maximal runs [start, end) of untagged words between a sentence's metaphor spans (which cover
    every B-/I- tag, in order); words beyond the tags are untagged."""
    out, at = [], 0
    for a, b in [*spans, (length, length)]:
        if min(a, length) > at:
            out.append((at, min(a, length)))
        at = max(at, b)
    return out


def sample(sentences: list, seed: int, levels: tuple[str, ...] = LEVELS) -> tuple[list[tuple[Span, str, str]], Counter]:
    """[(span, label, level)] — every metaphor (level '') and its literal partner, matched at the first of
    ``levels`` with an unused candidate — and counts per level."""
    return samples(sentences, seed, [levels])[0]


def samples(sentences: list, seed: int, samplings: list[tuple[str, ...]]) -> list[tuple[list[tuple[Span, str, str]], Counter]]:
    """:func:`sample` once per level list of ``samplings``, from one pass over the corpus: a corpus's BO sample
    and its random control (``vua18_bo`` and ``vua18_rs``) share their word forms, metaphors and span ranks:
    both pools of VUA-18 took 4.31 CPU s together against 4.95 s apart, Meta4XNLI-EN's 1.91 against 2.23 s
    (medians of 5 rounds, ``benchmarks/bench_twin_samples.py``).
    Each sample is exactly what :func:`sample` gives for its levels alone.

    A span's rank is ``digest(seed, sentence id, start, end)``. Spans are ranked as (raw sha256, sentence,
    start, end) tuples, whose order is the hex digest's with the position as tie-break (as the stable sort
    by hex digest that this replaced), each span hashed once however many levels (and samples) it is a
    candidate at, and a level's candidates only when a metaphor first draws from them (a heap: candidates are
    drawn in rank order)."""
    levels = tuple(dict.fromkeys(level for chosen in samplings for level in chosen))
    memo: dict[str, tuple] = {}
    keys = [_Keys(sent, memo) for sent in sentences]
    spans = [metaphor_spans(sent.tags) for sent in sentences]
    metaphors = [(s, a, b) for s, found in enumerate(spans) for a, b in found]
    wanted = {level: {k for s, a, b in metaphors if (k := keys[s].key(level, a, b)) is not None} for level in levels}
    lengths = sorted({b - a for _, a, b in metaphors})
    pools: dict[tuple, list[tuple]] = defaultdict(list)  # (level, key) -> candidate (sentence, start, end)
    for s, sent in enumerate(sentences):
        gaps = _gaps(spans[s], len(sent.words))
        for level in levels:
            found = wanted[level]
            if level == "any":
                for n in lengths:
                    if (n,) in found:
                        runs, pool = keys[s].alpha_runs, pools[(level, (n,))]
                        pool.extend((s, a, a + n) for r0, r1 in gaps for a in range(r0, r1 - n + 1) if runs[a] >= n)
            elif found and (forms := keys[s].forms[level]) is not None:
                for n in lengths:
                    for r0, r1 in gaps:
                        for a in range(r0, r1 - n + 1):
                            if (key := forms[a : a + n]) in found:
                                pools[(level, key)].append((s, a, a + n))
    prefixes = [f"{seed}\x00{sent.id}\x00" for sent in sentences]
    sha = hashlib.sha256
    ranked: dict[tuple, tuple] = {}

    def rank(span: tuple) -> tuple:
        if span not in ranked:
            s, a, b = span
            ranked[span] = (sha(f"{prefixes[s]}{a}\x00{b}".encode("utf-8")).digest(), s, a, b)
        return ranked[span]

    served = sorted(map(rank, metaphors))
    return [_draw(served, keys, pools, rank, chosen) for chosen in samplings]


def _draw(served: list[tuple], keys: list[_Keys], pools: dict, rank, levels: tuple[str, ...]):
    """One sample: the metaphors in rank order, each given the best-ranked unused candidate of the first level
    that has one (heaps of ranked candidates, built when a metaphor first draws from them)."""
    heaps: dict[tuple, list[tuple]] = {}
    used: set[tuple] = set()
    out: list[tuple[Span, str, str]] = []
    counts: Counter = Counter()
    for _, s, a, b in served:
        out.append((Span(s, a, b), "metaphor", ""))
        counts["metaphor"] += 1
        partner = None
        for level in levels:
            key = keys[s].key(level, a, b)
            if key is None:
                continue
            heap = heaps.get((level, key))
            if heap is None:
                heap = heaps[(level, key)] = list(map(rank, pools.get((level, key), ())))
                heapq.heapify(heap)
            while heap and heap[0] in used:
                heapq.heappop(heap)
            if heap:
                partner = heapq.heappop(heap)
                used.add(partner)
                out.append((Span(*partner[1:]), "literal", level))
                counts[f"literal:{level}"] += 1
                break
        if partner is None:
            counts["unmatched"] += 1
    return out, counts


def to_items(sentences: list, sampled: list[tuple[Span, str, str]], source: str, layout: dict | None = None) -> list:
    """TextItems (text = the sentence joined by spaces, span = the expression) in the sample's order.
    ``layout``: each sentence's text and word offsets, shared by the samples of one corpus (:func:`samples`)."""
    from metabench.plugin_api import TextItem  # noqa: PLC0415

    layout = {} if layout is None else layout  # sentence -> (text, letters before each word, POS or None, group)
    metas: dict[str, dict] = {}  # one meta dict per level, shared by its items (nothing mutates an item's meta)
    items = []
    for span, label, level in sampled:
        sent = sentences[span.sentence]
        if span.sentence not in layout:
            pos = sent.meta.get("pos")
            layout[span.sentence] = (" ".join(sent.words), list(accumulate(map(len, sent.words), initial=0)),
                                     pos if pos and len(pos) == len(sent.words) else None, str(sent.id))
        text, chars, pos, group = layout[span.sentence]  # chars[i]: letters before word i (one space after each word)
        start, end = chars[span.start] + span.start, chars[span.end] + span.end - 1
        items.append(
            TextItem(
                id=f"{group}@{span.start}-{span.end}",
                text=text,
                label=label,
                spans=((start, end),),
                lemma=intern(text[start:end].lower()),
                pos=" ".join(pos[span.start : span.end]) if pos is not None else "",
                group=group,
                language=sent.language,
                source=source,
                meta=metas[level] if level in metas else metas.setdefault(level, {"level": level}),
            )
        )
    return items
