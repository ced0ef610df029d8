"""The artifact-controlled sampler (VUAC_BO procedure): deterministic for a seed, literal partners drawn
from untagged spans matching their metaphor at the recorded level, at most one partner per metaphor."""

from __future__ import annotations

from collections import Counter

import pytest

from metabench_artifacts.regimes import digest
from metabench_artifacts.sampling import LEVELS, RANDOM, _PUNCT, Span, _Keys, metaphor_spans, sample, samples, to_items
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


def counts_levels(counts: Counter) -> list[str]:
    return [name.partition(":")[2] for name in counts if name.startswith("literal:")]


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
    metaphor_keys = {(level, _Keys(sentences[m.sentence]).key(level, m.start, m.end))
                     for m, label, _ in first if label == "metaphor" for level in counts_levels(counts)}
    for span, level in literal:
        sent = sentences[span.sentence]
        assert all(t == "O" for t in sent.tags[span.start:span.end])
        assert (level, _Keys(sent).key(level, span.start, span.end)) in metaphor_keys  # matches some metaphor


def _sample_by_definition(sentences, seed, levels):
    """The module docstring's procedure, written plainly: every span keyed word by word, ranked by its hex
    digest, candidates taken without replacement in rank order, metaphors served in rank order."""

    def key(sent, level, a, b):
        words = sent.words[a:b]
        if level == "any":
            return (b - a,) if all(any(c.isalpha() for c in w) for w in words) else None
        if level == "words":
            return tuple(w.lower() for w in words)
        if level == "lemmas":
            return tuple(w.lower().translate(_PUNCT) or w.lower() for w in words)
        pos = sent.meta.get("pos")
        return tuple(pos[a:b]) if pos and len(pos) == len(sent.words) else None

    def rank(span):
        return digest(seed, sentences[span[0]].id, span[1], span[2])

    metaphors = [(s, a, b) for s, sent in enumerate(sentences) for a, b in metaphor_spans(sent.tags)]
    untagged = [(s, a, a + n) for s, sent in enumerate(sentences) for n in sorted({b - a for _, a, b in metaphors})
                for a in range(len(sent.words) - n + 1)
                if not any(t.startswith(("B-", "I-")) for t in sent.tags[a : a + n])]
    pools: dict = {}
    for span in sorted(untagged, key=lambda sp: (rank(sp), sp[0], sp[1])):
        for level in levels:
            pools.setdefault((level, key(sentences[span[0]], level, *span[1:])), []).append(span)
    used, out = set(), []
    for m in sorted(metaphors, key=rank):
        out.append((Span(*m), "metaphor", ""))
        for level in levels:
            k = key(sentences[m[0]], level, *m[1:])
            free = [c for c in pools.get((level, k), []) if c not in used] if k is not None else []
            if free:
                used.add(free[0])
                out.append((Span(*free[0]), "literal", level))
                break
    return out


@pytest.mark.slow
def test_sampler_follows_its_definition(registry):
    corpus = [
        _sentence(0, "It Rains , cats and dogs", ["O", "B-METAPHOR", "O", "B-METAPHOR", "I-METAPHOR", "I-METAPHOR"],
                  ["PRON", "VERB", "PUNCT", "NOUN", "CCONJ", "NOUN"]),
        _sentence(1, "rains fell on cats and dogs today", ["O"] * 7, ["NOUN", "VERB", "ADP", "NOUN", "CCONJ", "NOUN", "NOUN"]),
        _sentence(2, "rains, fell I-only", ["O", "O", "I-METAPHOR"], ["NOUN", "VERB", "ADJ"]),
        _sentence(3, "42 % up", ["O", "O", "O"]),
    ]
    sentences = load_split(registry, "cometa", "train").items[:300] + corpus
    for levels in (LEVELS, RANDOM):
        for seed in (0, 5):
            assert sample(sentences, seed, levels)[0] == _sample_by_definition(sentences, seed, levels)


def test_twins_drawn_in_one_pass_are_each_what_it_gives_alone(registry):
    """A BO sample and its random control share the corpus's forms and span ranks (``samples``), and each is
    exactly the sample drawn alone; their items share text layouts, nothing else."""
    sentences = load_split(registry, "cometa", "train").items[:400] + [
        _sentence(900, "prices climb fast", ["O", "B-METAPHOR", "O"], ["NOUN", "VERB", "ADV"]),
        _sentence(901, "we climb hills", ["O", "O", "O"], ["PRON", "VERB", "NOUN"]),
    ]
    for seed in (0, 7):
        both = samples(sentences, seed, [LEVELS, RANDOM])
        assert both == [sample(sentences, seed, LEVELS), sample(sentences, seed, RANDOM)]
        assert both[0][0] != both[1][0]  # two different samples, not one twice
        layout: dict = {}
        together = [to_items(sentences, drawn, "toy", layout) for drawn, _ in both]
        assert together == [to_items(sentences, drawn, "toy") for drawn, _ in both]
        assert [i.meta for i in together[0]] == [i.meta for i in to_items(sentences, both[0][0], "toy")]
