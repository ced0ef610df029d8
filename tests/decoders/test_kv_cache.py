"""A decoder's cached forward passes use the cache's name the installed transformers knows: no FutureWarning per
batch on transformers 5, the same logits as a pass over the whole sequence."""

from __future__ import annotations

import warnings

from metabench.models.kv_cache import cache_argument, returned_cache
from needs import needs

pytestmark = needs("torch", "transformers")


def _tiny():
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=2)
    return transformers.LlamaForCausalLM(config).eval()


def test_a_cached_step_warns_nothing_and_matches_the_full_pass():
    import torch

    model = _tiny()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        first = model(torch.tensor([[1, 2, 3]]), use_cache=True)
        step = model(torch.tensor([[4]]), use_cache=True, **{cache_argument(model): returned_cache(first)})
        whole = model(torch.tensor([[1, 2, 3, 4]]))
    assert torch.allclose(step.logits[0, -1], whole.logits[0, -1], atol=1e-5)


def test_the_name_follows_the_forward_signature():
    assert cache_argument(_tiny()) in ("cache", "past_key_values")
    assert cache_argument(lambda input_ids, past_key_values=None: None) == "past_key_values"
    assert cache_argument(lambda input_ids, cache=None: None) == "cache"
