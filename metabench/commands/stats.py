"""The ``stats`` command: ``metabench stats calibrate``, argument parsing only (the work is in report.calibration)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

EXAMPLES = """\
examples:
  metabench stats calibrate                              print the table (about ten minutes)
  metabench stats calibrate --write                      also write benchmarks/results/calibration.json (and the
                                                         misses compare, gate and the leaderboard read), then
  metabench report docs                                  puts its figures into docs/reporting.md
  metabench stats calibrate --replications 100 --gate-replays 20    a quick look
"""


def add_commands(subparsers) -> None:
    from ..report.calibration import Settings  # numpy-free: a dataclass of numbers

    stats = subparsers.add_parser("stats", help="statistics about metabench's own statistics")
    sub = stats.add_subparsers(dest="stats_command", metavar="ACTION", required=True)
    calibrate = sub.add_parser(
        "calibrate", help="simulated type-I error, coverage and power of every test and interval, and the gate's "
        "false fails", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Draws null and alternative test sets shaped like the committed runs (MOH-X folds, MUNCH, VUA-18 "
        "documents, Meta4XNLI sentences) and counts how often each procedure compare and gate use rejects, covers "
        "the true difference, and detects the MDE it prints; then replays null comparisons through gate.")
    calibrate.add_argument("--runs", type=Path, default=Path("leaderboard/runs"), help="committed runs (default leaderboard/runs)")
    for flag, name, text in (("--replications", "replications",
                              "simulated test sets per hypothesis, procedure and seed pair"),
                             ("--resamples", "resamples", "bootstrap resamples in each simulated test"),
                             ("--gate-replays", "gate_replays", "null gates per scenario"),
                             ("--seed", "seed", "seed of the whole simulation")):
        default = getattr(Settings, name)
        calibrate.add_argument(flag, type=int, default=default, help=f"{text} (default {default})")
    calibrate.add_argument("--write", action="store_true", help="also write the record metabench report docs reads "
                           "and metabench/report/calibration_misses.json, which compare, gate and the leaderboard read")
    calibrate.add_argument("--json", action="store_true", help="print the record as JSON instead of tables")
    calibrate.set_defaults(func=_cmd_calibrate)


def _cmd_calibrate(args) -> int:
    from ..errors import MetabenchError
    from ..plugins import default_registry
    from ..report.calibration import RECORD, Settings, format_record, misses, run
    from ..report.calibration_misses import MISSES

    for flag, value in (("--replications", args.replications), ("--resamples", args.resamples),
                        ("--gate-replays", args.gate_replays)):
        if value < 1:
            raise MetabenchError(f"{flag} {value}: must be 1 or more")
    if args.seed < 0:  # numpy's generators take no negative seed
        raise MetabenchError(f"--seed {args.seed}: must be 0 or more", hint=f"e.g. --seed {Settings.seed} (the default)")
    settings = Settings(replications=args.replications, resamples=args.resamples, gate_replays=args.gate_replays,
                        seed=args.seed)
    record = run(default_registry(), args.runs, settings)
    print(json.dumps(record, indent=2) if args.json else format_record(record))
    if args.write:
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        RECORD.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        MISSES.write_text(json.dumps(misses(record), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0
