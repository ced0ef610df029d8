"""The download path against a local HTTP server on 127.0.0.1 serving a mirror-layout folder.

No external network: METABENCH_DATA_URL points at the local server. The handler can fail a path a given
number of times (HTTP 503), or announce more bytes than it sends (a cut connection).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import http.server
import socket
import threading
from collections import Counter
from functools import partial
from pathlib import Path

import pytest

from metabench.commands import data as commands
from metabench.data import download
from metabench.data.context import DataContext
from metabench.data.resolve import cache_dir, resolve_file
from metabench.data.spec import DataFile, DatasetSpec
from metabench.errors import DataError

BODY = (Path(__file__).parent / "fixtures" / "conll_ok.tsv").read_bytes()
SHA = hashlib.sha256(BODY).hexdigest()


class _Handler(http.server.SimpleHTTPRequestHandler):
    hits: Counter
    fail: dict  # path -> remaining 503 answers
    cut: set  # paths answered with a Content-Length larger than the body

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.hits[self.path] += 1
        if self.fail.get(self.path, 0) > 0:
            self.fail[self.path] -= 1
            self.send_error(503, "busy")
            return
        if self.path in self.cut:
            data = (Path(self.directory) / self.path.lstrip("/")).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data) + 100))
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A threaded HTTP server on 127.0.0.1 serving tmp_path/served; METABENCH_DATA_URL points at it."""
    root = tmp_path / "served"
    root.mkdir()
    handler = type("Handler", (_Handler,), {"hits": Counter(), "fail": {}, "cut": set()})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    for name in ("METABENCH_DATA_DIR", "METABENCH_ALLOW_DOWNLOAD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("METABENCH_DATA_URL", f"http://127.0.0.1:{httpd.server_address[1]}")
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("METABENCH_DOWNLOAD_TIMEOUT", "5")
    sleeps: list[float] = []
    monkeypatch.setattr(download, "_sleep", sleeps.append)
    handler.root, handler.sleeps = root, sleeps
    try:
        yield handler
    finally:
        httpd.shutdown()
        httpd.server_close()


def _serve(server, rel: str, data: bytes) -> None:
    path = server.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _cache_files() -> list[str]:
    """Everything under the cache, folders included: a failed download must not leave even those."""
    root = cache_dir()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_download_success_into_cache(server):
    _serve(server, "toy/a.tsv", BODY)
    local = resolve_file(DataFile("toy/a.tsv", SHA), download=True, progress=False)
    assert local == cache_dir() / "toy/a.tsv" and local.read_bytes() == BODY
    assert server.hits["/toy/a.tsv"] == 1
    assert resolve_file(DataFile("toy/a.tsv", SHA), download=True) == local  # now from the cache
    assert server.hits["/toy/a.tsv"] == 1


def test_404_is_a_clear_error_without_retries(server):
    with pytest.raises(DataError, match="HTTP 404") as err:
        resolve_file(DataFile("toy/none.tsv", SHA), download=True, progress=False)
    assert "toy/none.tsv" in err.value.message
    assert server.hits["/toy/none.tsv"] == 1 and server.sleeps == []
    assert _cache_files() == []


def test_wrong_hash_is_rejected_and_nothing_is_cached(server):
    _serve(server, "toy/a.tsv", BODY[:-5])  # a truncated copy served in full
    with pytest.raises(DataError) as err:
        resolve_file(DataFile("toy/a.tsv", SHA), download=True, progress=False)
    assert SHA in err.value.message and hashlib.sha256(BODY[:-5]).hexdigest() in err.value.message
    assert "rejected" in err.value.hint
    assert _cache_files() == []


def test_cut_transfer_is_retried_then_fails_leaving_nothing(server, monkeypatch):
    monkeypatch.setenv("METABENCH_DOWNLOAD_RETRIES", "2")
    _serve(server, "toy/a.tsv", BODY)
    server.cut.add("/toy/a.tsv")
    with pytest.raises(DataError, match="after 3 attempts: truncated transfer"):
        resolve_file(DataFile("toy/a.tsv", SHA), download=True, progress=False)
    assert server.hits["/toy/a.tsv"] == 3 and server.sleeps == [1.0, 2.0]
    assert _cache_files() == []


def test_server_error_then_success(server):
    _serve(server, "toy/a.tsv", BODY)
    server.fail["/toy/a.tsv"] = 2
    local = resolve_file(DataFile("toy/a.tsv", SHA), download=True, progress=False)
    assert local.read_bytes() == BODY
    assert server.hits["/toy/a.tsv"] == 3 and len(server.sleeps) == 2


def test_gzip_file_from_mirror_is_stored_as_served(server):
    packed = gzip.compress(BODY)
    _serve(server, "toy/a.tsv.gz", packed)
    local = resolve_file(DataFile("toy/a.tsv.gz", SHA, compressed="gzip"), download=True, progress=False)
    assert local.read_bytes() == packed


def test_gzip_file_from_upstream_is_compressed_on_write(server, monkeypatch):
    _serve(server, "upstream/a.naf", BODY)
    url = download.mirror_url() + "upstream/a.naf"
    monkeypatch.setattr(download, "source_url", lambda declared: (url, False))
    local = resolve_file(DataFile("toy/a.naf.gz", SHA, compressed="gzip"), download=True, progress=False)
    assert gzip.decompress(local.read_bytes()) == BODY


def test_connection_refused_retries_and_fails_fast(server, monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("METABENCH_DATA_URL", f"http://127.0.0.1:{port}/")
    monkeypatch.setenv("METABENCH_DOWNLOAD_RETRIES", "1")
    with pytest.raises(DataError, match="after 2 attempts"):
        resolve_file(DataFile("toy/a.tsv", SHA), download=True, progress=False)
    assert _cache_files() == []


def test_no_download_unless_allowed(server, monkeypatch):
    _serve(server, "toy/a.tsv", BODY)
    with pytest.raises(DataError, match="not found"):
        resolve_file(DataFile("toy/a.tsv", SHA))  # default: download=False
    monkeypatch.setenv("METABENCH_ALLOW_DOWNLOAD", "0")
    spec = DatasetSpec("toy", (DataFile("toy/a.tsv", SHA),), "x:y", ("train",))
    with pytest.raises(DataError, match="not found"):
        DataContext(spec).path("toy/a.tsv")
    assert server.hits["/toy/a.tsv"] == 0
    monkeypatch.delenv("METABENCH_ALLOW_DOWNLOAD")
    assert DataContext(spec).path("toy/a.tsv").read_bytes() == BODY


def test_no_location_known(monkeypatch):
    monkeypatch.delenv("METABENCH_DATA_URL", raising=False)
    with pytest.raises(DataError, match="no upstream location"):
        download.download_file(DataFile("toy/a.tsv", SHA), Path("/nonexistent/a.tsv"))


def test_upstream_url_is_the_pinned_raw_file(monkeypatch):
    monkeypatch.delenv("METABENCH_DATA_URL", raising=False)
    declared = DataFile("vua/x.csv", SHA, repo="o/r", commit="abc", upstream_path="data/x.csv")
    assert download.source_url(declared) == ("https://raw.githubusercontent.com/o/r/abc/data/x.csv", False)
    monkeypatch.setenv("METABENCH_DATA_URL", "http://127.0.0.1:1/mirror")
    assert download.source_url(declared) == ("http://127.0.0.1:1/mirror/vua/x.csv", True)


def test_data_pull_command(server, monkeypatch, capsys):
    _serve(server, "toy/a.tsv", BODY)
    spec = DatasetSpec("toy", (DataFile("toy/a.tsv", SHA),), "x:y", ("train",))
    monkeypatch.setattr(commands, "_specs", lambda names=None: [spec])
    args = argparse.Namespace(names=["toy"], force=False)
    assert commands.cmd_pull(args) == 0
    assert "1 downloaded" in capsys.readouterr().out
    assert commands.cmd_pull(args) == 0
    assert "1 already in the cache" in capsys.readouterr().out
    server.root.joinpath("toy/a.tsv").write_bytes(b"changed")
    assert commands.cmd_pull(argparse.Namespace(names=["toy"], force=True)) == 1
    assert "sha256" in capsys.readouterr().err
    assert (cache_dir() / "toy/a.tsv").read_bytes() == BODY  # the verified copy was not replaced


def test_unresolvable_host_fails_at_once_without_retries(server, monkeypatch):
    calls = []

    def offline(request, timeout):
        calls.append(request.full_url)
        raise download.urllib.error.URLError(socket.gaierror(-3, "Temporary failure in name resolution"))

    monkeypatch.setattr(download.urllib.request, "urlopen", offline)
    with pytest.raises(DataError, match="cannot resolve the host") as err:
        resolve_file(DataFile("toy/a.tsv", SHA), download=True, progress=False)
    assert len(calls) == 1 and server.sleeps == []
    assert "METABENCH_ALLOW_DOWNLOAD=0" in err.value.hint
