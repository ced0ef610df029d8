"""Sequence-labelling metrics for metaphor detection: span F1, token F1 and in-/out-of-vocabulary F1.

Golds and predictions are aligned sequences of sentences, each a sequence of word-level tags. Only the
``positive`` type (default ``"METAPHOR"``) is scored; ``O`` never is. Why both span and token F1:
Meta4XNLI's released trainer reports seqeval span F1, while its error analysis counts tokens; on Spanish
(B tags only) the two are equal, on English (62 I-METAPHOR tags) they differ (meta4xnli.md §2.1, §7.2).

Tag formats (every tag is first read as a (prefix, type) pair):

- BIO / IOB2 ``"B-METAPHOR"``, ``"I-METAPHOR"``, ``"O"``; also ``E-``/``S-`` (BIOES). Spans are read as
  seqeval's *default* (conlleval-compatible) mode reads them, including ill-formed sequences: an ``I-``
  after ``O`` or after another type starts a span, ``B-`` always starts one, a type change ends one.
- IO ``"I-METAPHOR"``/``"O"``: the same rules, so a run of adjacent ``I-`` words is *one* span.
- Plain labels with no prefix, e.g. ``"METAPHOR"``/``"O"`` or ``"1"``/``"0"`` (strings, or the ints 0/1
  and bools, as in VUA): ``"1"``/``1``/``True`` mean the positive type and ``"0"``/``0``/``"O"`` mean
  outside. A plain positive word is read as ``B-`` (a span of its own), because word-level annotation
  (MIPVU) labels each word separately and says nothing about spans; span F1 then equals token F1.
  Any other bare string (``"LITERAL"``) is a type of its own and is never the positive class.
- A bare prefix ``"B"``/``"I"``/``"E"``/``"S"`` (or ``"B-"``) has no type and takes the positive type.
- Prefixes and ``O`` are case-sensitive (``"b-metaphor"`` is a bare label). Integers other than 0/1 are
  refused: they are almost certainly label ids (Meta4XNLI's ClassLabel order makes 0 = B-METAPHOR), and
  guessing would silently invert the task.

Zero divisions give 0.0 (seqeval's and sklearn's ``zero_division=0``). Empty input is an error.

For paired significance tests the kind stores per-sentence counts (`span_counts`, `token_counts`) and a
bootstrap recomputes corpus-level scores from resampled sentences with `f1_from_counts`, since F1 is not a
mean of per-sentence F1s.
"""

from __future__ import annotations

import contextvars
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from numbers import Integral
from typing import NamedTuple

from .common import MetricInputError, check_pair, named, prf

DEFAULT_POSITIVE = "METAPHOR"
_PREFIXES = ("B", "I", "E", "S")
_OUTSIDE = ("O", "0")

Tag = str | int | bool
Parsed = tuple[str, str]  # (prefix in B/I/E/S/O, type); "O" has type "_" as in seqeval
_O: Parsed = ("O", "_")  # one object: `parsed.count(_O)` finds all-outside sentences at C speed
Corpus = Sequence[Sequence[Tag]]  # one tag sequence per sentence


# --------------------------------------------------------------------------------------------- tag reading


def parse_tag(tag: Tag, positive: str | None = DEFAULT_POSITIVE) -> Parsed:
    """Read one tag as ``(prefix, type)`` with prefix in ``B I E S O`` (see the module docstring).

    Untyped positives (``"1"``, ``1``, ``True``, ``"B"``, ``"I"``...) get the ``positive`` type, or ``"_"``
    (seqeval's name for a missing type) when ``positive`` is None.
    """
    untyped = positive if positive is not None else "_"
    if isinstance(tag, (bool, Integral)):
        if tag == 1:
            return ("B", untyped)
        if tag == 0:
            return _O
        raise MetricInputError(
            f"integer tag {tag!r}: tags must be strings such as 'B-METAPHOR' (ints only as 0/1 labels)",
            hint="label ids must be mapped back to tag names before scoring",
        )
    if not isinstance(tag, str):
        raise MetricInputError(f"tag {tag!r} of type {type(tag).__name__} is not a string tag")
    if tag in _OUTSIDE:
        return _O
    if tag == "1":
        return ("B", untyped)
    if tag in _PREFIXES:
        return (tag, untyped)
    if len(tag) >= 2 and tag[1] == "-" and tag[0] in _PREFIXES:
        return (tag[0], tag[2:] or untyped)
    if not tag:
        raise MetricInputError("empty tag ''; use 'O' for words outside any metaphor")
    return ("B", tag)


class _Sentence(NamedTuple):
    """What every metric needs of one tag sequence, read once for a given ``positive``."""

    n: int  # words
    hits: int  # bit i set iff word i has a B/I/E/S tag of the positive type: token counts are popcounts
    spans: frozenset  # (type, first, last) of the positive type (of every type when positive is None)
    types: frozenset  # the types of all non-O tags (a positive type no tag has is a typo)


_NO_SPANS: frozenset = frozenset()
#: positive -> {string tag: parsed}; tag sets are tiny.
_TAGS: dict[str | None, dict[str, Parsed]] = {}
#: positive -> {tuple of string tags: _Sentence}. Scoring `--tasks all` reads ~90k tagged sentences, each by
#: eight metrics and the per-item scores, mostly the same gold sentences job after job: a sentence is read
#: once and then looked up (hashing a tuple of strings runs in C). Keyed by content, so nothing is stale.
_SENTENCES: dict[str | None, dict[tuple, _Sentence]] = {}
_SENTENCES_MAX = 1 << 17  # about 20 MB of records at most; the table starts afresh when full


def _parse_sentence(tags: Sequence[Tag], positive: str | None, where: str) -> list[Parsed]:
    """Every tag of a sentence parsed, with errors that say which sentence (``where``) is wrong."""
    if isinstance(tags, (str, bytes)):
        raise MetricInputError(
            f"{where} is the string {tags[:40]!r}, not a sequence of tags",
            hint="golds and preds are sequences of sentences, each a list of tags: wrap a single sentence "
            "as [tags]",
        )
    if tags.__class__ is not tuple and tags.__class__ is not list:
        tags = list(tags)  # read twice below
    known = _TAGS.setdefault(positive, {})
    try:  # the strings seen before: one dict look-up per tag (an int, bool or new tag falls through)
        return list(map(known.__getitem__, tags))
    except (KeyError, TypeError):
        pass
    out = []
    for tag in tags:
        parsed = parse_tag(tag, positive)
        if tag.__class__ is str:
            known[tag] = parsed
        out.append(parsed)
    return out


def _cached(tags, known: dict | None) -> _Sentence | None:
    """The record of a list or tuple of tags read before (None for anything else: `_sentence` reads it)."""
    if known is None:
        return None
    cls = tags.__class__
    try:
        if cls is tuple:
            return known.get(tags)
        if cls is list:
            return known.get(tuple(tags))
    except TypeError:  # an unhashable tag, refused by `_sentence`
        pass
    return None


def _sentence(tags: Sequence[Tag], positive: str | None, where: str) -> _Sentence:
    """Read one sentence (every tag checked) and remember it when it is a list or tuple of string tags."""
    parsed = _parse_sentence(tags, positive, where)
    if parsed.count(_O) == len(parsed):  # most sentences, and every majority-baseline prediction
        record = _Sentence(len(parsed), 0, _NO_SPANS, _NO_SPANS)
    else:
        hits = 0
        for i, (prefix, type_) in enumerate(parsed):
            if type_ == positive and prefix != "O":
                hits |= 1 << i
        found = _spans(parsed)
        record = _Sentence(
            len(parsed),
            hits,
            frozenset(s for s in found if positive is None or s[0] == positive),
            frozenset(type_ for prefix, type_ in parsed if prefix != "O"),
        )
    if (tags.__class__ is tuple or tags.__class__ is list) and all(tag.__class__ is str for tag in tags):
        known = _SENTENCES.setdefault(positive, {})
        if len(known) >= _SENTENCES_MAX:
            known.clear()
        known[tuple(tags)] = record
    return record


def _end_of_chunk(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    """seqeval.metrics.sequence_labeling.end_of_chunk (default mode), restated."""
    if prev_tag in ("E", "S"):
        return True
    if prev_tag in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev_tag != "O" and prev_type != type_


def _start_of_chunk(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    """seqeval.metrics.sequence_labeling.start_of_chunk (default mode), restated."""
    if tag in ("B", "S"):
        return True
    if prev_tag in ("E", "S", "O") and tag in ("E", "I"):
        return True
    return tag != "O" and prev_type != type_


def spans(tags: Sequence[Tag], positive: str | None = DEFAULT_POSITIVE) -> list[tuple[str, int, int]]:
    """Spans ``(type, first, last)`` (inclusive word indices) of one sentence, as seqeval's get_entities."""
    return _spans(_parse_sentence(tags, positive, "tags"))


def _spans(parsed: list[Parsed]) -> list[tuple[str, int, int]]:
    if parsed.count(_O) == len(parsed):
        return []
    chunks = []
    prev_tag, prev_type, begin = "O", "", 0
    for i, (tag, type_) in enumerate([*parsed, ("O", "_")]):
        if _end_of_chunk(prev_tag, tag, prev_type, type_):
            chunks.append((prev_type, begin, i - 1))
        if _start_of_chunk(prev_tag, tag, prev_type, type_):
            begin = i
        prev_tag, prev_type = tag, type_
    return chunks


# -------------------------------------------------------------------------------- per-sentence counts


def _check_sentence(gold: Sequence[Tag], pred: Sequence[Tag], positive, where: str):
    """The records of one gold and predicted sentence, which must have as many tags."""
    known = _SENTENCES.get(positive)
    g = _cached(gold, known) or _sentence(gold, positive, f"gold {where}")
    p = _cached(pred, known) or _sentence(pred, positive, f"prediction {where}")
    if g.n != p.n:
        raise MetricInputError(
            f"{where}: {g.n} gold tags but {p.n} predicted tags; predictions must have one tag per word"
        )
    return g, p


def _span_tally(g: _Sentence, p: _Sentence) -> tuple[int, int, int]:
    """(TP, FP, FN) spans: a predicted span is a TP iff a gold span has the same type, first and last word."""
    if not (g.spans or p.spans):
        return 0, 0, 0
    tp = len(g.spans & p.spans)
    return tp, len(p.spans) - tp, len(g.spans) - tp


def _token_tally(g: _Sentence, p: _Sentence, mask: int = -1) -> tuple[int, int, int]:
    """(TP, FP, FN) words of the positive type, on the words whose bit is set in ``mask`` (all by default)."""
    gold, pred = g.hits & mask, p.hits & mask
    if not (gold or pred):
        return 0, 0, 0
    return (gold & pred).bit_count(), (pred & ~gold).bit_count(), (gold & ~pred).bit_count()


def _summed(tallies: Iterable[tuple[int, int, int]]) -> tuple[int, int, int]:
    tp = fp = fn = 0
    for a, b, c in tallies:
        tp, fp, fn = tp + a, fp + b, fn + c
    return tp, fp, fn


def _as_counts(tally: tuple[int, int, int]) -> dict[str, int]:
    return {"tp": tally[0], "fp": tally[1], "fn": tally[2]}


def span_counts(
    gold_tags: Sequence[Tag], pred_tags: Sequence[Tag], positive: str | None = DEFAULT_POSITIVE
) -> dict[str, int]:
    """TP/FP/FN spans of one sentence: a predicted span is a TP iff a gold span has the same type and
    the same first and last word (exact match). ``positive=None`` counts every type (seqeval micro)."""
    return _as_counts(_span_tally(*_check_sentence(gold_tags, pred_tags, positive, "sentence")))


def sentence_counts(gold_tags: Sequence[Tag], pred_tags: Sequence[Tag], positive: str) -> tuple[dict, dict]:
    """(`span_counts`, `token_counts`) of one sentence, parsing it once (the tagging kind's per-item scores)."""
    g, p = _check_sentence(gold_tags, pred_tags, positive, "sentence")
    return _as_counts(_span_tally(g, p)), _as_counts(_token_tally(g, p))


def token_counts(
    gold_tags: Sequence[Tag],
    pred_tags: Sequence[Tag],
    positive: str = DEFAULT_POSITIVE,
    mask: Sequence[bool] | None = None,
) -> dict[str, int]:
    """TP/FP/FN words of one sentence: a word is positive iff its tag is any of B/I/E/S of ``positive``.

    ``mask`` (one bool per word) keeps only the words where it is True; `vocab_mask` builds the
    in-vocabulary mask, and its negation the out-of-vocabulary one.
    """
    if positive is None:
        raise MetricInputError("token-level counts need a positive type, e.g. positive='METAPHOR'")
    g, p = _check_sentence(gold_tags, pred_tags, positive, "sentence")
    if mask is None:
        return _as_counts(_token_tally(g, p))
    if len(mask) != g.n:
        raise MetricInputError(f"mask has {len(mask)} entries for a sentence of {g.n} words")
    return _as_counts(_token_tally(g, p, sum(1 << i for i, keep in enumerate(mask) if keep)))


def f1_from_counts(counts: Iterable[Mapping[str, float]] | Mapping[str, float]) -> dict[str, float]:
    """Micro precision/recall/F1 from summed ``tp``/``fp``/``fn`` (per-sentence dicts, or one dict).

    This is what a bootstrap over sentences calls on each resample; summing counts first is what makes
    the result equal to the corpus-level metric.
    """
    if isinstance(counts, Mapping):
        counts = [counts]
    tp = fp = fn = 0
    for c in counts:
        tp, fp, fn = tp + c["tp"], fp + c["fp"], fn + c["fn"]
    return prf(tp, fp, fn)


# ------------------------------------------------------------------------------ corpus-level metrics

#: The memo of the `shared_parsing` block the caller is in (None outside any).
_SHARED: contextvars.ContextVar[dict | None] = contextvars.ContextVar("metabench_tagging_shared", default=None)


@contextmanager
def shared_parsing() -> Iterator[None]:
    """Inside this block, tagging metrics given the *same* gold and prediction lists share one reading of
    them (the sentences, the span and token counts, the in-vocabulary counts).

    A tagging task asks six to ten metrics of one pair of lists, one after another (the tagging kind opens
    this block around them). The lists are recognised by identity, so they must not change inside the
    block; outside it every call reads its input afresh (sentences already seen are still looked up by
    content, which is always safe).
    """
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


class _Read:
    """One (golds, preds) pair as records, and the corpus totals worked out from them on first use."""

    def __init__(self, golds, preds, pairs: list[tuple[_Sentence, _Sentence]]):
        self.golds, self.preds, self.pairs = golds, preds, pairs  # the lists held: their ids stay theirs
        self.totals: dict = {}

    def span(self) -> dict[str, float]:
        if "span" not in self.totals:
            self.totals["span"] = prf(*_summed(_span_tally(g, p) for g, p in self.pairs))
        return self.totals["span"]

    def token_tally(self) -> tuple[int, int, int]:
        if "token" not in self.totals:
            self.totals["token"] = _summed(_token_tally(g, p) for g, p in self.pairs)
        return self.totals["token"]

    def in_vocab_tally(self, words, train_vocab, normalise, metric: str) -> tuple[int, int, int]:
        """(TP, FP, FN) on in-vocabulary words. Only words tagged positive in gold or prediction can count,
        so only those are normalised and looked up; every sentence's word count is still checked."""
        norm = get_normaliser(normalise)
        key = (id(words), id(train_vocab), norm)
        found = self.totals.get(key)
        if found is not None and found[0] is words and found[1] is train_vocab:
            return found[2]
        vocab = {norm(v) for v in train_vocab}
        tp = fp = fn = 0
        for i, ((g, p), sentence) in enumerate(zip(self.pairs, words)):
            if sentence.__class__ is not tuple and sentence.__class__ is not list or len(sentence) != g.n:
                sentence = _words(sentence, g.n, f"{metric}: sentence {i}")
            either = g.hits | p.hits
            while either:
                bit = either & -either
                either ^= bit
                if norm(sentence[bit.bit_length() - 1]) in vocab:
                    if g.hits & bit:
                        if p.hits & bit:
                            tp += 1
                        else:
                            fn += 1
                    else:
                        fp += 1
        self.totals[key] = (words, train_vocab, (tp, fp, fn))
        return tp, fp, fn


def _corpus(golds, preds, positive, metric: str) -> _Read:
    memo = _SHARED.get()
    if memo is None:
        return _read_corpus(golds, preds, positive, metric)
    key = (id(golds), id(preds), positive)
    found = memo.get(key)
    if found is None or found.golds is not golds or found.preds is not preds:
        found = memo[key] = _read_corpus(golds, preds, positive, metric)
    return found


def _read_corpus(golds, preds, positive, metric: str) -> _Read:
    listed_golds, listed_preds = check_pair(golds, preds, metric)
    known = _SENTENCES.get(positive)
    pairs = []
    for i, (g, p) in enumerate(zip(listed_golds, listed_preds)):
        gs, ps = _cached(g, known), _cached(p, known)
        if gs is None or ps is None or gs.n != ps.n:  # a new sentence, or an error to name
            gs, ps = _check_sentence(g, p, positive, f"{metric}: sentence {i}")
            known = _SENTENCES.get(positive)
        pairs.append((gs, ps))
    if positive is not None:
        _check_positive_seen(pairs, positive, metric)
    return _Read(golds, preds, pairs)


def _check_positive_seen(pairs, positive: str, metric: str) -> None:
    """Refuse a positive type that no tag has while other types are present: almost surely a typo
    (``positive: METAPHOR`` on ``B-MET`` tags), which would otherwise score a silent 0.0. All-``O`` input is
    fine (a subset without metaphors where nothing is predicted)."""
    types: set[str] = set()
    for g, p in pairs:
        if g.types:
            types |= g.types
        if p.types:
            types |= p.types
    if types and positive not in types:
        raise MetricInputError(
            f"{metric}: no tag has the positive type {positive!r}; the tags have types {sorted(types)}",
            hint="set the task's labels.positive to the type used in the tags",
        )


def _span_prf(golds, preds, positive, metric) -> dict[str, float]:
    return _corpus(golds, preds, positive, metric).span()


def _token_prf(golds, preds, positive, metric) -> dict[str, float]:
    if positive is None:
        raise MetricInputError(f"{metric} needs a positive type, e.g. positive='METAPHOR'")
    return prf(*_corpus(golds, preds, positive, metric).token_tally())


def span_precision(golds: Corpus, preds: Corpus, *, positive: str | None = DEFAULT_POSITIVE) -> float:
    """Span precision of the ``positive`` type (seqeval-compatible; ``positive=None``: all types, micro)."""
    return _span_prf(golds, preds, positive, "span_precision")["precision"]


def span_recall(golds: Corpus, preds: Corpus, *, positive: str | None = DEFAULT_POSITIVE) -> float:
    """Span recall of the ``positive`` type (seqeval-compatible; ``positive=None``: all types, micro)."""
    return _span_prf(golds, preds, positive, "span_recall")["recall"]


def span_f1(golds: Corpus, preds: Corpus, *, positive: str | None = DEFAULT_POSITIVE) -> float:
    """Span F1 of the ``positive`` type: exact first/last word and type match, spans read as seqeval's
    default mode does. Equals ``seqeval.metrics.f1_score`` when ``positive`` is the only type (or None)."""
    return _span_prf(golds, preds, positive, "span_f1")["f1"]


def token_precision(golds: Corpus, preds: Corpus, *, positive: str = DEFAULT_POSITIVE) -> float:
    """Word-level precision of the positive class (B/I of ``positive`` vs everything else)."""
    return _token_prf(golds, preds, positive, "token_precision")["precision"]


def token_recall(golds: Corpus, preds: Corpus, *, positive: str = DEFAULT_POSITIVE) -> float:
    """Word-level recall of the positive class."""
    return _token_prf(golds, preds, positive, "token_recall")["recall"]


def token_f1(golds: Corpus, preds: Corpus, *, positive: str = DEFAULT_POSITIVE) -> float:
    """Word-level F1 of the positive class over all words: a half-predicted two-word metaphor earns one
    TP and one FN here, where span F1 gives it nothing."""
    return _token_prf(golds, preds, positive, "token_f1")["f1"]


# ---------------------------------------------------------------------- in-/out-of-vocabulary F1

Normaliser = Callable[[str], str]


def _strip_punct(word: str) -> str:
    start, end = 0, len(word)
    while start < end and (unicodedata.category(word[start]).startswith("P") or word[start].isspace()):
        start += 1
    while end > start and (unicodedata.category(word[end - 1]).startswith("P") or word[end - 1].isspace()):
        end -= 1
    return word[start:end]


NORMALISERS: dict[str, Normaliser] = {
    # The paper's "exact match": raw word forms, which in Meta4XNLI carry attached punctuation ("apart.").
    "exact": lambda w: w,
    "lower": lambda w: w.lower(),
    # Also strips leading/trailing Unicode punctuation (quotes, ¿¡, commas, dashes), never inner characters,
    # so "apart." == "Apart" but "well-known" keeps its hyphen. Idempotent, like the others.
    "lower_strip_punct": lambda w: _strip_punct(w.lower()),
}


def get_normaliser(normalise: str | Normaliser) -> Normaliser:
    """The word normaliser named ``normalise`` (``exact``, ``lower``, ``lower_strip_punct``) or a callable."""
    return named(normalise, NORMALISERS, "normalise")


def normalise_word(word: str, normalise: str | Normaliser = "exact") -> str:
    """Normalise one word as the in-/out-of-vocabulary metrics do."""
    return get_normaliser(normalise)(word)


def metaphor_vocabulary(
    words_seqs: Sequence[Sequence[str]],
    tag_seqs: Sequence[Sequence[Tag]],
    normalise: str | Normaliser = "exact",
    positive: str = DEFAULT_POSITIVE,
) -> frozenset[str]:
    """``train_vocab``: the normalised forms of every word tagged as ``positive`` (B/I/E/S) in a split.

    A form enters once it is metaphorical anywhere, even if it is literal elsewhere; that is the paper's
    "tokens that appeared in the training data labeled as metaphors" (Meta4XNLI §6).
    """
    norm = get_normaliser(normalise)
    words_seqs, tag_seqs = check_pair(words_seqs, tag_seqs, "metaphor_vocabulary")
    vocab = set()
    known = _SENTENCES.get(positive)
    for i, (words, tags) in enumerate(zip(words_seqs, tag_seqs)):
        record = _cached(tags, known)
        if record is None:
            record = _sentence(tags, positive, f"metaphor_vocabulary: tags of sentence {i}")
            known = _SENTENCES.get(positive)
        if words.__class__ is not tuple and words.__class__ is not list or len(words) != record.n:
            words = _words(words, record.n, f"metaphor_vocabulary: sentence {i}")
        hits = record.hits  # only the positive words: one bit each
        while hits:
            bit = hits & -hits
            hits ^= bit
            vocab.add(norm(words[bit.bit_length() - 1]))
    return frozenset(vocab)


def _words(words: Sequence[str], n: int, where: str) -> list[str]:
    if isinstance(words, (str, bytes)):
        raise MetricInputError(f"{where}: words must be a list of words, got the string {words[:40]!r}")
    words = list(words)
    if len(words) != n:
        raise MetricInputError(f"{where}: {len(words)} words but {n} tags")
    return words


def vocab_mask(
    words: Sequence[str], train_vocab: Iterable[Hashable], normalise: str | Normaliser = "exact"
) -> list[bool]:
    """One bool per word: True iff the word's normalised form is in ``train_vocab`` (in-vocabulary).

    ``train_vocab`` is normalised with the same function, so a raw vocabulary works with any mode (all
    built-in normalisers are idempotent, so an already normalised one is unchanged).
    """
    norm = get_normaliser(normalise)
    vocab = {norm(v) for v in train_vocab}
    return [norm(w) in vocab for w in words]


def _vocab_prf(golds, preds, words, train_vocab, normalise, positive, metric: str, in_vocab: bool):
    if words is None or train_vocab is None:
        raise MetricInputError(
            f"{metric} needs words= (the test words, aligned with the tags) and train_vocab= (see "
            "metabench.metrics.tagging.metaphor_vocabulary)",
            hint="the tagging kind supplies them; they are not task-YAML arguments",
        )
    if isinstance(train_vocab, (str, bytes)):
        raise MetricInputError(f"{metric}: train_vocab must be a set of words, got a string")
    if positive is None:
        raise MetricInputError(f"{metric} needs a positive type, e.g. positive='METAPHOR'")
    corpus = _corpus(golds, preds, positive, metric)
    if isinstance(words, (str, bytes)) or len(words) != len(corpus.pairs):
        raise MetricInputError(f"{metric}: words must hold one word sequence per sentence ({len(corpus.pairs)})")
    inside = corpus.in_vocab_tally(words, train_vocab, normalise, metric)
    if in_vocab:
        return prf(*inside)
    # in- and out-of-vocabulary words partition the words, so their counts add up to the token counts
    return prf(*(whole - part for whole, part in zip(corpus.token_tally(), inside)))


def inv_f1(
    golds,
    preds,
    *,
    words: Sequence[Sequence[str]] | None = None,
    train_vocab: Iterable[str] | None = None,
    normalise: str | Normaliser = "exact",
    positive: str = DEFAULT_POSITIVE,
) -> float:
    """Token F1 restricted to in-vocabulary test words (Meta4XNLI "Inv").

    Scored words: every test word (gold or predicted positive, or neither) whose normalised form is in
    ``train_vocab``, the normalised forms tagged metaphorical in the training split. On those words TP,
    FP and FN are counted as in `token_f1`; all other words are ignored. The restriction is by the word
    form only, so it applies equally to gold and predicted metaphors (a literal use of a train-metaphor
    word that the model tags is an IV false positive). ``normalise`` defaults to ``"exact"``, the paper's
    exact match on raw forms (punctuation attached); ``"lower"`` and ``"lower_strip_punct"`` are looser.
    """
    return _vocab_prf(golds, preds, words, train_vocab, normalise, positive, "inv_f1", True)["f1"]


def oov_f1(
    golds,
    preds,
    *,
    words: Sequence[Sequence[str]] | None = None,
    train_vocab: Iterable[str] | None = None,
    normalise: str | Normaliser = "exact",
    positive: str = DEFAULT_POSITIVE,
) -> float:
    """Token F1 restricted to out-of-vocabulary test words (Meta4XNLI "Oov"): the complement of `inv_f1`'s
    words, i.e. words whose normalised form is not in ``train_vocab``. The IV and OOV word sets partition
    the test words, so their TP/FP/FN add up to `token_f1`'s."""
    return _vocab_prf(golds, preds, words, train_vocab, normalise, positive, "oov_f1", False)["f1"]


__all__ = [
    "DEFAULT_POSITIVE",
    "NORMALISERS",
    "f1_from_counts",
    "get_normaliser",
    "inv_f1",
    "metaphor_vocabulary",
    "normalise_word",
    "oov_f1",
    "parse_tag",
    "shared_parsing",
    "span_counts",
    "span_f1",
    "span_precision",
    "span_recall",
    "spans",
    "token_counts",
    "token_f1",
    "token_precision",
    "token_recall",
    "vocab_mask",
]
