"""A scripted OpenAI-compatible server on 127.0.0.1 (stdlib ``http.server`` in a thread, no network): each
request takes the next behaviour of its script (a 429, a 500, a stall past the client's timeout, a body cut
short, JSON cut short, something that is not JSON, JSON without choices, a refused key...), then, once the script
is used up, answers well, so tests can check that the client recovers, gives up or stops as it should."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: What each scripted behaviour sends: (status, extra headers, body), or a name handled in ``do_POST``.
CANNED = {
    "429": (429, {"Retry-After": "0.05"}, b'{"error": {"message": "Rate limit reached"}}'),
    "429-long": (429, {"Retry-After": "3600"}, b'{"error": {"message": "Daily quota used up"}}'),
    "500": (500, {}, b'{"error": {"message": "internal"}}'),
    "503": (503, {}, b"<html>Service Unavailable</html>"),
    "401": (401, {}, b'{"error": {"message": "Incorrect API key provided"}}'),
    "404": (404, {}, b'{"error": {"message": "The model `nope` does not exist"}}'),
    "malformed": (200, {}, b"<html><body>Welcome to nginx!</body></html>"),
    "truncated": (200, {}, b'{"id": "x", "choices": [{"index": 0, "message": {"role": "assist'),
    "nochoices": (200, {}, b'{"id": "x", "object": "chat.completion"}'),
}


class FakeServer:
    """``script``: behaviours for the first requests, in order; ``after``: the behaviour of every later one
    (``ok`` answers). ``usage``: whether good answers carry a ``usage`` block; ``delay_s``: how long a good
    answer takes (to see concurrency); ``on_request(n)``: called with each request's number before answering."""

    def __init__(self, script=(), *, after: str = "ok", usage: bool = True, delay_s: float = 0.0,
                 stall_s: float = 1.0, on_request=None, port: int = 0):
        self.script, self.after, self.usage, self.delay_s, self.stall_s = list(script), after, usage, delay_s, stall_s
        self.on_request = on_request
        self.seen: list[dict] = []
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802 - the model list, which a client polls to see the server is up
                payload = json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}).encode()
                self.send_response(200 if self.path.rstrip("/").endswith("/models") else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                    number = len(server.seen)
                    behaviour = server.script[number - 1] if number <= len(server.script) else server.after
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if server.on_request is not None:
                        server.on_request(number)
                    server._answer(self, behaviour, body)
                except (BrokenPipeError, ConnectionResetError):  # the client stopped waiting (a timeout)
                    pass
                finally:
                    with server._lock:
                        server.in_flight -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _answer(self, handler: BaseHTTPRequestHandler, behaviour: str, body: dict) -> None:
        if behaviour == "timeout":  # longer than the client waits: it gives up on this attempt
            time.sleep(self.stall_s)
            status, headers, payload = 200, {}, self._good(body)
        elif behaviour == "cut":  # promises more bytes than it sends, then closes the connection
            payload = self._good(body)
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload[: len(payload) // 2])
            handler.wfile.flush()
            handler.close_connection = True
            return
        elif behaviour == "ok":
            time.sleep(self.delay_s)
            status, headers, payload = 200, {}, self._good(body)
        else:
            status, headers, payload = CANNED[behaviour]
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def _good(self, body: dict) -> bytes:
        """A chat or completions answer: the prompt's length in characters, so tests can tell answers apart."""
        if "messages" in body:
            last = body["messages"][-1]["content"]
            choice = {"index": 0, "message": {"role": "assistant", "content": f"literal {len(last)}"},
                      "finish_reason": "stop"}
        elif body.get("echo"):  # prompt log-probabilities: -0.5 per prompt token, then one generated token
            last = body["prompt"]
            if isinstance(last, list) and last and isinstance(last[0], list):  # a batch of one prompt's token ids
                last = last[0]
            n = len(last) if isinstance(last, list) else len(str(last).split())
            choice = {"index": 0, "text": "", "finish_reason": "length",
                      "logprobs": {"token_logprobs": [None] + [-0.5] * (n - 1) + [-0.1],
                                   "top_logprobs": [None] + [{"t": -0.5}] * (n - 1) + [{"u": -0.1}]}}
        else:
            last = body["prompt"]
            choice = {"index": 0, "text": f"literal {len(str(last))}", "finish_reason": "stop"}
        answer = {"id": "x", "object": "chat.completion", "choices": [choice]}
        if self.usage:
            answer["usage"] = {"prompt_tokens": len(str(last).split()) + 3, "completion_tokens": 2}
        return json.dumps(answer).encode()
