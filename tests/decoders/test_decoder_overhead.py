"""What issue #57 removed from the decoders' hot paths stays removed: the shared-prompt scorer reads the host once per
batch whatever the option count, the runner hands requests over in the order the adapter proposes, and the
tagger's own greedy decode writes exactly the ids ``generate`` with the grammar writes, with no per-step host read
(benchmarks/bench_decoder_overhead.py measures the same on a stand-in model)."""

from __future__ import annotations

import random
from contextlib import contextmanager

import pytest

from metabench.errors import MetabenchError
from metabench.models.hf_decoder import HFDecoder
from metabench.models.tag_grammar import Grammar
from metabench.requests import ChoiceRequest
from needs import needs

pytestmark = needs("torch")


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    from tiny import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@contextmanager
def host_reads(model):
    """Counts the calls that read a tensor's value on the host (a sync on a GPU) outside ``model``'s forward
    (what the model does inside is the model's, the same for every harness)."""
    import functools

    import torch

    seen = {"n": 0, "depth": 0}
    saved = {name: getattr(torch.Tensor, name) for name in ("item", "tolist", "__bool__", "__float__", "cpu")}

    def counting(original):
        def call(*args, **kwargs):
            seen["n"] += not seen["depth"]
            return original(*args, **kwargs)
        return call

    forward = model.forward

    @functools.wraps(forward)
    def inside(*args, **kwargs):
        seen["depth"] += 1
        try:
            return forward(*args, **kwargs)
        finally:
            seen["depth"] -= 1

    for name, original in saved.items():
        setattr(torch.Tensor, name, counting(original))
    model.forward = inside
    try:
        yield seen
    finally:
        del model.forward
        for name, original in saved.items():
            setattr(torch.Tensor, name, original)


@pytest.mark.parametrize("n_options", [2, 6])
def test_the_shared_prompt_scorer_reads_the_host_once_per_batch_whatever_the_option_count(tiny_llama, n_options):
    from metabench.models.prompt_sharing import shared_prompt_scores

    adapter = HFDecoder({"pretrained": str(tiny_llama), "batch_size": "4"})
    lm = adapter.lm
    words = [" covered", " cleaned the red brick", " bathed", " stairs of the house", " hierarchy", " x"]
    contexts = [f"No golden light {'bathed the red brick ' * (i % 3)}Answer:" for i in range(8)]
    options = [tuple(words[:n_options])] * len(contexts)
    with host_reads(lm.model) as seen:
        scores = shared_prompt_scores(lm, contexts, options, 4)
    assert all(len(s) == n_options for s in scores)
    assert seen["n"] == 2  # two batches of four items: one read each (lm-eval reads twice per option)


def test_the_runner_hands_requests_over_in_the_order_the_adapter_proposes():
    from metabench.cache import AnswerCache
    from metabench.launch.execute import _answer

    class Recording:
        name = "recording"

        def __init__(self, order):
            self.order, self.batches = order, []

        def batch_size(self):
            return 2

        def request_order(self, requests):
            return self.order

        def predict(self, requests, seed):
            self.batches.append([r.context for r in requests])
            return [{"index": 0} for _ in requests]

    requests = {i: ChoiceRequest(context=str(i), options=(" a", " b")) for i in range(5)}
    keys = [f"k{i}" for i in requests]
    adapter, answers = Recording([4, 2, 0, 1, 3]), {}
    _answer(adapter, requests, keys, list(range(5)), answers, AnswerCache(None), 0, "test", None)
    assert adapter.batches == [["4", "2"], ["0", "1"], ["3"]] and sorted(answers) == sorted(keys)
    with pytest.raises(MetabenchError, match="request_order returned no permutation"):
        _answer(Recording([0, 0, 1, 2, 3]), requests, keys, list(range(5)), {}, AnswerCache(None), 0, "test", None)


def test_hf_decoder_proposes_one_global_length_order_for_choice_requests_only(tiny_llama):
    adapter = HFDecoder({"pretrained": str(tiny_llama)})
    requests = [ChoiceRequest(context="x" * n, options=(" a", " bb")) for n in (3, 30, 10, 30)]
    assert adapter.request_order(requests) == [1, 3, 2, 0]  # longest first, ties in their order
    assert HFDecoder({"pretrained": str(tiny_llama), "share_prompt": "false"}).request_order(requests) is None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedy_decode_writes_what_generate_with_the_grammar_writes(tiny_llama, seed):
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    from metabench.models import decoder_tagger
    from metabench.models.grammar_processor import GrammarProcessor

    model = AutoModelForCausalLM.from_pretrained(str(tiny_llama)).eval()
    vocab, eos = model.config.vocab_size, 0
    rng = random.Random(seed)
    n = rng.randint(2, 6)
    words = [[tuple(rng.randrange(1, vocab) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 7))]
             for _ in range(n)]
    grammars = [Grammar(w, {"METAPHOR": (11, 12)}, {"METAPHOR": (13,)}, eos) for w in words]
    prompts = [[rng.randrange(1, vocab) for _ in range(rng.randint(2, 9))] for _ in range(n)]
    width = max(map(len, prompts))
    ids = torch.tensor([[eos] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    longest = max(g.longest for g in grammars)
    config = GenerationConfig(do_sample=False, max_new_tokens=longest, eos_token_id=eos, pad_token_id=eos)
    with torch.inference_mode():
        expected = model.generate(input_ids=ids, attention_mask=mask, generation_config=config,
                                  logits_processor=[GrammarProcessor(grammars, width, 1, eos)])[:, width:].tolist()
        with host_reads(model) as seen:
            mine = decoder_tagger.greedy_decode(model, ids, mask, grammars, eos, eos, longest)
    cut = lambda row: row[: row.index(eos) + 1] if eos in row else row  # noqa: E731
    assert [cut(r) for r in mine] == [cut(r) for r in expected]
    steps = len(mine[0])
    assert steps <= longest
    checks = max(0, steps - max(g.shortest for g in grammars)) // decoder_tagger.CHECK_EVERY + 1
    assert seen["n"] <= checks + 1  # the all-finished checks and the one read of the ids, never one per step
    with torch.inference_mode():  # a cap shorter than the grammar: the loop stops there
        capped = decoder_tagger.greedy_decode(model, ids, mask, grammars, eos, eos, 3)
    assert [len(r) for r in capped] == [3] * n and [r[:3] for r in mine] == capped
