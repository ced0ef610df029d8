"""``metabench export lm-eval OUTDIR --tasks ...``: write prompted tasks as lm-evaluation-harness tasks.

``add_commands(subparsers)`` adds the ``export`` command to the main CLI; imports stay inside the verb so
that ``metabench --help`` stays light.
"""

from __future__ import annotations

from pathlib import Path


def add_commands(subparsers) -> None:
    export = subparsers.add_parser(
        "export", help="export tasks to other harnesses (lm-eval)",
        description="Export metabench tasks to other evaluation harnesses.",
    )
    formats = export.add_subparsers(dest="export_format", metavar="FORMAT")
    export.set_defaults(func=lambda args: (export.print_help(), 2)[1])
    lmeval = formats.add_parser(
        "lm-eval", help="lm-evaluation-harness task YAMLs with their data as local JSONL files",
        description="Write choice and generation tasks as lm-eval tasks: YAMLs, JSONL documents holding the exact "
        "prompts metabench sends, and a process_results module. Run them with "
        "`lm_eval --tasks TASK --include_path OUTDIR`.",
    )
    lmeval.add_argument("outdir", type=Path, metavar="OUTDIR")
    lmeval.add_argument("-t", "--tasks", required=True, help="task names, globs, tags or groups, comma-separated")
    lmeval.add_argument("--limit", type=int, help="export only the first N test items of each task")
    lmeval.add_argument("--data-dir", type=Path, help="data mirror (default $METABENCH_DATA_DIR)")
    lmeval.set_defaults(func=cmd_lmeval)


def cmd_lmeval(args) -> int:
    from ..plugins import default_registry
    from ..export.lmeval import export_lmeval

    exported = export_lmeval(default_registry(), args.tasks, args.outdir, limit=args.limit, data_dir=args.data_dir)
    for e in exported:
        print(f"{e.task}: {e.items} items, {e.output_type} -> {e.path}")
        for note in e.notes:
            print(f"  note: {note}")
    print(f"\n{len(exported)} tasks written; run: lm_eval --model hf --model_args pretrained=PATH "
          f"--tasks {exported[0].task} --include_path {args.outdir.resolve()}")
    return 0
