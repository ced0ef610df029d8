"""The tagged copy of a sentence, as token ids: what a fine-tuned decoder tagger learns to write and may write.

García-Ferrero et al. (2024) tag text by text-to-text generation: the model reads a sentence and writes it
back with the tagged words wrapped in tags, ``They <metaphor> fell apart. </metaphor>``. Here that output is
built from fixed *pieces* of token ids, each tokenised on its own: one per word (the word after a space), and
an opening and a closing tag per entity type. Training targets are concatenations of these pieces, and
decoding is constrained to the same grammar (:class:`Grammar`):

    output := (word | open_T word (word)* close_T)* eos        words in their input order, each exactly once

so a prediction can only copy the input words in order and insert well-nested tags, and reading it back
(:meth:`Grammar.read`) gives one BIO tag per word without any string matching. Tokenising pieces separately
(not the whole tagged string) is what makes this exact: the ids the model is trained on and the ids the
constraint allows are the same, whatever the tokenizer does with a word next to a tag.

BIO mapping: the word after an opening tag is ``B-T``, the next words before the closing tag ``I-T``, the
rest ``O``. An ``I-T`` that follows no span of type ``T`` (invalid BIO) opens a span, as seqeval reads it, so
every tagging round-trips the spans the metrics score; valid BIO round-trips exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

OUTSIDE = "O"
#: The automaton's state after eos (:meth:`Grammar.automaton`): nothing more is allowed.
FINISHED = -1


@dataclass(frozen=True)
class Piece:
    kind: str  # "word", "open", "close", "eos"
    ids: tuple[int, ...]
    type: str | None = None


@dataclass(frozen=True)
class _State:
    """Where the output is between pieces: before word ``i``, inside a span of ``inside`` (None: outside);
    ``opened``: the span was opened and has no word yet."""

    i: int
    inside: str | None
    opened: bool


@dataclass(frozen=True)
class _Hyp:
    """One reading of the ids so far: the piece being written (``offset`` ids of it done) and the tags so far."""

    state: _State
    piece: Piece
    offset: int
    tags: tuple[str, ...]


def span_types(labels: Sequence[str]) -> tuple[str, ...]:
    """Entity types of a BIO label set (``B-METAPHOR``, ``I-METAPHOR`` -> ``METAPHOR``), in first-seen order."""
    types: list[str] = []
    for label in labels:
        if label != OUTSIDE and label[:2] in ("B-", "I-") and label[2:] not in types:
            types.append(label[2:])
    return tuple(types)


def spans(tags: Sequence[str]) -> list[tuple[int, int, str]]:
    """(first word, last word, type) of every span in a BIO sequence (an orphan ``I-T`` starts a span)."""
    out: list[tuple[int, int, str]] = []
    for i, tag in enumerate(tags):
        if tag == OUTSIDE or tag[:2] not in ("B-", "I-"):
            continue
        kind = tag[2:]
        if tag.startswith("I-") and out and out[-1][1] == i - 1 and out[-1][2] == kind:
            out[-1] = (out[-1][0], i, kind)
        else:
            out.append((i, i, kind))
    return out


class Grammar:
    """The outputs allowed for one sentence: its word pieces in order, tags inserted around whole words."""

    def __init__(self, words: Sequence[tuple[int, ...]], opens: dict[str, tuple[int, ...]],
                 closes: dict[str, tuple[int, ...]], eos: int):
        if any(not ids for ids in words) or any(not ids for ids in (*opens.values(), *closes.values())):
            raise ValueError("every word and tag must be at least one token")
        self.words = [Piece("word", tuple(ids)) for ids in words]
        self.opens = [Piece("open", tuple(ids), t) for t, ids in opens.items()]
        self.closes = {t: Piece("close", tuple(ids), t) for t, ids in closes.items()}
        self.eos = Piece("eos", (eos,))
        self._memo: dict[tuple[int, ...], list[_Hyp]] = {(): self._expand(_State(0, None, False), ())}

    @property
    def n(self) -> int:
        return len(self.words)

    @property
    def longest(self) -> int:
        """The most ids an output can have: every word, each one a span of its own, then eos."""
        tags = max((len(o.ids) + len(self.closes[o.type].ids) for o in self.opens), default=0)
        return sum(len(w.ids) for w in self.words) + tags * self.n + 1

    @property
    def shortest(self) -> int:
        """The fewest ids an output can have: every word untagged, then eos."""
        return sum(len(w.ids) for w in self.words) + 1

    def _options(self, state: _State) -> list[Piece]:
        if state.inside is None:
            return [self.words[state.i], *self.opens] if state.i < self.n else [self.eos]
        if state.opened:
            return [self.words[state.i]]
        close = self.closes[state.inside]
        return [close, self.words[state.i]] if state.i < self.n else [close]

    def _expand(self, state: _State, tags: tuple[str, ...]) -> list[_Hyp]:
        return [_Hyp(state, piece, 0, tags) for piece in self._options(state)]

    def _advance(self, hyp: _Hyp) -> list[_Hyp]:
        """The readings after ``hyp``'s piece is complete."""
        state, piece = hyp.state, hyp.piece
        if piece.kind == "word":
            tag = OUTSIDE if state.inside is None else ("B-" if state.opened else "I-") + state.inside
            return self._expand(_State(state.i + 1, state.inside, False), hyp.tags + (tag,))
        if piece.kind == "open":
            return self._expand(_State(state.i, piece.type, True), hyp.tags)
        if piece.kind == "close":
            return self._expand(_State(state.i, None, False), hyp.tags)
        return [hyp]  # eos: finished (offset == 1)

    def _hyps(self, prefix: tuple[int, ...]) -> list[_Hyp]:
        """Every reading of ``prefix``, memoised: decoding extends prefixes one id at a time, so each step
        reads one id on from its parent's readings."""
        start = len(prefix)
        while prefix[:start] not in self._memo:
            start -= 1
        hyps = self._memo[prefix[:start]]
        for end in range(start + 1, len(prefix) + 1):
            token, out = prefix[end - 1], []
            for hyp in hyps:
                if hyp.offset < len(hyp.piece.ids) and hyp.piece.ids[hyp.offset] == token:
                    moved = _Hyp(hyp.state, hyp.piece, hyp.offset + 1, hyp.tags)
                    complete = moved.offset == len(moved.piece.ids) and moved.piece.kind != "eos"
                    out.extend(self._advance(moved) if complete else [moved])
            hyps = self._memo[prefix[:end]] = out
        return hyps

    def allowed(self, prefix: Sequence[int]) -> set[int]:
        """The ids that may come next after ``prefix`` (empty once eos is written, or off the grammar)."""
        return {h.piece.ids[h.offset] for h in self._hyps(tuple(prefix)) if h.offset < len(h.piece.ids)}

    def automaton(self) -> list[dict[int, int]]:
        """The grammar as a deterministic automaton over token ids, for decoding on a device without reading
        ids back: ``table[s]`` maps each id allowed in state ``s`` to the next state (state 0 is the start;
        :data:`FINISHED` after eos). A state is the set of readings (tags aside) that the ids so far allow, so
        ``table`` agrees with :meth:`allowed` on every prefix; there are about as many states as ids in the
        longest output, each with a handful of ids (a word, an opening tag per type, a close)."""
        def key(hyps) -> frozenset:
            return frozenset((h.state, h.piece, h.offset) for h in hyps)

        start = key(self._expand(_State(0, None, False), ()))
        index, queue, table = {start: 0}, [start], [{}]
        while queue:
            current = queue.pop()
            moves: dict[int, list[_Hyp]] = {}
            for state, piece, offset in current:
                if offset == len(piece.ids):
                    continue  # a finished eos
                moved = _Hyp(state, piece, offset + 1, ())
                complete = moved.offset == len(piece.ids) and piece.kind != "eos"
                moves.setdefault(piece.ids[offset], []).extend(self._advance(moved) if complete else [moved])
            row = table[index[current]]
            for token, hyps in moves.items():
                nxt = key(hyps)
                if all(h.offset == len(h.piece.ids) for h in hyps):
                    row[token] = FINISHED
                    continue
                if nxt not in index:
                    index[nxt] = len(table)
                    table.append({})
                    queue.append(nxt)
                row[token] = index[nxt]
        return table

    def target(self, tags: Sequence[str]) -> list[int]:
        """The ids of the tagged copy for ``tags`` (one BIO tag per word), eos included: a training target."""
        if len(tags) != self.n:
            raise ValueError(f"{len(tags)} tags for {self.n} words")
        opens = {p.type: p for p in self.opens}
        starts = {first: (last, kind) for first, last, kind in spans(tags)}
        ids: list[int] = []
        i = 0
        while i < self.n:
            if i in starts:
                last, kind = starts[i]
                if kind not in opens:
                    raise ValueError(f"tag type {kind!r} has no tag (known: {', '.join(opens)})")
                ids += opens[kind].ids
                for j in range(i, last + 1):
                    ids += self.words[j].ids
                ids += self.closes[kind].ids
                i = last + 1
            else:
                ids += self.words[i].ids
                i += 1
        return ids + list(self.eos.ids)

    def read(self, ids: Sequence[int]) -> tuple[tuple[str, ...], bool]:
        """One BIO tag per word from generated ``ids`` (anything after eos ignored), and whether it had to be
        *repaired*: an output that stopped early or left the grammar keeps the tags of its longest readable
        prefix, the remaining words ``O``. Constrained decoding never needs the repair."""
        ids = list(ids)
        if self.eos.ids[0] in ids:
            ids = ids[: ids.index(self.eos.ids[0]) + 1]
        good: list[_Hyp] = []
        for end in range(len(ids), -1, -1):
            good = self._hyps(tuple(ids[:end]))
            if good:
                break
        done = [h for h in good if h.piece.kind == "eos" and h.offset == 1]
        if done and end == len(ids):
            return done[0].tags, False
        tags = max((h.tags for h in good), key=len, default=())
        return tuple(tags) + (OUTSIDE,) * (self.n - len(tags)), True
