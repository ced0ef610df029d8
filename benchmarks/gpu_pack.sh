#!/usr/bin/env bash
# Pack what a GPU check carries to an offline GPU machine, into .gpu-carry/ (git-ignored), and say whether it fits.
#
#   bash benchmarks/gpu_pack.sh            # here, with the package registry reachable and the data mirror beside
#
# A GPU machine here has no network and a CUDA image with torch, transformers, peft, accelerate, numpy, scipy,
# pandas, pyarrow, pluggy, pyyaml, jinja2, tabulate, tqdm (../shared/design/gpu-runs.md). It receives a copy of the
# working tree of at most 64 MiB, tracked files plus the folders named to carry. This writes
#   .gpu-carry/wheels/   metabench's own wheel and, at the lock's versions (requirements/lock.txt), lm-eval and the
#                        packages it needs that the image lacks: py3.12 manylinux wheels, sdist-only ones built here;
#   .gpu-carry/data/     the mirror folders the checked tasks read (MUNCH, Fig-QA, VUA-18, Meta4XNLI detection);
#   .gpu-carry/shapes/   config.json and tokenizer files of SmolLM2-135M and MiniLM-L6 (no weights: the check builds
#                        random-weight models of the real shapes on the GPU);
#   .gpu-carry/core.json the scoring work of `--tasks core` for a decoder (items, requests, tokens per job), for the
#                        8B projection (the GPU machine has only the carried data);
# then prints the tracked tree + carry against the 64 MiB limit and exits 1 if it does not fit.
# Then run on the GPU machine: bash benchmarks/gpu_check.sh   (carry: .gpu-carry)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
export METABENCH_DATA_DIR=${METABENCH_DATA_DIR:-$(cd .. && pwd)/shared/data}  # gpu_check.py --pack reads the tasks through it
DATA=$METABENCH_DATA_DIR
CARRY=.gpu-carry
LIMIT=$((64 * 1024 * 1024))
rm -rf "$CARRY" && mkdir -p "$CARRY/wheels" "$CARRY/data" "$CARRY/shapes"

# The carried packages: what lm-eval 0.4.13 and metabench import that the GPU image lacks (gpu-runs.md). transformers
# stays the image's own (13.5 MB more would not fit with the data); GPU_WHEELS_EXTRA adds names (e.g. transformers).
BINARY="lm-eval datasets evaluate dill multiprocess pytablewriter dataproperty mbstrdecoder chardet pathvalidate tabledata
tcolorpy typepy pytz more-itertools pydantic pydantic-core annotated-types typing-inspection openpyxl et-xmlfile gguf
regex xxhash ${GPU_WHEELS_EXTRA:-}"
SOURCE_ONLY="word2number sqlitedict rouge-score"
pinned() {  # name==version as the lock pins it (extras dropped: --no-deps installs exactly these)
  grep -iE "^$1(\[[^]]*\])?==" requirements/lock.txt | head -1 | sed -E 's/\[[^]]*\]//; s/ .*//' \
    || { echo "gpu_pack: $1 is not in requirements/lock.txt" >&2; exit 1; }
}
for name in $BINARY; do
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 \
    --abi abi3 --abi none --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
    --platform any -d "$CARRY/wheels" "$(pinned "$name")"
done
for name in $SOURCE_ONLY; do "$PY" -m pip wheel -q --no-deps -w "$CARRY/wheels" "$(pinned "$name")"; done
"$PY" -m pip wheel -q --no-deps --no-build-isolation -w "$CARRY/wheels" .

for folder in munch fig_qa vua/vua18_sequence_gao2018 meta4xnli/detection; do
  mkdir -p "$CARRY/data/$(dirname "$folder")" && cp -r "$DATA/$folder" "$CARRY/data/$folder"
done
cp "$DATA"/vua/SOURCE.md "$CARRY/data/vua/" 2>/dev/null || true
cp "$DATA"/meta4xnli/SOURCE.md "$CARRY/data/meta4xnli/" 2>/dev/null || true

"$PY" benchmarks/gpu_check.py --pack "$CARRY"

tree=$(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1)
sizes=$(for part in wheels data shapes; do du -sb "$CARRY/$part" | cut -f1; done | tr '\n' ' ')
"$PY" - "$tree" $sizes "$LIMIT" <<'PY'
import sys
tree, wheels, data, shapes, limit = map(int, sys.argv[1:])
mib = lambda n: n / 2**20
total = tree + wheels + data + shapes
print(f"gpu_pack: tracked tree {mib(tree):.1f} MiB + .gpu-carry (wheels {mib(wheels):.1f}, data {mib(data):.1f}, "
      f"shapes {mib(shapes):.1f}) = {mib(total):.1f} MiB of {mib(limit):.0f} MiB")
sys.exit("gpu_pack: over the limit: carry less data or fewer wheels" if total > limit else 0)
PY
