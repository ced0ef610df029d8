"""How fast the CLI answers `ls tasks`, next to the anchor (lm-eval's own `lm-eval ls tasks`).

Run: .venv/bin/python benchmarks/bench_cli_startup.py [--repeat 5]
Prints the median wall time of each command (fresh interpreter each time) and the ratios, plus the heavy
modules the metabench command imported (must be none).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tabulate import tabulate

BIN = Path(sys.executable).parent


def _median_time(cmd: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    probe = (
        "import sys; from metabench.cli import main; main(['ls', 'tasks']); "
        "print('HEAVY=' + ','.join(m for m in ('torch', 'transformers', 'lm_eval', 'datasets', 'pandas', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    heavy = next(line for line in out.splitlines() if line.startswith("HEAVY=")).removeprefix("HEAVY=")
    n_tasks = len(subprocess.run([str(BIN / "metabench"), "ls", "tasks"], capture_output=True, text=True, check=True).stdout.splitlines()) - 2

    rows = [["python -c pass", _median_time([sys.executable, "-c", "pass"], args.repeat)]]
    rows.append(["metabench --help", _median_time([str(BIN / "metabench"), "--help"], args.repeat)])
    rows.append(["metabench ls tasks", _median_time([str(BIN / "metabench"), "ls", "tasks"], args.repeat)])
    lm_eval = shutil.which("lm-eval", path=str(BIN))
    if lm_eval:
        rows.append(["lm-eval ls tasks (anchor)", _median_time([lm_eval, "ls", "tasks"], max(1, args.repeat // 2))])
    ours = rows[2][1]
    table = [[name, f"{seconds:.3f}", f"{seconds / ours:.2f}x"] for name, seconds in rows]
    print(tabulate(table, headers=["command", "median s", "vs metabench ls tasks"]))
    print(f"\nmetabench ls tasks listed {n_tasks} tasks; heavy modules imported: {heavy or 'none'}")
    print(f"registering the built-in datasets in-process: {_dataset_registration_s():.3f} s "
          "(every spec built, no loader imported; was a test's 0.5 s bound)")


def _dataset_registration_s() -> float:
    from metabench.data import plugin
    from metabench.plugins import _make_register
    from metabench.registry import Registry

    start = time.perf_counter()
    registry = Registry()
    plugin.metabench_register_datasets(_make_register(registry, "dataset", {"name": "metabench.data.plugin", "version": "bench"}))
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
