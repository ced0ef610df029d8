"""``share_prompt``: options scored from each prompt's key/value cache give lm-eval's log-likelihoods.

The reference is lm-eval's own ``HFLM.loglikelihood`` on the same loaded model (``LMEvalDecoder.option_scores``,
what ``share_prompt=false`` runs), on a tiny random GPT-2 (absolute positions) and Llama (rotary positions,
grouped key/value heads: SmolLM2's architecture).
"""

from __future__ import annotations

import pytest

from metabench.models.hf_decoder import SHARE_PROMPT_DEFAULT, HFDecoder
from metabench.models.lmeval_bridge import LMEvalDecoder
from metabench.requests import ChoiceRequest
from tolerance import approx_f32

LONG = ("Say which is the inference relationship between these two sentences: entailment, neutral, contradiction. "
        "No golden light bathed the red brick of the house. Mark's promotions and progress up the company ladder.")
#: (context, options): multi-token options, one-token options, options of different lengths, contexts of
#: very different lengths (padding inside a batch), trailing spaces and newlines moved to the option.
CASES = [
    (LONG + "\nAnswer:", (" entailment", " neutral", " contradiction")),
    ("Correct answer: Option", (" A", " B", " C", " D")),
    ("No golden light", (" bathed", " bathed the red brick of the house.", " covered")),
    ("The headline is metaphorical or literal. Answer: ", ("metaphorical", "literal")),
    ("Paraphrase:\n", ("hierarchy", "steps, stairs", "x")),
    ("Option", (" A",)),
    (LONG, (" Option D: Neither Option A nor Option B", " stairs")),
]


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    from tiny import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def _both(adapter: HFDecoder, cases) -> tuple[list, list]:
    contexts, options = [c for c, _ in cases], [o for _, o in cases]
    return adapter.option_scores(contexts, options), LMEvalDecoder.option_scores(adapter, contexts, options)


def _assert_same(shared, lmeval, abs_tol=1e-4, rel_tol=None) -> None:
    """Equal greedy flags and log-likelihoods; ``abs_tol=None`` compares in float32 ULPs of each value."""
    assert [len(s) for s in shared] == [len(s) for s in lmeval]
    for mine, theirs in zip(shared, lmeval, strict=True):
        expected = [ll for ll, _ in theirs]
        close = approx_f32(expected) if abs_tol is None else pytest.approx(expected, abs=abs_tol, rel=rel_tol)
        assert [ll for ll, _ in mine] == close
        assert [g for _, g in mine] == [g for _, g in theirs]


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_shared_prompt_loglikelihoods_equal_lm_eval(arch, tiny_gpt2, tiny_llama):
    folder = tiny_gpt2 if arch == "gpt2" else tiny_llama
    adapter = HFDecoder({"pretrained": str(folder), "batch_size": "3", "share_prompt": "true"})
    shared, lmeval = _both(adapter, CASES)  # 7 items in batches of 3: prompts of 4 to ~60 tokens padded together
    _assert_same(shared, lmeval)
    assert any(len(adapter.lm.tok_encode(o)) > 3 for _, opts in CASES for o in opts)  # multi-token options indeed
    assert "share_prompt_fallback_items" not in adapter.info()
    answers = adapter.choose([ChoiceRequest(c, o) for c, o in CASES])
    expected = [max(range(len(s)), key=lambda i: (s[i][0], -i)) for s in lmeval]
    assert [a["index"] for a in answers] == expected


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_a_few_shot_prefix_forwarded_once_gives_lm_evals_loglikelihoods(arch, tiny_gpt2, tiny_llama):
    """Few-shot prompts share their demonstrations: the batch forwards them once and every row continues from
    that cache (prompt_sharing._shared_prefix), with each row's own rest, options and positions."""
    from metabench.models import prompt_sharing

    folder = tiny_gpt2 if arch == "gpt2" else tiny_llama
    adapter = HFDecoder({"pretrained": str(folder), "batch_size": "4", "share_prompt": "true"})
    demos = "".join(f"Sentence: {LONG[:40 + 9 * k]}\nAnswer: {('metaphor', 'literal')[k % 2]}\n\n" for k in range(5))
    cases = [(demos + f"Sentence: {text}\nAnswer:", (" metaphor", " literal", " a dead metaphor"))
             for text in ("No golden light", "Mark's promotions and progress up the company ladder.", "x",
                          "The house of red brick", LONG)]
    contexts = [adapter.lm.tok_encode(c) for c, _ in cases]
    assert prompt_sharing._shared_prefix(contexts[:4]) >= prompt_sharing.MIN_SHARED_PREFIX  # the path is taken
    shared, lmeval = _both(adapter, cases)
    _assert_same(shared, lmeval)
    alone = [adapter.option_scores([c], [o])[0] for c, o in cases]  # batches of one: no prefix shared
    _assert_same(shared, alone)


def test_a_shared_prefix_keeps_a_token_of_each_context_and_needs_a_batch():
    from metabench.models.prompt_sharing import MIN_SHARED_PREFIX, _shared_prefix

    base = list(range(100))
    assert _shared_prefix([base, base + [7], base[:60] + [1]]) == 60
    assert _shared_prefix([base, base]) == 99  # identical contexts: the last token stays each row's own
    assert _shared_prefix([base]) == 0
    assert _shared_prefix([base, base[:MIN_SHARED_PREFIX - 1] + [-1] * 50]) == 0  # too short to be worth a pass


def test_batch_composition_does_not_change_an_item(tiny_llama):
    one = HFDecoder({"pretrained": str(tiny_llama), "batch_size": "1", "share_prompt": "true"})
    (alone,) = one.option_scores([CASES[2][0]], [CASES[2][1]])
    together = one.option_scores([c for c, _ in CASES], [o for _, o in CASES])
    many = HFDecoder({"pretrained": str(tiny_llama), "batch_size": "16", "share_prompt": "true"})
    batched = many.option_scores([c for c, _ in CASES], [o for _, o in CASES])
    _assert_same([alone], [together[2]], abs_tol=None)  # float32, same engine: a few ULPs of each value
    _assert_same(together, batched, abs_tol=None)


def test_items_lm_eval_treats_specially_are_left_to_lm_eval(tiny_gpt2):
    """An empty context (lm-eval conditions on its prefix token) and a prompt longer than the window (lm-eval
    left-truncates each pair alone) go through lm-eval; the rest of the batch is still shared."""
    adapter = HFDecoder({"pretrained": str(tiny_gpt2), "batch_size": "4", "share_prompt": "true", "max_length": "32"})
    cases = [("", (" entailment", " neutral")), (LONG, (" entailment", " neutral")), CASES[1], CASES[2]]
    shared, lmeval = _both(adapter, cases)
    _assert_same(shared, lmeval)
    assert adapter.info()["share_prompt_fallback_items"] == 2


def test_bfloat16_stays_close_to_lm_eval(tiny_llama):
    adapter = HFDecoder({"pretrained": str(tiny_llama), "batch_size": "4", "share_prompt": "true", "dtype": "bfloat16"})
    adapter.lm  # noqa: B018 - load, so that info() has the dtype
    assert adapter.info()["dtype"] == "torch.bfloat16"
    shared, lmeval = _both(adapter, CASES)
    _assert_same(shared, lmeval, abs_tol=0.1, rel_tol=5e-3)  # bfloat16: 8 significant bits, summed in bfloat16


def test_forwarded_tokens_count_lm_eval_grouping_and_the_shared_prompt(tiny_gpt2):
    from metabench.models.prompt_sharing import forwarded_tokens

    adapter = HFDecoder({"pretrained": str(tiny_gpt2), "share_prompt": "true"})
    lm = adapter.lm
    context = lm.tok_encode("Correct answer: Option")
    one_token = forwarded_tokens(lm, ["Correct answer: Option"], [(" A", " B", " Option", " the")])  # 1 token each
    assert one_token == {"tokens_lm_eval": len(context), "tokens_shared_prompt": len(context)}  # lm-eval groups them
    long_options = (" entailment", " neutral", " contradiction")
    counts = forwarded_tokens(lm, [LONG], [long_options])
    option_tokens = [len(lm._encode_pair(LONG, o)[1]) for o in long_options]
    assert counts["tokens_lm_eval"] == sum(len(lm.tok_encode(LONG)) + n - 1 for n in option_tokens)
    assert counts["tokens_shared_prompt"] == len(lm.tok_encode(LONG)) + sum(n - 1 for n in option_tokens)


def test_the_two_paths_never_share_cached_answers(tiny_gpt2):
    from metabench.cache import job_key

    def key(**extra):
        return job_key(HFDecoder({"pretrained": str(tiny_gpt2), **extra}).fingerprint(), "task", "data", 0, "decoder")

    shared, lmeval = key(share_prompt="true"), key(share_prompt="false")
    assert shared != lmeval
    assert key() == (shared if SHARE_PROMPT_DEFAULT else lmeval)
    assert key(share_prompt="yes", batch_size="2") == shared  # the setting, not its spelling or the batch size


def test_a_model_without_the_needed_forward_arguments_gets_a_clear_error(tiny_gpt2, monkeypatch):
    from metabench.errors import AdapterError

    adapter = HFDecoder({"pretrained": str(tiny_gpt2), "batch_size": "5", "share_prompt": "true"})
    model = adapter.lm.model

    def old_forward(input_ids, attention_mask=None, use_cache=None):  # no logits_to_keep, no past_key_values
        return type(model).forward(model, input_ids=input_ids, attention_mask=attention_mask, use_cache=use_cache)

    monkeypatch.setattr(model, "forward", old_forward)
    with pytest.raises(AdapterError, match="cannot be scored with a shared prompt: .*logits_to_keep") as info:
        adapter.option_scores([CASES[0][0]], [CASES[0][1]])
    assert "share_prompt=false" in info.value.hint


def test_share_prompt_must_be_a_boolean(tiny_gpt2):
    from metabench.errors import AdapterError

    with pytest.raises(AdapterError, match="share_prompt"):
        HFDecoder({"pretrained": str(tiny_gpt2), "share_prompt": "sometimes"})
