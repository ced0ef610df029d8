"""Connections to other machines: one timeout per kind, and a probe that fails fast on a dead address.

A client library asked to reach an address where nothing listens may retry for ever (``ray.init`` on
``127.0.0.1:1``) or for minutes (an OpenAI client's retries times its read timeout). Before handing an
address to such a library, metabench opens one TCP connection to it under the timeout of its kind: nothing
listening, an unknown host or a filtered port is then an error within that time, naming the address, the
variable that sets the timeout and the fix. docs/reliability.md lists the timeouts.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from .errors import MetabenchError
from .limits import Limit

#: Joining a Ray cluster (``--ray-address``): the reachability probe; Ray's own start-up has its own waits.
RAY_CONNECT = Limit("Ray cluster connection", "METABENCH_RAY_CONNECT_TIMEOUT_S", 10.0, "seconds")
#: Reaching an OpenAI-compatible server (``--model openai:base_url=...``) before the first request; each request
#: then has the adapter's ``timeout=`` (default 300 s) and ``max_retries=`` (default 3).
SERVER_CONNECT = Limit("model server connection", "METABENCH_SERVER_CONNECT_TIMEOUT_S", 10.0, "seconds")
#: One download attempt of a data file (``metabench/data/download.py``; attempts are bounded too).
DOWNLOAD = Limit("data file download, per attempt", "METABENCH_DOWNLOAD_TIMEOUT", 15.0, "seconds")

#: Joining that cluster once it answers (``ray.init``), which can otherwise wait for minutes on a cluster it
#: cannot use (a head whose recorded address is not reachable from here).
RAY_JOIN = Limit("joining a Ray cluster", "METABENCH_RAY_JOIN_TIMEOUT_S", 120.0, "seconds")

ALL = (RAY_CONNECT, SERVER_CONNECT, DOWNLOAD, RAY_JOIN)


def split_host_port(address: str, *, option: str, example: str, default_port: int | None = None) -> tuple[str, int]:
    """``HOST:PORT`` (or ``scheme://HOST:PORT/...``) as (host, port); a malformed address is a usage error."""
    text = address.strip()
    parts = urlsplit(text if "://" in text else f"//{text}")
    try:
        port = parts.port if parts.port is not None else default_port
    except ValueError:  # a port that is not a number, or outside 0-65535
        port = None
    if not parts.hostname or port is None or not 0 < port < 65536 or any(c.isspace() for c in text):
        raise MetabenchError(f"{option} {address!r}: not an address of the form HOST:PORT", hint=f"e.g. {option} {example}")
    return parts.hostname, port


#: HTTP/2's client connection preface and an empty SETTINGS frame: a gRPC server (Ray's GCS, Ray Client)
#: answers with its own SETTINGS frame (RFC 9113, 3.4), whatever else it serves.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_SETTINGS = 0x04


def probe(host: str, port: int, *, limit: Limit, what: str, fix: str, grpc: bool = False) -> None:
    """One TCP connection to ``host:port`` within ``limit`` seconds, closed at once; a clear error otherwise.
    ``grpc``: the listener must also answer as a gRPC (HTTP/2) server within the limit; a client library that
    reaches some other server may wait on it for ever (``ray.init`` does)."""
    seconds = limit.value
    try:
        with socket.create_connection((host, port), timeout=seconds) as connection:
            if grpc and not _answers_http2(connection):
                raise MetabenchError(f"{what} at {host}:{port}: something listens there, but it is not a Ray cluster "
                                     f"(no gRPC answer within {seconds:g} s)",
                                     hint=f"{fix}; a slow network can wait longer with {limit.env}=SECONDS")
            return
    except TimeoutError:
        why = f"no answer within {seconds:g} s"
    except socket.gaierror as exc:
        why = f"unknown host ({exc.strerror})"
    except OSError as exc:
        why = exc.strerror or str(exc)
    raise MetabenchError(f"cannot reach {what} at {host}:{port}: {why}",
                         hint=f"{fix}; a slow network can wait longer with {limit.env}=SECONDS")


def _answers_http2(connection: socket.socket) -> bool:
    try:
        connection.sendall(_HTTP2_PREFACE)
        frame = connection.recv(9)
    except OSError:  # TimeoutError included: silence within the limit
        return False
    return len(frame) >= 4 and frame[3] == _SETTINGS


def within(limit: Limit, call, *, what: str, fix: str):
    """``call()``'s result, or an error naming ``what`` if it has not returned within ``limit`` seconds. The call
    runs in a daemon thread that is left behind when it overruns (a client library's connect cannot be
    cancelled from outside), so the command can still say why and exit."""
    import threading

    outcome: dict = {}

    def target():
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name=f"metabench: {what}", daemon=True)
    thread.start()
    thread.join(limit.value)
    if thread.is_alive():
        raise MetabenchError(f"{what}: no answer within {limit.value:g} s", hint=f"{fix}; or wait longer with {limit.env}=SECONDS")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
