"""The vLLM adapter's plumbing with a fake engine (no GPU here: the real engine is untested in CI)."""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace

import pytest

from metabench.errors import AdapterError
from metabench.models.vllm_decoder import VLLMDecoder
from metabench.requests import GenerateRequest, RankRequest

VOCAB = {1: "p", 2: '"', 3: "cov", 4: "x", 5: "ill"}


@pytest.fixture
def fake_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.SamplingParams = lambda **kw: SimpleNamespace(**kw)
    inputs = types.ModuleType("vllm.inputs")
    inputs.TokensPrompt = lambda prompt_token_ids: SimpleNamespace(prompt_token_ids=prompt_token_ids)
    module.inputs = inputs
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.inputs", inputs)


class FakeLLM:
    def __init__(self):
        self.calls = []

    def generate(self, prompts, sampling_params, use_tqdm=False):
        self.calls.append((prompts, sampling_params))
        outs = []
        for prompt, params in zip(prompts, sampling_params):
            if params.max_tokens == 1:
                top = {4: SimpleNamespace(logprob=-2.0), 3: SimpleNamespace(logprob=-0.5), 5: SimpleNamespace(logprob=-1.0)}
                outs.append(SimpleNamespace(outputs=[SimpleNamespace(logprobs=[top], text="")]))
            else:
                rest = {3: 'ered" the', 5: "uminated", 4: '"'}[prompt.prompt_token_ids[-1]]
                outs.append(SimpleNamespace(outputs=[SimpleNamespace(logprobs=None, text=rest)]))
        return outs


def test_vllm_rank_and_seeded_sampling(fake_vllm):
    adapter = VLLMDecoder({"pretrained": "/nonexistent"})
    engine = FakeLLM()
    adapter._lm = SimpleNamespace(model=engine, tok_encode=lambda text: [1, 2],
                                  tokenizer=SimpleNamespace(decode=lambda ids: "".join(VOCAB[i] for i in ids)))
    (answer,) = adapter.rank([RankRequest("p", k=3, complete=("covered", "illuminated"))])
    assert answer == [["cov", "covered"], ["ill", "illuminated"], ["x", None]]
    completions = engine.calls[1]
    assert [p.prompt_token_ids for p in completions[0]] == [[1, 2, 3], [1, 2, 5]]  # from token ids, not text
    assert all(sp.temperature == 0 for sp in completions[1])
    sampled = adapter.gen_kwargs(GenerateRequest("q", temperature=0.3), seed=1)
    assert sampled["seed"] == adapter.gen_kwargs(GenerateRequest("q", temperature=0.3), seed=1)["seed"]
    assert sampled["seed"] != adapter.gen_kwargs(GenerateRequest("q", temperature=0.3), seed=2)["seed"]
    assert "seed" not in adapter.gen_kwargs(GenerateRequest("q"), seed=1)
    assert adapter.batch_size() == 512


def test_vllm_missing_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "lm_eval.models.vllm_causallms", None)
    adapter = VLLMDecoder({"pretrained": str(tmp_path)})
    with pytest.raises(AdapterError, match="needs vLLM"):
        adapter.lm  # noqa: B018


def test_decoder_modules_import_nothing_heavy():
    import subprocess

    code = (
        "import sys\n"
        "import metabench.models.hf_decoder, metabench.models.vllm_decoder, metabench.models.openai_decoder\n"
        "import metabench.kinds.choice, metabench.kinds.generation, metabench.kinds.parsers, metabench.commands.export\n"
        "heavy = [m for m in ('torch', 'lm_eval', 'transformers', 'vllm', 'jinja2') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
