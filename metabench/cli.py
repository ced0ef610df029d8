"""The ``metabench`` command: parses arguments and calls the library. No logic lives here.

Start-up stays light: nothing here imports torch or transformers; subcommands import what they need.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import inspect
import json
import os
import sys
from pathlib import Path

from .version import __version__
from .errors import ExplainedError, MetabenchError

EXAMPLES = """\
examples:
  metabench ls tasks                                  list tasks with their tags
  metabench --tasks m4x_det_en_mono --model majority  a baseline on one task
  metabench --tasks detection --model hf:minilm-l6 --seeds 0,1
  metabench --tasks 'm4x_*' --model lookup --model majority --limit 200
  metabench --tasks m4x_nli_zs_en --model hf-decoder:smollm2-135m --repeat 5
                                                      a sampled decoder: each item's majority of 5 draws
  metabench validate tasks/ my_tasks/                 check YAML files without running them
  metabench plugins                                   installed plugins and their hooks

exit status:
  0  nothing failed (jobs a model cannot serve are skipped, with the reason, and do not count as failures)
  1  some job failed (its message is printed), or `validate` found an invalid file
  2  bad usage: an unknown task or model, a bad argument, unreadable input, or an internal error (a bug:
     one line with its location; never 1, which CI reads as "failed" or, for `gate`, "regression")
  3  `gate` only: no regression, but a check cannot detect the tolerance with these items (inconclusive)
  130 interrupted

environment:
  METABENCH_DATA_DIR         local data mirror (laid out like shared/data)
  METABENCH_CACHE_DIR        answer cache, checkpoints, downloads (default ~/.cache/metabench)
  METABENCH_ALLOW_DOWNLOAD   0 = never download data files (use the mirror or the cache only)
  METABENCH_DATA_URL         base URL data files are downloaded from instead of their upstream repositories
  METABENCH_LOAD_PLUGINS     comma-separated allow-list of third-party plugins ('' = none)
  METABENCH_DISABLE_PLUGINS  comma-separated plugins never to load
  METABENCH_PLUGIN_MODULES   comma-separated importable modules loaded as plugins without packaging
  METABENCH_STRICT=1         a broken plugin or task file is an error, not a warning (= --strict, for CI)
  METABENCH_DEBUG=1          print the traceback of an internal error

A broken plugin (misspelt hook, name clash, failing import) or task file is quarantined: dropped with one
warning naming it, its file:line and the fix. `metabench plugins` lists every problem; --strict (anywhere
on the command line) or METABENCH_STRICT=1 makes them errors (exit 2).
"""


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="metabench",
        description="Benchmark suite for metaphor processing in language models.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"metabench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="evaluate models on tasks (the default command)", epilog=EXAMPLES,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--config", type=Path, metavar="RUN.YAML", action="append",
                     help="read the run's settings from a YAML file (examples/run.yaml); flags given here override it; "
                     "one file per run")
    run.add_argument("-t", "--tasks", help="task names, globs, tags or groups, comma-separated; 'all'")
    run.add_argument("-m", "--model", action="append", metavar="ADAPTER[:ARGS]",
                     help="model adapter and arguments, e.g. majority, constant:label=O, hf:minilm-l6; repeatable")
    run.add_argument("--seeds", help="seed count (5) or list (0,1,2); default: the task's protocol")
    run.add_argument("--limit", help="evaluate only the first N test items (for quick checks)")
    run.add_argument("--repeat", metavar="N",
                     help="sampled generation only (protocol.decoder.temperature > 0): answer every item N times per "
                     "seed, each draw with its own recorded sampling seed, and score each item's majority answer "
                     "(ties: the answer drawn first); results record every draw and each item's flip rate, and "
                     "`gate` compares majorities. Greedy, scored-option, encoder and baseline jobs are refused "
                     "(their draws would be identical). 1 to 100; default 1")
    run.add_argument("--log-responses", action="store_true", default=None,
                     help="keep each generated answer's text in samples.jsonl (`response`): a reader sees what an unread "
                     "answer said, and verification reads every stored answer again with the task's parser. "
                     "Off by default: a model's text can quote the dataset's sentences, which samples never hold "
                     "otherwise (mind the dataset's licence before publishing such a run)")
    run.add_argument("-o", "--output-dir", type=Path, help="where run folders go (default ./runs)")
    run.add_argument("--data-dir", type=Path, help="data mirror (default $METABENCH_DATA_DIR)")
    run.add_argument("--no-cache", action="store_true", default=None,
                     help="neither read nor write the per-item answer cache")
    run.add_argument("--launcher", choices=("auto", "serial", "processes", "ray"),
                     help="auto (default): processes for a run of baselines on a machine with several CPUs, else "
                     "serial; serial: jobs one after another here; processes: jobs on this machine's cores; "
                     "ray: jobs on a Ray cluster (docs/scaling.md)")
    run.add_argument("--ray-address", help="with --launcher ray: join this cluster (HOST:PORT) instead of a local Ray")
    run.add_argument("--workers", help="with --launcher processes: worker processes; with ray and no "
                     "--ray-address: CPUs of the local Ray (default: all CPUs), so at most this many jobs at once")
    run.add_argument("--no-progress", action="store_true", default=None,
                     help="show no progress (default: bars on a terminal; where stderr is a file or a pipe, a plain "
                     "line every 30 s, METABENCH_PROGRESS_INTERVAL, so a log holds no cursor codes)")
    run.add_argument("--progress", dest="no_progress", action="store_false", default=None,
                     help="draw progress bars even when stderr is not a terminal")
    run.add_argument("--json", action="store_true",
                     help="print the jobs as JSON on stdout (task, model, status, run folder, metrics) instead of "
                     "the tables")
    run.add_argument("--overwrite", action="store_true", default=None,
                     help="replace a finished run in the same folder even when its answers differ (default: refuse)")
    run.add_argument("--dry-run", action="store_true",
                     help="print the plan and its cost (jobs, fine-tunes, training examples, tokens) and run nothing")
    run.add_argument("-y", "--yes", action="store_true",
                     help="start a run of more than 20 fine-tunes from an interactive terminal without --dry-run first")
    run.set_defaults(func=_cmd_run)

    ls = sub.add_parser("ls", help="list registered tasks, groups, models, datasets, kinds, metrics...")
    ls.add_argument("what", nargs="?", default="tasks",
                    choices=["tasks", "groups", "tags", "models", "pretrained", "datasets", "kinds", "metrics", "tests", "reporters"])
    ls.add_argument("selection", nargs="?", metavar="TASKS",
                    help="with `tasks`: list this --tasks selection flat (a family, group, tag, glob or all) instead "
                    "of every family")
    ls.add_argument("-v", "--verbose", action="store_true", help="show descriptions and sources")
    ls.set_defaults(func=_cmd_ls)

    validate = sub.add_parser("validate", help="check task/group YAML files without running them")
    validate.add_argument("paths", nargs="+", type=Path, help="YAML files or folders")
    validate.set_defaults(func=_cmd_validate)

    plugins = sub.add_parser("plugins", help="list loaded plugins with versions and hooks")
    plugins.set_defaults(func=_cmd_plugins)

    schema = sub.add_parser("schema", help="print the task YAML reference, or the results.json or leaderboard.json "
                                           "one (markdown)")
    schema.add_argument("what", nargs="?", choices=("task", "results", "leaderboard"), default="task",
                        help="task: the task YAML (docs/task-yaml.md, the default); results: results.json "
                             "(docs/results-format.md); leaderboard: leaderboard.json, the typed board every "
                             "reporter reads (docs/leaderboard-format.md)")
    schema.set_defaults(func=_cmd_schema)

    _add_plugin_commands(sub)
    return parser


def _add_plugin_commands(sub) -> None:
    """The verbs plugins register (``metabench_register_commands``; the built-in ones too). A plugin whose
    verbs cannot be added is reported and left out, like any broken plugin (an error under ``--strict``)."""
    from .errors import PluginError
    from .plugins import load, strict_mode

    # A lenient load of its own (~30 ms: the plugin modules are imported once), silent: the command's own load
    # reports every plugin problem once, as a warning or, under --strict, as its error.
    with contextlib.redirect_stderr(io.StringIO()):
        registry = load(strict=False)
    for entry in registry.entries("command"):
        try:
            add_commands = registry.resolve("command", entry.name)
            if "registry" in inspect.signature(add_commands).parameters:  # it lists what is registered (compare)
                add_commands(sub, registry=registry)
            else:
                add_commands(sub)
        except Exception as exc:  # noqa: BLE001 - one plugin's broken verbs must not take the command down
            problem = f"plugin '{entry.plugin}' could not add command '{entry.name}': {getattr(exc, 'message', exc)}"
            hint = f"fix or upgrade the plugin, or disable it with METABENCH_DISABLE_PLUGINS={entry.plugin}"
            if strict_mode():
                raise PluginError(problem, hint=hint) from exc
            print(f"metabench: warning: {problem}; its verbs are left out\n  hint: {hint}", file=sys.stderr)


def _registry():
    from .plugins import default_registry

    return default_registry()


def _cmd_run(args) -> int:
    from .api import evaluate
    from .printable import escape, safe_lines
    from .report.summary import count_line, skip_lines, summary_table

    arguments = _run_arguments(args)
    if args.dry_run:
        from .dry_run import plan_lines, plan_run

        print("\n".join(plan_lines(plan_run(**arguments))))
        return 0
    if not args.yes and sys.stdin.isatty() and sys.stderr.isatty():
        _check_size(arguments)
    clock = _Clock()
    evaluation = evaluate(**arguments)
    outcomes = evaluation.outcomes
    if args.json:
        print(json.dumps({**_run_json(evaluation, count_line(outcomes)), **clock.as_dict()}, indent=1, ensure_ascii=False))
    else:
        if any(o.status != "skipped" for o in outcomes):
            print(summary_table(outcomes))
        _print_group_means(outcomes)
    for line in skip_lines(outcomes):
        print(line, file=sys.stderr)
    for outcome in outcomes:
        if outcome.status == "failed":
            print(f"\nfailed: {escape(outcome.task)} with {escape(outcome.model)}:\n  {safe_lines(outcome.message)}",
                  file=sys.stderr)
    if not args.json:
        folders = _shown_folders(evaluation.run_dirs)
        if folders:  # where the results went, in the form `compare` and `explore` take
            print(f"\nrun folders (metabench compare / explore take them):\n  " + "\n  ".join(folders))
        from .models.api_client import tokens_line

        print(f"\n{clock.line()}{tokens_line(o.record for o in outcomes)}\n{count_line(outcomes)}")
    return 1 if evaluation.failed else 0


class _Clock:
    """The run's wall time, and the command's CPU time (user + system since it started, imports included, with the
    worker processes it started and waited for), as the run's closing lines print them: on a shared machine the
    CPU time is what a run costs, where wall time depends on what else runs."""

    def __init__(self):
        import time

        self.wall = time.perf_counter()

    @staticmethod
    def _cpu() -> float | None:
        try:
            import resource
        except ImportError:  # not on POSIX
            return None
        return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                       resource.getrusage(resource.RUSAGE_CHILDREN)))

    def as_dict(self) -> dict:
        import time

        cpu = self._cpu()
        return {"wall_s": round(time.perf_counter() - self.wall, 1), "cpu_s": None if cpu is None else round(cpu, 1)}

    def line(self) -> str:
        from .progress import duration

        took = self.as_dict()
        cpu = "" if took["cpu_s"] is None else f"; {took['cpu_s']:.0f} CPU-s for the command (user + system, workers included)"
        return f"time: {duration(took['wall_s'])} wall for the run{cpu}"


def _shown_folders(folders: list[Path]) -> list[str]:
    """Run folders as a shell takes them: relative to the current folder where they are below it, quoted where
    a character would need it (one line each: `printable.shell_word`)."""
    from .printable import shell_word

    shown = []
    for folder in folders:
        try:
            folder = Path(folder).resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            pass
        shown.append(shell_word(folder))
    return shown


def _run_json(evaluation, counts: str) -> dict:
    """``metabench run --json``: every job with its status, run folder and metrics, and the closing count."""
    jobs = []
    for result in evaluation:
        job = {"task": result.task, "model": result.model, "status": result.status,
               "run_dir": None if result.run_dir is None else str(result.run_dir)}
        if result.ok:
            job.update(primary_metric=result.primary_metric, n_items=result.n_items, partial=result.partial,
                       seeds=result.seeds,
                       metrics={name: {"mean": v.mean, "std": v.std, "n": v.n} for name, v in result.metrics.items()})
        else:
            job.update(reason=result.reason, message=result.message, hint=result.hint)
        jobs.append(job)
    return {"jobs": jobs, "run_dirs": [str(folder) for folder in evaluation.run_dirs], "summary": counts}


def _check_size(arguments: dict) -> None:
    """A person at a terminal starting hundreds of fine-tunes by accident (`--tasks all` with an encoder) is
    stopped with the plan's cost; scripts and CI (no terminal) are not asked."""
    from .dry_run import CONFIRM_ABOVE, cost_lines, plan_run

    plan = plan_run(**arguments)
    if plan.fine_tunes > CONFIRM_ABOVE:
        raise MetabenchError("this run fine-tunes more than " + f"{CONFIRM_ABOVE} models:\n  " + "\n  ".join(cost_lines(plan)),
                             hint="add --yes to start it, or --dry-run to see every job first")


def _run_arguments(args) -> dict:
    """:func:`metabench.evaluate`'s arguments: the --config file's, then every flag given on top of them."""
    from .config.run_config import read_run_config
    from .option_values import number_text

    config = _one_config(args.config)
    given = read_run_config(config) if config else {}
    flags = {"tasks": args.tasks, "models": args.model, "seeds": _parse_seeds(args.seeds),
             "limit": None if args.limit is None else number_text(args.limit),
             "repeat": None if args.repeat is None else number_text(args.repeat),
             "output_dir": args.output_dir, "data_dir": args.data_dir, "launcher": args.launcher,
             "ray_address": args.ray_address, "overwrite": args.overwrite, "log_responses": args.log_responses,
             "workers": None if args.workers is None else number_text(args.workers),
             "use_cache": None if args.no_cache is None else not args.no_cache,
             "progress": None if args.no_progress is None else not args.no_progress}
    if args.no_progress is False:  # --progress: bars even where stderr is a log
        flags["progress"] = "bars"
    given.update({key: value for key, value in flags.items() if value is not None})
    # the default, True: bars on a terminal, a plain line every interval in a log (bars' cursor codes are noise there)
    given.setdefault("progress", True)
    missing = [flag for key, flag in (("tasks", "--tasks"), ("models", "--model")) if key not in given]
    if missing:
        where = f" or in {config}" if config else " (or a --config file setting them)"
        raise MetabenchError(f"{' and '.join(missing)} required{where}",
                             hint="e.g. metabench run --tasks m4x_det_en_mono --model majority, or --config examples/run.yaml")
    return given


def _one_config(configs: list[Path] | None) -> Path | None:
    """The one ``--config`` file; given twice, argparse would keep the last and drop the first file's settings
    without a word (a run config does not name another, so there is nothing to merge them by)."""
    if not configs:
        return None
    if len(configs) > 1:
        times = "twice" if len(configs) == 2 else f"{len(configs)} times"
        raise MetabenchError(f"--config given {times} ({', '.join(str(c) for c in configs)}): a run reads one run "
                             "config, and all but the last would be ignored",
                             hint="merge them into one file, or give one --config and set single values with flags, "
                             "which override the file")
    return configs[0]


def _print_group_means(outcomes) -> None:
    """Groups with `aggregate: mean` (k-fold CV, a paper's average row) get one averaged row."""
    from .report.groups import group_rows, group_table

    rows = [row for row in group_rows([o.record for o in outcomes if o.status == "ok"]) if not row["missing"]]
    if rows:
        print()
        print(group_table(rows))


def _parse_seeds(text: str | None) -> int | list[int] | None:
    """``--seeds 5`` (a count: 0..4) or ``--seeds 0,2`` (a list), checked as :func:`metabench.evaluate` checks
    its ``seeds``."""
    from .run_values import seed_list

    if text is None:
        return None
    try:
        values = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise MetabenchError(f"--seeds '{text}': expected a count (5) or a list (0,1,2)") from None
    if not values:
        raise MetabenchError(f"--seeds '{text}': names no seed", hint="e.g. --seeds 3 or --seeds 0,1,2")
    seeds = values[0] if len(values) == 1 and "," not in text else values
    seed_list(seeds, where="--seeds")
    return seeds


def _cmd_ls(args) -> int:
    from tabulate import tabulate

    if args.selection and args.what != "tasks":
        raise MetabenchError(f"`metabench ls {args.what}` takes no selection ('{args.selection}')",
                             hint="only `metabench ls tasks SELECTION` lists a selection, e.g. ls tasks core")
    registry = _registry()
    if args.what in ("tasks", "groups", "tags"):
        from .config.index import TaskIndex

        index = TaskIndex(registry)
        if args.what == "tasks":
            from .config.listing import family_lines, task_table

            names = index.select(args.selection) if args.selection else None
            print("\n".join(task_table(index, names, args.verbose) if names else family_lines(index, args.verbose)))
            return 0
        if args.what == "groups":
            rows = [[n, len(index.select(n)), ", ".join(g.task)] for n, g in sorted(index.groups.items())]
            headers = ["group", "tasks", "members"]
        else:
            rows = [[tag, len(names), ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")] for tag, names in sorted(index.tags.items())]
            headers = ["tag", "tasks", "examples"]
    else:
        category = {"models": "model", "datasets": "dataset", "kinds": "kind", "metrics": "metric",
                    "tests": "test", "reporters": "reporter", "pretrained": "pretrained"}[args.what]
        if category == "model":
            rows = [[e.name, *_applicability(e), e.plugin, e.description] for e in registry.entries(category)]
            headers = ["name", "family", "answers", "training split", "plugin", "description"]
        else:
            rows = [[e.name, e.plugin, e.description] for e in registry.entries(category)]
            headers = ["name", "plugin", "description"]
    print(tabulate(rows, headers=headers) if rows else f"no {args.what} registered")
    return 0


def _applicability(entry) -> list[str]:
    """Which tasks a model can serve, from its adapter class: family, request types, training split needed.

    Adapter modules import their heavy libraries lazily, so loading the classes stays cheap.
    """
    try:
        adapter = entry.load()
    except MetabenchError:
        return ["?", "(cannot import)", "?"]
    served = ", ".join(t.__name__.removesuffix("Request") for t in getattr(adapter, "serves", ()))
    if not served:  # `hf` hands over to an encoder or a decoder adapter, read from the model's config
        return [getattr(adapter, "family", "?"), "as its family", "as its family"]
    needs = "required" if getattr(adapter, "needs_training", False) else "not used"
    return [getattr(adapter, "family", "?"), served, needs]


def _diagnosis_registry():
    """`plugins` and `validate` always run: load leniently, show every problem, and fail after in strict mode."""
    from .plugins import load, strict_mode

    return load(strict=False), strict_mode()


def _cmd_validate(args) -> int:
    from .config.index import validate_paths

    registry, strict = _diagnosis_registry()
    results = validate_paths(args.paths, registry)
    bad = [(p, e) for p, e in results if e]
    for path, error in results:
        print(f"ok    {path}" if not error else f"FAIL  {error}")
    for problem in registry.problems:
        print(f"PLUGIN {problem}")
    print(f"\n{len(results) - len(bad)} valid, {len(bad)} invalid, {len(registry.problems)} plugin problem(s)")
    return 1 if bad or (strict and registry.problems) else 0


def _cmd_plugins(args) -> int:
    from tabulate import tabulate

    from .config.index import TaskIndex

    registry, strict = _diagnosis_registry()
    TaskIndex(registry)  # task files are read here, so their problems are listed too
    rows = [[p["name"], p["version"], ", ".join(h.removeprefix("metabench_register_") for h in p["hooks"]),
             _plugin_status(p, registry.problems)] for p in registry.plugins]
    print(tabulate(rows, headers=["plugin", "version", "hooks", "status"]))
    if registry.problems:
        print(f"\n{len(registry.problems)} problem(s):")
        for problem in registry.problems:
            print(f"  {problem}")
    return 2 if strict and registry.problems else 0


def _plugin_status(record: dict, problems: list) -> str:
    """A plugin's status: "ok" only when nothing of it was quarantined (one broken task file leaves the plugin
    loaded, but it is not ok)."""
    own = sum(problem.plugin == record["name"] for problem in problems)
    if record["status"] != "ok" or not own:
        return record["status"]
    return f"loaded, {own} problem(s) below: part of it is quarantined"


def _cmd_schema(args) -> int:
    if args.what == "leaderboard":
        from .report.leaderboard.schema import format_markdown

        print(format_markdown(), end="")
        return 0
    if args.what == "results":
        from .run_record import results_markdown

        print(results_markdown(), end="")
        return 0
    from .config.docs import schema_markdown

    print(schema_markdown(), end="")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``metabench ARGS``, its output behind `printable.LogGuard`: no user text it echoes (a model spec, a
    folder name) can forge a line of a CI log."""
    from .printable import guard

    streams = sys.stdout, sys.stderr
    if sys.stderr is None:  # started with stderr closed (2>&-): what goes there must not land on stdout
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the process's stderr from now on
    sys.stdout, sys.stderr = guard(sys.stdout), guard(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _robust_output()
    if "--strict" in argv[: argv.index("--") if "--" in argv else len(argv)]:
        argv.remove("--strict")
        return _strict(argv)
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv.insert(0, "run")  # `metabench --tasks ... --model ...` is `metabench run ...`
    try:
        parser = _build_parser()
    except ExplainedError as exc:  # a plugin's verbs could not be added under --strict
        return _explain(exc)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except ExplainedError as exc:
        return _explain(exc)
    except KeyboardInterrupt:
        print("\nmetabench: interrupted. Answers computed so far are cached: rerun the same command to resume.",
              file=sys.stderr)
        return 130
    except BrokenPipeError:  # `metabench ls tasks | head -1`: the reader left; not an error of ours
        _detach_stdout()
        return 2 if args.command == "gate" else 141  # a gate whose verdict was not delivered has not passed
    except OSError as exc:
        if exc.errno not in _FULL:
            return _internal_error(exc)
        return _output_lost(exc)
    except ImportError as exc:
        from .extras import missing_extra

        error = missing_extra(exc, f"metabench {args.command}")
        if error is None:
            return _internal_error(exc)
        print(f"metabench: error: {error.message}\n  hint: {error.hint}", file=sys.stderr)
        return error.exit_code
    except Exception as exc:  # noqa: BLE001 - a bug must not exit 1, which means "a job failed" or "regression"
        return _internal_error(exc)


def _robust_output() -> None:
    """Messages name what the user gave, which may hold bytes that are not UTF-8 (a file name in another
    encoding arrives as lone surrogates): they are printed escaped instead of failing the print. Deprecations of
    the plugin API are shown (Python hides DeprecationWarning outside __main__), so plugin authors see them."""
    import warnings

    from .errors import PluginAPIDeprecationWarning

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
            stream.reconfigure(errors="backslashreplace")
    warnings.filterwarnings("default", category=PluginAPIDeprecationWarning)


def _explain(exc: ExplainedError) -> int:
    """A user's mistake: the message and its hint, and the error's exit status (never a traceback)."""
    from .printable import safe_lines

    print(f"metabench: error: {safe_lines(exc.message)}", file=sys.stderr)  # it may quote a run's names
    if exc.hint:
        print(f"  hint: {safe_lines(exc.hint)}", file=sys.stderr)
    return exc.exit_code


#: errno values of a write that found no room: a full disk or quota, or a file-size limit (``ulimit -f``: Python
#: ignores SIGXFSZ, so the write fails with EFBIG instead of the process being killed).
_FULL = (errno.EFBIG, errno.ENOSPC, errno.EDQUOT)


def _output_lost(exc: OSError) -> int:
    """A write with no room (most often stdout redirected to a file at its size limit): said plainly, exit 2."""
    from .printable import escape

    _detach_stdout()
    where = f" ({escape(exc.filename)})" if exc.filename else ""
    try:
        print(f"metabench: error: the output could not be written{where}: {exc.strerror}", file=sys.stderr)
        print("  hint: a file-size limit (ulimit -f), a full disk or a quota: free space or raise the limit, then rerun",
              file=sys.stderr)
    except OSError:  # stderr on the same full disk
        pass
    return 2


def _detach_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not raise again."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _internal_error(exc: Exception) -> int:
    """One line naming the error and where it happened, exit 2; the traceback with METABENCH_DEBUG=1."""
    import os
    import traceback

    from .printable import escape

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    print(f"metabench: internal error: {type(exc).__name__}: {escape(exc)}{where}", file=sys.stderr)
    print("  hint: this is a bug in metabench or a plugin, not in your input; rerun with METABENCH_DEBUG=1 for "
          "the traceback and report it", file=sys.stderr)
    if os.environ.get("METABENCH_DEBUG"):
        traceback.print_exception(exc)
    return 2


def _strict(argv: list[str]) -> int:
    """``--strict`` anywhere is METABENCH_STRICT=1 for this command (every subcommand, one switch)."""
    import os

    previous = os.environ.get("METABENCH_STRICT")
    os.environ["METABENCH_STRICT"] = "1"
    try:
        return main(argv)
    finally:
        if previous is None:
            del os.environ["METABENCH_STRICT"]
        else:
            os.environ["METABENCH_STRICT"] = previous


if __name__ == "__main__":
    sys.exit(main())
