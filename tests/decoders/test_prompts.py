"""Prompt rendering is byte-exact against the papers' templates; the sandbox refuses what it should."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from metabench.data.items import NLIPair, ParaphraseGeneration, ParaphraseJudgement
from metabench.errors import ConfigError, MetabenchError
from metabench.kinds.prompts import check_template, render

# The paper's example (MUNCH Figure 1 / Table 8): "No golden light *bathed* the red brick of the house."
SENTENCE = "No golden light bathed the red brick of the house."
SPAN = (16, 22)

# MUNCH Tables 6 and 7, first lines, verbatim (munch.md §2.1; sentence M-Word (1) from the release).
WORD = {
    "implicit": [
        "Choose the word(s) that can replace the highlighted word in the given sentence without changing the meaning of the sentence.",
        "Select words that can replace the highlighted word in the given sentence without altering the sentence's meaning.",
        "Which of the given options can replace the highlighted word in the given sentence without altering the sentence's meaning?",
    ],
    "msent": [
        "Choose the word(s) that can replace the highlighted word in the given metaphorical sentence without changing the meaning of the sentence.",
        "Select words that can replace the highlighted word in the given metaphorical sentence without altering the sentence's meaning.",
        "Which of the given options can replace the highlighted word in the given metaphorical sentence without altering the sentence's meaning?",
    ],
    "mword": [
        "Choose the word(s) that can replace the highlighted metaphorically used word in the given sentence without changing the meaning of the sentence.",
        "Select words that can replace the highlighted metaphorically used word in the given sentence without altering the sentence's meaning.",
        "Which of the given options can replace the highlighted metaphorically used word in the given sentence without altering the sentence's meaning?",
    ],
}
SENT = {
    "implicit": [
        "Choose the correct paraphrase(s) for the given sentence.",
        "Select sentences that paraphrase the given sentence.",
        "Select sentences that are semantically equivalent to the following sentence.",
    ],
    "msent": [
        "Choose the correct paraphrase(s) for the given metaphorical sentence.",
        "Select sentences that paraphrase the given metaphorical sentence.",
        "Select sentences that are semantically equivalent to the following metaphorical sentence.",
    ],
    "mword": [
        "You are given a sentence where the highlighted word is metaphorically used. Choose the correct paraphrase(s) for the given sentence.",
        "Given a sentence where the highlighted word is metaphorically used, select sentences that paraphrase this sentence.",
        "Given a sentence where the highlighted word is metaphorically used, select sentences that are semantically equivalent to this sentence.",
    ],
}


def _kind(registry, name):
    from metabench.config.index import TaskIndex

    task = TaskIndex(registry).load(name)
    fns = {m.name: registry.resolve("metric", m.name) for m in task.config.metric_specs()}
    return registry.resolve("kind", task.config.kind)(task.config, fns)


def _judgement(setup: str, condition: str, item_id: str = "munch:3") -> ParaphraseJudgement:
    highlighted = setup == "word" or condition == "mword"
    shown = "No golden light *bathed* the red brick of the house." if highlighted else SENTENCE
    options = ("covered", "cleaned") if setup == "word" else (
        "No golden light covered the red brick of the house.", "No golden light cleaned the red brick of the house.")
    return ParaphraseJudgement(id=item_id, sentence=shown, plain=SENTENCE, word="bathed", span=SPAN, options=options,
                               words=("covered", "cleaned"), labels=("apt", "inapt"), answer_type="apt_inapt",
                               setup=setup, condition=condition, genre="FICTION")


@pytest.mark.slow
def test_munch_word_judgement_prompt_1_is_the_papers_table_6_byte_for_byte(real_registry):
    kind = _kind(real_registry, "munch_word_judge_implicit_p1")
    request = kind.request(_judgement("word", "implicit"))  # munch:3 is not swapped by the seeded coin
    assert request.context == (
        "Choose the word(s) that can replace the highlighted word in the given sentence without changing the "
        "meaning of the sentence.\n"
        "Sentence: No golden light *bathed* the red brick of the house.\n"
        "Option A: covered\n"
        "Option B: cleaned\n"
        "Option C: Both Option A and Option B\n"
        "Option D: Neither Option A nor Option B\n"
        "Correct answer: Option"
    )
    assert request.options == (" A", " B", " C", " D")
    assert kind.gold(_judgement("word", "implicit")) == 0
    assert request.chat is False


@pytest.mark.slow
@pytest.mark.parametrize("setup,table", [("word", WORD), ("sentence", SENT)])
def test_all_18_judgement_prompts(real_registry, setup, table):
    short = "word" if setup == "word" else "sent"
    for condition, firsts in table.items():
        item = _judgement(setup, condition, item_id="munch:0")  # munch:0 is swapped: inapt option first
        for p, first in enumerate(firsts, start=1):
            kind = _kind(real_registry, f"munch_{short}_judge_{condition}_p{p}")
            a, b = item.options[1], item.options[0]
            expected = (f"{first}\nSentence: {item.sentence}\nOption A: {a}\nOption B: {b}\n"
                        "Option C: Both Option A and Option B\nOption D: Neither Option A nor Option B\n"
                        "Correct answer: Option")
            assert kind.request(item).context == expected, (condition, p)
            assert kind.gold(item) == 1  # the apt option is B after the swap


def _release_prompts() -> dict[str, str] | None:
    import os

    root = Path(os.environ.get("METABENCH_DATA_DIR", "/nonexistent"))
    path = root / "munch" / "tasks" / "prompts.md"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    return dict(re.findall(r"#### (\w+)\n\n```\n(.*?)\n```", text, flags=re.S) + re.findall(r"### (\w+)\n\n```\n(.*?)\n```", text, flags=re.S))


@pytest.mark.slow
def test_prompts_match_the_release_prompts_md_when_the_mirror_is_here(real_registry):
    prompts = _release_prompts()
    if prompts is None:
        pytest.skip("MUNCH mirror (prompts.md) not present")
    ids = {
        "munch_word_judge_implicit_p1": "CTWT52", "munch_word_judge_msent_p2": "SWTC03", "munch_word_judge_mword_p3": "WOTG33",
        "munch_sent_judge_implicit_p3": "SSTA94", "munch_sent_judge_msent_p1": "CTCP13", "munch_sent_judge_mword_p1": "YAGA10",
        "munch_sent_judge_mword_p2": "GASW55", "munch_sent_judge_mword_p3": "GASW94",
    }
    for task, pid in ids.items():
        setup = "word" if "_word_" in task else "sentence"
        item = _judgement(setup, task.split("_")[3])
        kind = _kind(real_registry, task)
        expected = (prompts[pid].replace("{original_sentence}", item.sentence)
                    .replace("{substitution_a}", item.options[0]).replace("{substitution_b}", item.options[1])
                    .replace("{paraphrase_a}", item.options[0]).replace("{paraphrase_b}", item.options[1]))
        assert kind.request(item).context == expected, task
    item = ParaphraseGeneration(id="g:1", sentence=SENTENCE, word="bathed", span=SPAN, answers=("covered",))
    for p, pid in ((1, "PTGS54"), (2, "UASW92"), (3, "GASW45")):
        kind = _kind(real_registry, f"munch_generation_p{p}")
        expected = (prompts[pid].replace("{original_sentence}", "No golden light *bathed* the red brick of the house.")
                    .replace("{tw_replaced_by_blank}", "No golden light *[blank]* the red brick of the house."))
        assert kind.request(item).prompt == expected


def test_munch_generation_prompt_1_is_table_8(real_registry):
    kind = _kind(real_registry, "munch_generation_p1")
    item = ParaphraseGeneration(id="g:1", sentence=SENTENCE, word="bathed", span=SPAN,
                                answers=("covered", "enveloped", "illuminated", "immersed", "reached"))
    request = kind.request(item)
    assert request.prompt == (
        "Paraphrase the given sentence by substituting the highlighted word with another word. The substitution "
        "should be a single word.\n"
        "Sentence: No golden light *bathed* the red brick of the house.\n"
        "Paraphrase: No golden light *[blank]* the red brick of the house.\n"
        '[blank] should be "'
    )
    assert request.complete == ("covered", "enveloped", "illuminated", "immersed", "reached")
    assert request.k == 100


PAIR = NLIPair(id="en:1", premise="You are very outgoing and open with the fans.",
               hypothesis="You have a really good relationship with the fans.", label="entailment", metaphor="met")


def test_meta4xnli_zero_shot_prompt_is_table_d1(real_registry):
    kind = _kind(real_registry, "m4x_nli_zs_en_xnli_dev_met")
    request = kind.request(PAIR)
    assert request.prompt == (
        "Say which is the inference relationship between these two sentences.\n\n"
        "Please, answer only with one word between \u2018entailment\u2019, \u2018neutral\u2019 or \u2018contradiction\u2019.\n\n"
        "You are very outgoing and open with the fans. -> You have a really good relationship with the fans.:"
    )
    assert (request.max_new_tokens, request.temperature, request.chat) == (5, 0.3, True)
    assert kind.config.protocol.decoder.seeds == 3


def test_meta4xnli_three_example_prompt_is_table_d1(real_registry):
    kind = _kind(real_registry, "m4x_nli_3shot_es_esxnli_no_met")
    assert kind.request(PAIR).prompt == (
        "You are an expert linguist and your task is to annotate sentences for the task of Natural Language "
        "Inference. This task consists in determining if a first sentence (premise) entails, contradicts or does "
        "not entail nor contradict the second sentence (hypothesis). Please, answer with one of the following "
        "labels: \u2018entailment\u2019, \u2018contradiction\u2019 or \u2018neutral\u2019.\n\n"
        "Here you have a few examples:\n\n"
        "Premise: I am an open person.\n\nHypothesis: I am friendly.\n\nAnswer: entailment\n\n"
        "Premise: My heart is broken.\n\nHypothesis: I am happy.\n\nAnswer: contradiction.\n\n"
        "Premise: You are a close friend.\n\nHypothesis: I like your eyes.\n\nAnswer: neutral.\n\n"
        "Premise: You are very outgoing and open with the fans.\n\n"
        "Hypothesis: You have a really good relationship with the fans.\n\n"
        "Answer:"
    )


def test_every_builtin_prompted_task_compiles(real_registry):
    from metabench.config.index import TaskIndex

    index = TaskIndex(real_registry)
    prompted = [n for n in index.tasks if index.load(n).config.kind in ("choice", "generation")]
    assert len(prompted) >= 18 + 3 + 24 + 2 + 4


def test_sandbox_and_strict_undefined():
    assert render("{{ a }}\n", {"a": "x"}) == "x\n"  # trailing newline kept
    with pytest.raises(MetabenchError, match="fields available"):
        render("{{ sentense }}", {"sentence": "s"})
    with pytest.raises(MetabenchError):
        render("{{ ''.__class__.__mro__[1].__subclasses__() }}", {})
    with pytest.raises(ConfigError, match="does not compile"):
        check_template("{{ unclosed", "x.yaml:3")


def test_generation_variant_of_judgement_has_the_same_prompt_and_gold(real_registry):
    choice = _kind(real_registry, "munch_word_judge_implicit_p1")
    generation = _kind(real_registry, "munch_word_judge_implicit_p1_gen")
    for item_id in ("munch:0", "munch:3"):
        item = _judgement("word", "implicit", item_id)
        assert generation.request(item).prompt == choice.request(item).context
        assert generation.gold(item) == "AB"[choice.gold(item)]
    item = _judgement("word", "implicit", "munch:3")
    assert generation.score(item, "A", " A")["correct"] == 1.0
    assert generation.score(item, "A", "I am not sure")["parse_ok"] == 0.0


@pytest.mark.slow
def test_scored_nli_zero_tasks_score_the_label_words_after_the_generative_prompt(real_registry):
    """Each scored (`_ll`) task sends its generative twin's prompt byte for byte, scores 'entailment' vs
    'other' as the reply, and maps 'other' to not_entailment as the paper's label_mapping does."""
    from metabench.config.index import TaskIndex

    scored = sorted(n for n in TaskIndex(real_registry).tasks if n.endswith("_ll") and ("nli_zero" in n or "_gap_dec_" in n))
    assert len(scored) == 5 * 3 + 7
    for name in scored:
        choice, generation = _kind(real_registry, name), _kind(real_registry, name[: -len("_ll")])
        assert choice.config.kind == "choice" and generation.config.kind == "generation"
        # the dataset's own non-entailed label (IMPLI's 'non-entailment', FLUTE's 'contradiction')
        not_entailed = next((raw for raw, label in choice.args.label_map.items() if label == "not_entailment"),
                            "not_entailment")
        for label, option in (("entailment", 0), (not_entailed, 1)):
            item = NLIPair(id="x:1", premise=PAIR.premise, hypothesis=PAIR.hypothesis, label=label)
            request = choice.request(item)
            assert request.context == generation.request(item).prompt, name
            assert (request.options, request.chat) == (("entailment", "other"), True), name
            assert choice.gold(item) == option and generation.gold(item) == ("entailment", "not_entailment")[option]
            favours_other = {"index": 1, "loglikelihoods": [-9.0, -2.0]}
            assert choice.score(item, choice.gold(item), favours_other)["correct"] == float(option == 1)
            assert choice.metric_input(item, choice.gold(item), favours_other) == (
                ("entailment", "not_entailment")[option], "not_entailment")
