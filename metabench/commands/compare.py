"""``metabench compare``: paired tests between runs of one task, and one verb per other analysis (#37 item 4).

``metabench compare RUN...`` pairs runs of the same task item by item. The analyses that once hid behind flags
of that command, each with its own refusals of the others' options, are verbs with their own ``--help``:

    compare published RUN...         our numbers beside the published ones, and the best constant answer
    compare gap RUN_A RUN_B          one model on two subset tasks (different items): unpaired gap
    compare paired-variants RUN...   one model on an original task and its paraphrase task (same items)
    compare NAME RUN...              an analysis a plugin registers (``metabench_register_compare_analyses``,
                                     ``commands/analyses.py``), as the paper families do theirs

The old flags (``--published``, ``--gap``, ``--paired-variants``, and those a registered analysis keeps) still
run the same code, after a deprecation notice on stderr naming the verb. A verb is read only as the first
argument after ``compare``: a run folder of that name is ``./NAME``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

PAIRS_EXAMPLES = """\
examples:
  metabench compare runs/toy_cls/majority runs/toy_cls/lookup     two runs of one task
  metabench compare runs/ --baseline majority                     every model against majority, per task
  metabench compare runs/ --metric accuracy --metric macro_f1 --correction bh
  metabench compare published runs/                               beside published numbers
  metabench compare gap --help                                    what an analysis does, with its examples

Every run is verified first (docs/reporting.md): a rejected run is not compared; a run not checked against the
data is marked [unverified], one that scored part of the test split [partial], each
with its reason under the table.

exit status: 0 compared (what could not be paired is listed, with the reason), 2 bad usage, nothing at all
could be paired, an unreadable or damaged run file, or an internal error. compare never exits 1: a worse
candidate is a result here; `metabench gate` turns it into a failing status.
"""

#: compare's own verb -> (its line in compare's --help, description, examples); the plugins' come from the registry
VERBS = {
    "published": (
        "our numbers beside other systems' published ones, with the best constant answer",
        "Print the published results of other systems on the runs' tasks and groups (metabench/report/"
        "published_results.yaml: value as printed, metric definition, whether the protocol matches, citation) "
        "beside each of our complete runs, with Δ = ours − published. Beside every number on the task's primary "
        "metric: the best constant answer's score on the same items and golds with the ≈ chance mark (the rule of "
        "the docs' headline table), and a flag where a two-answer task scores significantly below it (a probable "
        "answer-format failure). Partial runs are left out; rejected runs are left out and named; unverified runs "
        "are named. Published numbers are never tested against ours: their items and predictions are not ours.",
        "  metabench compare published leaderboard/runs/moh_x_cv_fold*/hf_minilm-l6*\n"
        "  metabench compare published runs/ --json"),
    "gap": (
        "one model on two subset tasks (different items): unpaired accuracy gap",
        "RUN_A RUN_B are one model on two subset tasks over different items (e.g. Meta4XNLI's no_met and met "
        "pairs): the accuracy gap with a z-test and Fisher's exact test, adjusted by --correction. --controls adds "
        "a logistic regression of correctness on metaphor + premise-hypothesis overlap + length.",
        "  metabench compare gap runs/m4x_nli_zs_en_xnli_dev_no_met/M runs/m4x_nli_zs_en_xnli_dev_met/M\n"
        "  metabench compare gap --controls runs/impli_gap_enc_literal/M runs/impli_gap_enc_figurative/M"),
    "paired-variants": (
        "one model on an original task and its paraphrase task: paired metaphor effect",
        "The paired metaphor effect over the item ids an original task shares with its paraphrase task: McNemar "
        "(one seed) or a paired t-test (seeds) on accuracy. Two runs: the original first; more runs or folders: "
        "paired by task name (TASK_original_X with TASK_paraphrase_GEN_X, per model). --controls adds the "
        "regression on overlap and length.",
        "  metabench compare paired-variants runs/mlp_impli_original_nli_zero/M runs/mlp_impli_paraphrase_mistral_nli_zero/M\n"
        "  metabench compare paired-variants --controls runs/      every original/paraphrase pair found"),
}

#: old flag -> the verb that replaced it
DEPRECATED = {"published": "published", "gap": "gap", "paired_variants": "paired-variants"}


class _WithVerbs(argparse.ArgumentParser):
    """compare's parser: a first argument naming a verb hands the rest to that verb's own parser (argparse
    cannot put sub-commands beside a positional list of runs)."""

    verbs: dict[str, argparse.ArgumentParser]

    def parse_known_args(self, args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        if args and args[0] in getattr(self, "verbs", {}):
            return self.verbs[args[0]].parse_known_args(args[1:], namespace)
        return super().parse_known_args(args, namespace)


def add_commands(subparsers, registry) -> None:
    """compare and its verbs, the plugins' analyses among them (read from ``registry``, the one the command line
    is built from: lenient and silent, so ``plugins`` and ``validate`` still run under --strict)."""
    from .analyses import registered

    analyses = registered(registry, taken=VERBS)
    lines = {**{name: verb[0] for name, verb in VERBS.items()}, **{name: line for name, (line, _) in analyses.items()}}
    compare = subparsers.add_parser(
        "compare", help=f"paired significance tests between runs of the same task (and: {', '.join(lines)})",
        epilog="analyses (each with its own --help):\n" + "".join(f"  {name:<18}{line}\n" for name, line in lines.items())
        + "\n" + PAIRS_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="metabench compare [ANALYSIS] RUN... [options]",
        description="Compare runs of the same task item by item: McNemar for accuracy, paired bootstrap for "
        "F1, paired t-test across seeds when both runs have 2+ seeds. Δ = candidate − baseline. "
        "ANALYSIS (below) runs another analysis instead, with its own options.",
    )
    compare.__class__ = _WithVerbs  # add_parser builds the class the top-level parser uses
    _runs_argument(compare)
    compare.add_argument("--baseline", metavar="MODEL", help="reference run of each task: a model, folder name or path "
                         "(default: the first run of each task)")
    compare.add_argument("--verbose", action="store_true",
                         help="list every run or task not compared with its reason (default: one count line per reason)")
    old = compare.add_argument_group("deprecated: the analyses' verbs replace these flags (same code, same output)")
    old.add_argument("--published", action="store_true", help="use `metabench compare published RUN...`")
    old.add_argument("--gap", action="store_true", help="use `metabench compare gap RUN_A RUN_B`")
    old.add_argument("--paired-variants", action="store_true", help="use `metabench compare paired-variants RUN...`")
    old.add_argument("--controls", action="store_true", help="with --gap or --paired-variants: use the verb's --controls")
    for _, analysis in analyses.values():
        if analysis.old_flags is not None:
            analysis.old_flags(old)
    test_arguments(compare)
    compare.set_defaults(func=guarded(_cmd_compare), analyses={name: analysis for name, (_, analysis) in analyses.items()})
    compare.verbs = {**{name: _verb_parser(name) for name in VERBS},
                     **{name: _analysis_parser(name, analysis) for name, (_, analysis) in analyses.items()}}


def _runs_argument(parser) -> None:
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN",
                        help="run folders, results.json files or output folders (searched recursively)")


def _parser(name: str, description: str, examples: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"metabench compare {name}", description=description,
                                     epilog="examples:\n" + examples,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    _runs_argument(parser)
    return parser


def _json_argument(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def _analysis_parser(name: str, analysis) -> argparse.ArgumentParser:
    """The verb of an analysis a plugin registered (``commands/analyses.py``)."""
    parser = _parser(name, analysis.description, analysis.examples)
    analysis.arguments(parser)
    parser.set_defaults(func=guarded(lambda args: analysis.run(args, _found(args), _registry())))
    _json_argument(parser)
    return parser


def _verb_parser(name: str) -> argparse.ArgumentParser:
    _, description, examples = VERBS[name]
    parser = _parser(name, description, examples)
    if name == "published":
        parser.set_defaults(func=guarded(lambda args: _published(args, _found(args))))
    else:
        parser.add_argument("--controls", action="store_true",
                            help="also: logistic regression of correctness on metaphor + premise-hypothesis overlap + "
                            "length, and accuracy by overlap bin")
        parser.add_argument("--correction", choices=["holm", "bh", "none"], default="holm",
                            help="multiple-comparison correction over all rows (default holm)")
        parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
        parser.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
        if name == "paired-variants":
            parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
            parser.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
        handler = _gap if name == "gap" else _paired_variants
        parser.set_defaults(func=guarded(lambda args: handler(args, _found(args))), test=None, metric=None)
    _json_argument(parser)
    return parser


def test_arguments(parser) -> None:
    """The paired tests' options, shared by compare and gate."""
    parser.add_argument("--metric", action="append", metavar="M", help="metric to test (repeatable; default: primary)")
    parser.add_argument("--test", metavar="NAME", help="force a test (`metabench ls tests`), e.g. bootstrap, wilcoxon")
    parser.add_argument("--correction", choices=["holm", "bh", "none"], default="holm",
                        help="multiple-comparison correction over all comparisons (default holm)")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="significance level (default 0.05; gate: 0.005, a regression gate's level, docs/reporting.md)")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence level of the CIs (default 0.95)")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    parser.add_argument("--unit", choices=["auto", "item", "token"], default="auto",
                        help="resampling unit of item-level tests: the clusters the task declares (metadata.cluster, "
                        "e.g. documents), else the item (auto, the default); the item (a sentence for tagging tasks); "
                        "or, for token_* metrics, the token, which ignores that a sentence's tokens move together")
    parser.add_argument("--power", type=float, default=0.8,
                        help="power at which the minimum detectable effect (MDE) is computed (default 0.8)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def guarded(command):
    """``command`` with its stdout passed through :class:`metabench.printable.GuardedStream`: what ``compare``
    and ``gate`` print holds names from committed runs, and CI reads it (a line starting ``::error::`` is a
    GitHub workflow command). The gate's own annotations go to stderr, unguarded, escaped where made."""

    def run(args) -> int:
        from ..printable import GuardedStream

        with contextlib.redirect_stdout(GuardedStream(sys.stdout)):
            return command(args)

    return run


def _registry():
    from ..plugins import default_registry

    return default_registry()


def _found(args) -> list:
    from ..runs.stored import find_runs

    return find_runs(args.runs)


def _old_flags(args) -> dict[str, str]:
    """Old flag (its dest) -> the verb that replaced it: compare's own, then the registered analyses'."""
    return {**DEPRECATED, **{dest: name for name, analysis in args.analyses.items() for dest in analysis.old_dests}}


def _deprecated(args) -> str | None:
    """The verb an old flag names, after saying so on stderr (scripts keep working; the notice names the fix); an
    analysis whose old flags go ``alone`` wins, so its own error can say they take no other option."""
    deprecated = _old_flags(args)
    flags = [flag for flag in deprecated if getattr(args, flag)]
    verbs = list(dict.fromkeys(deprecated[flag] for flag in flags))
    if not verbs:
        if args.controls:
            from ..errors import MetabenchError

            raise MetabenchError("--controls needs --gap or --paired-variants (a metaphor side and a literal side)",
                                 hint="metabench compare gap --controls RUN_A RUN_B, or compare paired-variants --controls")
        return None
    for flag in flags:
        print(f"compare: --{flag.replace('_', '-')} is deprecated: use `metabench compare {deprecated[flag]} "
              f"RUN...` (see `metabench compare {deprecated[flag]} --help`)", file=sys.stderr)
    alone = [verb for verb in verbs if verb in args.analyses and args.analyses[verb].alone]
    return alone[0] if alone else verbs[0]


def _cmd_compare(args) -> int:
    from ..errors import MetabenchError

    if args.gap and args.paired_variants:
        raise MetabenchError("--gap (different items) and --paired-variants (the same items) exclude each other")
    verb = _deprecated(args)
    runs = _found(args)
    if verb in args.analyses:
        analysis = args.analyses[verb]
        others = [flag for flag, name in _old_flags(args).items() if name not in (verb, "published")]
        if analysis.alone and any(getattr(args, option) for option in (*others, "controls", "test", "metric")):
            raise MetabenchError(analysis.alone[0], hint=analysis.alone[1])
        return analysis.run(args, runs, _registry())
    if verb == "gap":
        return _gap(args, runs)
    if verb == "paired-variants":
        return _paired_variants(args, runs)
    if verb == "published":  # the old flag printed the paired tests first, when anything paired
        return _published(args, runs, report=_report(args, runs, quiet=True))
    report = _report(args, runs)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        _print_pairs(args, report)
    return 0


def _report(args, runs, *, quiet: bool = False):
    """The paired tests (:func:`metabench.compare`); with ``quiet``, None where nothing pairs."""
    from ..api import compare
    from ..errors import MetabenchError

    try:
        return compare(runs, baseline=args.baseline, metrics=args.metric, test=args.test, correction=args.correction,
                       confidence=args.confidence, resamples=args.resamples, seed=args.seed, alpha=args.alpha,
                       power=args.power, unit=args.unit, registry=_registry())
    except MetabenchError:
        if not quiet:
            raise
        return None


def _print_pairs(args, report) -> None:
    from ..report.compare import format_comparisons
    from ..report.groups import group_comparison_table

    print(format_comparisons(report.comparisons, report.notes, correction=args.correction, alpha=args.alpha,
                             confidence=args.confidence, power=args.power,
                             verbose=args.verbose or len(report.notes) <= 1))
    if report.groups:
        print("\nGroup means (k-fold folds, papers' average rows), complete runs only:\n"
              + group_comparison_table(report.groups))


def _published(args, runs, report=None) -> int:
    """Published numbers beside verified complete runs, each headline beside its best constant answer; ``report``:
    the paired tests printed first (the deprecated ``--published`` flag)."""
    from ..report.groups import group_rows
    from ..report.published import beside_runs, format_beside, load_published
    from ..report.run_marks import marks
    from ..runs.verify import verify_runs

    registry = _registry()
    kept, _, verdicts = verify_runs(registry, runs)
    rows = beside_runs(load_published(), kept, group_rows([r.record for r in kept if not r.partial]), registry)
    named = {str(r.path): found for r in runs if (found := marks(r, verdicts[id(r)]))}
    if args.json:
        paired = report.as_dict() if report is not None else {}
        print(json.dumps({**paired, "published": rows, "marked_runs": named}, indent=2))
        return 0
    if report is not None:
        _print_pairs(args, report)
        print()
    print(format_beside(rows))
    if named:
        print("\nruns left out (partial, rejected) or shown unverified:")
        for path, found in named.items():
            print(f"  {path}: {'; '.join(found)}")
    return 0


def _checked(runs: list, verb: str) -> list:
    """The runs an analysis may read: each is verified against its own files and the data its task names (as
    plain ``compare`` does), its marks go to stderr, and a rejected run is refused, never read."""
    from ..errors import MetabenchError
    from ..report.verified_runs import verified_runs

    kept, rejected = verified_runs(_registry(), runs, f"compare {verb}")
    if rejected:
        raise MetabenchError(
            f"compare {verb}: {len(rejected)} run(s) failed verification and are not read: "
            + ", ".join(str(v.run.path) for v in rejected),
            hint="the reasons are above; rerun them with the tasks as they are here, or leave them out",
        )
    return kept


def _gap(args, runs) -> int:
    from ..errors import MetabenchError
    from ..report.compare import adjust
    from ..report.analyses.gaps import format_gaps, subset_gap

    runs = _checked(runs, "gap")
    if len(runs) != 2:
        raise MetabenchError(f"gap takes exactly two runs (one model on two subset tasks), got {len(runs)}",
                             hint="e.g. metabench compare gap runs/TASK_no_met/MODEL runs/TASK_met/MODEL")
    if args.test or args.metric:
        raise MetabenchError("--gap always reports accuracy with the z-test and Fisher's exact test; drop --test/--metric")
    gaps = subset_gap(runs[0], runs[1], confidence=args.confidence)
    adjust(gaps, args.correction)
    _emit(args, "gaps", gaps, format_gaps, _controls(args, [(runs[1], runs[0])], paired=False))
    return 0


def _paired_variants(args, runs) -> int:
    from ..errors import MetabenchError
    from ..report.compare import adjust
    from ..report.analyses.paired_variants import format_effects, paired_effect, variant_pairs
    from ..runs.stored import one_per_task_and_model

    if args.test or args.metric:
        raise MetabenchError("--paired-variants reports accuracy with McNemar (one seed) or paired t (seeds); "
                             "drop --test/--metric")
    if len(runs) == 2:
        _check_variant_order(*runs)
        pairs = [(runs[0], runs[1])]
    else:
        candidates = one_per_task_and_model(runs, "compare paired-variants")
        pairs = variant_pairs(candidates)
        _name_unpaired(candidates, pairs)
    if not pairs:
        raise MetabenchError(
            f"--paired-variants: no original/paraphrase pair of one model among {len(runs)} run(s)",
            hint="pass two runs (original first), or folders holding TASK_original_X and TASK_paraphrase_GEN_X runs",
        )
    _checked([run for pair in pairs for run in pair], "paired-variants")  # what the pairs read, and only that
    effects = [paired_effect(a, b, confidence=args.confidence, n_resamples=args.resamples, seed=args.seed)
               for a, b in pairs]
    adjust(effects, args.correction)
    _emit(args, "paired_variants", effects, format_effects, _controls(args, pairs, paired=True))
    return 0


def _name_unpaired(runs, pairs) -> None:
    """Each run given that pairs with no run of its model (a third run, an original without its paraphrase) is
    named on stderr: it is left out of every effect, and a reader should not take it for compared."""
    from ..printable import escape

    paired = {id(run) for pair in pairs for run in pair}
    for run in runs:
        if id(run) not in paired:
            print(f"paired-variants: left out {escape(run.path)} ({escape(run.record.task.name)} with {escape(run.record.model.spec)}): no "
                  "original/paraphrase run of its model to pair it with", file=sys.stderr)


def _check_variant_order(original, paraphrase) -> None:
    """Two runs are (original, paraphrase) in that order: a swapped pair flips the effect's sign, one task
    twice measures nothing."""
    from ..errors import MetabenchError
    from ..report.analyses.paired_variants import is_variant_of

    if original.record.task.name == paraphrase.record.task.name:
        raise MetabenchError(f"--paired-variants: both runs are of task '{original.record.task.name}' ({original.path} and "
                             f"{paraphrase.path}); a paired effect needs an original task and its paraphrase task",
                             hint="pass the original task's run, then the paraphrase task's run")
    if is_variant_of(paraphrase.record.task.name, original.record.task.name):
        raise MetabenchError(f"--paired-variants: '{original.record.task.name}' is the paraphrase of '{paraphrase.record.task.name}', so the "
                             "runs are given the wrong way round (the effect's sign would flip)",
                             hint=f"pass the original first: metabench compare paired-variants {paraphrase.path} "
                             f"{original.path}")


def _emit(args, key: str, rows: list, formatter, controlled: list) -> None:
    """Print tested rows (and their surface controls, if asked for) as JSON or as tables."""
    if args.json:
        print(json.dumps({"correction": args.correction, key: [r.as_dict() for r in rows],
                          **({"controls": [c.as_dict() for c in controlled]} if args.controls else {})}, indent=2))
        return
    print(formatter(rows, correction=args.correction, alpha=args.alpha, confidence=args.confidence))
    if controlled:
        from ..report.analyses.controls import format_controls

        print("\nSurface controls (overlap = premise-hypothesis word-set Jaccard; length = words of both)")
        print(format_controls(controlled))


def _controls(args, pairs, *, paired: bool) -> list:
    """Surface controls of (metaphor run, literal run) pairs, when --controls asks for them."""
    if not args.controls:
        return []
    from ..report.analyses.controls import controls

    registry = _registry()
    return [controls(registry, metaphor, literal, paired=paired, confidence=args.confidence)
            for metaphor, literal in pairs]

