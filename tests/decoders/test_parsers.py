"""Parsers read well-formed answers and never raise on malformed ones; invalid outputs are always wrong."""

from __future__ import annotations

import pytest

from metabench.kinds import parsers
from metabench.kinds.parsers import (
    INVALID,
    parse_label,
    parse_letter,
    parse_marked,
    parse_word,
    parse_word_list,
    rank_candidates,
)
from metabench.requests import first_word

NLI = ["entailment", "neutral", "contradiction"]
ALIASES = {"entails": "entailment", "contradicción": "contradiction"}
MALFORMED = [None, "", "   \n", "\x00\x01", "🙂" * 50, "a" * 100_000, "*" * 33, "<m>" * 5, "Option", "\u200b", 17, ["list"]]


@pytest.mark.parametrize("text,expected", [
    ("entailment", "entailment"), (" Neutral.", "neutral"), ("‘contradiction’", "contradiction"),
    ("The answer is: Contradiction", "contradiction"), ("Entails", "entailment"), ("entail", "entailment"),
    ("neutral, not entailment", "neutral"), ("CONTRADICCIÓN", "contradiction"),
])
def test_label_parser_reads_answers(text, expected):
    parsed = parse_label(text, NLI, ALIASES)
    assert parsed.value == expected and parsed.ok


@pytest.mark.parametrize("text", ["The inference relationship between these", "ent", "neutrality?", "yes"] + MALFORMED)
def test_label_parser_marks_unreadable_outputs_invalid(text):
    parsed = parse_label(text, NLI, ALIASES)
    assert parsed.value == INVALID and not parsed.ok
    strict = parsers.parse_label_token(text, NLI, ALIASES)  # never raises either
    assert strict.value == INVALID and not strict.ok


def test_label_prefix_must_be_unambiguous():
    assert parse_label("con", ["contradiction", "context"]).value == INVALID
    assert parse_label("contra", ["contradiction", "context"]).value == "contradiction"


@pytest.mark.parametrize("text,expected", [
    (" A", "A"), ("B", "B"), ("(C)", "C"), ("Option D", "D"), ("option b.", "B"), ("d", "D"),
    ("I think the answer is C.", "C"), ("**A** because", "A"),
])
def test_letter_parser(text, expected):
    assert parse_letter(text).value == expected


@pytest.mark.parametrize("text", ["a long answer without letters here", "E", "Option E"] + MALFORMED)
def test_letter_parser_invalid(text):
    assert parse_letter(text).value == INVALID


def test_word_parser():
    assert parse_word('covered" the red').value == "covered"
    assert first_word(" well-known, yes") == "well-known"
    assert first_word("don't") == "don't"
    assert first_word("-- ") == ""
    for bad in MALFORMED:
        parse_word(bad)  # never raises


WORDS = tuple("They fell apart. The bright idea won the race.".split())


def test_word_list_maps_words_back_to_positions():
    parsed = parse_word_list("fell apart, bright", WORDS)
    assert parsed.ok and parsed.status == "ok"
    assert parsed.value == ("O", "B-METAPHOR", "I-METAPHOR", "O", "B-METAPHOR", "O", "O", "O", "O")
    # a preamble, bullets, quotes and "and" are tolerated; unknown words leave the rest intact
    parsed = parse_word_list('The metaphors are: "bright"\n- race\n- unicorn', WORDS)
    assert parsed.value[4] == "B-METAPHOR" and parsed.value[8] == "B-METAPHOR" and parsed.status == "partial"
    # "the" occurs twice: a listed form marks every occurrence
    assert parse_word_list("the", WORDS).value.count("B-METAPHOR") == 2
    none = parse_word_list("None.", WORDS)
    assert none.ok and set(none.value) == {"O"}


@pytest.mark.parametrize("text", ["unicorn, dragon", ", , ;"] + MALFORMED)
def test_word_list_malformed(text):
    parsed = parse_word_list(text, WORDS)
    assert not parsed.ok and parsed.status in ("empty", "no_words", "no_match")
    assert parsed.value == ("O",) * len(WORDS)  # unreadable output: all literal, always wrong on metaphors


def test_marked_aligns_a_changed_copy():
    # the model dropped "They", changed "idea" to "ideas" and marked two runs
    parsed = parse_marked("*fell apart*. The *bright* ideas won the race.", WORDS)
    assert parsed.ok
    assert parsed.value == ("O", "B-METAPHOR", "I-METAPHOR", "O", "B-METAPHOR", "O", "O", "O", "O")
    tags = parse_marked("<m>won</m> and <m>race</m>", WORDS, mark="<m>", close="</m>").value
    assert tags[6] == "B-METAPHOR" and tags[8] == "B-METAPHOR"


@pytest.mark.parametrize("text", ["*unclosed mark They fell", "**", "no marks but a totally different text",
                                  "*dragon* flew"] + MALFORMED)
def test_marked_never_raises_and_stays_aligned(text):
    parsed = parse_marked(text, WORDS)
    assert len(parsed.value) == len(WORDS)
    assert set(parsed.value) <= {"O", "B-METAPHOR", "I-METAPHOR"}


def test_marked_copy_without_marks_is_a_valid_no_metaphor_answer():
    parsed = parse_marked(" ".join(WORDS), WORDS)
    assert parsed.ok and set(parsed.value) == {"O"}
    assert not parse_marked("Sure! Here is something else entirely.", WORDS).ok


def test_rank_candidates_keep_positions_and_tolerate_junk():
    answer = [["cover", "covered"], ["\"", None], ["ill", "illuminated"], ["x", ""]]
    cands = rank_candidates(answer)
    assert cands[0] == "covered" and cands[2] == "illuminated"
    assert cands[1] != cands[3] and "\x00" in cands[1]
    assert rank_candidates(None) == [] and rank_candidates([1, None, ["a"]]) == ["\x000", "\x001", "\x002"]


def test_norm_word():
    assert parsers.norm_word(" Apart. ") == "apart"
    assert parsers.norm_word("«Idea»") == "idea"


def test_word_list_ignores_a_copied_sentence():
    parsed = parse_word_list(" ".join(WORDS), WORDS)
    assert not parsed.ok and set(parsed.value) == {"O"}
    parsed = parse_word_list(" ".join(WORDS) + ", bright", WORDS)
    assert parsed.value.count("B-METAPHOR") == 1 and parsed.status == "partial"


@pytest.mark.parametrize(("text", "authors", "lenient"), [
    ("entailment", "entailment", "entailment"),
    ("Entailment.", "entailment", "entailment"),
    ("Other, because", "not_entailment", "not_entailment"),
    ("The answer is other", "not_entailment", "not_entailment"),
    ("Entailment:", "invalid", "entailment"),  # ':' is not stripped by map_labels
    ("'entailment'", "invalid", "entailment"),  # nor are quotes
    ("entail", "invalid", "entailment"),  # no prefixes
    ("Other. Entailment", "not_entailment", "not_entailment"),  # the first label token wins
    ("", "invalid", "invalid"),
])
def test_label_token_is_the_paraphrase_authors_map_labels(text, authors, lenient):
    """metaphorLLM's zero_shot.py map_labels: lower-case, split on whitespace, strip '.' and ',' from each token,
    the first token in label_mapping (here the labels and their aliases) is the answer, else 'unk'."""
    from metabench.kinds.parsers import parse_label_token

    labels, aliases = ("entailment", "not_entailment"), {"other": "not_entailment"}
    parsed = parse_label_token(text, labels, aliases)
    assert parsed.value == authors and parsed.ok == (authors != "invalid")
    assert parse_label(text, labels, aliases).value == lenient
