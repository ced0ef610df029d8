"""Words ↔ sub-word tokens for encoders: labels on first sub-tokens, windows instead of truncation.

Token tagging labels whitespace words, encoders see sub-word pieces. The convention (HF ``run_ner``, the
Meta4XNLI release) is kept: a word's label sits on its **first** piece; the other pieces and the special tokens
get -100 (ignored by the loss) and the prediction for a word is read off its first piece.

Unlike ``truncation=True``, no word is ever dropped: a sentence longer than ``max_length`` pieces is cut into
*windows* of whole words. For training the windows are disjoint (every word is labelled exactly once); for
prediction they overlap by half and each word takes its prediction from the window where it has the most
context on both sides. A single word longer than a whole window (rare: a URL, a long number) keeps its first
``budget`` pieces, so it still has a first piece to label; such words are counted. A word the tokenizer turns
into zero pieces (control or zero-width characters only) is replaced by the unknown token.

Classification inputs are encoded whole when they fit; a longer single text with ``<PME>`` markers keeps the
window of pieces centred on the marked expression (so truncation never cuts the target out), anything else
is truncated ``longest_first`` like ``tokenizer(..., truncation=True)``. Both are counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import AdapterError

#: Marker strings that wrap the expression to classify (Boisson et al. 2023's Default view). When training
#: texts contain them they become special tokens of the tokenizer, with new embeddings.
MARKERS = ("<PME>", "</PME>")
IGNORE = -100


@dataclass
class Window:
    """Model input for the words ``start..end-1`` of a sentence."""

    input_ids: list[int]
    start: int
    end: int
    first: list[int]  # position in input_ids of the first piece of each word start..end-1


@dataclass
class EncodedWords:
    windows: list[Window]
    n_words: int
    clipped_words: int = 0  # words longer than a whole window, cut to its size
    unk_words: int = 0  # words with no piece, replaced by the unknown token
    owner: list[int] = field(default_factory=list)  # per word: the window its prediction is read from

    @property
    def windowed(self) -> bool:
        return len(self.windows) > 1


def _pieces(tokenizer, words: list[str]):
    enc = tokenizer(words, is_split_into_words=True, add_special_tokens=True, truncation=False)
    ids = list(enc["input_ids"])
    word_ids = enc.word_ids()
    return ids, word_ids


def encode_words(tokenizer, words, max_length: int, *, overlap: float = 0.0) -> EncodedWords:
    """Windows of whole words, each at most ``max_length`` pieces with the special tokens.

    ``overlap`` is the share of a window repeated as left context in the next (0 for training, 0.5 for
    prediction).
    """
    words = list(words)
    n = len(words)
    if n == 0:
        return EncodedWords([], 0)
    ids, word_ids = _pieces(tokenizer, words)
    present = {w for w in word_ids if w is not None}
    unk_words = 0
    if len(present) < n:
        unk = tokenizer.unk_token
        if unk is None:
            raise AdapterError("the tokenizer gives some words no piece and has no unknown token to stand in for them")
        missing = [i for i in range(n) if i not in present]
        unk_words = len(missing)
        for i in missing:
            words[i] = unk
        ids, word_ids = _pieces(tokenizer, words)
        if len({w for w in word_ids if w is not None}) < n:
            raise AdapterError(f"cannot give every word a sub-word piece: {words!r}")

    content = [i for i, w in enumerate(word_ids) if w is not None]
    first_content, last_content = content[0], content[-1]
    prefix, suffix = ids[:first_content], ids[last_content + 1 :]
    pieces: list[list[int]] = [[] for _ in range(n)]
    for pos in range(first_content, last_content + 1):
        w = word_ids[pos]
        if w is None:
            raise AdapterError("the tokenizer put a special token between words; cannot align words and pieces")
        pieces[w].append(ids[pos])

    budget = max_length - len(prefix) - len(suffix)
    if budget < 1:
        raise AdapterError(f"max_length={max_length} leaves no room for words after the special tokens")
    clipped = 0
    for i, p in enumerate(pieces):
        if len(p) > budget:
            pieces[i] = p[:budget]
            clipped += 1

    spans = _windows([len(p) for p in pieces], budget, overlap)
    windows = []
    for start, end in spans:
        input_ids = list(prefix)
        first = []
        for i in range(start, end):
            first.append(len(input_ids))
            input_ids.extend(pieces[i])
        input_ids.extend(suffix)
        windows.append(Window(input_ids, start, end, first))
    owner = _owners(spans, n)
    return EncodedWords(windows, n, clipped, unk_words, owner)


def _windows(counts: list[int], budget: int, overlap: float) -> list[tuple[int, int]]:
    n = len(counts)
    out = []
    start = 0
    while True:
        end, total = start, 0
        while end < n and total + counts[end] <= budget:
            total += counts[end]
            end += 1
        end = max(end, start + 1)
        out.append((start, end))
        if end >= n:
            return out
        start = max(start + 1, end - int((end - start) * overlap)) if overlap > 0 else end


def _owners(spans: list[tuple[int, int]], n: int) -> list[int]:
    """For each word, the window where its context is largest on the narrower side."""
    owner = [0] * n
    best = [-1] * n
    for index, (start, end) in enumerate(spans):
        for i in range(start, end):
            room = min(i - start, end - 1 - i)
            if room > best[i]:
                best[i], owner[i] = room, index
    return owner


def word_labels(encoded: EncodedWords, tags, label_ids: dict[str, int]) -> list[list[int]]:
    """Per window, per position: the label id of the word whose first piece sits there, else -100."""
    out = []
    for window in encoded.windows:
        labels = [IGNORE] * len(window.input_ids)
        for offset, pos in enumerate(window.first):
            labels[pos] = label_ids[tags[window.start + offset]]
        out.append(labels)
    return out


def collect_word_predictions(encoded: EncodedWords, window_preds: list[list[int]]) -> list[int]:
    """Label ids per word from per-window, per-position predictions (owner window of each word)."""
    out = []
    for i in range(encoded.n_words):
        index = encoded.owner[i]
        window = encoded.windows[index]
        out.append(window_preds[index][window.first[i - window.start]])
    return out


# ---------------------------------------------------------------------------------------- classification


@dataclass
class EncodedText:
    input_ids: list[int]
    token_type_ids: list[int] | None
    truncated: bool = False


def encode_text(tokenizer, text: str, pair: str | None, max_length: int, marker_ids: tuple[int, ...] = ()) -> EncodedText:
    enc = tokenizer(text, pair, truncation=False)
    ids = list(enc["input_ids"])
    types = list(enc["token_type_ids"]) if "token_type_ids" in enc else None
    if len(ids) <= max_length:
        return EncodedText(ids, types)
    marks = [i for i, t in enumerate(ids) if t in marker_ids] if marker_ids else []
    if pair is None and marks:
        special = tokenizer(text, None, truncation=False, return_special_tokens_mask=True)["special_tokens_mask"]
        content = [i for i, s in enumerate(special) if not s or ids[i] in marker_ids]
        head, tail = ids[: content[0]], ids[content[-1] + 1 :]
        body = ids[content[0] : content[-1] + 1]
        budget = max_length - len(head) - len(tail)
        lo, hi = marks[0] - content[0], marks[-1] - content[0]
        centre = (lo + hi) // 2
        start = max(0, min(centre - budget // 2, len(body) - budget))
        if hi - lo + 1 <= budget:
            start = min(max(start, hi - budget + 1), lo)
        kept = head + body[start : start + budget] + tail
        return EncodedText(kept, [0] * len(kept) if types is not None else None, True)
    enc = tokenizer(text, pair, truncation="longest_first", max_length=max_length)
    types = list(enc["token_type_ids"]) if "token_type_ids" in enc else None
    return EncodedText(list(enc["input_ids"]), types, True)
