"""Decoders behind an OpenAI-compatible HTTP API, through lm-eval: ``openai``.

``--model openai:MODEL,base_url=http://localhost:8000/v1,api=completions`` uses
``lm_eval.models.openai_completions.LocalCompletionsAPI`` (``/completions``; log-likelihoods need a
server that echoes prompt logprobs and a ``tokenizer``); ``api=chat`` (default) uses
``LocalChatCompletion`` (``/chat/completions``; every prompt is sent as a user message, with the task's
system message; no log-likelihoods, so choice tasks are skipped, not failed).

lm-eval builds the payloads and reads the answers; :mod:`metabench.models.api_client` sends them: bounded
retries with exponential backoff on 429 / 5xx / timeouts / garbage (``Retry-After`` honoured), ``num_concurrent``
requests in flight, a clear error naming the model, the URL and the fix for a refused key (401/403), an unknown
model or URL (404) or a server that keeps answering garbage; and the tokens each run sends, which :meth:`info`
records (``requests_sent``, ``tokens_in``, ``tokens_out``, ``tokens_counted_by``: the server's ``usage`` where it
gives one, else the ``tokenizer``'s count). Answers are committed to the answer cache batch by batch
(``chunk_size`` items) by the runner, so an error or an interrupt loses at most the batch in flight, and a rerun
sends only the missing requests.

The API key is read from the environment variable named by ``api_key_env`` (default ``OPENAI_API_KEY``)
when a request is sent. It is never an argument (``api_key=...`` is refused), so it never reaches
``results.json``, the fingerprint or the cache. The fingerprint is the model name, the base URL and the API
flavour: an API model can change behind a fixed name, so record dates with your runs.

``RankRequest`` (MUNCH generation): the first token's ``top_logprobs`` (the API's limit applies: 5 on
OpenAI's completions endpoint, up to 20 on chat), then greedy completions of the tokens that begin an
answer (``generate_until`` with the prompt plus the token text).

Other arguments: ``tokenizer`` (a local HF tokenizer folder, a registered short name such as ``smollm2-135m``
resolved offline as ``pretrained=`` names are, or a hub id; for log-likelihood context lengths, and for counting
tokens when the server gives no ``usage``), ``tokenizer_backend`` (huggingface/tiktoken/none),
``tokenized_requests`` (``false``: send prompts as text even with a tokenizer, for servers that take no token
ids, such as llama-cpp-python's), ``num_concurrent``, ``max_retries`` (retries after the first attempt, 5),
``backoff_s`` (the first wait, 1), ``max_wait_s`` (the longest wait, 60), ``timeout`` (seconds per attempt,
300), ``price_in`` / ``price_out`` (price per million tokens in and out, for ``--dry-run``'s cost bound and the
record's cost; no part of the fingerprint), ``max_length``, ``batch_size``, ``chunk_size``. Tested against a real
local server (llama.cpp's, tests/decoders/test_openai_server.py) and a fake one (tests/decoders/test_openai*.py).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AdapterError, UnsupportedError
from ..requests import ChoiceRequest, GenerateRequest, RankRequest
from .api_client import ApiClient, RetryPolicy, Usage
from .base import AdapterSettings
from .hf_common import parse_bool, parse_float, parse_int, resolve_pretrained
from .lmeval_bridge import LMEvalDecoder, wanted, word_of

DEFAULT_BASE = "https://api.openai.com/v1"
#: lm-eval's context limit for API models when ``max_length`` is not given (its ``TemplateAPI`` default).
DEFAULT_MAX_LENGTH = 2048
#: Arguments that change how long a run waits or what it costs, never which answers come back: out of the
#: fingerprint (as lmeval_bridge's RUNTIME_ARGS), so changing a price or a backoff reuses the cached answers.
WAIT_AND_PRICE_ARGS = frozenset({"backoff_s", "max_wait_s", "price_in", "price_out"})


@dataclass(frozen=True)
class RequestBudget:
    """What answering one test item costs through the API, as far as a plan can know without the data: prompts
    sent (``batch_size`` > 1 packs several into one HTTP request), and bounds on each one's tokens (None: unknown)."""

    requests_per_item: int | None
    tokens_in_per_request: int
    tokens_out_per_request: int | None
    price_in: float | None  # per million tokens
    price_out: float | None


class OpenAIDecoder(LMEvalDecoder):
    name = "openai"
    backend = "lm_eval.models.openai_completions"
    positional_arg = "model"
    allowed_args = (
        "model", "base_url", "api", "api_key_env", "tokenizer", "tokenizer_backend", "num_concurrent",
        "max_retries", "backoff_s", "max_wait_s", "timeout", "max_length", "batch_size", "chunk_size",
        "chat_template", "tokenized_requests", "price_in", "price_out",
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
        self.policy = RetryPolicy(
            max_retries=parse_int(self.args.get("max_retries", 5), "max_retries", self.name, 0),
            backoff_s=self._seconds("backoff_s", 1.0),
            max_wait_s=self._seconds("max_wait_s", 60.0),
            timeout_s=self._seconds("timeout", 300.0),
        )
        self.concurrency = parse_int(self.args.get("num_concurrent", 1), "num_concurrent", self.name)
        self.prices = {key: self._price(key) for key in ("price_in", "price_out")}
        self.usage = Usage()

    def _seconds(self, key: str, default: float) -> float:
        value = parse_float(self.args.get(key, default), key, self.name)
        if value < 0 or (value == 0 and key == "timeout"):
            raise AdapterError(f"model 'openai': {key}={value:g} must be positive", hint=f"e.g. {key}={default:g}")
        return value

    def _price(self, key: str) -> float | None:
        if key not in self.args:
            return None
        value = parse_float(self.args[key], key, self.name)
        if value < 0:
            raise AdapterError(f"model 'openai': {key}={value:g} is negative",
                               hint=f"the price per million tokens, e.g. {key}=0.15")
        return value

    @property
    def who(self) -> str:
        """The model as errors name it."""
        return f"openai:{self.args['model']}"

    def check_request_type(self, request_type: type, task: str) -> None:
        super().check_request_type(request_type, task)
        if not issubclass(request_type, ChoiceRequest):
            return
        if self.api == "chat":
            raise UnsupportedError(
                f"model 'openai' with api=chat cannot score options (chat endpoints return no prompt "
                f"log-likelihoods): task '{task}' is skipped",
                hint="where the task has a generated protocol (protocol.decoder_generated), answer=generated runs it; "
                "to score options: --model hf-decoder:<the same model> locally, or api=completions,tokenizer=<the "
                "model's tokenizer: a folder or a registered name such as smollm2-135m> on a server that echoes "
                "prompt log-probabilities (vLLM's; llama.cpp's echo is wrong, docs/decoders.md)",
                reason="api=chat cannot score options",
            )
        if "tokenizer" not in self.args:
            raise UnsupportedError(
                f"model 'openai' with api=completions scores options from prompt log-probabilities, which needs "
                f"the model's tokenizer to tell the context from the option: task '{task}' is skipped",
                hint="add tokenizer=<the model's tokenizer: a folder, a registered short name such as "
                "smollm2-135m (`metabench ls pretrained`), or a hub id>",
                reason="api=completions needs tokenizer= to score options",
            )

    def fingerprint(self) -> str:
        args = self.args
        self.args = {k: v for k, v in args.items() if k not in WAIT_AND_PRICE_ARGS}
        try:
            return super().fingerprint()
        finally:
            self.args = args

    def default_answer(self) -> str:
        """The way this model answers a task when ``answer=`` is not given (:mod:`metabench.answering`): a chat
        endpoint can only generate; a completions endpoint scores options like a local decoder."""
        return "generated" if self.api == "chat" else "scored"

    def _model_identity(self) -> Any:
        return {"model": self.args["model"], "base_url": self.url, "api": self.api}

    def _use_chat(self, request) -> bool:
        return self.api == "chat"

    def _tokenizer_source(self) -> str | None:
        """``tokenizer=`` as a loader takes it: a folder, a registered short name built offline (as
        ``pretrained=`` names are), else the hub id left to transformers."""
        name = self.args.get("tokenizer")
        if not name:
            return None
        if Path(name).expanduser().is_dir():  # a tokenizer folder need not hold a model's config.json
            return str(Path(name).expanduser())
        return resolve_pretrained(name, self.registry, download=False).source

    def _load(self):
        from lm_eval.models.openai_completions import LocalChatCompletion, LocalCompletionsAPI

        self._check_reachable()
        http = ApiClient(self.url, who=self.who, key_env=self.key_env, policy=self.policy,
                         concurrency=self.concurrency)
        tokenizer = self._tokenizer_source()
        base = LocalChatCompletion if self.api == "chat" else LocalCompletionsAPI
        kwargs: dict[str, Any] = {
            "model": self.args["model"],
            "base_url": self.url,
            "num_concurrent": self.concurrency,
            "max_retries": 1,  # one attempt per lm-eval call: ApiClient retries, by its own policy
            "timeout": max(1, int(self.policy.timeout_s)),
            "batch_size": parse_int(self.args.get("batch_size", 1), "batch_size", self.name),
        }
        if "max_length" in self.args:
            kwargs["max_length"] = parse_int(self.args["max_length"], "max_length", self.name)
        if self.api == "completions":
            backend = self.args.get("tokenizer_backend", "huggingface" if tokenizer else "none")
            kwargs["tokenizer_backend"] = backend
            if tokenizer:
                kwargs["tokenizer"] = tokenizer
            if backend in ("none", "None"):
                kwargs["tokenized_requests"] = False
            elif "tokenized_requests" in self.args:
                kwargs["tokenized_requests"] = parse_bool(self.args["tokenized_requests"], "tokenized_requests",
                                                          self.name)
        try:
            lm = _client_class(base)(http=http, **kwargs)
        except ModuleNotFoundError as exc:
            raise AdapterError(f"model 'openai' needs lm-eval's API extras: {exc}",
                               hint="pip install 'metabench[api]' (or 'lm-eval[api]')") from exc
        except OSError as exc:  # transformers could not find or fetch the tokenizer
            raise AdapterError(
                f"model '{self.who}': tokenizer={self.args.get('tokenizer')} could not be loaded "
                f"({type(exc).__name__}: {str(exc).splitlines()[0][:200]})",
                hint="give a local tokenizer folder or a registered short name (`metabench ls pretrained`, e.g. "
                "tokenizer=smollm2-135m); a hub id needs the network",
            ) from None
        http.count = _counter(lm, tokenizer)
        self._facts.update({"model": self.args["model"], "base_url": self.url, "api": self.api,
                            "api_key_env": self.key_env, "num_concurrent": self.concurrency,
                            "max_retries": self.policy.max_retries})
        return lm

    def _check_reachable(self) -> None:
        """A server that is down would cost ``max_retries`` times ``timeout`` per request before failing: one
        connection under ``METABENCH_SERVER_CONNECT_TIMEOUT_S`` first (metabench.connections)."""
        from ..connections import SERVER_CONNECT, probe, split_host_port

        default = 443 if self.url.startswith("https:") else 80
        host, port = split_host_port(self.url, option="--model openai:base_url=", example="http://127.0.0.1:8000/v1",
                                     default_port=default)
        probe(host, port, limit=SERVER_CONNECT, what=f"the OpenAI-compatible server ({self.url})",
              fix="start the server (`metabench serve-local` starts llama.cpp's on SmolLM2), or point "
              "--model openai:base_url=... at a running one")

    # -- what a run sent, and what a plan can bound -----------------------------------------------------

    def predict(self, requests: list, seed: int) -> list[Any]:
        self.lm.http.usage = self.usage  # the loaded client is shared by the jobs of a run: count this job's
        return super().predict(requests, seed)

    def info(self) -> dict[str, Any]:
        facts = {**super().info(), **self.usage.facts()}
        cost = self.cost(self.usage.tokens_in, self.usage.tokens_out)
        if cost is not None and self.usage.counted_by not in (None, "not counted"):
            facts["cost"] = round(cost, 9)
        return facts

    def cost(self, tokens_in: float, tokens_out: float) -> float | None:
        """What ``tokens_in`` and ``tokens_out`` cost at ``price_in``/``price_out`` per million (None: no price)."""
        if self.prices["price_in"] is None and self.prices["price_out"] is None:
            return None
        return (tokens_in * (self.prices["price_in"] or 0) + tokens_out * (self.prices["price_out"] or 0)) / 1e6

    def request_budget(self, kind) -> RequestBudget:
        """Prompts sent per test item of ``kind`` and bounds on their tokens, for ``--dry-run``: every prompt at
        ``max_length`` (the context limit: a server refuses a longer prompt), every answer at its token limit
        (``max_new_tokens``; one token for an option scored from echoed log-probabilities; ``max_word_tokens``
        for a ranked word's completion). ``kind``: the job's kind (a prompted kind, or a task answered through
        one: :class:`metabench.kinds.answered.Answered`)."""
        prompted = getattr(kind, "prompted", kind)
        request_type = prompted.request_type() if hasattr(prompted, "request_type") else None
        kind_args = getattr(prompted, "args", None)
        per_item: int | None = None
        out: int | None = None
        if request_type is not None and issubclass(request_type, RankRequest) and self.api == "chat":
            per_item, out = 1, 1  # the first token's top_logprobs; chat completes no prefix
        elif request_type is not None and issubclass(request_type, RankRequest):
            k = int(getattr(kind_args, "rank_k", 10))
            per_item, out = 1 + k, max(1, int(getattr(kind_args, "max_word_tokens", 8)))  # ranking + completions
        elif request_type is not None and issubclass(request_type, ChoiceRequest):
            options = getattr(kind_args, "options", None)  # None: read per item from the data
            per_item, out = (len(options) if options else None), 1
        elif request_type is not None and issubclass(request_type, GenerateRequest):
            per_item, out = 1, getattr(getattr(prompted, "decoder", None), "max_new_tokens", None)
        max_length = parse_int(self.args.get("max_length", DEFAULT_MAX_LENGTH), "max_length", self.name)
        return RequestBudget(per_item, max_length, out, self.prices["price_in"], self.prices["price_out"])

    def rank(self, requests: list[RankRequest]) -> list[list]:
        from lm_eval.api.instance import Instance

        lm = self.lm
        payloads = []
        for request in requests:
            context = self.context(request.prompt, request)
            if self.api == "chat":
                kwargs = {"max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": request.k}
            else:
                kwargs = {"max_tokens": 1, "temperature": 0, "logprobs": request.k}
            payloads.append(lm.payload([context], kwargs))
        ranked = [_top_tokens(out, self.api)[: request.k] for out, request in zip(lm.http.post_many(payloads), requests)]
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


def _client_class(base: type) -> type:
    """lm-eval's API model ``base`` with its transport replaced by an :class:`ApiClient` (``http``): lm-eval's
    own retries (every error alike, ``Retry-After`` ignored) and its aiohttp pool are not used."""

    class _Client(base):
        def __init__(self, *, http: ApiClient, **kwargs):
            self.http = http
            super().__init__(**kwargs)

        def payload(self, messages: list, gen_kwargs: dict | None, *, generate: bool = True, **kwargs) -> dict:
            return self._create_payload(self.create_message(messages), generate=generate,
                                        gen_kwargs=copy.deepcopy(gen_kwargs), seed=self._seed, eos=self.stop_eos,
                                        **kwargs)

        @property
        def stop_eos(self) -> str | None:
            """The end-of-text string lm-eval adds to a generation's stop strings: its ``eos_string`` where it has
            a tokenizer to read it from (completions with ``tokenizer=``), else None. A chat API (lm-eval loads no
            tokenizer for it) ends the assistant's turn itself, and an OpenAI-compatible completions server stops
            at the model's end-of-text token itself: without a tokenizer there is no string to add, and asking
            lm-eval's ``eos_string`` for one only logs "Cannot determine EOS string to pass to stop sequence"."""
            if self._eos_string or self.tokenizer is not None:
                return self.eos_string
            return None

        def model_call(self, messages, *, generate: bool = True, gen_kwargs: dict | None = None, **kwargs):
            return self.http.post(self.payload(messages, gen_kwargs, generate=generate, **kwargs))

        async def get_batched_requests(self, requests: list, cache_keys: list, *, generate: bool = True,
                                       ctxlens: list | None = None, **kwargs) -> list:
            """lm-eval's concurrent path (``num_concurrent`` > 1): the batches sent over the client's threads."""
            from lm_eval.models.api_models import LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER

            gen_kwargs = kwargs.pop("gen_kwargs", None)
            size = max(1, self._batch_size)
            batches = [requests[i : i + size] for i in range(0, len(requests), size)]
            lengths = ctxlens or [None] * len(requests)
            payloads = [self.payload(batch, gen_kwargs, generate=generate, **kwargs) for batch in batches]
            answers = []
            for n, (batch, output) in enumerate(zip(batches, self.http.post_many(payloads))):
                if generate:
                    parsed = self.parse_generations(outputs=output)
                else:
                    parsed = self.parse_logprobs(outputs=output, tokens=batch, ctxlens=lengths[n * size : (n + 1) * size])
                answers.append([LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER if a is None else a for a in parsed])
            return answers

        def parse_generations(self, outputs, **kwargs) -> list[str]:
            try:
                return super().parse_generations(outputs, **kwargs)
            except (KeyError, IndexError, TypeError) as exc:
                raise self._unreadable("generated text", exc) from None

        def parse_logprobs(self, outputs, tokens=None, ctxlens=None, **kwargs):
            try:
                return super().parse_logprobs(outputs, tokens, ctxlens, **kwargs)
            except (KeyError, IndexError, TypeError, AssertionError) as exc:
                raise self._unreadable("prompt log-probabilities (echo=true, logprobs)", exc) from None

        def _unreadable(self, what: str, exc: Exception) -> AdapterError:
            return AdapterError(
                f"model '{self.http.who}' at {self.http.url}: the answer has no {what} where an OpenAI-compatible "
                f"server puts them ({type(exc).__name__}: {exc})",
                hint="scoring options needs a server that echoes prompt log-probabilities (vLLM's); otherwise run "
                "the task's generated protocol; answers already received stay in the answer cache",
            )

    return _Client


def _counter(lm, tokenizer: str | None):
    """Counts a text's tokens with the model's tokenizer, for responses without ``usage``: lm-eval's when it loaded
    one (completions), else ``tokenizer=`` loaded on first use (chat; the message texts are counted, not the chat
    template's few tokens around them); None without a tokenizer."""
    loaded = getattr(lm, "tokenizer", None)
    if loaded is not None and getattr(lm, "tokenizer_backend", None) == "huggingface":
        return lambda text: len(loaded(text, add_special_tokens=False).input_ids)
    if tokenizer is None:
        return None
    cell: list = []

    def count(text: str) -> int:
        if not cell:
            from transformers import AutoTokenizer

            cell.append(AutoTokenizer.from_pretrained(tokenizer))
        return len(cell[0](text, add_special_tokens=False).input_ids)

    return count


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
