"""The artifact-controlled sampler (VUAC_BO procedure): deterministic for a seed, literal partners drawn
from untagged spans matching their metaphor at the recorded level, at most one partner per metaphor."""

from __future__ import annotations

from collections import Counter

import pytest

from metabench.artifacts.sampling import RANDOM, _Keys, metaphor_spans, sample, to_items
from metabench.data.items import TaggedSentence
from metabench.data.load import load_split

pytestmark = pytest.mark.mirror


def _sentence(i, words, tags, pos=None):
    return TaggedSentence(id=f"s{i}", words=tuple(words.split()), tags=tuple(tags), meta={"pos": pos} if pos else {})


def test_levels_on_a_small_corpus():
    corpus = [
        _sentence(0, "prices climb fast", ["O", "B-METAPHOR", "O"], ["NOUN", "VERB", "ADV"]),
        _sentence(1, "we climb hills", ["O", "O", "O"], ["PRON", "VERB", "NOUN"]),
        _sentence(2, "hopes soar high", ["O", "B-METAPHOR", "O"], ["NOUN", "VERB", "ADV"]),
        _sentence(3, "birds fly home", ["O", "O", "O"], ["NOUN", "VERB", "NOUN"]),
        _sentence(4, "a dark age", ["O", "B-METAPHOR", "I-METAPHOR"], ["DET", "ADJ", "NOUN"]),
    ]
    assert metaphor_spans(corpus[4].tags) == [(1, 3)]
    sampled, counts = sample(corpus, seed=0)
    partners = {(corpus[s.sentence].words[s.start:s.end]): level for s, label, level in sampled if label == "literal"}
    assert partners[("climb",)] == "words"  # same word sequence first
    assert counts == Counter({"metaphor": 3, "literal:words": 1, "literal:pos": 1, "unmatched": 1})
    # "soar" has no literal twin: a literal VERB (fly, or climb if unused) by POS; "dark age" (ADJ NOUN) has none
    items = to_items(corpus, sampled, "toy")
    for item in items:
        start, end = item.spans[0]
        assert item.text[start:end] == item.lemma or item.text[start:end].lower() == item.lemma


def test_random_control_draws_any_untagged_span_of_the_same_length():
    corpus = [
        _sentence(0, "prices climb fast", ["O", "B-METAPHOR", "O"]),
        _sentence(1, "we climb , hills", ["O", "O", "O", "O"]),
        _sentence(2, "a dark age", ["O", "B-METAPHOR", "I-METAPHOR"]),
    ]
    sampled, counts = sample(corpus, seed=0, levels=RANDOM)
    assert counts == Counter({"metaphor": 2, "literal:any": 2})
    for span, label, level in sampled:
        if label == "literal":
            words = corpus[span.sentence].words[span.start:span.end]
            assert level == "any" and all(t == "O" for t in corpus[span.sentence].tags[span.start:span.end])
            assert "," not in words  # spans of punctuation are never partners
    lengths = sorted(s.end - s.start for s, label, _ in sampled if label == "literal")
    assert lengths == [1, 2]  # each partner as long as its metaphor
    assert sample(corpus, seed=0, levels=RANDOM) == (sampled, counts)


def test_sampler_is_deterministic_and_seeded(registry):
    sentences = load_split(registry, "cometa", "train").items[:1200]
    first, counts = sample(sentences, seed=0)
    again, _ = sample(sentences, seed=0)
    other, _ = sample(sentences, seed=1)
    assert first == again
    assert first != other
    literal = [(s, level) for s, label, level in first if label == "literal"]
    assert counts["metaphor"] == sum(1 for _, label, _ in first if label == "metaphor")
    assert len(literal) + counts["unmatched"] == counts["metaphor"]  # one partner per metaphor at most
    assert len({s for s, _ in literal}) == len(literal)  # without replacement
    metaphors = [s for s, label, _ in first if label == "metaphor"]
    for span, level in literal:
        sent = sentences[span.sentence]
        assert all(t == "O" for t in sent.tags[span.start:span.end])
        assert any(_Keys(sent).key(level, span.start, span.end) == _Keys(sentences[m.sentence]).key(level, m.start, m.end)
                   for m in metaphors)
