"""``metabench export lm-eval OUTDIR --tasks ...``: write prompted tasks as lm-evaluation-harness tasks;
``metabench export hf-eval-results RUN... -o DIR --dataset-id ORG/NAME``: runs as Hugging Face ``.eval_results``.

``add_commands(subparsers)`` adds the ``export`` command to the main CLI; imports stay inside the verb so
that ``metabench --help`` stays light.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_commands(subparsers) -> None:
    export = subparsers.add_parser(
        "export", help="export tasks to other harnesses (lm-eval), results to the Hub (hf-eval-results)",
        description="Export metabench tasks to other evaluation harnesses, and results where the field reads them.",
    )
    formats = export.add_subparsers(dest="export_format", metavar="FORMAT")
    export.set_defaults(func=lambda args: (export.print_help(), 2)[1])
    lmeval = formats.add_parser(
        "lm-eval", help="lm-evaluation-harness task YAMLs with their data as local JSONL files",
        description="Write choice and generation tasks, and each benchmark's decoder ways (protocol.decoder: "
        "TASK_scored, protocol.decoder_generated: TASK_generated), as lm-eval tasks: YAMLs, JSONL documents holding "
        "the exact prompts metabench sends, and a process_results module. Run them with "
        "`lm_eval --tasks TASK --include_path OUTDIR`.",
    )
    lmeval.add_argument("outdir", type=Path, metavar="OUTDIR")
    lmeval.add_argument("-t", "--tasks", required=True, help="task names, globs, tags or groups, comma-separated")
    lmeval.add_argument("--limit", type=int, help="export only the first N test items of each task")
    lmeval.add_argument("--data-dir", type=Path, help="data mirror (default $METABENCH_DATA_DIR)")
    lmeval.set_defaults(func=cmd_lmeval)
    hf = formats.add_parser(
        "hf-eval-results", help="runs as Hugging Face .eval_results/*.yaml files (model pages, Hub leaderboards)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write one .eval_results YAML per run (one model's runs: one model repo): dataset id, task, "
        "value (the primary metric's mean over seeds), date and source, and in notes what the format has no field "
        "for: metric, seeds and per-seed values, the 95% CI and its method, the protocol, the verification and "
        "its digest, and whether the run is partial (--limit). Runs are verified first: a rejected run is never "
        "exported, an unverified one only with --allow-unverified (marked so). Field mapping: docs/exporting.md.",
        epilog="example:\n  metabench export hf-eval-results runs/m4x_det_en_mono_vua20/lookup -o my-model/.eval_results "
        "--dataset-id my-org/metabench\n\nexit status: 0 written, 2 a refused run (rejected, unverified, another "
        "model) or bad usage: nothing is written then.")
    hf.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders or output folders (one model)")
    hf.add_argument("-o", "--output-dir", type=Path, required=True, metavar="DIR",
                    help="where the YAML files go: the model repo's .eval_results/ folder")
    hf.add_argument("--dataset-id", required=True, metavar="ORG/NAME",
                    help="the Hub benchmark dataset the tasks are registered under (dataset.id; task_id is the task)")
    hf.add_argument("--dataset-revision", metavar="HASH", help="the dataset repo's revision (dataset.revision)")
    hf.add_argument("--metric", help="the metric to export (default: each task's primary metric)")
    hf.add_argument("--source-url", metavar="URL", help="source.url: where the runs can be read (e.g. a repo)")
    hf.add_argument("--source-name", metavar="NAME", help="source.name, shown with the link (with --source-url)")
    hf.add_argument("--user", help="source.user: the Hub user or org (with --source-url)")
    hf.add_argument("--allow-unverified", action="store_true",
                    help="also export runs not checked against the data here (notes say unverified)")
    from .verify import add_reproduce_options

    add_reproduce_options(hf)
    hf.set_defaults(func=cmd_hf_eval_results)


def cmd_lmeval(args) -> int:
    from ..plugins import default_registry
    from ..export.lmeval import export_lmeval

    exported = export_lmeval(default_registry(), args.tasks, args.outdir, limit=args.limit, data_dir=args.data_dir)
    tasks = [e for e in exported if not e.is_group]
    groups = [e for e in exported if e.is_group]
    for e in tasks:
        print(f"{e.task}: {e.items} items, {e.output_type} -> {e.path}")
        for note in e.notes:
            print(f"  note: {note}")
    for g in groups:
        print(f"{g.task}: group of {len(g.members)} tasks ({g.items} items), mean over members of "
              f"{', '.join(f'{m},{f}' for m, f in g.metrics)} -> {g.path}")
    written = f"{len(tasks)} tasks" + (f" and {len(groups)} groups" if groups else "")
    print(f"\n{written} written; run: lm_eval --model hf --model_args pretrained=PATH "
          f"--tasks {(groups or tasks)[0].task} --include_path {args.outdir.resolve()}")
    return 0


def cmd_hf_eval_results(args) -> int:
    from .verify import reproduce_options

    k = reproduce_options(args)  # before anything imports the model hub: with K, it is offline for this process
    from ..export.hf_eval_results import export
    from ..plugins import default_registry
    from ..runs.stored import find_runs

    written = export(default_registry(), find_runs(args.runs), args.output_dir, dataset_id=args.dataset_id,
                     dataset_revision=args.dataset_revision, metric=args.metric, source_url=args.source_url,
                     source_name=args.source_name, user=args.user, allow_unverified=args.allow_unverified,
                     reproduce=k, reproduce_key=args.reproduce_key)
    for e in written:
        print(f"{e.run.record.task.name}: {e.entry['value']} -> {e.path}")
    print(f"{len(written)} file(s) written; add them to the model repo's .eval_results/ (a PR on the Hub)")
    return 0
