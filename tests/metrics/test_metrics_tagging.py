"""Tagging metrics: hand-worked cases, and property tests against seqeval and sklearn (the references)."""

from __future__ import annotations

import random
import warnings

import pytest
from seqeval.metrics import f1_score as sq_f1
from seqeval.metrics import precision_score as sq_precision
from seqeval.metrics import recall_score as sq_recall
from seqeval.metrics.sequence_labeling import get_entities
from seqeval.metrics.sequence_labeling import precision_recall_fscore_support as sq_prfs
from lazy import lazy

from metabench.metrics.tagging import (
    f1_from_counts,
    inv_f1,
    metaphor_vocabulary,
    oov_f1,
    parse_tag,
    span_counts,
    span_f1,
    span_precision,
    span_recall,
    spans,
    token_counts,
    token_f1,
    token_precision,
    token_recall,
    vocab_mask,
)

skm = lazy("sklearn.metrics")

TOL = 1e-12
B, I, O = "B-METAPHOR", "I-METAPHOR", "O"


# ------------------------------------------------------------------------------------------ hand-worked


def test_span_and_token_f1_differ_on_a_half_predicted_two_word_metaphor():
    golds = [[O, B, I, O], [B, O, O]]
    preds = [[O, B, O, O], [B, O, B]]
    # Spans. gold: s1 (1,2), s2 (0,0) -> 2. pred: s1 (1,1), s2 (0,0), (2,2) -> 3.
    # Only s2 (0,0) matches exactly: TP 1, FP 2, FN 1 -> P 1/3, R 1/2, F1 = 2PR/(P+R) = (1/3)/(5/6) = 2/5.
    assert span_precision(golds, preds) == pytest.approx(1 / 3, abs=TOL)
    assert span_recall(golds, preds) == pytest.approx(1 / 2, abs=TOL)
    assert span_f1(golds, preds) == pytest.approx(2 / 5, abs=TOL)
    # Tokens. gold positives: s1 w1, w2; s2 w0 (3). pred positives: s1 w1; s2 w0, w2 (3).
    # TP: s1 w1, s2 w0 (2); FP: s2 w2 (1); FN: s1 w2 (1) -> P = R = F1 = 2/3.
    assert token_precision(golds, preds) == pytest.approx(2 / 3, abs=TOL)
    assert token_recall(golds, preds) == pytest.approx(2 / 3, abs=TOL)
    assert token_f1(golds, preds) == pytest.approx(2 / 3, abs=TOL)
    # the per-sentence counts add up to the corpus numbers
    assert span_counts(golds[0], preds[0]) == {"tp": 0, "fp": 1, "fn": 1}
    assert span_counts(golds[1], preds[1]) == {"tp": 1, "fp": 1, "fn": 0}
    assert token_counts(golds[0], preds[0]) == {"tp": 1, "fp": 0, "fn": 1}
    assert token_counts(golds[1], preds[1]) == {"tp": 1, "fp": 1, "fn": 0}


# Training split: "fell" is metaphorical once (and literal once: still in the vocabulary), "apart." keeps its
# attached full stop, as Meta4XNLI's words do.
TRAIN_WORDS = [["He", "fell", "apart."], ["Prices", "fell"], ["a", "bright", "idea"]]
TRAIN_TAGS = [[O, B, I], [O, O], [O, B, O]]
TEST_WORDS = [
    ["Stocks", "fell", "apart."],
    ["a", "bright", "grasp"],
    ["Fell", "on", "the", "floor"],
    ["torn", "apart"],
]
TEST_GOLD = [[O, B, I], [O, B, B], [O, O, O, O], [B, I]]
TEST_PRED = [[O, B, O], [O, O, B], [B, O, O, O], [B, I]]


def test_metaphor_vocabulary():
    assert metaphor_vocabulary(TRAIN_WORDS, TRAIN_TAGS) == {"fell", "apart.", "bright"}
    stripped = metaphor_vocabulary(TRAIN_WORDS, TRAIN_TAGS, normalise="lower_strip_punct")
    assert stripped == {"fell", "apart", "bright"}
    assert metaphor_vocabulary([["Dark", "¿Ves?"]], [["1", 1]], normalise="lower_strip_punct") == {"dark", "ves"}


@pytest.mark.parametrize(
    "normalise,inv,oov",
    [
        # exact: vocab {fell, apart., bright}.
        #   IV words: s1 fell (g+ p+ TP), apart. (g+ p- FN); s2 bright (g+ p- FN); "Fell" and "apart" are OOV.
        #   IV: TP 1, FP 0, FN 2 -> P 1, R 1/3, F1 = (2/3)/(4/3) = 1/2.
        #   OOV: s2 grasp TP; s3 Fell (g- p+) FP; s4 torn TP, apart TP -> TP 3, FP 1, FN 0 -> P 3/4, R 1, F1 6/7.
        ("exact", 1 / 2, 6 / 7),
        # lower: "Fell" becomes IV (an FP there). IV: TP 1, FP 1, FN 2 -> P 1/2, R 1/3, F1 = (1/3)/(5/6) = 2/5.
        #   OOV: grasp, torn, apart all TP -> F1 1.
        ("lower", 2 / 5, 1.0),
        # lower_strip_punct: vocab {fell, apart, bright}; s4 "apart" becomes IV (a TP there).
        #   IV: TP 2 (fell, apart), FP 1 (Fell), FN 2 (apart., bright) -> P 2/3, R 1/2, F1 = (2/3)/(7/6) = 4/7.
        #   OOV: grasp, torn TP -> F1 1.
        ("lower_strip_punct", 4 / 7, 1.0),
    ],
)
def test_inv_oov_split(normalise, inv, oov):
    vocab = metaphor_vocabulary(TRAIN_WORDS, TRAIN_TAGS, normalise=normalise)
    kw = dict(words=TEST_WORDS, train_vocab=vocab, normalise=normalise)
    assert inv_f1(TEST_GOLD, TEST_PRED, **kw) == pytest.approx(inv, abs=TOL)
    assert oov_f1(TEST_GOLD, TEST_PRED, **kw) == pytest.approx(oov, abs=TOL)
    # All words: TP 4, FP 1, FN 2 -> P 4/5, R 2/3, F1 = (16/15)/(22/15) = 8/11, whatever the split.
    assert token_f1(TEST_GOLD, TEST_PRED) == pytest.approx(8 / 11, abs=TOL)


def test_inv_oov_partition_the_token_counts():
    vocab = metaphor_vocabulary(TRAIN_WORDS, TRAIN_TAGS)
    iv, oov, whole = [], [], []
    for w, g, p in zip(TEST_WORDS, TEST_GOLD, TEST_PRED):
        mask = vocab_mask(w, vocab)
        iv.append(token_counts(g, p, mask=mask))
        oov.append(token_counts(g, p, mask=[not m for m in mask]))
        whole.append(token_counts(g, p))
    for key in ("tp", "fp", "fn"):
        assert sum(c[key] for c in iv) + sum(c[key] for c in oov) == sum(c[key] for c in whole)
    expected = inv_f1(TEST_GOLD, TEST_PRED, words=TEST_WORDS, train_vocab=vocab)
    assert f1_from_counts(iv)["f1"] == pytest.approx(expected)


def test_raw_vocabulary_is_normalised_like_the_words():
    # a raw (unnormalised) vocabulary gives the same result as a normalised one
    raw = {"Fell", "Apart.", "BRIGHT"}
    kw = dict(words=TEST_WORDS, normalise="lower_strip_punct")
    assert inv_f1(TEST_GOLD, TEST_PRED, train_vocab=raw, **kw) == pytest.approx(4 / 7)
    assert vocab_mask(["Fell", "fell,"], raw, "lower") == [True, False]


def test_inv_oov_argument_errors():
    with pytest.raises(ValueError, match="needs words="):
        inv_f1(TEST_GOLD, TEST_PRED)
    with pytest.raises(ValueError, match="unknown normalise='casefold'"):
        oov_f1(TEST_GOLD, TEST_PRED, words=TEST_WORDS, train_vocab=set(), normalise="casefold")
    with pytest.raises(ValueError, match="sentence 1: 2 words but 3 tags"):
        inv_f1(TEST_GOLD, TEST_PRED, words=[TEST_WORDS[0], ["a", "b"], *TEST_WORDS[2:]], train_vocab=set())
    with pytest.raises(ValueError, match="one word sequence per sentence"):
        inv_f1(TEST_GOLD, TEST_PRED, words=TEST_WORDS[:2], train_vocab=set())


def test_empty_vocabulary_makes_everything_oov():
    kw = dict(words=TEST_WORDS, train_vocab=frozenset())
    assert inv_f1(TEST_GOLD, TEST_PRED, **kw) == 0.0  # no words scored: 0/0 -> 0
    assert oov_f1(TEST_GOLD, TEST_PRED, **kw) == pytest.approx(token_f1(TEST_GOLD, TEST_PRED))


# ------------------------------------------------------------------------------------------ tag formats


def test_ill_formed_bio_reads_like_seqeval_default_mode():
    seq = ["I-M", "I-M", "O", "I-M", "B-M", "I-M", "I-X", "B-M"]
    # I- after O starts a span; B- always does; a type change ends one and starts another.
    assert spans(seq, positive="M") == [("M", 0, 1), ("M", 3, 3), ("M", 4, 5), ("X", 6, 6), ("M", 7, 7)]
    assert spans(seq, positive="M") == get_entities(seq)


def test_io_tags_merge_adjacent_words_plain_labels_do_not():
    io_gold = [["I-METAPHOR", "I-METAPHOR", "O"]]
    assert spans(io_gold[0]) == [("METAPHOR", 0, 1)]
    # plain labels: each positive word is its own span, so span F1 == token F1
    plain_gold = [["METAPHOR", "METAPHOR", "O", "O"]]
    plain_pred = [["METAPHOR", "O", "O", "METAPHOR"]]
    assert spans(plain_gold[0]) == [("METAPHOR", 0, 0), ("METAPHOR", 1, 1)]
    # TP 1 (w0), FP 1 (w3), FN 1 (w1) -> 1/2 both ways
    assert span_f1(plain_gold, plain_pred) == token_f1(plain_gold, plain_pred) == 0.5
    as_01 = [["1", "1", "0", "0"]], [["1", "0", "0", "1"]]
    as_int = [[1, 1, 0, 0]], [[True, False, False, True]]
    for g, p in (as_01, as_int):
        assert span_f1(g, p) == token_f1(g, p) == 0.5


def test_parse_tag():
    assert parse_tag("B-METAPHOR") == ("B", "METAPHOR")
    assert parse_tag("I-FOO-BAR") == ("I", "FOO-BAR")
    assert parse_tag("O") == parse_tag("0") == parse_tag(0) == ("O", "_")
    assert parse_tag("1") == parse_tag(1) == parse_tag("B") == parse_tag("B-") == ("B", "METAPHOR")
    assert parse_tag("I") == ("I", "METAPHOR")
    assert parse_tag("1", positive=None) == ("B", "_")
    assert parse_tag("LITERAL") == ("B", "LITERAL")
    with pytest.raises(ValueError, match="label ids"):
        parse_tag(2)
    with pytest.raises(ValueError, match="empty tag"):
        parse_tag("")


def test_input_errors():
    with pytest.raises(ValueError, match="no items"):
        span_f1([], [])
    with pytest.raises(ValueError, match="not a sequence of tags"):
        span_f1(["O", "B-METAPHOR"], ["O", "O"])  # a flat tag list instead of a list of sentences
    with pytest.raises(ValueError, match="sentence 1: 2 gold tags but 3 predicted"):
        token_f1([[O], [O, B]], [[O], [O, B, O]])
    with pytest.raises(ValueError, match="no tag has the positive type 'METAPHOR'"):
        span_f1([["B-MET", "O"]], [["O", "O"]])
    with pytest.raises(ValueError, match="positive type"):
        token_f1([[O]], [[O]], positive=None)


def test_all_outside_scores_zero_without_error():
    assert span_f1([[O, O]], [[O, O]]) == 0.0
    assert token_f1([[O, O]], [[O, O]]) == 0.0
    assert span_f1([[]], [[]]) == 0.0  # an empty sentence is allowed; it contributes nothing


# ------------------------------------------------------------------------------- property tests


def _random_tags(rng: random.Random, vocab: list[str], n_sent: int, max_len: int = 12) -> tuple[list, list]:
    golds, preds = [], []
    for _ in range(n_sent):
        length = rng.randint(0, max_len)
        golds.append([rng.choice(vocab) for _ in range(length)])
        # predictions: mostly copies of the gold tag, so that spans do match sometimes
        preds.append([g if rng.random() < 0.6 else rng.choice(vocab) for g in golds[-1]])
    return golds, preds


ONE_TYPE = [O, O, O, B, I]  # random sequences: many I- after O (ill-formed) as well as proper BIO
TWO_TYPES = ["O", "O", "O", "B-X", "I-X", "B-Y", "I-Y"]
BIOES = ["O", "O", "B-X", "I-X", "E-X", "S-X", "B-Y", "E-Y", "S-Y", "I-Y"]


@pytest.mark.parametrize("seed", range(25))
def test_span_metrics_equal_seqeval_on_random_bio(seed):
    rng = random.Random(seed)
    golds, preds = _random_tags(rng, ONE_TYPE, n_sent=rng.randint(1, 40))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sq_precision(golds, preds), sq_recall(golds, preds), sq_f1(golds, preds)
    ours = span_precision(golds, preds), span_recall(golds, preds), span_f1(golds, preds)
    for a, b in zip(ours, ref):
        assert abs(a - b) < TOL
    # the same through per-sentence counts
    counts = [span_counts(g, p) for g, p in zip(golds, preds)]
    assert abs(f1_from_counts(counts)["f1"] - ref[2]) < TOL


@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize("vocab", [TWO_TYPES, BIOES], ids=["bio2types", "bioes"])
def test_span_metrics_equal_seqeval_with_several_types(seed, vocab):
    rng = random.Random(1000 + seed)
    golds, preds = _random_tags(rng, vocab, n_sent=rng.randint(5, 40))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        micro = sq_f1(golds, preds)
        p, r, f, _ = sq_prfs(golds, preds, average=None)
    # positive=None: all types, micro-averaged, = seqeval's overall score
    assert abs(span_f1(golds, preds, positive=None) - micro) < TOL
    # positive="X": seqeval's per-type row for X (target names are sorted)
    types = sorted({t for seq in golds + preds for t, _, _ in get_entities(seq)})
    if "X" in types:
        i = types.index("X")
        assert abs(span_precision(golds, preds, positive="X") - p[i]) < TOL
        assert abs(span_recall(golds, preds, positive="X") - r[i]) < TOL
        assert abs(span_f1(golds, preds, positive="X") - f[i]) < TOL
    for g in golds:
        assert spans(g, positive=None) == get_entities(g)


@pytest.mark.parametrize("seed", range(15))
def test_token_metrics_equal_sklearn_binary(seed):
    rng = random.Random(2000 + seed)
    golds, preds = _random_tags(rng, TWO_TYPES, n_sent=rng.randint(1, 40))
    golds = [[t.replace("X", "METAPHOR") for t in s] for s in golds]
    preds = [[t.replace("X", "METAPHOR") for t in s] for s in preds]
    if not any(t.endswith("METAPHOR") for s in golds + preds for t in s):
        golds[0] = [*golds[0], B]
        preds[0] = [*preds[0], O]
    flat_g = [int(t.endswith("-METAPHOR")) for s in golds for t in s]
    flat_p = [int(t.endswith("-METAPHOR")) for s in preds for t in s]
    p, r, f, _ = skm.precision_recall_fscore_support(flat_g, flat_p, average="binary", pos_label=1, zero_division=0)
    assert abs(token_precision(golds, preds) - p) < TOL
    assert abs(token_recall(golds, preds) - r) < TOL
    assert abs(token_f1(golds, preds) - f) < TOL


@pytest.mark.parametrize("seed", range(5))
def test_bootstrap_resample_from_counts_equals_recomputing(seed):
    rng = random.Random(3000 + seed)
    golds, preds = _random_tags(rng, ONE_TYPE, n_sent=30)
    s_counts = [span_counts(g, p) for g, p in zip(golds, preds)]
    t_counts = [token_counts(g, p) for g, p in zip(golds, preds)]
    idx = [rng.randrange(len(golds)) for _ in range(len(golds))]
    g_star, p_star = [golds[i] for i in idx], [preds[i] for i in idx]
    if not any(t != O for s in g_star + p_star for t in s):
        return
    assert abs(f1_from_counts([s_counts[i] for i in idx])["f1"] - span_f1(g_star, p_star)) < TOL
    assert abs(f1_from_counts([t_counts[i] for i in idx])["f1"] - token_f1(g_star, p_star)) < TOL


def test_b_only_span_f1_equals_token_f1():
    # Spanish Meta4XNLI has no I- tags: there span F1 and token F1 coincide (meta4xnli.md §2.1)
    rng = random.Random(7)
    golds, preds = _random_tags(rng, [O, O, B], n_sent=50)
    assert abs(span_f1(golds, preds) - token_f1(golds, preds)) < TOL


# ------------------------------------------------------------------------ reading once, never stale

ALL_METRICS = (span_precision, span_recall, span_f1, token_precision, token_recall, token_f1)


def _fresh(golds, preds):
    """Every metric on deep copies: lists never seen before, so nothing can be reused from a memo."""
    return [m([list(s) for s in golds], [list(s) for s in preds]) for m in ALL_METRICS]


def test_metrics_follow_lists_changed_in_place():
    golds = [[B, O, O], [O, B, I], [O, O]]
    preds = [[O, O, O], [O, O, O], [O, O]]
    assert [m(golds, preds) for m in ALL_METRICS] == [0.0] * 6
    preds[0] = [B, O, O]  # a sentence replaced
    assert [m(golds, preds) for m in ALL_METRICS] == _fresh(golds, preds) != [0.0] * 6
    preds[1][1] = B  # a tag changed inside a sentence
    preds[1][2] = I
    assert [m(golds, preds) for m in ALL_METRICS] == _fresh(golds, preds)
    assert span_f1(golds, preds) == 1.0
    golds[2].append(O)  # a sentence grown: now misaligned, and said so
    with pytest.raises(ValueError, match="sentence 2: 3 gold tags but 2 predicted"):
        span_f1(golds, preds)


def test_shared_parsing_reads_a_pair_once_and_tells_lists_apart(monkeypatch):
    import metabench.metrics.tagging as tagging

    reads = []
    real = tagging._read_corpus
    monkeypatch.setattr(tagging, "_read_corpus", lambda *a: reads.append(a[3]) or real(*a))
    rng = random.Random(11)
    golds, preds = _random_tags(rng, ONE_TYPE, n_sent=30)
    other_golds, other_preds = _random_tags(rng, ONE_TYPE, n_sent=30)
    expected, other_expected = _fresh(golds, preds), _fresh(other_golds, other_preds)
    reads.clear()
    with tagging.shared_parsing():
        assert [m(golds, preds) for m in ALL_METRICS] == expected
        assert len(reads) == 1  # six metrics, one reading
        # other lists, even of the same length, are read afresh
        assert [m(other_golds, other_preds) for m in ALL_METRICS] == other_expected
        assert len(reads) == 2
        assert span_f1(golds, [list(s) for s in preds]) == expected[2]
        assert len(reads) == 3
    assert [m(golds, preds) for m in ALL_METRICS] == expected  # outside the block every call reads its input
    assert len(reads) == 3 + len(ALL_METRICS)


def test_shared_parsing_matches_seqeval_and_sklearn():
    rng = random.Random(12)
    golds, preds = _random_tags(rng, TWO_TYPES, n_sent=40)
    golds = [[t.replace("X", "METAPHOR") for t in s] for s in golds]
    preds = [[t.replace("X", "METAPHOR") for t in s] for s in preds]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        types = sorted({t for seq in golds + preds for t, _, _ in get_entities(seq)})
        sp, sr, sf, _ = sq_prfs(golds, preds, average=None)
    flat_g = [int(t.endswith("-METAPHOR")) for s in golds for t in s]
    flat_p = [int(t.endswith("-METAPHOR")) for s in preds for t in s]
    tp, tr, tf, _ = skm.precision_recall_fscore_support(flat_g, flat_p, average="binary", pos_label=1, zero_division=0)
    from metabench.metrics.tagging import shared_parsing

    with shared_parsing():
        ours = [m(golds, preds) for m in ALL_METRICS]
    i = types.index("METAPHOR")
    for a, b in zip(ours, (sp[i], sr[i], sf[i], tp, tr, tf)):
        assert abs(a - b) < TOL


def test_tags_that_only_look_like_seen_ones_are_still_checked():
    # string sentences are remembered by content; ints, floats and iterators never stand in for them
    assert span_f1([["1", "0"]], [["1", "0"]]) == 1.0
    assert span_f1([[1, 0]], [[True, False]]) == 1.0
    with pytest.raises(ValueError, match="label ids"):
        span_f1([[2, 0]], [["2", "0"]])
    with pytest.raises(ValueError, match="not a string tag"):
        span_f1([[1.0, 0]], [["1", "0"]])
    with pytest.raises(ValueError, match="not a sequence of tags"):
        span_f1(["O"], [("O",)])  # the string "O" is not the one-word sentence ("O",)
    assert span_f1([iter([B, O])], [(B, O)]) == 1.0  # any iterable sentence, read once


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("normalise", ["exact", "lower", "lower_strip_punct"])
def test_inv_oov_equal_masked_token_counts_on_random_text(seed, normalise):
    rng = random.Random(4000 + seed)
    forms = ["fell", "Fell", "apart.", "apart", "bright", "idea", "¿Ves?", "ves"]
    golds, preds = _random_tags(rng, ONE_TYPE, n_sent=25)
    words = [[rng.choice(forms) for _ in g] for g in golds]
    vocab = set(rng.sample(forms, 3))
    expected = {}
    for name, keep in (("inv", True), ("oov", False)):
        counts = []
        for w, g, p in zip(words, golds, preds):
            mask = vocab_mask(w, vocab, normalise)
            counts.append(token_counts(g, p, mask=[m == keep for m in mask]))
        expected[name] = f1_from_counts(counts)["f1"]
    kw = dict(words=words, train_vocab=vocab, normalise=normalise)
    assert inv_f1(golds, preds, **kw) == expected["inv"]
    assert oov_f1(golds, preds, **kw) == expected["oov"]
    from metabench.metrics.tagging import shared_parsing

    with shared_parsing():  # shared counts give the same numbers, and other words are not taken for these
        assert inv_f1(golds, preds, **kw) == expected["inv"]
        assert oov_f1(golds, preds, **kw) == expected["oov"]
        assert inv_f1(golds, preds, words=[list(w) for w in words], train_vocab=set(), normalise=normalise) == 0.0
