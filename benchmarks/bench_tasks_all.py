"""Per-run overhead of `metabench --tasks all --model majority`: cold and fully cached, phases that add up.

    python benchmarks/bench_tasks_all.py                 # 2 alternating rounds of (cold, cached)
    python benchmarks/bench_tasks_all.py --rounds 3 --model majority --model lookup
    python benchmarks/bench_tasks_all.py --baseline-repo /tmp/metabench-before   # also an older checkout, ABAB
    python benchmarks/bench_tasks_all.py --launcher serial   # one process (the default command uses every CPU)

Each round runs, as fresh processes timed end to end:

- **cold**: an empty METABENCH_CACHE_DIR (no answers, no parsed items, no file-hash stamps);
- **new model**: the cache the cold run filled without its answer cache (``answers.sqlite``: answers and
  remembered jobs): the data already parsed and verified, the model never run — what a new checkpoint pays
  on a machine that has run metabench before;
- **cached**: the same command again on the cache the cold run filled (every answer cached, every job
  remembered).

The three alternate (ABC ABC), since this machine is shared; with ``--baseline-repo`` the rounds also
alternate between this checkout and the other one (e.g. ``git archive 97a87da | tar -x -C /tmp/before``), and the ratio of the two is printed per mode, paired by
round. Wall seconds depend on the load; the
process's CPU seconds (user + sys, from ``os.wait4``: its worker processes included) much less, so both are printed, with the load
average. It then sums every job's recorded ``timings`` phases and compares them with the job's ``total_s``
(goal: within 5 %), and prints where the time of the last cached run went, phase by phase.

Finally it checks that speed changed nothing else: every run folder of every run (cold and cached, both
checkouts) must hold the same files as this checkout's first cold run, samples.jsonl byte for byte and
results.json once ``created`` and ``timings`` are removed (``bench_ray.run_files``); exit status 1 if not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ray import run_files  # noqa: E402 - the one definition of "the same run files"
LABELS = ("cold", "new-model", "cached")
PHASES = ("data_hash_s", "cache_lookup_s", "load_s", "fit_s", "predict_s", "score_s", "write_s")


def timed_run(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s of the child) for one command."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: some jobs failed/skipped (expected for baselines)
        sys.exit(f"command failed ({status}): {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime


def phase_table(runs: Path) -> tuple[dict[str, float], float, float, int]:
    """Summed phases, summed total_s, the worst per-job |sum - total| / total, and the number of jobs."""
    sums, total, worst, jobs = dict.fromkeys(PHASES, 0.0), 0.0, 0.0, 0
    for path in runs.rglob("results.json"):
        timings = json.loads(path.read_text())["timings"]
        parts = sum(timings.get(p) or 0.0 for p in PHASES)
        for p in PHASES:
            sums[p] += timings.get(p) or 0.0
        total += timings["total_s"]
        worst = max(worst, abs(parts - timings["total_s"]) / max(timings["total_s"], 1e-9))
        jobs += 1
    return sums, total, worst, jobs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--model", action="append", help="default: majority")
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--launcher", help="pass --launcher to the command (default: none, i.e. the CLI's auto: "
                        "worker processes for baselines on a multi-CPU machine)")
    parser.add_argument("--baseline-repo", type=Path, help="another checkout to measure alternately (e.g. before a change)")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="keep this environment's bytecode setting (by default the commands cache bytecode in a "
                             "scratch folder, warmed by one untimed dry run per checkout, as an installed package has "
                             "it: without it every process compiles the ~370 modules it imports, which a source tree run with "
                             "PYTHONDONTWRITEBYTECODE=1 pays on every command: `ls tasks` took 1.33-1.40 CPU s so, "
                             "0.92-0.97 s with bytecode, /usr/bin/time, load 10)")
    args = parser.parse_args(argv)
    models = args.model or ["majority"]

    work = Path(tempfile.mkdtemp(prefix="bench-tasks-all-"))
    cmd = [sys.executable, "-m", "metabench.cli", "run", "--tasks", args.tasks, "--no-progress"]
    for model in models:
        cmd += ["--model", model]
    if args.launcher:
        cmd += ["--launcher", args.launcher]
    repos = {"this": REPO, **({"baseline": args.baseline_repo.resolve()} if args.baseline_repo else {})}
    results = {name: {label: [] for label in LABELS} for name in repos}
    base_env = dict(os.environ)
    if not args.no_bytecode:
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
        base_env["PYTHONPYCACHEPREFIX"] = str(work / "bytecode")
        for name, repo in repos.items():
            warm = {**base_env, "METABENCH_CACHE_DIR": str(work / f"warm-{name}"), "PYTHONPATH": str(repo)}
            subprocess.run([*cmd, "--dry-run", "-o", str(work / "warm-runs")], env=warm, cwd=repo,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    shown = " ".join(cmd[2:]) if len(args.tasks) < 200 else " ".join(cmd[2:]).replace(args.tasks, f"<{args.tasks.count(',') + 1} tasks>")
    print(f"{shown}\n{args.rounds} alternating rounds; bytecode {'as this environment has it' if args.no_bytecode else 'cached'}; "
          f"load average at start {os.getloadavg()}")
    for rnd in range(args.rounds):
        for name, repo in repos.items():
            cache = work / f"cache-{name}{rnd}"
            env = {**base_env, "METABENCH_CACHE_DIR": str(cache), "PYTHONPATH": str(repo)}
            for label in LABELS:
                out = work / f"runs-{name}-{label}{rnd}"
                if label == "new-model":  # the cold run's cache without its answers
                    data_only = work / f"cache-{name}{rnd}-data"
                    shutil.copytree(cache, data_only, ignore=shutil.ignore_patterns("answers.sqlite*"))
                    env = {**env, "METABENCH_CACHE_DIR": str(data_only)}
                else:
                    env = {**env, "METABENCH_CACHE_DIR": str(cache)}
                wall, cpu = timed_run([*cmd, "-o", str(out)], env, repo)
                results[name][label].append({"wall_s": wall, "cpu_s": cpu, "load": os.getloadavg()[0]})
                print(f"round {rnd} {name:8s} {label:6s}: wall {wall:6.1f} s   cpu {cpu:6.1f} s   "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)

    for name in repos:
        for label in LABELS:
            runs = work / f"runs-{name}-{label}{args.rounds - 1}"
            sums, total, worst, jobs = phase_table(runs)
            results[name][f"{label}_phases"] = {**sums, "total_s": total, "worst_job_gap": worst, "jobs": jobs}
            walls = [r["wall_s"] for r in results[name][label]]
            cpus = [r["cpu_s"] for r in results[name][label]]
            print(f"\n{name} {label}: median wall {statistics.median(walls):.1f} s, median cpu "
                  f"{statistics.median(cpus):.1f} s; {jobs} run folders; phases summed over jobs (s):")
            for p in PHASES:
                print(f"  {p:15s} {sums[p]:7.2f}")
            print(f"  {'sum':15s} {sum(sums.values()):7.2f}   jobs' total_s {total:7.2f}   "
                  f"worst per-job gap {100 * worst:.1f} %  (goal <= 5 %)")
    if "baseline" in repos:
        print("\nthis / baseline, paired by round (median over rounds; below 1: this checkout is faster):")
        for label in LABELS:
            pairs = list(zip(results["this"][label], results["baseline"][label]))
            wall = statistics.median(a["wall_s"] / b["wall_s"] for a, b in pairs)
            cpu = statistics.median(a["cpu_s"] / b["cpu_s"] for a, b in pairs)
            results[f"{label}_ratio"] = {"wall": wall, "cpu": cpu}
            print(f"  {label:9s} wall {wall:5.2f}   cpu {cpu:5.2f}")
    reference = run_files(work / "runs-this-cold0")
    identical = all(run_files(work / f"runs-{name}-{label}{rnd}") == reference
                    for name in repos for label in LABELS for rnd in range(args.rounds))
    print(f"\nrun files identical across all {len(LABELS) * len(repos) * args.rounds} runs ({len(reference)} files, "
          f"results.json without created/timings): {identical}")
    results["identical"] = identical
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
