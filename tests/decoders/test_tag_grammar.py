"""The tagged-copy grammar: BIO round trips, what it allows next, repairs (pure Python, no model)."""

from __future__ import annotations

import random

import pytest

from metabench.metrics.tagging import sentence_counts
from metabench.models.tag_grammar import Grammar, span_types, spans

EOS = 0
OPEN, CLOSE = (90, 91), (92,)


def grammar(word_ids, opens=None, closes=None) -> Grammar:
    return Grammar(word_ids, opens or {"METAPHOR": OPEN}, closes or {"METAPHOR": CLOSE}, EOS)


def random_bio(rng: random.Random, n: int, types=("METAPHOR",)) -> tuple[str, ...]:
    tags, previous = [], "O"
    for _ in range(n):
        kind = rng.choice(types)
        choice = rng.random()
        if choice < 0.5:
            tags.append("O")
        elif choice < 0.75 or previous == "O":
            tags.append(f"B-{kind}")
        else:
            tags.append("I-" + previous[2:])
        previous = tags[-1]
    return tuple(tags)


def test_valid_bio_round_trips_through_the_target_ids():
    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(1, 12)
        words = [tuple(rng.randint(1, 40) for _ in range(rng.randint(1, 3))) for _ in range(n)]
        tags = random_bio(rng, n)
        g = grammar(words)
        ids = g.target(tags)
        assert g.read(ids) == (tags, False)
        # every prefix of a target is allowed step by step, and eos ends it
        for end in range(len(ids)):
            assert ids[end] in g.allowed(ids[:end])
        assert g.allowed(ids) == set()


def test_two_entity_types_keep_their_own_tags():
    rng = random.Random(1)
    g_types = {"METAPHOR": (90,), "SIMILE": (93, 94)}
    closes = {"METAPHOR": (91,), "SIMILE": (95,)}
    for _ in range(100):
        n = rng.randint(1, 10)
        words = [(rng.randint(1, 40),) for _ in range(n)]
        tags = random_bio(rng, n, ("METAPHOR", "SIMILE"))
        g = Grammar(words, g_types, closes, EOS)
        assert g.read(g.target(tags)) == (tags, False)


def test_orphan_inside_tags_open_a_span_as_seqeval_reads_them():
    g = grammar([(1,), (2,), (3,)])
    read, repaired = g.read(g.target(("O", "I-METAPHOR", "I-METAPHOR")))
    assert read == ("O", "B-METAPHOR", "I-METAPHOR") and not repaired
    gold = ("O", "I-METAPHOR", "I-METAPHOR")
    assert sentence_counts(gold, read, "METAPHOR") == sentence_counts(gold, gold, "METAPHOR")
    assert spans(gold) == spans(read) == [(1, 2, "METAPHOR")]


def test_allowed_ids_follow_the_grammar():
    g = grammar([(5, 6), (7,)], {"METAPHOR": (90,)})
    assert g.allowed([]) == {5, 90}  # the first word, or an opening tag
    assert g.allowed([5]) == {6}  # inside a word: its next id only
    assert g.allowed([90]) == {5}  # an opened span needs a word
    assert g.allowed([90, 5, 6]) == {92, 7}  # close, or continue the span with the next word
    assert g.allowed([5, 6, 7]) == {EOS}
    assert g.allowed([90, 5, 6, 7]) == {92}  # the last word inside a span: only the close
    assert g.allowed([7]) == set()  # off the grammar


def test_a_word_sharing_its_first_id_with_the_tag_keeps_both_readings():
    g = Grammar([(90, 3), (4,)], {"METAPHOR": (90, 1)}, {"METAPHOR": (92,)}, EOS)
    assert g.allowed([90]) == {1, 3}
    assert g.read([90, 1, 90, 3, 92, 4, EOS]) == (("B-METAPHOR", "O"), False)
    assert g.read([90, 3, 4, EOS]) == (("O", "O"), False)


def test_an_unfinished_or_broken_output_is_repaired_and_says_so():
    g = grammar([(1,), (2,), (3,)])
    assert g.read([90, 91, 1, 92]) == (("B-METAPHOR", "O", "O"), True)  # stopped early
    assert g.read([1, 2, 99, 3, EOS]) == (("O", "O", "O"), True)  # left the grammar
    assert g.read([]) == (("O", "O", "O"), True)


def test_longest_bounds_every_output():
    rng = random.Random(2)
    for _ in range(50):
        n = rng.randint(1, 8)
        g = grammar([tuple(range(1, rng.randint(2, 4))) for _ in range(n)])
        every_word_a_span = tuple("B-METAPHOR" for _ in range(n))
        assert len(g.target(every_word_a_span)) == g.longest


def test_tag_types_and_bad_input():
    assert span_types(["O", "B-METAPHOR", "I-METAPHOR", "B-X"]) == ("METAPHOR", "X")
    with pytest.raises(ValueError):
        grammar([(1,), ()])
    with pytest.raises(ValueError, match="2 tags for 3 words"):
        grammar([(1,), (2,), (3,)]).target(("O", "O"))


def test_the_automaton_allows_what_the_grammar_allows_on_every_prefix():
    """The device tables are compiled from ``automaton()``: a wrong state would let a decoder leave the grammar."""
    from metabench.models.tag_grammar import FINISHED

    rng = random.Random(3)
    for _ in range(200):
        words = [tuple(rng.randint(1, 40) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 9))]
        # tags that share a first id with each other or with words: readings the automaton must merge
        g = Grammar(words, {"METAPHOR": (90, rng.choice([1, 91])), "SIMILE": (rng.choice([5, 90]),)},
                    {"METAPHOR": (92,), "SIMILE": (95, rng.choice([92, 96]))}, EOS)
        table = g.automaton()
        for _ in range(10):
            state, prefix = 0, []
            while state != FINISHED:
                assert set(table[state]) == g.allowed(prefix), prefix
                token = rng.choice(sorted(table[state]))
                prefix.append(token)
                state = table[state][token]
            assert g.allowed(prefix) == set() and not g.read(prefix)[1]
        assert len(table) <= g.longest * len(g.opens) * 2  # no blow-up of the subset construction
