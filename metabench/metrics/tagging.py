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

import unicodedata
from functools import lru_cache
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from numbers import Integral

from ._common import MetricInputError, check_pair, named, prf

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


_PARSED_STR: dict[str | None, dict[str, Parsed]] = {}  # positive -> {string tag: parsed}; tag sets are tiny


def _parse_sentence(tags: Sequence[Tag], positive: str | None, where: str) -> list[Parsed]:
    if isinstance(tags, (str, bytes)):
        raise MetricInputError(
            f"{where} is the string {tags[:40]!r}, not a sequence of tags",
            hint="golds and preds are sequences of sentences, each a list of tags: wrap a single sentence "
            "as [tags]",
        )
    if tags.__class__ is tuple or tags.__class__ is list:  # answers and golds arrive as JSON lists
        try:
            return _parse_tuple(tuple(tags), positive)
        except (KeyError, TypeError):
            pass  # a tag not seen yet, or an int/bool/unhashable one: the general path below
    known = _PARSED_STR.setdefault(positive, {})
    out = []
    for tag in tags:
        parsed = parse_tag(tag, positive)
        if tag.__class__ is str:
            known[tag] = parsed
        out.append(parsed)
    return out


@lru_cache(maxsize=1 << 17)
def _parse_tuple(tags: tuple, positive: str | None) -> list[Parsed]:
    """A tuple of string tags, parsed (callers never mutate the list). Scoring `--tasks all` reads ~27
    million tags: each sentence is read by every metric and by the per-item scores, so parsing it once and
    looking each tag up (instead of parse_tag's isinstance checks) cut scoring ~4x. Raises KeyError for a tag
    not seen before, which the caller parses (and remembers) the slow way."""
    known = _PARSED_STR[positive]
    return [known[tag] if tag.__class__ is str else _not_a_string(tag) for tag in tags]


def _not_a_string(tag):
    raise KeyError(tag)


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
    if parsed.count(_O) == len(parsed):  # most sentences, and every majority-baseline prediction
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
    g = _parse_sentence(gold, positive, f"gold {where}")
    p = _parse_sentence(pred, positive, f"prediction {where}")
    if len(g) != len(p):
        raise MetricInputError(
            f"{where}: {len(g)} gold tags but {len(p)} predicted tags; predictions must have one tag per word"
        )
    return g, p


def _span_counts(g: list[Parsed], p: list[Parsed], positive: str | None) -> dict[str, int]:
    gold = {s for s in _spans(g) if positive is None or s[0] == positive}
    pred = {s for s in _spans(p) if positive is None or s[0] == positive}
    tp = len(gold & pred)
    return {"tp": tp, "fp": len(pred) - tp, "fn": len(gold) - tp}


def _token_counts(g: list[Parsed], p: list[Parsed], positive: str, mask: Sequence[bool] | None):
    if g.count(_O) == len(g) and p.count(_O) == len(p):
        return {"tp": 0, "fp": 0, "fn": 0}
    tp = fp = fn = 0
    for i, ((gt, gtype), (pt, ptype)) in enumerate(zip(g, p)):
        if mask is not None and not mask[i]:
            continue
        gpos = gt != "O" and gtype == positive
        ppos = pt != "O" and ptype == positive
        tp += gpos and ppos
        fp += ppos and not gpos
        fn += gpos and not ppos
    return {"tp": int(tp), "fp": int(fp), "fn": int(fn)}


def span_counts(
    gold_tags: Sequence[Tag], pred_tags: Sequence[Tag], positive: str | None = DEFAULT_POSITIVE
) -> dict[str, int]:
    """TP/FP/FN spans of one sentence: a predicted span is a TP iff a gold span has the same type and
    the same first and last word (exact match). ``positive=None`` counts every type (seqeval micro)."""
    g, p = _check_sentence(gold_tags, pred_tags, positive, "sentence")
    return _span_counts(g, p, positive)


def sentence_counts(gold_tags: Sequence[Tag], pred_tags: Sequence[Tag], positive: str) -> tuple[dict, dict]:
    """(`span_counts`, `token_counts`) of one sentence, parsing it once (the tagging kind's per-item scores)."""
    g, p = _check_sentence(gold_tags, pred_tags, positive, "sentence")
    return _span_counts(g, p, positive), _token_counts(g, p, positive, None)


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
    if mask is not None and len(mask) != len(g):
        raise MetricInputError(f"mask has {len(mask)} entries for a sentence of {len(g)} words")
    return _token_counts(g, p, positive, mask)


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


class _Corpus:
    """The corpus the previous metric call parsed, with the span and token counts worked out from it.

    A tagging task asks six to ten metrics (span and token precision, recall, F1, in/out-of-vocabulary F1)
    of the same gold and predicted lists, one after another: each parsed every sentence and summed the
    same counts again. The lists are recognised by identity (and length, and ``positive``), never by value,
    so a new or edited corpus is always parsed afresh."""

    last: tuple | None = None

    @classmethod
    def get(cls, golds, preds, positive) -> dict | None:
        last = cls.last
        if last is not None and last[0] is golds and last[1] is preds and last[2] == (len(golds), len(preds), positive):
            return last[3]
        return None

    @classmethod
    def put(cls, golds, preds, positive, parsed) -> dict:
        entry = {"parsed": parsed}
        cls.last = (golds, preds, (len(golds), len(preds), positive), entry)
        return entry


def _corpus(golds, preds, positive, metric: str) -> dict:
    found = _Corpus.get(golds, preds, positive)
    if found is None:
        found = _Corpus.put(golds, preds, positive, _parse_corpus(golds, preds, positive, metric))
    return found


def _parse_corpus(golds, preds, positive, metric: str):
    golds, preds = check_pair(golds, preds, metric)
    parsed = [
        _check_sentence(g, p, positive, f"{metric}: sentence {i}") for i, (g, p) in enumerate(zip(golds, preds))
    ]
    if positive is not None:
        _check_positive_seen(parsed, positive, metric)
    return parsed


def _check_positive_seen(parsed, positive: str, metric: str) -> None:
    """Refuse a positive type that no tag has while other types are present: almost surely a typo
    (``positive: METAPHOR`` on ``B-MET`` tags), which would otherwise score a silent 0.0. All-``O`` input is
    fine (a subset without metaphors where nothing is predicted)."""
    seen: set[Parsed] = set()
    for g, p in parsed:
        seen.update(g)
        seen.update(p)
    types = {t for prefix, t in seen if prefix != "O"}
    if types and positive not in types:
        raise MetricInputError(
            f"{metric}: no tag has the positive type {positive!r}; the tags have types {sorted(types)}",
            hint="set the task's labels.positive to the type used in the tags",
        )


def _span_prf(golds, preds, positive, metric) -> dict[str, float]:
    corpus = _corpus(golds, preds, positive, metric)
    if "span" not in corpus:
        corpus["span"] = f1_from_counts(_span_counts(g, p, positive) for g, p in corpus["parsed"])
    return corpus["span"]


def _token_prf(golds, preds, positive, metric, masks=None) -> dict[str, float]:
    if positive is None:
        raise MetricInputError(f"{metric} needs a positive type, e.g. positive='METAPHOR'")
    corpus = _corpus(golds, preds, positive, metric)
    if masks is None:
        if "token" not in corpus:
            corpus["token"] = f1_from_counts(_token_counts(g, p, positive, None) for g, p in corpus["parsed"])
        return corpus["token"]
    return f1_from_counts(_token_counts(g, p, positive, m) for (g, p), m in zip(corpus["parsed"], masks))


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
    for i, (words, tags) in enumerate(zip(words_seqs, tag_seqs)):
        parsed = _parse_sentence(tags, positive, f"metaphor_vocabulary: tags of sentence {i}")
        words = _words(words, len(parsed), f"metaphor_vocabulary: sentence {i}")
        vocab.update(norm(w) for w, (prefix, t) in zip(words, parsed) if prefix != "O" and t == positive)
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
    golds, preds = check_pair(golds, preds, metric)
    if isinstance(words, (str, bytes)) or len(words) != len(golds):
        raise MetricInputError(f"{metric}: words must hold one word sequence per sentence ({len(golds)})")
    corpus = _corpus(golds, preds, positive, metric)
    key = ("in_vocab", id(words), id(train_vocab), normalise)
    if corpus.get("in_vocab_key") != key:  # inv_f1 and oov_f1 share the flags: each word normalised once
        norm = get_normaliser(normalise)
        vocab = {norm(v) for v in train_vocab}
        flags = []
        for i, (sentence, gold) in enumerate(zip(words, golds)):
            sentence = _words(sentence, len(gold), f"{metric}: sentence {i}")
            flags.append([norm(w) in vocab for w in sentence])
        corpus.update(in_vocab_key=key, in_vocab=flags, in_vocab_refs=(words, train_vocab))
    masks = corpus["in_vocab"] if in_vocab else [[not f for f in row] for row in corpus["in_vocab"]]
    return _token_prf(golds, preds, positive, metric, masks)


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
