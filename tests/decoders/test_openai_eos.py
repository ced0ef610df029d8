"""lm-eval's "Cannot determine EOS string to pass to stop sequence" (#56): the ``openai`` adapter asked lm-eval's
``eos_string`` for every payload, which without a tokenizer (every chat API, a completions API without
``tokenizer=``) logs that warning and adds nothing. The adapter adds the tokenizer's end-of-text string where lm-eval
has a tokenizer, and asks for none where it has not: the stop strings sent are the task's, and nothing is logged."""

from __future__ import annotations

import logging

import pytest

from fake_openai import FakeServer
from metabench.models.openai_decoder import OpenAIDecoder
from metabench.requests import GenerateRequest

pytestmark = pytest.mark.usefixtures("api_extras")

WARNING = "Cannot determine EOS string"


@pytest.fixture
def api_extras():
    pytest.importorskip("tenacity", reason="lm-eval's API models need the lm-eval[api] extra (metabench[api])")


def _generate(server: FakeServer, **args) -> OpenAIDecoder:
    adapter = OpenAIDecoder({"model": "fake-model", "base_url": server.base, "backoff_s": "0.001", **args})
    assert len(adapter.predict([GenerateRequest("one two", until=("\n",), max_new_tokens=4)], seed=0)) == 1
    return adapter


def _eos_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if WARNING in r.getMessage()]


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_without_a_tokenizer_the_task_stops_are_sent_and_lm_eval_warns_nothing(caplog, api):
    caplog.set_level(logging.WARNING)
    with FakeServer() as server:
        adapter = _generate(server, api=api)
    assert server.seen[-1]["body"]["stop"] == ["\n"]
    assert _eos_warnings(caplog) == []
    adapter.lm.eos_string  # noqa: B018 - the control: lm-eval's own property, asked, logs the warning here
    assert len(_eos_warnings(caplog)) == 1, "the capture no longer sees lm-eval's warning: this test checks nothing"


def test_with_a_tokenizer_its_end_of_text_string_is_a_stop(caplog, tiny_gpt2):
    from transformers import AutoTokenizer

    caplog.set_level(logging.WARNING)
    with FakeServer() as server:
        _generate(server, api="completions", tokenizer=str(tiny_gpt2), tokenized_requests="false")
    eos = AutoTokenizer.from_pretrained(str(tiny_gpt2)).eos_token
    assert eos and server.seen[-1]["body"]["stop"] == ["\n", eos]
    assert _eos_warnings(caplog) == []
