"""``metabench merge-seeds``: runs of one recipe over disjoint seeds as one run (`metabench.runs.merge`)."""

from __future__ import annotations

import argparse
from pathlib import Path

EXAMPLES = """\
examples:
  metabench --tasks vua18_seq --model hf:minilm-l6 --seeds 3,4 -o more/      the two seeds a published run lacks
  metabench merge-seeds leaderboard/runs/vua18_seq/hf_minilm-l6@seeds=0-2 more/vua18_seq -o leaderboard/runs
  metabench merge-seeds --dry-run leaderboard/runs/trofi_cv_fold*/hf_minilm-l6@seeds=0-2 more/   every fold

The runs are grouped by task and model spec (a task and model with one run is left out, and named); each group
must be one recipe (task config, data, model fingerprint, --limit, package versions) over disjoint seeds, and
each run must pass `metabench verify-run` (set METABENCH_DATA_DIR). The merged run
goes to OUTPUT/<task>/<folder>, named as a run of all its seeds would be (hf_minilm-l6 for the protocol's five),
and records its parts in merged_from. The parts are left where they are: remove them yourself once merged.

All or nothing: every part, merge and destination is checked before the first file is written (--dry-run says
"would be refused: ..." where the merge would be); --overwrite replaces a run, never a folder holding anything else.

exit status: 0 merged (or planned, with --dry-run), 2 a part refused (the message says which and why) or bad usage.
"""


def add_commands(subparsers) -> None:
    merge = subparsers.add_parser(
        "merge-seeds", help="merge runs of one recipe over disjoint seeds (seeds 0-2 here, 3,4 there) into one run",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Merge runs that differ only in their seeds into the run of all their seeds, without "
        "recomputing any: every part is verified against its files and data first, the parts must be one recipe "
        "over disjoint seeds, and the merged run is verified again before it is written.")
    merge.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders or output folders")
    merge.add_argument("-o", "--output-dir", type=Path, required=True, metavar="DIR",
                       help="where merged runs go (DIR/<task>/<folder>), e.g. leaderboard/runs")
    merge.add_argument("--mixed-environments", action="store_true",
                       help="merge parts computed with other package versions (torch, transformers...); each part's "
                       "versions stay in merged_from")
    merge.add_argument("--overwrite", action="store_true",
                       help="replace a run already in the merged run's folder whose answers differ")
    merge.add_argument("--dry-run", action="store_true", help="check and print the merges; write nothing")
    merge.set_defaults(func=_cmd_merge)


def _cmd_merge(args) -> int:
    from ..plugins import default_registry
    from ..printable import escape
    from ..report.summary import format_metric
    from ..runs.merge import merge_runs
    from ..store import seed_text

    skipped: list[str] = []
    merged = merge_runs(default_registry(), args.runs, args.output_dir, mixed_environments=args.mixed_environments,
                        overwrite=args.overwrite, dry_run=args.dry_run, skipped=skipped)
    for item in merged:  # vua18_seq: seeds 0-2 (folder) + 3,4 (folder) -> path: token_f1 0.6942 ± 0.0092 (n=5)
        parts = " + ".join(f"{seed_text(part.record.seeds)} ({escape(part.path)})" for part in item.parts)
        metric = item.record.task.primary_metric
        summary = item.record.metrics.aggregate.get(metric)
        value = format_metric(summary.as_json()) if summary is not None else "n/a"
        print(f"{escape(item.record.task.name)}: seeds {parts} -> {escape(item.path)}: {escape(metric)} {value}")
    for line in skipped:
        print(f"left out: {escape(line)}")
    verb = "would merge" if args.dry_run else "merged"
    print(f"merge-seeds: {verb} {sum(len(m.parts) for m in merged)} run(s) into {len(merged)}")
    return 0
