#!/usr/bin/env bash
# The README's test command, and what CI runs: the whole suite as its two tiers, each spread over a worker per
# CPU (pytest-xdist). The quick tier (-m "not slow": unit tests, tiny random models, in-process CLI runs) comes
# first, so a broken change is reported in minutes; the slow tier (real models, CLI subprocesses, pip installs,
# Ray, the browser, the calibration replay) follows. Together they are every test, each run once.
# Usage: bash scripts/test.sh              both tiers (exit status 0 only if both pass)
#        bash scripts/test.sh quick        the quick tier: what to run after each change
#        bash scripts/test.sh slow         the slow tier alone
#        bash scripts/test.sh quick -x -k verify     further arguments go to pytest
# One test in a debugger: .venv/bin/python -m pytest tests/path/test_x.py::test_y (no workers).
set -uo pipefail
cd "$(dirname "$0")/.."
tiers=(quick slow)
case "${1:-}" in
  quick|slow) tiers=("$1"); shift ;;
esac
# --maxschedchunk 2: xdist's load scheduling hands each worker two tests at a time as it finishes, instead of a
# first chunk of a quarter of the suite each: tests/conftest.py puts the `heavy` ones (minutes) first, and in one
# first chunk they all went to one worker (the slow tier: 584 s wall for 942 s of tests on 2 workers).
run=(.venv/bin/python -m pytest -n "${METABENCH_TEST_WORKERS:-auto}" --maxschedchunk 2)
status=0
# The quick tier runs in a shuffled order, a fresh one each time (tests/shuffle_order.py): a test that passes only
# after another has run fails here, not for whoever runs it alone. METABENCH_TEST_SHUFFLE=SEED replays the order
# of a failed run (test.sh prints its seed), METABENCH_TEST_SHUFFLE=off keeps the files' order.
shuffle="${METABENCH_TEST_SHUFFLE:-$(( (RANDOM << 15) | RANDOM ))}"
for tier in "${tiers[@]}"; do
  order=()
  if [ "$tier" = quick ]; then
    marker="not slow"
    if [ "$shuffle" != off ]; then order=(--shuffle "$shuffle"); fi
  else
    marker="slow"
  fi
  echo "test.sh: the $tier tier (-m \"$marker\"${order:+, shuffled: METABENCH_TEST_SHUFFLE=$shuffle replays this order}), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
  started=$(date +%s)
  "${run[@]}" -m "$marker" ${order[@]+"${order[@]}"} "$@"
  code=$?
  echo "test.sh: the $tier tier took $(( $(date +%s) - started )) s (exit $code)"
  # 5: none of this tier's tests matched the arguments (-k ...), which is not a failure of the suite
  if [ "$code" != 0 ] && [ "$code" != 5 ]; then status=$code; fi
done
exit "$status"
