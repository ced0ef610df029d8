"""The ``metabench artifacts`` verbs (construction artifacts, Boisson et al.), registered by the artifacts
family's plugin (``artifacts``) like a third party's verbs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from metabench.plugin_api import Analysis


def add_commands(subparsers) -> None:
    artifacts = subparsers.add_parser(
        "artifacts", help="construction artifacts (Boisson et al.): can an incomplete input view game a task?",
        description="Runs of tasks with input views (<task>@<view>) per cell and model (docs/artifacts.md).")
    verbs = artifacts.add_subparsers(dest="artifacts_verb", metavar="VERB", required=True)
    game = verbs.add_parser("gameability", help="per cell and model: the views' macro-F1, relative gaps and the "
                            "gameability flag (paired bootstrap against the whole item)")
    game.add_argument("runs", nargs="+", type=Path, metavar="RUN",
                      help="run folders or output folders (searched recursively)")
    game.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    game.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    game.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    game.add_argument("--json", action="store_true", help="print JSON instead of a table")
    game.set_defaults(func=_cmd_gameability)


def _cmd_gameability(args) -> int:
    from metabench.plugin_api import default_registry, find_runs  # noqa: PLC0415

    return gameability(default_registry(), find_runs(args.runs), what="artifacts gameability", alpha=args.alpha,
                       resamples=args.resamples, seed=args.seed, as_json=args.json)


def gameability(registry, runs: list, *, what: str, alpha: float, resamples: int, seed: int, as_json: bool) -> int:
    """Print the gameability rows of the verified ``runs`` (also ``metabench compare artifacts``; a rejected run is
    left out with a note, `report.verified_runs`); the runs no verdict could be made for are named on stderr,
    and none at all is an error saying what to run."""
    from metabench.plugin_api import MetabenchError, TaskIndex, verified_runs  # noqa: PLC0415
    from .report.gameability import assess, format_rows  # noqa: PLC0415
    from metabench.plugin_api import one_per_task_and_model  # noqa: PLC0415

    runs, _ = verified_runs(registry, runs, what)
    unassessed: list[str] = []
    rows = assess(TaskIndex(registry), one_per_task_and_model(runs, what), alpha=alpha, n_resamples=resamples,
                  seed=seed, unassessed=unassessed)
    if not rows:
        raise MetabenchError(
            f"{what}: no verdict from the {len(runs)} run(s) given"
            + (": " + "; ".join(unassessed) if unassessed else ": none is a run of a task with views (TASK@default, "
               "TASK@pme_only, TASK@masked) by a model"),
            hint="run the same model and folds on TASK@default and at least one of TASK@pme_only, TASK@masked "
                 "(metabench ls tasks lists them), then pass all those runs")
    print(json.dumps({"gameability": rows, "unassessed": unassessed}, indent=2) if as_json else format_rows(rows))
    for line in unassessed:
        print(f"not assessed: {line}", file=sys.stderr)
    return 0


def _compare_arguments(parser) -> None:
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level of the flag (default 0.05)")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")


def _compare(args, runs: list, registry) -> int:
    return gameability(registry, runs, what="compare artifacts", alpha=args.alpha, resamples=args.resamples,
                       seed=args.seed, as_json=args.json)


#: ``metabench compare artifacts``, registered by the plugin (``metabench_register_compare_analyses``): the same
#: code as ``artifacts gameability``; ``compare --artifacts`` is its deprecated form.
COMPARE_ARTIFACTS = Analysis(
    description="Per cell and model of Boisson et al.'s artifact tasks: the macro-F1 of each input view (default, "
    "pme_only, masked), their relative gaps and whether an incomplete view matches the whole item (gameable; paired "
    "bootstrap). docs/artifacts.md.",
    examples="  metabench compare artifacts runs/\n  metabench compare artifacts leaderboard/runs --resamples 2000",
    arguments=_compare_arguments, run=_compare,
    old_flags=lambda group: group.add_argument("--artifacts", action="store_true",
                                               help="use `metabench compare artifacts RUN...`"),
    old_dests=("artifacts",),
)
