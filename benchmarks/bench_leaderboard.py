"""`metabench leaderboard build` of the committed runs: one process against one per CPU, cold and cached.

    python benchmarks/bench_leaderboard.py               # 1 round of (cold, cached) x (--jobs 1, default)
    python benchmarks/bench_leaderboard.py --rounds 2 --runs leaderboard/runs

Each build is a fresh process timed end to end (wall seconds, and CPU seconds of it and its workers from
``os.wait4``). **cold**: an empty METABENCH_CACHE_DIR (no parsed items, no task index, no verified metrics);
**cached**: the same build again on the cache the cold one filled. The two job settings alternate within a
round (AB AB), since this machine is shared; the ratio default/``--jobs 1`` is printed per mode, paired by
round, with the load average beside it. The goal (#39): the committed runs in at most 60 s on this 2-CPU
machine.

Finally it checks that speed changed nothing: every build's site must hold the same files, byte for byte, as
the first ``--jobs 1`` build's; exit status 1 if not.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETTINGS = {"one process": ["--jobs", "1"], "default": []}


def build(runs: Path, out: Path, cache: Path, extra: list[str]) -> tuple[float, float]:
    """(wall s, CPU s with its workers) of one build into ``out`` with the cache folder ``cache``."""
    env = {**os.environ, "METABENCH_CACHE_DIR": str(cache)}
    cmd = [sys.executable, "-m", "metabench.cli", "leaderboard", "build", str(runs), "-o", str(out), "--no-progress",
           *extra]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: some runs rejected (still a site)
        sys.exit(f"build failed ({status}): {' '.join(cmd)}\n{proc.stderr.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime


def site_files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=REPO / "leaderboard" / "runs")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-leaderboard-"))
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    reference: dict[str, bytes] | None = None
    different = []
    try:
        for round_number in range(args.rounds):
            for label, extra in SETTINGS.items():
                cache = work / f"cache-{round_number}-{len(times)}"
                for mode in ("cold", "cached"):
                    out = work / f"site-{round_number}-{label.replace(' ', '-')}-{mode}"
                    wall, cpu = build(args.runs, out, cache, extra)
                    times.setdefault((label, mode), []).append((wall, cpu))
                    print(f"round {round_number + 1} {label:12} {mode:6}: {wall:6.1f} s wall, {cpu:6.1f} s CPU "
                          f"(load {os.getloadavg()[0]:.1f})", flush=True)
                    files = site_files(out)
                    if reference is None:
                        reference = files
                    elif files != reference:
                        different.append(f"{label} {mode} round {round_number + 1}")
                    shutil.rmtree(out)
                shutil.rmtree(cache)
        print(f"\n{os.cpu_count()} CPUs; best of {args.rounds} round(s)")
        for mode in ("cold", "cached"):
            one, default = times[("one process", mode)], times[("default", mode)]
            ratios = [d[0] / o[0] for o, d in zip(one, default)]
            print(f"{mode:6}: --jobs 1 {min(w for w, _ in one):6.1f} s, default {min(w for w, _ in default):6.1f} s "
                  f"wall; default/--jobs 1 = {min(ratios):.2f} (paired by round)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if different:
        print(f"DIFFERENT sites: {', '.join(different)}")
        return 1
    print("every build wrote the same files, byte for byte")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
