"""``metabench verify-run``: a run's verdict, from its files and its data, and (``--reproduce K``) from its model
rerun here on K of its items (`metabench.launch.reproduce`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

EXAMPLES = """\
examples:
  metabench verify-run runs/toy_cls/majority                      the checks of files and data only
  metabench verify-run --reproduce 50 leaderboard/runs/newsmet_prompted_choice
  metabench verify-run --reproduce 50 --reproduce-key 3f9c0b1e runs/   redo a draw: the key it printed

Without --reproduce a run is held to the checks of its files and of the data its task names (docs/reporting.md):
predictions altered with everything recomputed, or a run relabelled as another model, pass them. --reproduce K
reruns K items of each run with its model, where the model is here (baselines, the offline models, a cached
fine-tuned checkpoint, a model folder with the recorded fingerprint), and compares predictions and scores.
The K items are drawn with a key made when verify-run starts, which no run's author can have known; it is
printed, and --reproduce-key KEY redoes the same draw. A baseline is rerun on every item.

exit status: 0 every run passed the checks and none failed reproduction (runs not reproducible here included),
1 a run was rejected by the checks or failed reproduction, 2 bad usage, an unreadable run or an internal error.
"""


def add_commands(subparsers) -> None:
    verify = subparsers.add_parser(
        "verify-run", help="check runs against their files and data; --reproduce K: rerun K items with the model",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Print each run's verdict: the checks every report applies (samples digest, rows, metrics "
        "rebuilt, the data its task names), and with --reproduce K its reproduction: reproduced on K items, not "
        "reproducible here (with the reason) or failed reproduction (the model here does not give what the run "
        "recorded).")
    verify.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders or output folders")
    add_reproduce_options(verify)
    verify.add_argument("--json", action="store_true", help="print one JSON object per run instead of lines")
    verify.set_defaults(func=_cmd_verify_run)


def add_reproduce_options(parser) -> None:
    """``--reproduce K`` and ``--reproduce-key TEXT``, as ``verify-run`` and ``leaderboard build`` take them."""
    parser.add_argument("--reproduce", metavar="K",
                        help="rerun K items of each run (drawn by a hash of the item ids keyed by a key made now, "
                        "which is printed or recorded; the same items at every seed; a baseline: every item) with its "
                        "model and compare predictions and scores")
    parser.add_argument("--reproduce-key", metavar="TEXT",
                        help="key the draw of items with TEXT instead of a new key: redo the draw a board or "
                        "verify-run recorded")


def reproduce_options(args) -> int | None:
    """K of ``--reproduce`` (None: not asked), checked; with K, the model hub is offline for this process (a
    reproduction uses what is here, never a download)."""
    from ..errors import MetabenchError
    from ..option_values import number_text, whole_number

    k = None
    if args.reproduce is not None:
        k = number_text(args.reproduce)
        whole_number(k, "--reproduce", 1, hint="e.g. --reproduce 50 (items rerun per run)")
    elif args.reproduce_key is not None:
        raise MetabenchError("--reproduce-key keys the draw of --reproduce, which is not given",
                             hint="add --reproduce K, or leave --reproduce-key out")
    if args.reproduce_key is not None:
        from ..launch.reproduce import key_text

        key_text(args.reproduce_key)
    if k is not None:  # read when huggingface_hub is imported: set before any model module is
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
            os.environ.setdefault(name, "1")
    return k


def _cmd_verify_run(args) -> int:
    k = reproduce_options(args)
    from ..plugins import default_registry
    from ..runs.stored import find_runs
    from ..runs.verify import verify_runs

    registry = default_registry()
    runs = find_runs(args.runs)
    _, rejected, verdicts = verify_runs(registry, runs)

    def show(run, found) -> None:  # each run as its reproduction ends: a long one shows what is done so far
        if args.json:
            print(json.dumps({"run": str(run.path), "task": run.record.task.name, "model": run.record.model.spec,
                              "verification": _verification(verdicts[id(run)]),
                              "reproduction": found.as_json() if found is not None else None}), flush=True)
        else:
            _print_run(run, verdicts[id(run)], found)

    reproductions = {}
    if k is not None:
        from ..launch.reproduce import new_key, reproduce_runs

        key = args.reproduce_key if args.reproduce_key is not None else new_key()
        if not args.json:
            print(f"reproduction key: {key} (redo the same draw with --reproduce-key {key})", flush=True)
        kept = [run for run in runs if verdicts[id(run)].ok]
        reproductions = reproduce_runs(registry, kept, k, key=key, done=lambda r: show(r.run, r))
    for run in runs:
        if id(run) not in reproductions:
            show(run, None)
    failed = [r for r in reproductions.values() if r.failed]
    if not args.json:
        _print_counts(len(runs), rejected, verdicts, k, list(reproductions.values()))
    return 1 if rejected or failed else 0


def _verification(verdict) -> dict:
    if verdict.problems:
        return {"status": "rejected", "reasons": verdict.problems}
    if verdict.unverified:
        return {"status": "unverified", "reason": verdict.unverified}
    return {"status": "verified", "unchecked": verdict.unchecked}


def _print_run(run, verdict, reproduction) -> None:
    if verdict.problems:
        status = f"rejected: {'; '.join(verdict.problems)}"
    elif verdict.unverified:
        status = f"unverified: {verdict.unverified}"
    else:
        status = "verified (files and data)"
    print(f"{run.path}: {status}", flush=True)
    if reproduction is not None:
        print(f"  {reproduction.line} [{reproduction.cpu_s:.2f} s CPU]", flush=True)
    elif verdict.problems:
        print("  not reproduced: rejected by the checks", flush=True)


def _print_counts(n: int, rejected: list, verdicts: dict, k: int | None, reproductions: list) -> None:
    unverified = sum(1 for v in verdicts.values() if v.ok and v.unverified)
    line = f"verify-run: {n} run(s): {n - len(rejected)} passed the checks ({unverified} unverified), {len(rejected)} rejected"
    if k is not None:
        count = {status: [r for r in reproductions if r.status == status]
                 for status in ("reproduced", "not_reproducible", "failed")}
        cpu = sum(r.cpu_s for r in reproductions)
        rerun = count["reproduced"] + count["failed"]
        per_run = f"; {sum(r.cpu_s for r in rerun) / len(rerun):.2f} s per run rerun" if rerun else ""
        line += (f"; reproduction on {k} item(s): {len(count['reproduced'])} reproduced, "
                 f"{len(count['not_reproducible'])} not reproducible here, {len(count['failed'])} failed "
                 f"({cpu:.1f} s CPU{per_run})")
    print(line)
    if rejected:
        print(f"verify-run: {len(rejected)} run(s) rejected by the checks (exit status 1)", file=sys.stderr)
    failed = [r for r in reproductions if r.failed]
    if failed:
        print(f"verify-run: {len(failed)} run(s) failed reproduction (exit status 1)", file=sys.stderr)
