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

ALL = (RAY_CONNECT, SERVER_CONNECT, DOWNLOAD)


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


def probe(host: str, port: int, *, limit: Limit, what: str, fix: str) -> None:
    """One TCP connection to ``host:port`` within ``limit`` seconds, closed at once; a clear error otherwise."""
    seconds = limit.value
    try:
        with socket.create_connection((host, port), timeout=seconds):
            return
    except TimeoutError:
        why = f"no answer within {seconds:g} s"
    except socket.gaierror as exc:
        why = f"unknown host ({exc.strerror})"
    except OSError as exc:
        why = exc.strerror or str(exc)
    raise MetabenchError(f"cannot reach {what} at {host}:{port}: {why}",
                         hint=f"{fix}; a slow network can wait longer with {limit.env}=SECONDS")
