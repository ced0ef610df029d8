"""Meta4XNLI-style tables on hand-made items: counts, percentages, grouping, totals and overlap."""

from __future__ import annotations

from metabench.data.items import NLIPair, TaggedSentence
from metabench.data.tables import is_metaphor_tag, metaphor_overlap, nli_rows, tagging_rows


def _sent(i, words, tags, source="xnli_dev", subset="premise"):
    return TaggedSentence(f"s{i}", tuple(words), tuple(tags), "en", source, {"subset": subset})


ITEMS = [
    _sent(1, ["Time", "flies", "by"], ["O", "B-METAPHOR", "I-METAPHOR"]),
    _sent(2, ["It", "rains"], ["O", "O"]),
    _sent(3, ["A", "sea", "of", "troubles"], ["O", "B-METAPHOR", "O", "O"], subset="hypothesis"),
    _sent(4, ["Plain"], ["O"], source="esxnli", subset="premise"),
]


def test_metaphor_tags():
    assert is_metaphor_tag("B-METAPHOR") and is_metaphor_tag("I-METAPHOR") and is_metaphor_tag("1")
    assert not is_metaphor_tag("O") and not is_metaphor_tag("0")


def test_tagging_rows_group_by_source_and_subset_with_total():
    rows = tagging_rows(ITEMS)
    assert [(r["source"], r["subset"]) for r in rows] == [
        ("esxnli", "premise"), ("xnli_dev", "hypothesis"), ("xnli_dev", "premise"), ("total", "")
    ]
    premise = rows[2]
    assert premise == {
        "source": "xnli_dev", "subset": "premise", "metaphor_tokens": 2, "tokens": 5, "token_pct": 40.0,
        "metaphor_sentences": 1, "sentences": 2, "sentence_pct": 50.0,
    }
    total = rows[-1]
    assert (total["metaphor_tokens"], total["tokens"], total["metaphor_sentences"], total["sentences"]) == (3, 10, 2, 4)
    assert total["sentence_pct"] == 50.0


def test_tagging_rows_other_grouping_and_no_total():
    rows = tagging_rows(ITEMS, by=("language",), total=False)
    assert rows == [
        {"language": "en", "metaphor_tokens": 3, "tokens": 10, "token_pct": 30.0,
         "metaphor_sentences": 2, "sentences": 4, "sentence_pct": 50.0}
    ]
    assert tagging_rows([]) == []


def _pair(i, label, metaphor, source="xnli.dev"):
    return NLIPair(f"p{i}", "p", "h", label, metaphor, "en", source)


def test_nli_rows_per_source_and_label():
    pairs = [
        _pair(1, "entailment", "met"), _pair(2, "entailment", "no_met"), _pair(3, "entailment", "no_met"),
        _pair(4, "neutral", "nonrelevant"), _pair(5, "neutral", "met", source="esxnli"),
    ]
    rows = nli_rows(pairs)
    assert [(r["source"], r["label"]) for r in rows] == [
        ("esxnli", "neutral"), ("xnli.dev", "entailment"), ("xnli.dev", "neutral"), ("total", "")
    ]
    entail = rows[1]
    assert list(entail) == ["source", "label", "met", "met_pct", "nonrelevant", "nonrelevant_pct", "no_met",
                            "no_met_pct", "pairs"]
    assert (entail["met"], entail["no_met"], entail["nonrelevant"], entail["pairs"]) == (1, 2, 0, 3)
    assert entail["no_met_pct"] == 66.67
    assert rows[-1]["pairs"] == 5 and rows[-1]["met"] == 2


def test_metaphor_overlap_lowercases_and_counts_tokens_and_types():
    train = [_sent(1, ["Time", "Flies"], ["O", "B-METAPHOR"])]
    test = [
        _sent(2, ["flies", "flies", "sea"], ["B-METAPHOR", "B-METAPHOR", "B-METAPHOR"]),
        _sent(3, ["Time"], ["B-METAPHOR"]),  # literal in train: not an overlap
    ]
    assert metaphor_overlap(train, test) == {
        "test_metaphor_tokens": 4, "in_train": 2, "token_pct": 50.0,
        "test_metaphor_types": 3, "types_in_train": 1, "type_pct": 33.33,
    }
    assert metaphor_overlap([], [])["token_pct"] == 0.0
