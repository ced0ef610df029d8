"""Decoders behind an OpenAI-compatible HTTP API, through lm-eval: ``openai``.

``--model openai:MODEL,base_url=http://localhost:8000/v1,api=completions`` uses
``lm_eval.models.openai_completions.LocalCompletionsAPI`` (``/completions``; log-likelihoods need a
server that echoes prompt logprobs and a ``tokenizer``); ``api=chat`` (default) uses
``LocalChatCompletion`` (``/chat/completions``; every prompt is sent as a user message, with the task's
system message; no log-likelihoods, so choice tasks are skipped, not failed).

The API key is read from the environment variable named by ``api_key_env`` (default ``OPENAI_API_KEY``)
when a request is sent. It is never an argument (``api_key=...`` is refused), so it never reaches
``results.json``, the fingerprint or the cache. The fingerprint is the model name, the base URL and the API
flavour: an API model can change behind a fixed name, so record dates with your runs.

``RankRequest`` (MUNCH generation): the first token's ``top_logprobs`` (the API's limit applies: 5 on
OpenAI's completions endpoint, up to 20 on chat), then greedy completions of the tokens that begin an
answer (``generate_until`` with the prompt plus the token text).

Other arguments: ``tokenizer`` (a local HF tokenizer folder, for log-likelihood context lengths),
``tokenizer_backend`` (huggingface/tiktoken/none), ``tokenized_requests`` (``false``: send prompts as text
even with a tokenizer, for servers that take no token ids, such as llama-cpp-python's), ``num_concurrent``,
``max_retries``, ``timeout``, ``max_length``, ``batch_size``, ``chunk_size``. Tested against a real local
server (llama.cpp's, tests/decoders/test_openai_server.py) and a fake one (tests/decoders/test_openai.py).
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import AdapterError, UnsupportedError
from ..requests import ChoiceRequest, RankRequest
from .base import AdapterSettings
from .hf_common import parse_bool, parse_int
from .lmeval_bridge import LMEvalDecoder, wanted, word_of

DEFAULT_BASE = "https://api.openai.com/v1"


class OpenAIDecoder(LMEvalDecoder):
    name = "openai"
    backend = "lm_eval.models.openai_completions"
    positional_arg = "model"
    allowed_args = (
        "model", "base_url", "api", "api_key_env", "tokenizer", "tokenizer_backend", "num_concurrent",
        "max_retries", "timeout", "max_length", "batch_size", "chunk_size", "chat_template", "tokenized_requests",
    )

    @classmethod
    def check_args(cls, args: dict[str, str]) -> None:
        if "api_key" in args or "key" in args:
            raise AdapterError(
                "model 'openai': the API key is never a --model argument (it would be written into results)",
                hint="export it, e.g. OPENAI_API_KEY=..., or name another variable with api_key_env=MY_KEY_VAR",
            )
        super().check_args(args)

    def __init__(self, args: dict[str, str], *, registry=None, settings: AdapterSettings | None = None):
        super().__init__(args, registry=registry, settings=settings)
        if not self.args.get("model"):
            raise AdapterError("model 'openai' needs a model name: --model openai:gpt-4o-mini,base_url=...")
        self.api = self.args.get("api", "chat")
        if self.api not in ("chat", "completions"):
            raise AdapterError(f"model 'openai': api={self.api!r} is not chat or completions")
        self.key_env = self.args.get("api_key_env", "OPENAI_API_KEY")
        base = self.args.get("base_url", DEFAULT_BASE).rstrip("/")
        endpoint = "/chat/completions" if self.api == "chat" else "/completions"
        self.url = base if base.endswith(endpoint) else base + endpoint

    def check_request_type(self, request_type: type, task: str) -> None:
        super().check_request_type(request_type, task)
        if self.api == "chat" and issubclass(request_type, ChoiceRequest):
            raise UnsupportedError(
                f"model 'openai' with api=chat cannot score options (chat endpoints return no prompt "
                f"log-likelihoods): task '{task}' is skipped",
                hint="use api=completions on a server that echoes logprobs, or a generation variant of the task",
                reason="api=chat cannot score options",
            )

    def _model_identity(self) -> Any:
        return {"model": self.args["model"], "base_url": self.url, "api": self.api}

    def _use_chat(self, request) -> bool:
        return self.api == "chat"

    def _load(self):
        from lm_eval.models.openai_completions import LocalChatCompletion, LocalCompletionsAPI

        self._check_reachable()
        env = self.key_env
        base = LocalChatCompletion if self.api == "chat" else LocalCompletionsAPI

        class _Client(base):  # the key is looked up per request, from the environment only
            @property
            def api_key(self):
                return os.environ.get(env, "")

        kwargs: dict[str, Any] = {
            "model": self.args["model"],
            "base_url": self.url,
            "num_concurrent": parse_int(self.args.get("num_concurrent", 1), "num_concurrent", self.name),
            "max_retries": parse_int(self.args.get("max_retries", 3), "max_retries", self.name, 0),
            "timeout": parse_int(self.args.get("timeout", 300), "timeout", self.name),
            "batch_size": parse_int(self.args.get("batch_size", 1), "batch_size", self.name),
        }
        if "max_length" in self.args:
            kwargs["max_length"] = parse_int(self.args["max_length"], "max_length", self.name)
        if self.api == "completions":
            backend = self.args.get("tokenizer_backend", "huggingface" if "tokenizer" in self.args else "none")
            kwargs["tokenizer_backend"] = backend
            if "tokenizer" in self.args:
                kwargs["tokenizer"] = self.args["tokenizer"]
            if backend in ("none", "None"):
                kwargs["tokenized_requests"] = False
            elif "tokenized_requests" in self.args:
                kwargs["tokenized_requests"] = parse_bool(self.args["tokenized_requests"], "tokenized_requests",
                                                          self.name)
        try:
            lm = _Client(**kwargs)
        except ModuleNotFoundError as exc:
            raise AdapterError(f"model 'openai' needs lm-eval's API extras: {exc}",
                               hint="pip install 'metabench[api]' (or 'lm-eval[api]')") from exc
        self._facts.update({"model": self.args["model"], "base_url": self.url, "api": self.api,
                            "api_key_env": self.key_env})
        return lm

    def _check_reachable(self) -> None:
        """A server that is down would cost ``max_retries`` times ``timeout`` per request before failing: one
        connection under ``METABENCH_SERVER_CONNECT_TIMEOUT_S`` first (metabench.connections)."""
        from ..connections import SERVER_CONNECT, probe, split_host_port

        default = 443 if self.url.startswith("https:") else 80
        host, port = split_host_port(self.url, option="--model openai:base_url=", example="http://127.0.0.1:8000/v1",
                                     default_port=default)
        probe(host, port, limit=SERVER_CONNECT, what=f"the OpenAI-compatible server ({self.url})",
              fix="start the server, or point --model openai:base_url=... at a running one")

    def rank(self, requests: list[RankRequest]) -> list[list]:
        from lm_eval.api.instance import Instance

        lm = self.lm
        ranked = []
        for request in requests:
            context = self.context(request.prompt, request)
            if self.api == "chat":
                kwargs = {"max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": request.k}
            else:
                kwargs = {"max_tokens": 1, "temperature": 0, "logprobs": request.k}
            out = lm.model_call([context], generate=True, gen_kwargs=kwargs)
            ranked.append(_top_tokens(out, self.api)[: request.k])
        jobs = []
        for r_index, (request, tokens) in enumerate(zip(requests, ranked)):
            for position, text in enumerate(tokens):
                if wanted(text, request.complete) and self.api == "completions":
                    gen = {"until": ['"', "\n"], "max_gen_toks": request.max_word_tokens, "temperature": 0.0,
                           "do_sample": False}
                    jobs.append((r_index, position, text,
                                 Instance("generate_until", {}, (request.prompt + text, gen), idx=0)))
                elif wanted(text, request.complete):  # chat: no prefix continuation; take the token as is
                    jobs.append((r_index, position, text, None))
        words: dict[tuple[int, int], str] = {}
        instances = [job[3] for job in jobs if job[3] is not None]
        outputs = iter(lm.generate_until(instances, disable_tqdm=True) if instances else [])
        for r_index, position, text, instance in jobs:
            words[(r_index, position)] = word_of(text + (next(outputs) if instance is not None else ""))
        return [[[text, words.get((r, p))] for p, text in enumerate(tokens)] for r, tokens in enumerate(ranked)]


def _top_tokens(output: dict | None, api: str) -> list[str]:
    """Ranked first-token texts of a response (best first); [] for a failed or logprob-less response."""
    try:
        choice = output["choices"][0]
        if api == "chat":
            entries = choice["logprobs"]["content"][0]["top_logprobs"]
            pairs = [(e["token"], e["logprob"]) for e in entries]
        else:
            pairs = list(choice["logprobs"]["top_logprobs"][0].items())
    except (KeyError, IndexError, TypeError):
        return []
    return [token for token, _ in sorted(pairs, key=lambda p: -p[1])]
