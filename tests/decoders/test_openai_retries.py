"""The ``openai`` adapter as chat APIs are used: retries with backoff through 429s, 500s, timeouts and garbage,
clear errors for a refused key, an unknown model and a server that keeps answering garbage, requests in
parallel, tokens counted per run, and a run stopped mid-way (an error, an interrupt) resumed without sending an
answered request twice. All against :mod:`fake_openai` on 127.0.0.1, with waits of milliseconds."""

from __future__ import annotations


import pytest

from fake_openai import FakeServer
from metabench.errors import AdapterError
from metabench.models.openai_decoder import OpenAIDecoder
from metabench.requests import GenerateRequest

pytestmark = pytest.mark.usefixtures("api_extras")

FAST = {"backoff_s": "0.001", "timeout": "0.3"}


@pytest.fixture
def api_extras():
    pytest.importorskip("tenacity", reason="lm-eval's API models need the lm-eval[api] extra (metabench[api])")


def _adapter(server: FakeServer, waits: list | None = None, **args) -> OpenAIDecoder:
    adapter = OpenAIDecoder({"model": "fake-model", "base_url": server.base, **FAST, **args})
    if waits is not None:
        adapter.lm.http.sleep = waits.append  # the waits are recorded, not slept
    return adapter


def _ask(adapter: OpenAIDecoder, *prompts: str) -> list[str]:
    return adapter.predict([GenerateRequest(p, until=("\n",), max_new_tokens=4) for p in prompts], seed=0)


def test_recovers_from_429_500_timeout_and_garbage(monkeypatch):
    """Every transient failure a gateway gives, once each, then a good answer: one answer, each failure retried
    once and counted by cause, the 429's Retry-After (0.05 s) honoured, the other waits doubling."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    script = ["429", "500", "timeout", "cut", "truncated", "malformed", "nochoices"]
    waits: list[float] = []
    with FakeServer(script) as server:
        adapter = _adapter(server, waits, max_retries="7")
        assert _ask(adapter, "one two three") == ["literal 13"]
        assert len(server.seen) == len(script) + 1
    info = adapter.info()
    assert info["retries"] == {"HTTP 429": 1, "HTTP 500": 1, "timeout": 1, "connection": 1, "bad JSON": 2,
                               "no choices": 1}
    assert waits[0] == pytest.approx(0.05)  # the server's Retry-After, not the backoff
    assert all(0.5 * 0.001 * 2 ** (n - 1) <= w <= 0.001 * 2 ** (n - 1) for n, w in enumerate(waits[1:], 2))
    assert info["requests_sent"] == 1 and info["tokens_counted_by"] == "server usage"


def test_gives_up_after_max_retries_naming_model_url_and_fix():
    with FakeServer(after="503") as server:
        adapter = _adapter(server, max_retries="2")
        with pytest.raises(AdapterError) as caught:
            _ask(adapter, "x")
        assert len(server.seen) == 3  # the first attempt and two retries, no more
    text = str(caught.value)
    assert "openai:fake-model" in text and server.base + "/chat/completions" in text
    assert "gave up after 3 attempts" in text and "HTTP 503" in text
    assert "lower num_concurrent=" in text and "rerun the same command" in text


def test_a_retry_after_longer_than_max_wait_stops_at_once():
    with FakeServer(after="429-long") as server:
        with pytest.raises(AdapterError, match=r"asks to wait 3600 s .* more than max_wait_s=60"):
            _ask(_adapter(server), "x")
        assert len(server.seen) == 1


@pytest.mark.parametrize(("status", "says"), [
    ("401", r"(?s)refused the API key \(HTTP 401.*\$OPENAI_API_KEY is not set.*export OPENAI_API_KEY="),
    ("404", r"(?s)not found \(HTTP 404.*model name or the URL.*base_url ends in /v1"),
])
def test_a_refused_key_or_unknown_model_is_not_retried(monkeypatch, status, says):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeServer(after=status) as server:
        with pytest.raises(AdapterError, match=says) as caught:
            _ask(_adapter(server), "x")
        assert len(server.seen) == 1
    assert "openai:fake-model" in str(caught.value) and server.base in str(caught.value)


@pytest.mark.parametrize("garbage", ["malformed", "truncated", "nochoices"])
def test_a_server_that_keeps_answering_garbage_is_a_clear_error(garbage):
    with FakeServer(after=garbage) as server:
        with pytest.raises(AdapterError, match="not an OpenAI-compatible response") as caught:
            _ask(_adapter(server, max_retries="1"), "x")
        assert len(server.seen) == 2
    assert "openai:fake-model" in str(caught.value) and server.base in str(caught.value)


def test_requests_run_in_parallel_and_answers_keep_their_order():
    prompts = [f"prompt {'x' * n}" for n in range(8)]
    with FakeServer(delay_s=0.1) as server:
        adapter = _adapter(server, num_concurrent="4")
        answers = _ask(adapter, *prompts)
        assert 2 <= server.max_in_flight <= 4
    assert answers == [f"literal {len(p)}" for p in prompts]


def test_tokens_come_from_usage_else_from_the_tokenizer_else_are_marked_uncounted(tmp_path):
    with FakeServer() as server:  # usage given: 3 + words in, 2 out per answer
        adapter = _adapter(server, price_in="1.5", price_out="6")
        _ask(adapter, "a b", "c d e")
    info = adapter.info()
    assert (info["tokens_in"], info["tokens_out"], info["tokens_counted_by"]) == (11, 4, "server usage")
    assert info["cost"] == pytest.approx((11 * 1.5 + 4 * 6) / 1e6)
    with FakeServer(usage=False) as server:
        bare = _adapter(server)
        _ask(bare, "a b")
        counted = _adapter(server, tokenizer=str(_tokenizer_folder(tmp_path)))
        _ask(counted, "a b")
        named = OpenAIDecoder({"model": "fake-model", "base_url": server.base, "tokenizer": "tiny-tok"},
                              registry=_Registered("tiny-tok", _tokenizer_folder(tmp_path)))
        _ask(named, "a b")  # a registered short name, built offline as pretrained= names are: no hub
    assert bare.info()["tokens_counted_by"] == "not counted" and bare.info()["responses_without_usage"] == 1
    facts = counted.info()
    assert facts["tokens_counted_by"] == "tokenizer" and facts["tokens_in"] > 0 and facts["tokens_out"] > 0
    assert {k: named.info()[k] for k in facts if k.startswith("tokens_")} == {k: facts[k] for k in facts
                                                                           if k.startswith("tokens_")}


class _Registered:
    """A registry holding one registered model name (``pretrained``), built into ``folder``."""

    def __init__(self, name, folder):
        self.name, self.folder = name, folder

    def has(self, kind, name):
        return kind == "pretrained" and name == self.name

    def get(self, kind, name):
        from types import SimpleNamespace

        return SimpleNamespace(load=lambda: lambda: self.folder, plugin="test")


@pytest.mark.parametrize("concurrent", ["1", "3"])
def test_options_are_scored_from_echoed_log_probabilities(tmp_path, concurrent):
    """api=completions with a tokenizer, one by one and in parallel (lm-eval's two paths, both through the
    client): each option's log-likelihood is its tokens' (-0.5 each here), so the shortest option wins."""
    from metabench.requests import ChoiceRequest

    requests = [ChoiceRequest("The sky is", (" a very long option", " blue", " two words")),
                ChoiceRequest("Ice is", (" cold", " hot and dry"))]
    with FakeServer() as server:
        adapter = _adapter(server, api="completions", tokenizer=str(_tokenizer_folder(tmp_path)),
                           num_concurrent=concurrent)
        answers = adapter.predict(requests, seed=0)
        assert all(r["body"].get("echo") for r in server.seen) and len(server.seen) == 5
    assert [a["index"] for a in answers] == [1, 0]
    lengths = [[len(adapter.lm.tok_encode(o)) for o in r.options] for r in requests]
    assert [a["loglikelihoods"] for a in answers] == [[-0.5 * n for n in row] for row in lengths]


def test_an_answer_without_log_probabilities_is_a_clear_error(tmp_path):
    from metabench.requests import ChoiceRequest

    with FakeServer() as server:
        adapter = _adapter(server, api="completions", tokenizer=str(_tokenizer_folder(tmp_path)))
        server.script = ["ok"]  # a plain completion where the echoed prompt was asked for
        server._good = lambda body: b'{"choices": [{"index": 0, "text": "x"}]}'
        with pytest.raises(AdapterError, match=r"(?s)the answer has no prompt log-probabilities .*\(vLLM's\)"):
            adapter.predict([ChoiceRequest("The sky is", (" blue", " green"))], seed=0)


def _tokenizer_folder(tmp_path):
    """A tokenizer alone (no model: quicker to build than the tiny GPT-2), as tokenizer= takes a folder."""
    from tiny import _tokenizer

    folder = tmp_path / "tokenizer"
    if not folder.is_dir():
        fast, _, _ = _tokenizer(False)
        fast.save_pretrained(folder)
        (folder / "config.json").write_text("{}")  # what a registered model's folder has
    return folder


def test_price_and_retry_arguments_leave_the_fingerprint_alone():
    plain = OpenAIDecoder({"model": "m", "base_url": "http://h/v1"}).fingerprint()
    priced = OpenAIDecoder({"model": "m", "base_url": "http://h/v1", "price_in": "0.15", "price_out": "0.6",
                            "backoff_s": "2", "max_wait_s": "30", "max_retries": "9", "num_concurrent": "8"})
    assert priced.fingerprint() == plain
    with pytest.raises(AdapterError, match="price_in=-1 is negative"):
        OpenAIDecoder({"model": "m", "price_in": "-1"})


# -- through the runner: what is answered stays answered -------------------------------------------------

def _run(registry, tmp_path, model):
    from metabench.runner import RunOptions, run

    return run(registry, "toy_generate", [model], RunOptions(output_dir=tmp_path / "runs", progress=False, limit=6))


def _spec(server: FakeServer) -> str:
    # toy_generate: 6 items × 2 seeds = 12 requests, committed to the answer cache 2 at a time
    return f"openai:fake-model,base_url={server.base},chunk_size=2,backoff_s=0.001,max_retries=1"


def test_a_refused_key_mid_run_loses_nothing_answered(decoder_registry, tmp_path, monkeypatch):
    from metabench.models import lmeval_bridge

    monkeypatch.setattr(lmeval_bridge, "_SHARED", {})
    with FakeServer(["ok"] * 4 + ["401"]) as server:
        (first,) = _run(decoder_registry, tmp_path, _spec(server))
        assert first.status == "failed" and "refused the API key" in first.message
        assert f"openai:fake-model' at {server.base}/chat/completions" in first.message
        server.script = []  # the key is fixed
        server.seen.clear()
        (second,) = _run(decoder_registry, tmp_path, _spec(server))
    assert second.status == "ok", second.message
    assert len(server.seen) == 12 - 4  # the two batches answered before the 401 are not sent again
    assert second.record.model.info.requests_sent == 8


def test_an_interrupted_run_resumes_without_sending_an_answered_request_again(decoder_registry, tmp_path, monkeypatch):
    """Ctrl-C once the fifth request is answered (batch 3 of 6): the rerun sends the 8 requests whose answers
    were not committed (batch 3 again, and the rest), and the run's tokens are those 8 requests'."""
    from metabench.models import api_client, lmeval_bridge

    monkeypatch.setattr(lmeval_bridge, "_SHARED", {})
    post, answered = api_client.ApiClient.post, []

    def interrupted(self, payload, **kwargs):
        # Ctrl-C raised in the run's own thread as the fifth answer arrives (a signal's KeyboardInterrupt lands
        # in the main thread, which under pytest-xdist is not the thread running the test)
        out = post(self, payload, **kwargs)
        answered.append(1)
        if len(answered) == 5:
            raise KeyboardInterrupt
        return out

    with FakeServer() as server:
        monkeypatch.setattr(api_client.ApiClient, "post", interrupted)
        with pytest.raises(KeyboardInterrupt):
            _run(decoder_registry, tmp_path, _spec(server))
        sent_before = len(server.seen)
        monkeypatch.setattr(api_client.ApiClient, "post", post)
        server.seen.clear()
        (resumed,) = _run(decoder_registry, tmp_path, _spec(server))
    assert resumed.status == "ok", resumed.message
    assert sent_before == 5 and len(server.seen) == 8
    info = resumed.record.model.info
    assert info.requests_sent == 8 and info.tokens_out == 8 * 2
    (again,) = _run(decoder_registry, tmp_path, _spec(server))  # all answered: nothing sent at all
    assert again.status == "ok" and len(server.seen) == 8


def test_the_closing_line_counts_the_tokens_this_run_sent(decoder_registry, tmp_path, monkeypatch, capsys):
    from metabench import plugins
    from metabench.cli import main
    from metabench.models import lmeval_bridge

    monkeypatch.setattr(lmeval_bridge, "_SHARED", {})
    monkeypatch.setattr(plugins, "default_registry", lambda: decoder_registry)
    with FakeServer() as server:
        args = ["--tasks", "toy_generate", "--model", _spec(server) + ",price_in=2,price_out=8", "--limit", "3",
                "-o", str(tmp_path / "runs"), "--no-progress"]
        assert main(args) == 0
        first = capsys.readouterr().out
        assert main(args) == 0  # remembered whole: nothing sent, so no API part
        again = capsys.readouterr().out
    sent = sum(len(r["body"]["messages"][-1]["content"].split()) + 3 for r in server.seen[:6])
    assert len(server.seen) == 6  # 3 items × 2 seeds, once
    assert f"; API: 6 request(s), {sent:,} tokens in, 12 out (server usage); cost " in first
    assert "time: " in again and "API:" not in again
