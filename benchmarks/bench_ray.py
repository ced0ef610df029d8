"""The run matrix on worker processes and on Ray against the serial launcher: wall time and identical run files.

    python benchmarks/bench_ray.py                    # --tasks all --model majority --model lookup, 2 rounds
    python benchmarks/bench_ray.py --rounds 3 --workers 2

Each round runs, as fresh processes with an empty METABENCH_CACHE_DIR each (no answers, no parsed items),

- ``serial``:    ``metabench run --tasks all --model majority --model lookup --launcher serial``;
- ``processes``: the same with ``--launcher processes --workers 2`` (what the default ``auto`` picks for
  these baselines on a 2-CPU machine);
- ``ray``:       the same with ``--launcher ray --workers 2`` (a local Ray started by the command itself, so
  Ray's start-up is inside the timed wall),

- ``cluster`` (with ``--cluster``): the same against a Ray already running on this machine (``ray start
  --head --num-cpus W``, started once before the rounds and not timed, stopped after), through
  ``--ray-address``: what a run pays when Ray's own start-up is not part of it;

alternating (serial, processes, ray, [cluster,] serial, ...) because the machine may be shared. It prints the walls,
the ratio of the medians to serial (goal: >= 1.6 with 2 workers) and whether the run files are identical:
every samples.jsonl byte for byte, and every results.json once ``created`` and ``timings`` (which differ
between any two runs) are removed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_files(folder: Path) -> dict[str, object]:
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink() or any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue  # the store's locks, staging folders and `latest` links
        if path.name == "results.json":
            data = json.loads(path.read_text())
            data.pop("created", None)
            data.pop("timings", None)
            data.get("metabench", {}).pop("git", None)  # the commit: another one for a --baseline-repo checkout
            out[rel] = data
        elif path.is_file():
            out[rel] = path.read_bytes()
    return out


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: some jobs failed (baselines on tasks they cannot run)
        sys.exit(f"command failed ({status}): {' '.join(cmd)}\n{proc.stderr.read().decode()[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--model", action="append", help="default: majority and lookup")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--cluster", action="store_true", help="also time --ray-address to a running local Ray")
    args = parser.parse_args(argv)
    models = args.model or ["majority", "lookup"]

    work = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    base = [sys.executable, "-m", "metabench.cli", "run", "--tasks", args.tasks, "--no-progress"]
    for model in models:
        base += ["--model", model]
    sides = {"serial": ["--launcher", "serial"], "processes": ["--launcher", "processes", "--workers", str(args.workers)],
             "ray": ["--launcher", "ray", "--workers", str(args.workers)]}
    head = None
    if args.cluster:
        head, address = start_cluster(work, args.workers)
        sides["cluster"] = ["--launcher", "ray", "--ray-address", address, "--workers", str(args.workers)]
    walls: dict[str, list[float]] = {side: [] for side in sides}
    print(f"{' '.join(base[2:])}; {args.rounds} alternating rounds; load average {os.getloadavg()}")
    try:
        rounds(args, base, sides, walls, work)
    finally:
        if head is not None:  # only the Ray this script started (never `ray stop`: others may run one)
            os.killpg(head.pid, signal.SIGTERM)
            try:
                head.wait(timeout=20)
            finally:
                os.killpg(head.pid, signal.SIGKILL)  # Ray's services that outlived `ray start`
    reference = run_files(work / "runs-serial0")
    identical = all(run_files(work / f"runs-{side}{rnd}") == reference for side in sides for rnd in range(args.rounds))
    ratios = {side: statistics.median(walls["serial"]) / statistics.median(walls[side]) for side in sides if side != "serial"}
    print(f"\nmedian wall: serial {statistics.median(walls['serial']):.1f} s; " + "; ".join(
        f"{side} ({args.workers} workers) {statistics.median(walls[side]):.1f} s -> {ratios[side]:.2f}x" for side in ratios)
        + " (goal >= 1.6)")
    print(f"run files identical across all {len(sides) * args.rounds} runs ({len(reference)} files): {identical}")
    if args.json:
        args.json.write_text(json.dumps({"walls": walls, "ratios": ratios, "identical": identical,
                                         "files": len(reference)}, indent=2) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if identical else 1


def start_cluster(work: Path, workers: int, port: int = 6390) -> tuple[subprocess.Popen, str]:
    """A local Ray head (loopback only, no dashboard) in its own process group, started before the timed
    rounds (``ray start --block``: stopping that process stops the cluster); the process and its address."""
    # No token authentication on this private loopback cluster (Ray turns it on when ~/.ray/auth_token exists);
    # set here, the timed `metabench run --ray-address` processes inherit it.
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    cmd = [str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", "--port", str(port),
           "--num-cpus", str(workers), "--include-dashboard=false", "--node-ip-address", "127.0.0.1",
           "--disable-usage-stats", "--temp-dir", str(work / "ray")]
    started = time.perf_counter()
    head = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if head.poll() is not None or time.perf_counter() - started > 300:
                sys.exit("the local Ray cluster did not start")
            time.sleep(0.5)
    time.sleep(3)  # the raylet registers with the GCS just after the GCS port opens
    print(f"local Ray cluster started in {time.perf_counter() - started:.1f} s (not timed in the rounds)")
    return head, f"127.0.0.1:{port}"


def rounds(args, base: list[str], sides: dict, walls: dict, work: Path) -> None:
    for rnd in range(args.rounds):
        for side, extra in sides.items():
            cache = work / f"cache-{side}{rnd}"
            env = {**os.environ, "METABENCH_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}
            wall, cpu = timed([*base, *extra, "-o", str(work / f"runs-{side}{rnd}")], env)
            walls[side].append(wall)
            print(f"round {rnd} {side:6s}: wall {wall:6.1f} s  (driver process cpu {cpu:5.1f} s, "
                  f"load {os.getloadavg()[0]:.1f})", flush=True)
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
