#!/usr/bin/env python
"""Bring run folders written before the atomic store up to its layout (a one-off tool, safe to re-run).

Two things changed (see ``metabench/store.py``): ``results.json`` records ``samples_sha256``, the digest of
the ``samples.jsonl`` beside it, which every reader checks; and a run's folder name says what changes its
answer set (``@seeds=…`` when not the protocol's seeds, ``@limit=N`` when the test split was cut). This
adds the digest of the samples file as it is (its bytes are not rewritten) and renames the folder.

Usage::

    python tools/migrate_runs.py leaderboard/runs          # migrate in place
    python tools/migrate_runs.py --dry-run runs/           # say what would change
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

from metabench.models.spec import parse_model_spec
from metabench.plugins import default_registry
from metabench.store import DIGEST, RESULTS, SAMPLES, run_folders, run_name


def protocol_seeds(results: dict, seeded: bool) -> list[int]:
    """The seeds the run would have had without --seeds, as the runner computes them."""
    section = (results["task"]["config"].get("protocol") or {}).get(results["model"]["family"]) or {}
    seeds = section.get("seeds", 1)
    seeds = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    return seeds if seeded else seeds[:1]


def new_name(results: dict, registry) -> str:
    spec = parse_model_spec(results["model"]["spec"])
    seeded = getattr(registry.resolve("model", spec.name), "seeded", True)
    limit = results.get("limit")
    limited = limit if limit is not None and results["n_items"] == limit else None
    return run_name(spec.slug, results["seeds"], protocol_seeds(results, seeded), limited)


def migrate(folder: Path, registry, dry_run: bool) -> str | None:
    results = json.loads((folder / RESULTS).read_text(encoding="utf-8"))
    digest = hashlib.sha256((folder / SAMPLES).read_bytes()).hexdigest()
    target = folder.parent / new_name(results, registry)
    if results.get(DIGEST) == digest and target == folder:
        return None
    if target != folder and target.exists():
        return f"SKIP  {folder}: {target.name} already exists"
    if not dry_run:
        results[DIGEST] = digest
        tmp = folder / f".{RESULTS}.tmp"
        tmp.write_text(json.dumps(results, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, folder / RESULTS)
        if target != folder:
            os.rename(folder, target)
    return f"{'would ' if dry_run else ''}migrate  {folder} -> {target.name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+", type=Path, help="output folders of `metabench run`")
    parser.add_argument("--dry-run", action="store_true", help="only say what would change")
    args = parser.parse_args(argv)
    registry = default_registry()
    for root in args.roots:
        for folder in run_folders(root):
            line = migrate(folder, registry, args.dry_run)
            if line:
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
