"""``metabench serve-local``: without llama-cpp-python's server, a clear error naming the setup line that
installs it; with a server, the spec it prints reaches it (checked with a stand-in for llama.cpp's server: the
fake OpenAI server in a process of its own, started and stopped as the real one is)."""

from __future__ import annotations

import importlib.util
import socket
import tempfile
import sys
from pathlib import Path

import pytest

from metabench import plugins
from metabench.cli import main
from metabench.models import local_server

HERE = Path(__file__).parent


def test_without_the_server_extra_the_error_names_the_setup_line(capsys):
    if importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("uvicorn") is not None:
        pytest.skip("llama-cpp-python's server is installed here")
    assert main(["serve-local"]) == 2
    err = capsys.readouterr().err
    assert "llama-cpp-python's OpenAI-compatible server is not installed" in err
    assert "METABENCH_LLAMA_SERVER=1 bash scripts/setup.sh" in err


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_printed_spec_reaches_the_started_server(monkeypatch, tmp_path, capsys):
    pytest.importorskip("tenacity", reason="lm-eval's API models need the lm-eval[api] extra (metabench[api])")
    stand_in = (f"import sys; sys.path.insert(0, {str(HERE)!r}); from fake_openai import FakeServer; "
                f"FakeServer(port={{port}}).httpd.serve_forever()")
    monkeypatch.setattr(local_server, "check_server_installed", lambda: None)
    monkeypatch.setattr(local_server, "find_gguf", lambda: tmp_path / local_server.GGUF)
    monkeypatch.setattr(local_server, "server_command",
                        lambda gguf, host, port, threads, n_ctx: [sys.executable, "-c", stand_in.format(port=port)])
    monkeypatch.setattr(plugins, "default_registry", lambda: plugins.load())
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the server's log folder
    port = _free_port()
    assert main(["serve-local", "--check", "--port", str(port)]) == 0
    out = capsys.readouterr().out
    assert f"--model openai:smollm2,base_url=http://127.0.0.1:{port}/v1\n" in out
    assert "check: answered 'literal 48'; 1 request(s)" in out and "2 out (server usage)" in out


def test_a_server_that_exits_is_named_with_its_output(tmp_path):
    with pytest.raises(Exception, match=r"exited with status 3; its output .* ends:\n.*port in use") as caught:
        local_server.start([sys.executable, "-c", "print('port in use'); raise SystemExit(3)"], "127.0.0.1",
                           _free_port(), tmp_path / "server.log", ready_s=30)
    assert "--port" in str(caught.value)
