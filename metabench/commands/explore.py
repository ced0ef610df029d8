"""``metabench explore RUN [RUN_B]``: argument parsing only; the join is in ``report/explore/join.py``, the page
in ``report/explore/page.py``. Registered by ``metabench.report.plugin``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXAMPLES = """\
examples:
  metabench explore runs/m4x_det_en_mono/lookup     writes runs/m4x_det_en_mono/explore-m4x_det_en_mono-lookup.html
  metabench explore runs/moh_x_f0/majority runs/moh_x_f0/hf_minilm-l6 -o moh-explore.html
exit status: 0 page written, 2 bad usage (unreadable run, runs of different tasks, task not installed, a
target inside a leaderboard site) or an internal error.
"""


def add_commands(subparsers) -> None:
    explore = subparsers.add_parser(
        "explore", help="a local page of a run's per-item answers with the items' text (one run, or two side by side)",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Join a run's per-item answers with the text of its items, read from your own data mirror, "
        "into one static HTML page: filter by right/wrong, gold label and any item field (genre, POS, phi bin, "
        "view). With two runs of a task, the items they disagree on (McNemar's discordant pairs) side by side. "
        "The page holds dataset text: it is never written into a leaderboard site.",
    )
    explore.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="one or two run folders (or results.json)")
    explore.add_argument("-o", "--output", type=Path,
                         help="the page to write (default: explore-<task>-<model>[-vs-<model>].html beside the first "
                         "run's folder; for runs inside a leaderboard site or a folder you cannot write to, under "
                         "$METABENCH_CACHE_DIR/explore/)")
    explore.add_argument("--seed", type=int, help="which seed's answers (default: each run's first seed)")
    explore.add_argument("--data-dir", type=Path, help="data mirror (default $METABENCH_DATA_DIR)")
    explore.set_defaults(func=_cmd_explore)


def _cmd_explore(args) -> int:
    from ..errors import MetabenchError
    from ..plugins import default_registry
    from ..printable import escape
    from ..report.explore.join import explore
    from ..report.explore.page import check_target, write_page
    from ..runs.stored import load_run

    if len(args.runs) > 2:
        raise MetabenchError(f"explore takes one or two runs, got {len(args.runs)}", hint="metabench explore RUN [RUN_B]")
    for path in args.runs:
        if not path.exists():
            raise MetabenchError(f"{path}: no such run folder", hint="pass a run folder written by `metabench run`")
    runs = [load_run(path) for path in args.runs]
    target = args.output or _default_target(runs, args.runs[0])
    check_target(target)  # before the items are loaded
    exploration = explore(default_registry(), runs, seed=args.seed, data_dir=args.data_dir)
    counts = exploration.counts()
    written = write_page(exploration, target)
    right = ", ".join(f"{escape(run['model'])} {counts[f'correct_{i}']}" for i, run in enumerate(exploration.runs))
    print(f"{escape(written)}: {counts['items']} items of {escape(exploration.task)} (right: {right})")
    print("the page shows text from your data mirror: keep it local", file=sys.stderr)
    return 0


def _default_target(runs, given: Path) -> Path:
    """Beside the runs it reads: in the folder that holds the first run's folder (``runs/<task>/``), never the
    current folder (a clone's root). Runs inside a leaderboard site (the committed ``leaderboard/runs``) keep
    the page out of it, since it holds the mirror's text: it goes to the cache, ``$METABENCH_CACHE_DIR/explore``;
    so does the page of runs in a folder that cannot be written (another user's, a read-only mount)."""
    from ..cache import cache_root
    from ..errors import MetabenchError
    from ..report.explore.page import check_target, writable_folder

    folder = given.parent if given.name == "results.json" else given
    beside = folder.parent / _default_name(runs)
    try:
        check_target(beside)
    except MetabenchError:
        return cache_root() / "explore" / runs[0].record.task.name / _default_name(runs)
    if not writable_folder(beside.parent):  # runs in a read-only folder (another user's, a mounted archive)
        return cache_root() / "explore" / runs[0].record.task.name / _default_name(runs)
    return beside


def _default_name(runs) -> str:
    import re

    name = f"{runs[0].record.task.name}-" + "-vs-".join(run.record.model.spec for run in runs)
    return "explore-" + re.sub(r"[^A-Za-z0-9_.=@-]+", "_", name)[:150] + ".html"
