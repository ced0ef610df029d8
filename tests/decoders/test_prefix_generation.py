"""``share_prompt``'s greedy generation (shared prompt prefix forwarded once, finished rows dropped) gives
lm-eval's ``generate_until`` texts.

The reference is lm-eval's own ``HFLM.generate_until`` on the same loaded model (``LMEvalDecoder.generate``, what
``share_prompt=false`` runs), on a tiny random GPT-2 (absolute positions) and Llama (rotary positions, grouped
key/value heads: SmolLM2's architecture), with random weights wide enough that an off-by-one position changes
the answers. A random model never writes a stop string on its own, so the stop
strings are taken from its own unstopped answers: each row then stops at another step, which is what dropping
finished rows must get right.
"""

from __future__ import annotations

import pytest

from metabench.models import prefix_generation
from metabench.models.hf_decoder import HFDecoder
from metabench.models.lmeval_bridge import LMEvalDecoder
from metabench.models.prompt_sharing import MIN_SHARED_PREFIX, _shared_prefix
from metabench.requests import GenerateRequest

INSTRUCTION = ("List the words that are used metaphorically in the following sentence. Write them separated by "
               "commas, exactly as they appear in the sentence, or write none if no word is used metaphorically.\n"
               "Sentence: ")
SENTENCES = ["No golden light bathed the red brick of the house.", "x", "Mark's promotions and progress up the "
             "company ladder.", "He grasped the idea.", "Prices climbed as the market heated up over the summer.",
             "She drowned in paperwork.", "The economy is a ship."]


#: Random weights this wide make every answer depend on each position and token (at transformers' 0.02 a tiny
#: model writes the same answer with its positions shifted by one, and GPT-2 repeats one character).
SHARP = 0.5


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    from tiny import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("sharp-llama"), initializer_range=SHARP)


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    from tiny import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("sharp-gpt2"), initializer_range=SHARP)


def _requests(until=(), max_new_tokens=12, temperature=0.0, prompts=None):
    return [GenerateRequest(prompt=p, until=tuple(until), max_new_tokens=max_new_tokens, temperature=temperature)
            for p in (prompts or [INSTRUCTION + s for s in SENTENCES])]


def _stops_from(texts: list[str]) -> tuple[str, ...]:
    """The two characters of the model's own answers whose first occurrences fall at the most different places
    (absent from some answers counts as a place): rows stopped by them stop at different steps."""
    chars = sorted(set("".join(texts)) - {" "})
    spread = sorted(chars, key=lambda c: (-len({t.find(c) for t in texts}), c))
    return tuple(spread[:2])


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_shared_prefix_generation_equals_lm_eval(arch, tiny_gpt2, tiny_llama):
    folder = tiny_gpt2 if arch == "gpt2" else tiny_llama
    adapter = HFDecoder({"pretrained": str(folder), "batch_size": "3", "share_prompt": "true"})
    ids = [prefix_generation._encode(adapter.lm, INSTRUCTION + s) for s in SENTENCES[:3]]
    assert _shared_prefix(ids) >= MIN_SHARED_PREFIX  # the shared path is taken, not only the row-by-row one
    unstopped = LMEvalDecoder.generate(adapter, _requests(), 0)
    assert adapter.generate(_requests(), 0) == unstopped  # every row runs to max_new_tokens
    stopped = _requests(until=_stops_from(unstopped))
    mine, theirs = adapter.generate(stopped, 0), LMEvalDecoder.generate(adapter, stopped, 0)
    assert mine == theirs
    assert sum(a != b for a, b in zip(theirs, unstopped)) >= 2  # the stops cut several rows
    assert len({len(t) for t in theirs}) >= 3  # at different steps
    assert "share_prompt_fallback_items" not in adapter.info()


def test_batch_size_and_composition_do_not_change_an_answer(tiny_llama):
    stops = _stops_from(LMEvalDecoder.generate(HFDecoder({"pretrained": str(tiny_llama)}), _requests(), 0))
    answers = [HFDecoder({"pretrained": str(tiny_llama), "batch_size": size}).generate(_requests(stops), 0)
               for size in ("1", "2", "16")]
    assert answers[0] == answers[1] == answers[2]


def test_what_the_path_cannot_reproduce_is_left_to_lm_eval(tiny_gpt2, monkeypatch):
    """Sampling and a context over the window go through lm-eval's generate_until (the rest of the batch is
    still shared); a generation config with a logits processor (here a repetition penalty, which lm-eval's
    model.generate applies) sends every request there."""
    probe = HFDecoder({"pretrained": str(tiny_gpt2)})
    room = len(prefix_generation._encode(probe.lm, INSTRUCTION + "x")) + 12 + 4  # the prompt and its answer fit
    adapter = HFDecoder({"pretrained": str(tiny_gpt2), "batch_size": "4", "max_length": str(room)})
    long = INSTRUCTION * 2 + "Sentence: x"
    requests = _requests(prompts=[INSTRUCTION + "x", long, INSTRUCTION + "y"]) + _requests(temperature=0.7)[:1]
    assert adapter.generate(requests[:3], 0) == LMEvalDecoder.generate(adapter, requests[:3], 0)
    assert adapter.info()["share_prompt_fallback_items"] == 1  # the long one; the sampled one is lm-eval's anyway
    calls = []
    monkeypatch.setattr(prefix_generation, "_generate", lambda *a: calls.append(a) or [])
    adapter.generate(requests[3:], 0)
    assert calls == []
    monkeypatch.undo()
    assert prefix_generation.plain_greedy(adapter.lm)
    monkeypatch.setattr(adapter.lm.model.generation_config, "repetition_penalty", 1.5)
    assert not prefix_generation.plain_greedy(adapter.lm)
    assert adapter.generate(requests[:3:2], 0) == LMEvalDecoder.generate(adapter, requests[:3:2], 0)


def test_the_fingerprint_names_the_generation_path(tiny_gpt2):
    shared = HFDecoder({"pretrained": str(tiny_gpt2)})
    plain = HFDecoder({"pretrained": str(tiny_gpt2), "share_prompt": "false"})
    assert shared.fingerprint() != plain.fingerprint()
    assert shared._scorer_identity()["generator"] == "shared_prefix_kv"


def test_a_cpu_generates_in_wider_batches_unless_told(tiny_gpt2):
    from metabench.models.hf_decoder import CPU_GENERATION_BATCH

    auto = HFDecoder({"pretrained": str(tiny_gpt2)})
    assert auto.generation_batch(auto.lm) == CPU_GENERATION_BATCH and auto.lm.batch_size == 8
    given = HFDecoder({"pretrained": str(tiny_gpt2), "batch_size": "5"})
    assert given.generation_batch(given.lm) == 5


def test_rows_end_at_the_generation_configs_end_of_sequence_ids(tiny_llama, monkeypatch):
    """HF's generate ends a row at its generation config's end-of-sequence ids (not only the tokeniser's): a token
    the model writes mid-answer made one ends those rows where lm-eval's ends them."""
    import torch

    adapter = HFDecoder({"pretrained": str(tiny_llama), "batch_size": "4"})
    unstopped = LMEvalDecoder.generate(adapter, _requests(), 0)
    lm, context = adapter.lm, prefix_generation._encode(adapter.lm, INSTRUCTION + SENTENCES[2])
    written = lm.model.generate(input_ids=torch.tensor([context]), max_new_tokens=12, do_sample=False,
                                pad_token_id=lm.tokenizer.pad_token_id)[0, len(context):].tolist()
    monkeypatch.setattr(lm.model.generation_config, "eos_token_id", [written[6]])
    ended = LMEvalDecoder.generate(adapter, _requests(), 0)
    assert ended != unstopped
    assert adapter.generate(_requests(), 0) == ended
