"""The HTTP side of the ``openai`` adapter: requests with bounded retries, in parallel, and the tokens they cost.

lm-eval's API models retry every failure the same way (tenacity, ``max_retries`` attempts, exponential wait up to
10 s, ``Retry-After`` ignored), including a refused key or an unknown model, and a server answering garbage ends
as a raw traceback. Chat APIs are used through rate limits and flaky gateways, so this module owns the transport
instead, while lm-eval keeps building payloads and parsing answers:

- retried, at most ``max_retries`` times after the first attempt: HTTP 408, 409, 429 and 5xx, timeouts, dropped
  connections, and a 200 whose body is not JSON, is cut short, or has no ``choices`` (a gateway's error page, a
  proxy cutting the stream); the wait doubles from ``backoff_s`` (with jitter, so parallel requests do not retry
  in step) up to ``max_wait_s``, and a ``Retry-After`` header is honoured (a longer one than ``max_wait_s`` is a
  clear error: waiting an hour for a quota silently is worse than stopping);
- never retried: 401/403 (the key), 404 (the model or the URL), other 4xx (the request itself): a
  :class:`~metabench.errors.AdapterError` naming the model, the URL and the fix;
- ``post_many`` sends payloads over ``concurrency`` threads; the first error cancels what has not started.

Nothing here writes answers: the runner commits each batch to the answer cache as it comes back, so an error or
an interrupt loses at most the batch in flight, and a rerun sends only the requests with no cached answer.

:class:`Usage` counts what was sent: requests, retries by cause, and tokens in and out, from the response's
``usage`` where the server gives it, else from a tokenizer where the adapter has one (``counted_by`` says which).
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from ..errors import AdapterError

#: HTTP statuses worth another attempt: the server is busy, rate-limiting or failing for a while.
RETRIED_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


@dataclass(frozen=True)
class RetryPolicy:
    """How failures are retried (model arguments ``max_retries``, ``backoff_s``, ``max_wait_s``, ``timeout``)."""

    max_retries: int = 5  # attempts after the first
    backoff_s: float = 1.0  # the first wait; doubled per attempt
    max_wait_s: float = 60.0  # the longest single wait
    timeout_s: float = 300.0  # per attempt: connecting and each read

    def wait_s(self, retry: int, retry_after: float | None) -> float:
        """The wait before retry number ``retry`` (1-based): the server's ``Retry-After`` when it gives one, else
        exponential backoff with jitter (half to all of ``backoff_s × 2^(retry-1)``, capped at ``max_wait_s``)."""
        if retry_after is not None:
            return max(0.0, retry_after)
        full = min(self.max_wait_s, self.backoff_s * 2 ** (retry - 1))
        return full * random.uniform(0.5, 1.0)


@dataclass
class Usage:
    """Requests and tokens of one run (one adapter), counted as responses arrive (thread-safe)."""

    requests: int = 0  # answered requests (a retried request counts once)
    tokens_in: int = 0
    tokens_out: int = 0
    by_server: int = 0  # responses whose tokens came from their ``usage``
    by_tokenizer: int = 0  # responses counted with the adapter's tokenizer
    uncounted: int = 0  # responses with neither
    retries: Counter = field(default_factory=Counter)  # cause -> retries
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, tokens_in: int | None, tokens_out: int | None, source: str) -> None:
        with self._lock:
            self.requests += 1
            if source == "server":
                self.by_server += 1
            elif source == "tokenizer":
                self.by_tokenizer += 1
            else:
                self.uncounted += 1
            self.tokens_in += tokens_in or 0
            self.tokens_out += tokens_out or 0

    def retried(self, cause: str) -> None:
        with self._lock:
            self.retries[cause] += 1

    @property
    def counted_by(self) -> str | None:
        """Where the token counts come from: ``server usage``, ``tokenizer``, both joined by `` + ``, or
        ``not counted`` (responses without ``usage`` and no tokenizer); None before any request."""
        sources = [name for name, n in (("server usage", self.by_server), ("tokenizer", self.by_tokenizer)) if n]
        if not self.requests:
            return None
        return " + ".join(sources) if sources else "not counted"

    def facts(self) -> dict[str, Any]:
        """The run record's keys (``model.info``): what this run sent, not what the answer cache served."""
        facts: dict[str, Any] = {"requests_sent": self.requests, "tokens_in": self.tokens_in,
                                 "tokens_out": self.tokens_out, "tokens_counted_by": self.counted_by}
        if self.uncounted:
            facts["responses_without_usage"] = self.uncounted
        if self.retries:
            facts["retries"] = dict(sorted(self.retries.items()))
        return facts


class _Retry(Exception):
    """A failure worth another attempt: ``cause`` is what it is counted as, ``retry_after`` the server's wait."""

    def __init__(self, cause: str, detail: str, retry_after: float | None = None):
        super().__init__(detail)
        self.cause, self.detail, self.retry_after = cause, detail, retry_after


class ApiClient:
    """Posts JSON payloads to one OpenAI-compatible endpoint.

    ``who``: the model as the user named it (``openai:MODEL``), for errors; ``key_env``: the environment variable
    holding the key, read per request; ``count``: the tokenizer's count of a text (None: no tokenizer), used for
    responses without ``usage``; ``sleep``: how waits are spent (tests pass a recorder).
    """

    def __init__(self, url: str, *, who: str, key_env: str, policy: RetryPolicy, concurrency: int = 1,
                 count: Callable[[str], int] | None = None, sleep: Callable[[float], None] = time.sleep):
        self.url, self.who, self.key_env, self.policy = url, who, key_env, policy
        self.concurrency = max(1, concurrency)
        self.count = count
        self.sleep = sleep
        self.usage = Usage()  # the adapter swaps in its own per run
        self._local = threading.local()

    # -- one request ---------------------------------------------------------------------------------

    def post(self, payload: dict, *, prompt_text: str | None = None) -> dict:
        """The server's JSON answer to ``payload`` (a dict with a non-empty ``choices`` list), retried per the
        policy. ``prompt_text``: the prompt as text, for counting tokens when the server gives no ``usage``."""
        retry = 0
        while True:
            try:
                output = self._attempt(payload)
            except _Retry as failure:
                retry += 1
                if retry > self.policy.max_retries:
                    raise self._gave_up(failure, retry) from None
                wait_s = self.policy.wait_s(retry, failure.retry_after)
                if wait_s > self.policy.max_wait_s:
                    raise AdapterError(
                        f"model '{self.who}' at {self.url}: the server asks to wait {wait_s:.0f} s before retrying "
                        f"({failure.detail}), more than max_wait_s={self.policy.max_wait_s:g}",
                        hint="answers already received are in the answer cache: rerun the same command later (it "
                        "sends only the missing requests), or raise max_wait_s= to wait that long",
                    ) from None
                self.usage.retried(failure.cause)
                self.sleep(wait_s)
                continue
            self._count(payload, output, prompt_text)
            return output

    def _session(self):
        session = getattr(self._local, "session", None)
        if session is None:
            import requests

            session = self._local.session = requests.Session()
        return session

    def _attempt(self, payload: dict) -> dict:
        import os

        import requests

        headers = {"Authorization": f"Bearer {os.environ.get(self.key_env, '')}", "Content-Type": "application/json"}
        try:
            response = self._session().post(self.url, json=payload, headers=headers, timeout=self.policy.timeout_s)
            body = response.content
        except requests.Timeout:
            raise _Retry("timeout", f"no answer within timeout={self.policy.timeout_s:g} s") from None
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
            raise _Retry("connection", f"connection failed ({type(exc).__name__}: {str(exc)[:160]})") from None
        status = response.status_code
        if status in RETRIED_STATUS:
            raise _Retry(f"HTTP {status}", f"HTTP {status}: {_excerpt(body)}", _retry_after(response.headers))
        if status >= 400:
            raise self._refused(status, body)
        try:
            output = json.loads(body)
        except ValueError:  # not JSON, or JSON cut short
            raise _Retry("bad JSON", f"HTTP {status} with a body that is not JSON: {_excerpt(body)}") from None
        if not isinstance(output, dict) or not isinstance(output.get("choices"), list) or not output["choices"]:
            raise _Retry("no choices", f"HTTP {status} with JSON that has no choices: {_excerpt(body)}")
        return output

    def _refused(self, status: int, body: bytes) -> AdapterError:
        """An answer no retry changes: the key, the model or URL, or the request."""
        said = _excerpt(body)
        where = f"model '{self.who}' at {self.url}"
        if status in (401, 403):
            import os

            state = "is set" if os.environ.get(self.key_env) else "is not set"
            return AdapterError(
                f"{where}: the server refused the API key (HTTP {status}: {said}); ${self.key_env} {state}",
                hint=f"export {self.key_env}=<a valid key> (or name the variable holding it with api_key_env=); "
                "answers already received stay in the answer cache",
            )
        if status == 404:
            return AdapterError(
                f"{where}: not found (HTTP 404: {said}): the model name or the URL is wrong",
                hint="check the model name (GET <base_url>/models lists a server's models) and that base_url ends "
                "in /v1 (e.g. base_url=http://127.0.0.1:8080/v1); answers already received stay in the answer cache",
            )
        return AdapterError(
            f"{where}: the server refused the request (HTTP {status}: {said})",
            hint="the server's message says what it did not accept (a prompt longer than the model's context, an "
            "argument it does not take); answers already received stay in the answer cache",
        )

    def _gave_up(self, failure: _Retry, attempts: int) -> AdapterError:
        if failure.cause in ("bad JSON", "no choices"):
            fix = ("the server answers something that is not an OpenAI-compatible response: check that base_url "
                   "points at the API (ending in /v1), not a web page or a proxy")
        elif failure.cause in ("timeout", "connection"):
            fix = "check that the server is up and reachable; a slow model needs a larger timeout="
        else:
            fix = "the server is overloaded or rate-limiting: lower num_concurrent=, or raise max_retries="
        return AdapterError(
            f"model '{self.who}' at {self.url}: gave up after {attempts} attempts; the last: {failure.detail}",
            hint=f"{fix}. Answers already received are in the answer cache: rerun the same command to send only "
            "the missing requests",
        )

    def _count(self, payload: dict, output: dict, prompt_text: str | None) -> None:
        usage = output.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            out = usage.get("completion_tokens")
            self.usage.add(usage["prompt_tokens"], out if isinstance(out, int) else 0, "server")
            return
        if self.count is None:
            self.usage.add(None, None, "none")
            return
        prompt = payload.get("prompt")
        if isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt):
            tokens_in = len(prompt)  # token ids sent: counted exactly
        else:
            tokens_in = self.count(prompt_text if prompt_text is not None else _prompt_text(payload))
        if payload.get("echo"):  # prompt log-probabilities: the text is the prompt echoed, then max_tokens more
            tokens_out = int(payload.get("max_tokens") or 0)
        else:
            tokens_out = sum(self.count(text) for text in _answer_texts(output))
        self.usage.add(tokens_in, tokens_out, "tokenizer")

    # -- many requests -------------------------------------------------------------------------------

    def post_many(self, payloads: list[dict]) -> list[dict]:
        """Answers to ``payloads``, in order, over ``concurrency`` threads; the first error stops the rest."""
        if self.concurrency <= 1 or len(payloads) <= 1:
            return [self.post(p) for p in payloads]
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="metabench-api") as pool:
            futures = [pool.submit(self.post, p) for p in payloads]
            done, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for future in pending:
                future.cancel()
            for future in futures:  # the first failure in submission order, after the others stopped
                if future.done() and not future.cancelled() and future.exception() is not None:
                    raise future.exception()
            return [future.result() for future in futures]


def _retry_after(headers) -> float | None:
    """``Retry-After`` in seconds: a number, or an HTTP date; None when absent or unreadable."""
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _excerpt(body: bytes, limit: int = 200) -> str:
    text = body.decode("utf-8", errors="replace").strip().replace("\n", " ")
    return repr(text[:limit] + ("…" if len(text) > limit else "")) if text else "(empty body)"


def _prompt_text(payload: dict) -> str:
    if "messages" in payload:
        return "\n".join(str(m.get("content", "")) for m in payload["messages"] if isinstance(m, dict))
    prompt = payload.get("prompt", "")
    return "\n".join(map(str, prompt)) if isinstance(prompt, list) else str(prompt)


def _answer_texts(output: dict) -> list[str]:
    texts = []
    for choice in output.get("choices", []):
        if not isinstance(choice, dict):
            continue
        message = choice.get("message")
        text = message.get("content") if isinstance(message, dict) else choice.get("text")
        if isinstance(text, str):
            texts.append(text)
    return texts


def tokens_line(records) -> str:
    """What API models cost this run, for the run's closing line: ``""`` when none sent a request. ``records``:
    the run records of the finished jobs; a job served whole from the job memo (no prediction time) is left out,
    since its ``model.info`` counts the tokens of the run that computed it, not this one."""
    requests = tokens_in = tokens_out = 0
    sources: set[str] = set()
    cost: float | None = None
    for record in records:
        info = record.model.info if record is not None else None
        timings = record.timings if record is not None else None
        if info is None or info.requests_sent is None or timings is None or not timings.predict_s:
            continue
        requests += info.requests_sent
        tokens_in, tokens_out = tokens_in + (info.tokens_in or 0), tokens_out + (info.tokens_out or 0)
        if info.tokens_counted_by:
            sources.update(info.tokens_counted_by.split(" + "))
        if info.cost is not None:
            cost = (cost or 0.0) + info.cost
    if not requests:
        return ""
    counted = " + ".join(sorted(sources)) if sources else "not counted"
    priced = f"; cost {cost:.6f} at the given price_in/price_out" if cost is not None else ""
    return f"; API: {requests:,} request(s), {tokens_in:,} tokens in, {tokens_out:,} out ({counted}){priced}"
