"""Words ↔ sub-word pieces: first-piece labels, punctuation, I- tags, windows instead of truncation."""

from __future__ import annotations

import pytest

from metabench.models.alignment import (
    IGNORE,
    MARKERS,
    collect_word_predictions,
    encode_text,
    encode_words,
    word_labels,
)

LABELS = {"O": 0, "B-METAPHOR": 1, "I-METAPHOR": 2}


@pytest.fixture(scope="module")
def tokenizer(tiny_bert):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_bert))


def _pieces(tokenizer, ids):
    return tokenizer.convert_ids_to_tokens(ids)


def test_label_on_first_piece_of_split_words_and_attached_punctuation(tokenizer):
    words = ["The", "zzq", "grasped", "idea.", "x-ray"]
    tags = ["O", "B-METAPHOR", "I-METAPHOR", "O", "B-METAPHOR"]
    enc = encode_words(tokenizer, words, 64)
    assert len(enc.windows) == 1 and not enc.windowed
    window = enc.windows[0]
    pieces = _pieces(tokenizer, window.input_ids)
    assert pieces[0] == "[CLS]" and pieces[-1] == "[SEP]"
    # zzq -> z ##z ##q, idea. -> idea . , x-ray -> x - ray: several pieces per word, one label each
    assert [pieces[p] for p in window.first] == ["the", "z", "grasped", "idea", "x"]
    labels = word_labels(enc, tags, LABELS)[0]
    labelled = [(pieces[i], lab) for i, lab in enumerate(labels) if lab != IGNORE]
    assert labelled == [("the", 0), ("z", 1), ("grasped", 2), ("idea", 0), ("x", 1)]
    assert sum(lab != IGNORE for lab in labels) == len(words)  # other pieces and specials are ignored
    # predictions map back one per word, read off the first piece
    fake = [[9] * len(window.input_ids)]
    for pos, label in zip(window.first, (0, 1, 2, 0, 1)):
        fake[0][pos] = label
    assert collect_word_predictions(enc, fake) == [0, 1, 2, 0, 1]


def test_long_sentence_is_windowed_not_truncated(tokenizer):
    words = [f"w{i % 10}zz" for i in range(60)]  # 4 pieces each: w, #digit, ##z, ##z
    tags = ["B-METAPHOR" if i % 7 == 0 else "O" for i in range(60)]
    train = encode_words(tokenizer, words, 24, overlap=0.0)
    assert train.windowed and all(len(w.input_ids) <= 24 for w in train.windows)
    # training windows are disjoint and cover every word exactly once
    covered = [i for w in train.windows for i in range(w.start, w.end)]
    assert covered == list(range(60))
    labelled = sum(lab != IGNORE for labels in word_labels(train, tags, LABELS) for lab in labels)
    assert labelled == 60
    # prediction windows overlap; every word is read from exactly one window, where it has most context
    pred = encode_words(tokenizer, words, 24, overlap=0.5)
    assert len(pred.windows) > len(train.windows)
    assert len(pred.owner) == 60
    for i, owner in enumerate(pred.owner):
        window = pred.windows[owner]
        assert window.start <= i < window.end
    window_preds = [[0] * len(w.input_ids) for w in pred.windows]
    for w, window in enumerate(pred.windows):
        for offset, pos in enumerate(window.first):
            window_preds[w][pos] = (window.start + offset) % 3  # encodes the word index
    assert collect_word_predictions(pred, window_preds) == [i % 3 for i in range(60)]


def test_word_longer_than_a_window_is_clipped_and_still_labelled(tokenizer):
    words = ["the", "z" * 40, "storm"]
    enc = encode_words(tokenizer, words, 12)
    assert enc.clipped_words == 1
    assert [(w.start, w.end) for w in enc.windows] == [(0, 1), (1, 2), (2, 3)]
    assert all(len(w.input_ids) <= 12 for w in enc.windows)
    assert len(collect_word_predictions(enc, [[0] * len(w.input_ids) for w in enc.windows])) == 3


def test_word_without_pieces_becomes_unknown(tokenizer):
    words = ["the", "\u200b", "storm"]  # a zero-width space: the normaliser removes it, leaving no piece
    enc = encode_words(tokenizer, words, 32)
    assert enc.unk_words == 1
    pieces = _pieces(tokenizer, enc.windows[0].input_ids)
    assert [pieces[p] for p in enc.windows[0].first] == ["the", "[UNK]", "storm"]


def test_marked_text_keeps_the_marked_expression_when_too_long(tokenizer):
    tokenizer = tokenizer.__class__.from_pretrained(tokenizer.name_or_path)
    tokenizer.add_tokens(list(MARKERS), special_tokens=True)
    marker_ids = tuple(tokenizer.convert_tokens_to_ids(list(MARKERS)))
    text = " ".join(["the"] * 30 + ["<PME>storm</PME>"] + ["cold"] * 30)
    enc = encode_text(tokenizer, text, None, 16, marker_ids)
    pieces = _pieces(tokenizer, enc.input_ids)
    assert enc.truncated and len(enc.input_ids) == 16
    assert pieces[0] == "[CLS]" and pieces[-1] == "[SEP]"
    assert pieces.count("<PME>") == 1 and pieces.count("</PME>") == 1 and "storm" in pieces
    short = encode_text(tokenizer, "the <PME>storm</PME> is cold", "a pair", 32, marker_ids)
    assert not short.truncated and short.token_type_ids is not None and short.token_type_ids[-1] == 1
