"""The OpenAI-compatible adapter against a local fake server: the key comes from the environment only."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from metabench.errors import AdapterError, UnsupportedError
from metabench.models.openai_decoder import OpenAIDecoder
from metabench.requests import ChoiceRequest, GenerateRequest, RankRequest

SECRET = "sk-test-not-a-real-key-1234"


class _Handler(BaseHTTPRequestHandler):
    seen: list = []

    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if body.get("top_logprobs"):
            choice = {"index": 0, "message": {"role": "assistant", "content": "cov"},
                      "logprobs": {"content": [{"token": "cov", "logprob": -0.1,
                                                "top_logprobs": [{"token": "x", "logprob": -2.0},
                                                                 {"token": "cov", "logprob": -0.1}]}]}}
        else:
            last = body["messages"][-1]["content"]
            choice = {"index": 0, "message": {"role": "assistant", "content": f"Neutral, because {len(last)}"}}
        payload = json.dumps({"id": "x", "object": "chat.completion", "choices": [choice]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server():
    pytest.importorskip("tenacity", reason="lm-eval's API models need the lm-eval[api] extra (metabench[api])")
    _Handler.seen = []
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_the_key_is_never_an_argument():
    with pytest.raises(AdapterError, match="never a --model argument"):
        OpenAIDecoder({"model": "m", "api_key": SECRET})


def test_chat_generation_sends_the_env_key_and_records_none_of_it(server, monkeypatch):
    monkeypatch.setenv("MY_TEST_KEY", SECRET)
    adapter = OpenAIDecoder({"model": "fake-model", "base_url": server, "api_key_env": "MY_TEST_KEY"})
    answers = adapter.predict([GenerateRequest("Say which.", until=("\n",), max_new_tokens=5, system="Be brief.")], seed=0)
    assert answers == ["Neutral, because 10"]
    sent = _Handler.seen[-1]
    assert sent["path"] == "/v1/chat/completions" and sent["auth"] == f"Bearer {SECRET}"
    assert sent["body"]["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say which."}]
    assert sent["body"]["max_tokens"] == 5 and sent["body"]["temperature"] == 0.0
    recorded = json.dumps({"args": adapter.args, "info": adapter.info(), "fingerprint": adapter.fingerprint()})
    assert SECRET not in recorded and "MY_TEST_KEY" in recorded


def test_chat_ranking_uses_top_logprobs(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    adapter = OpenAIDecoder({"model": "fake-model", "base_url": server + "/chat/completions"})
    (answer,) = adapter.predict([RankRequest("p", k=2, complete=("covered",))], seed=0)
    assert answer == [["cov", "cov"], ["x", None]]
    assert _Handler.seen[-1]["body"]["top_logprobs"] == 2


def test_chat_api_skips_choice_tasks():
    adapter = OpenAIDecoder({"model": "m", "api": "chat"})
    with pytest.raises(UnsupportedError, match="cannot score options"):
        adapter.check_request_type(ChoiceRequest, "munch_word_judge_implicit_p1")
    with pytest.raises(UnsupportedError, match="needs the model's tokenizer") as caught:  # not lm-eval's assert
        OpenAIDecoder({"model": "m", "api": "completions"}).check_request_type(ChoiceRequest, "t")
    assert caught.value.reason == "api=completions needs tokenizer= to score options"
    OpenAIDecoder({"model": "m", "api": "completions", "tokenizer": "some/tok"}).check_request_type(ChoiceRequest, "t")
    assert OpenAIDecoder({"model": "m", "base_url": "http://h/v1"}).fingerprint() != OpenAIDecoder({"model": "m"}).fingerprint()
