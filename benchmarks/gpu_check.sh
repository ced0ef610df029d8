#!/usr/bin/env bash
# The GPU check, offline: every GPU path of metabench beside its plain-library yardstick on one card, in one call
# (benchmarks/gpu_check.py says what runs). Writes $OUT/gpu_check.json and, beside it, the profiler's summary
# $OUT/gpu_check_profile.txt (default /tmp/metabench-gpu-check); docs/gpu.md 'Fairness' says how both sides are timed.
#
#   bash benchmarks/gpu_pack.sh                 # here first: wheels, data, shapes into .gpu-carry/ (fits 64 MiB?)
#   bash benchmarks/gpu_check.sh                # on the GPU machine, with .gpu-carry/ carried beside the tree
#   bash benchmarks/gpu_check.sh --dry-run      # the plan, and whether the interpreter has what it needs
#   bash benchmarks/gpu_check.sh --cpu-smoke    # every path on the CPU with tiny shapes (CI runs this)
#   bash benchmarks/gpu_check.sh --only tagger  # one path (repeatable)
#
# Nothing is downloaded. On a machine with .gpu-carry/wheels and no metabench importable (the GPU image), the
# wheels are installed with --no-index --no-deps into .gpu-site/ and put on PYTHONPATH, over the image's own torch,
# transformers and peft. Elsewhere (here, CI) the current environment runs it: .venv/bin/python if present.
# Commit a GPU run's JSON as benchmarks/results/gpu-<card>-<date>.json and regenerate docs/gpu.md with
# `python benchmarks/gpu_table.py --write`.
set -euo pipefail
cd "$(dirname "$0")/.."
# Folders the check empties or writes into: GPU_CHECK_WORK through '..' (x/sub/.. is x, the user's) is refused, and
# --pack DIR only into an absent or empty folder or one gpu_pack.sh made (wheels/ data/ shapes/ core.json tmp/).
if [[ "/${GPU_CHECK_WORK:-}/" == */../* ]]; then
  echo "gpu_check: GPU_CHECK_WORK=$(printf %q "$GPU_CHECK_WORK") goes through '..'; name a new or empty folder itself" >&2
  exit 2
fi
args=("$@")
for i in "${!args[@]}"; do
  case "${args[$i]}" in --pack) pack_dir=${args[$((i + 1))]:-} ;; --pack=*) pack_dir=${args[$i]#--pack=} ;; esac
done
if [[ -n "${pack_dir:-}" && ( -L "$pack_dir" || ( -e "$pack_dir" && ! -d "$pack_dir" ) ||
      -n "$(ls -A "$pack_dir" 2>/dev/null | grep -vxE 'wheels|data|shapes|core\.json|tmp')" ) ]]; then
  echo "gpu_check: --pack $(printf %q "$pack_dir"): holds files gpu_pack.sh did not write; refusing to write into it" \
       "(pack into a new folder, e.g. bash benchmarks/gpu_pack.sh, which makes .gpu-carry/)" >&2
  exit 2
fi
PY=${PYTHON:-}
if [[ -z "$PY" ]]; then
  if [[ -x .venv/bin/python ]]; then PY=.venv/bin/python; else PY=python3; fi
fi
# The import is tried without the current folder on sys.path: from the repository root `import metabench` would
# find the source tree (without the carried packages) and skip the install below.
if ! "$PY" -c "import sys; sys.path.remove(''); import metabench" 2>/dev/null; then
  if [[ ! -d .gpu-carry/wheels ]]; then
    echo "gpu_check: metabench is not importable by $PY and there is no .gpu-carry/wheels (run benchmarks/gpu_pack.sh" \
         "where the package registry is reachable, and carry .gpu-carry)" >&2
    exit 2
  fi
  if [[ ! -d .gpu-site ]]; then
    "$PY" -m pip install -q --no-index --no-deps --target .gpu-site .gpu-carry/wheels/*.whl
  fi
  export PYTHONPATH="$PWD/.gpu-site${PYTHONPATH:+:$PYTHONPATH}"
fi
if [[ -z "${METABENCH_DATA_DIR:-}" && ! -d .gpu-carry/data && -d ../shared/data ]]; then
  export METABENCH_DATA_DIR="$(cd .. && pwd)/shared/data"
fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 METABENCH_ALLOW_DOWNLOAD=0
exec "$PY" benchmarks/gpu_check.py "$@"
