"""The ``gate``, ``power``, ``leaderboard`` and ``report`` subcommands (and ``compare``, from `compare.py`, and
``verify-run`` and ``merge-seeds``, from `verify.py` and `merge.py`): argument parsing only, the work is in the modules."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .verify import add_reproduce_options, reproduce_options

LEADERBOARD_EXAMPLES = """example:
  metabench leaderboard build leaderboard/runs -o leaderboard/

exit status: 0 site written, 1 site written without the run(s) that failed verification (listed on stderr),
2 bad usage (no runs, a target outside -o or not written by metabench: see --force) or an internal error.
"""

GATE_EXAMPLES = """\
exit status: 0 no regression (every check could have seen one), 1 regression(s), 3 inconclusive (no regression,
but some check cannot detect the tolerance with these items; 0 with --inconclusive-ok), 2 unusable input or any
internal error (never 1 for a crash).
examples:
  metabench gate --baseline baseline_runs/ --candidate runs/ --tolerance 0.01
  metabench gate --baseline base/ --candidate new/ --tolerance 3% --junit gate.xml --summary "$GITHUB_STEP_SUMMARY"
  metabench gate --baseline base/toy_cls/hf --candidate new/toy_cls/hf --metric macro_f1 --alpha 0.01
"""


def add_commands(subparsers, registry) -> None:
    from .compare import add_commands as add_compare, guarded, test_arguments
    from .merge import add_commands as add_merge
    from .verify import add_commands as add_verify

    add_compare(subparsers, registry)
    add_verify(subparsers)
    add_merge(subparsers)

    gate = subparsers.add_parser(
        "gate", help="fail (exit 1) when a candidate regresses significantly on a stored baseline",
        epilog=GATE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A task regresses when the candidate is worse than the baseline by more than --tolerance in "
        "the metric AND the paired test is significant at --alpha after correction over all tasks; it passes when "
        "it does not and the test could detect the tolerance (minimum detectable effect within it, or a CI that "
        "excludes a larger drop); otherwise it is inconclusive.",
    )
    gate.add_argument("--baseline", required=True, type=Path, action="append", metavar="RUN",
                      help="baseline run folder or output folder (repeatable)")
    gate.add_argument("--candidate", required=True, type=Path, action="append", metavar="RUN",
                      help="candidate run folder or output folder (repeatable)")
    gate.add_argument("--tolerance", metavar="T",
                      help="allowed drop: absolute in metric units (0.01 = one point of accuracy) or relative to the "
                      "baseline's value (3%%); default 0")
    gate.add_argument("--max-drop", metavar="T", help="the same as an absolute --tolerance (the older name)")
    gate.add_argument("--inconclusive-ok", action="store_true",
                      help="exit 0 instead of 3 when no check regresses but some cannot detect the tolerance")
    gate.add_argument("--junit", type=Path, metavar="FILE",
                      help="also write the checks as JUnit XML (one testcase per task × metric; needs metabench[ci])")
    gate.add_argument("--summary", metavar="FILE",
                      help="also append the report as Markdown, e.g. to \"$GITHUB_STEP_SUMMARY\" or a PR comment file; "
                      "an empty value (the variable unset, as outside Actions) writes none")
    test_arguments(gate)
    gate.set_defaults(func=guarded(_cmd_gate), alpha=None)  # None: the gate's own default, gate.ALPHA

    power = subparsers.add_parser(
        "power", help="the smallest change a task can detect, planned from a baseline's runs",
        description="Minimum detectable effect (80% power) of a paired comparison on TASK (or an aggregate: mean "
        "group such as moh_x_cv), from the spread of the baseline's metric over its items (bootstrap) under assumed "
        "correlations of the two models' per-item results, and McNemar's for accuracy.",
        epilog="examples:\n  metabench power moh_x_cv --baseline runs/ --model random      (every fold's run of one model)\n"
        "  metabench power m4x_det_en_mono_vua20 --model lookup      (from the committed runs in leaderboard/runs)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    power.add_argument("target", metavar="TASK", help="a task or an aggregate: mean group (its members' runs)")
    power.add_argument("--baseline", type=Path, action="append", metavar="RUN",
                       help="the baseline's run folders or an output folder (repeatable; default: leaderboard/runs, "
                       "the committed runs, when run from the repository root)")
    power.add_argument("--model", metavar="MODEL", help="the baseline model, when --baseline holds runs of several")
    power.add_argument("--metric", help="metric to plan for (default: the task's primary)")
    power.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    power.add_argument("--power", type=float, default=0.8, help="power (default 0.8)")
    power.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    power.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    power.add_argument("--json", action="store_true", help="print JSON instead of a table")
    power.set_defaults(func=_cmd_power)

    board = subparsers.add_parser("leaderboard", help="build the static leaderboard from stored runs")
    board_sub = board.add_subparsers(dest="leaderboard_command", metavar="ACTION", required=True)
    build = board_sub.add_parser("build", help="write leaderboard.md, leaderboard.json and the HTML site",
                                 epilog=LEADERBOARD_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    build.add_argument("runs", nargs="+", type=Path, metavar="RUNS", help="run folders or output folders")
    build.add_argument("-o", "--output-dir", type=Path, required=True, help="where the site goes, e.g. leaderboard/")
    build.add_argument("--format", action="append", metavar="NAME",
                       help="reporters to run (default: all registered; `metabench ls reporters`)")
    build.add_argument("--title", default="metabench leaderboard", help="site title")
    build.add_argument("--correction", choices=["holm", "bh", "none"], default="holm",
                       help="multiple-comparison correction within each task (default holm)")
    build.add_argument("--alpha", type=float, default=0.05, help="significance level of the marks (default 0.05)")
    build.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    build.add_argument("--force", action="store_true",
                       help="replace files in the output folder that metabench did not write (default: refuse)")
    build.add_argument("--no-progress", action="store_true",
                       help="print no progress on stderr (default: a bar per phase on a terminal, a line per phase "
                       "elsewhere)")
    add_reproduce_options(build)
    build.add_argument("--jobs", type=int, metavar="N",
                       help="processes that verify, rank and test the tasks (default: one per CPU; 1: all in this "
                       "process, the least memory). The numbers are the same for any N")
    build.set_defaults(func=_cmd_leaderboard_build)

    report = subparsers.add_parser("report", help="generate the results tables in docs/ from committed runs")
    report_sub = report.add_subparsers(dest="report_command", metavar="ACTION", required=True)
    docs = report_sub.add_parser(
        "docs", help="rewrite every generated table in docs/*.md from the runs (--check: only compare)",
        description="Every results table in docs/ sits between '<!-- generated: NAME ARGS (metabench report docs) -->' "
        "and '<!-- end generated -->' and is printed by the named generator from the committed runs. Exit status "
        "with --check: 0 when every page matches the runs, 1 when one differs (the diff is printed).")
    docs.add_argument("--runs", type=Path, default=Path("leaderboard/runs"), help="committed runs (default leaderboard/runs)")
    docs.add_argument("--docs", type=Path, default=Path("docs"), help="a page or a folder of pages (default docs/)")
    docs.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page differs from the runs")
    docs.set_defaults(func=_cmd_report_docs)


def _registry():
    from ..plugins import default_registry

    return default_registry()


def _options(args):
    from ..report.compare import Options

    return Options(test=args.test, confidence=args.confidence, n_resamples=args.resamples, seed=args.seed,
                   alpha=args.alpha, power=args.power, unit=args.unit)


def _cmd_gate(args) -> int:
    from ..report.gate import ALPHA, Tolerance, format_report, gate
    from ..report.output_files import check_outputs
    from ..runs.stored import find_runs

    from ..errors import MetabenchError

    if args.tolerance is not None and args.max_drop is not None:
        raise MetabenchError("--tolerance and --max-drop are the same setting: give one",
                             hint="--tolerance 0.01 (absolute) or --tolerance 2% (relative to the baseline)")
    if args.max_drop is not None and args.max_drop.strip().endswith("%"):
        raise MetabenchError(f"--max-drop {args.max_drop!r} is absolute: write --tolerance {args.max_drop} for a "
                             "relative tolerance")
    args.summary = _summary_file(args.summary)
    args.alpha = ALPHA if args.alpha is None else args.alpha
    tolerance = Tolerance.parse(args.tolerance or args.max_drop or "0",
                                "--tolerance" if args.tolerance is not None else "--max-drop")
    baseline, candidate = find_runs(args.baseline), find_runs(args.candidate)
    check_outputs({"--junit": args.junit, "--summary": args.summary},
                  [*args.baseline, *args.candidate, *(run.path for run in baseline + candidate)])
    report = gate(_registry(), baseline, candidate, metrics=args.metric,
                  tolerance=tolerance, alpha=args.alpha, correction=args.correction, options=_options(args),
                  inconclusive_ok=args.inconclusive_ok)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(format_report(report, args.confidence))
    _gate_outputs(args, report)
    return report.exit_code


def _summary_file(value: str | None) -> Path | None:
    """--summary's file, or None when empty: the workflow's `--summary "$GITHUB_STEP_SUMMARY"` run outside Actions.

    An empty path would otherwise mean the current folder, and a gate that printed PASS would exit 2.
    """
    if value is None:
        return None
    if not value.strip():
        print("gate: --summary is empty (GITHUB_STEP_SUMMARY is unset outside GitHub Actions): no Markdown "
              "summary written", file=sys.stderr)
        return None
    return Path(value)


def _gate_outputs(args, report) -> None:
    """The CI-native outputs: JUnit XML, the Markdown summary and, inside GitHub Actions, annotations."""
    from ..report.gate.annotations import annotations, in_github_actions

    if args.junit:
        from ..report.gate.junit import write_junit

        write_junit(report, args.junit)
    if args.summary:
        from ..report.gate.step_summary import write_summary

        write_summary(report, args.summary, args.confidence)
    if in_github_actions():  # on stderr, which the runner also reads: stdout stays the report (or its JSON)
        from ..printable import unguarded

        for line in annotations(report):  # meant as workflow commands: past the log guard (`cli.main`)
            print(line, file=unguarded(sys.stderr))


def _cmd_power(args) -> int:
    from ..report.compare import Options
    from ..report.analyses.power_plan import format_plan, plan
    from ..runs.stored import find_runs

    Options(alpha=args.alpha, n_resamples=args.resamples, power=args.power, seed=args.seed)  # checked as compare does
    runs = find_runs(args.baseline or _committed_runs())
    if args.model is not None:
        runs = [r for r in runs if args.model in (r.record.model.spec, r.path.name)]
    result = plan(_registry(), runs, args.target, metric=args.metric, alpha=args.alpha,
                  power=args.power, n_resamples=args.resamples, seed=args.seed)
    print(json.dumps(result.as_dict(), indent=2) if args.json else format_plan(result))
    return 0


def _committed_runs() -> list[Path]:
    """power's baseline when --baseline is left out: the committed runs, which hold a run of every task."""
    from ..errors import MetabenchError
    from ..store import COMMITTED_RUNS

    if not COMMITTED_RUNS.is_dir():
        raise MetabenchError(f"power needs a baseline's runs: --baseline was not given and {COMMITTED_RUNS} (the "
                             "committed runs) is not in the current folder",
                             hint="pass --baseline RUN (an output folder of `metabench --tasks TASK --model M -o runs/`) "
                             "or run from the repository root")
    print(f"power: planning from {COMMITTED_RUNS} (no --baseline given)", file=sys.stderr)
    return [COMMITTED_RUNS]


def _cmd_leaderboard_build(args) -> int:
    import time

    from ..report.leaderboard import build_site
    from ..report.leaderboard.progress import Progress

    from ..option_values import whole_number
    from ..report.compare import Options

    Options(alpha=args.alpha, n_resamples=args.resamples)  # checks them as compare does
    reproduce = reproduce_options(args)
    if args.jobs is not None:
        whole_number(args.jobs, "--jobs", 1, 256, hint="e.g. --jobs 2, or leave it out for one per CPU")
    started = time.perf_counter()
    built = build_site(_registry(), args.runs, args.output_dir, formats=args.format, title=args.title,
                       correction=args.correction, alpha=args.alpha, n_resamples=args.resamples, force=args.force,
                       progress=Progress(enabled=not args.no_progress), jobs=args.jobs, reproduce=reproduce,
                       reproduce_key=args.reproduce_key)
    print(f"leaderboard: {built.n_runs} runs read, {built.n_ranked} ranked ({len(built.unverified)} of them "
          f"unverified), {len(built.rejected)} rejected; "
          f"{len(built.written)} files in {args.output_dir}, {len(built.changed)} changed, {len(built.removed)} removed "
          f"({time.perf_counter() - started:.1f} s)")
    for rejected, folder in zip(built.rejected, built.rejected_folders):
        print(f"rejected run {rejected.run}: {'; '.join(rejected.reasons or [])}\n  run folder: {folder}",
              file=sys.stderr)
    if built.unverified:
        print(_unverified_line([u.reason for u in built.unverified], args.output_dir), file=sys.stderr)
    if built.rejected:
        print(f"leaderboard: {len(built.rejected)} run(s) rejected by verification and left out (exit status 1)",
              file=sys.stderr)
    return 1 if built.rejected else 0


def _unverified_line(reasons: list[str], out_dir) -> str:
    """One line for the runs not checked against the data here: how many, why (each distinct reason once, with
    its run count: a missing mirror leaves every run unverified for the same one), and where each run's fix is
    (the board's list), since a fix can cost hours (a HARD build) and a build's log need not repeat it per run."""
    import re
    from collections import Counter

    why = Counter(re.sub(r" \(fix: .*\)$", "", reason).removeprefix("not checked against the data: ")
                  for reason in reasons)
    shown = [f"{reason} ({count} run{'s' if count > 1 else ''})" for reason, count in why.most_common(3)]
    more = f"; and {len(why) - 3} other reason(s)" if len(why) > 3 else ""
    return (f"leaderboard: {len(reasons)} run(s) not checked against the data here, shown as unverified (ranked "
            f"below the verified runs, never given the ★): {'; '.join(shown)}{more}; each run's fix: 'Unverified "
            f"runs' in {Path(out_dir) / 'leaderboard.md'}")


def _cmd_report_docs(args) -> int:
    from ..errors import MetabenchError
    from ..report.docs.blocks import update

    for path, what in ((args.runs, "--runs"), (args.docs, "--docs")):
        if not path.exists():
            raise MetabenchError(f"{what} {path}: no such file or folder", hint="run from the repository root")
    changed = update(args.docs, args.runs, _registry(), check=args.check)
    for path, diff in changed:
        print(diff if args.check else f"{path}: tables regenerated")
    if args.check and changed:
        print(f"report docs: {len(changed)} page(s) differ from the runs; `metabench report docs` rewrites them",
              file=sys.stderr)
        return 1
    return 0
