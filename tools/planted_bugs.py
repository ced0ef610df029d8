"""Plant one bug at a time in a copy of a checkout and see which tier of the test suite catches it.

A faster suite must not be a weaker one: each bug below sits in a different layer (a metric, a parser, the
store's digest check, a statistic, the gate's exit code) and each tier should fail on each. A bug is planted in
a fresh clone of the given checkout's HEAD (never in the working tree), the tier runs with ``-x`` (stop at the
first failure, whose test is the one that caught it) and the clone goes. The full tier contains the quick one,
so a bug the quick tier catches is caught by the full tier too; ``--tiers quick full`` runs both anyway.

    .venv/bin/python tools/planted_bugs.py                        # this checkout, the quick tier
    .venv/bin/python tools/planted_bugs.py --repo ../base --tiers quick full --json out.json
    .venv/bin/python tools/planted_bugs.py --control    # first the tier with no bug: it must pass

The clone imports its own ``metabench`` (``PYTHONPATH``) with this checkout's ``.venv``; a bug whose text is not
found (the code moved) is reported as such rather than silently skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Bug:
    name: str
    layer: str
    path: str
    old: str
    new: str


BUGS = (
    Bug("macro-F1 averages precision", "metric", "metabench/metrics/classification.py",
        'scores = [prf(*_counts(pairs, label)[:3])["f1"] for label in chosen]',
        'scores = [prf(*_counts(pairs, label)[:3])["precision"] for label in chosen]'),
    Bug("CoNLL reader drops a file's last sentence", "parser", "metabench/data/readers.py",
        "        sentence.append(fields)\n    if sentence:\n        yield start, sentence\n",
        "        sentence.append(fields)\n"),
    Bug("samples digest never compared", "store", "metabench/store.py",
        "    if digest.hexdigest() != expected:\n", "    if False and digest.hexdigest() != expected:\n"),
    Bug("McNemar exact p one-sided", "statistic", "metabench/stats/paired.py",
        "pvalue = min(1.0, 2.0 * float(scipy.stats.binom.cdf(min(b, c), discordant, 0.5)))",
        "pvalue = min(1.0, 1.0 * float(scipy.stats.binom.cdf(min(b, c), discordant, 0.5)))"),
    Bug("gate exits 0 on a regression", "gate", "metabench/report/gate/__init__.py",
        "        if self.regressions:\n            return 1\n", "        if self.regressions:\n            return 0\n"),
)
TIERS = {"quick": ["-m", "not slow"], "full": []}
FAILED = re.compile(r"^FAILED (\S+)", re.M)


def clone(repo: Path, into: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(repo), str(into)], check=True)
    (into / ".venv").symlink_to(Path(sys.prefix))
    return into


def plant(root: Path, bug: Bug) -> bool:
    path = root / bug.path
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if text.count(bug.old) != 1:
        return False
    path.write_text(text.replace(bug.old, bug.new), encoding="utf-8")
    return True


def run_tier(root: Path, tier: str, workers: str, timeout: int) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    env.pop("CI", None)  # the clone's own untracked files are not what this measures
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-n", workers,
               "--durations=0", "-o", "addopts=--import-mode=importlib", *TIERS[tier]]
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"caught": False, "by": [], "exit": None, "seconds": round(time.monotonic() - started)}
    failed = FAILED.findall(done.stdout)  # under xdist, -x ends the session as interrupted (exit 2)
    return {"caught": bool(failed) and done.returncode in (1, 2), "by": failed, "exit": done.returncode,
            "seconds": round(time.monotonic() - started)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose HEAD is cloned (default: this one)")
    parser.add_argument("--tiers", nargs="+", choices=sorted(TIERS), default=["quick"])
    parser.add_argument("--workers", default="auto", help="pytest-xdist's -n (default auto)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per tier run (default 1800)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--control", action="store_true",
                        help="first run each tier with no bug planted: it must pass, or a 'catch' means nothing")
    args = parser.parse_args(argv)
    rows = []
    bugs = ((Bug("none (control)", "-", "", "", ""),) if args.control else ()) + BUGS
    with tempfile.TemporaryDirectory(prefix="planted-") as scratch:
        for number, bug in enumerate(bugs):
            for tier in args.tiers:
                root = clone(args.repo.resolve(), Path(scratch) / f"{number}-{tier}")
                row = {"bug": bug.name, "layer": bug.layer, "tier": tier}
                row.update(run_tier(root, tier, args.workers, args.timeout) if not bug.path or plant(root, bug)
                           else {"caught": None, "by": [], "exit": None, "seconds": 0})
                rows.append(row)
                shutil.rmtree(root)
                by = ", ".join(row["by"]) or ("(text not found: the code moved)" if row["caught"] is None else "-")
                verdict = ("passed" if row["exit"] == 0 else f"FAILED ({by})") if bug.layer == "-" else \
                    "caught" if row["caught"] else "MISSED"
                print(f"| {bug.layer} | {bug.name} | {tier} | {verdict} | {by} | "
                      f"{row['seconds']} s |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    control_passed = all(r["exit"] == 0 for r in rows if r["layer"] == "-")
    return 0 if control_passed and all(r["caught"] for r in rows if r["layer"] != "-") else 1


if __name__ == "__main__":
    raise SystemExit(main())
