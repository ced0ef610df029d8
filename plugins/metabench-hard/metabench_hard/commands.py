"""``metabench hard train | mine | stats | ...``: the hard-metaphor pipeline from the command line (registered by
the hard family's plugin, ``hard``, like a third party's verbs).

  metabench hard train --model hf:minilm-l6 --threads 1             SOR encoder (cached)
  metabench hard mine  --model hf:minilm-l6 --threads 1             + phi over the pool = HARD(M) (cached)
  metabench hard stats --model hf:minilm-l6 --xi 0.8 --xi 0.5       Table 4 statistics of a built set
  metabench hard vua-phi --model hf:minilm-l6                        phi of the VUA-Verb test items
  metabench hard fidelity --model hf:minilm-l6                       our phi vs the authors' (hmd_proxy)
  metabench hard gap --model hf:minilm-l6 HARD_RUN VUA_RUN           HARD vs VUA-Verb P/R gap, phi bins
  metabench hard breakdown --model hf:minilm-l6 RUN...                any VUA-Verb or HARD run by phi bin
  metabench hard breakdown --phi-table FILE RUN...                    the same from a portable phi table

``--sor steps=300,tau=0.1`` changes SOR settings and ``--mine rate_min_instances=5`` mining settings (both default to
the paper's values; docs/hard-metaphors.md lists them). Imports stay inside the verbs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from metabench.plugin_api import Analysis, MetabenchError


EXIT_STATUS = """\
exit status: 0 done, 2 bad usage (a bad setting or run folder, a build these settings have not made yet: the
hint names the `metabench hard mine` command) or an internal error.
"""


def add_commands(subparsers) -> None:
    hard = subparsers.add_parser(
        "hard", help="hard metaphors (Li et al.): SOR training, phi mining, HARD(M) statistics",
        description="Sense-only representations, overlap phi and per-model hard-metaphor sets (Li et al.).",
        epilog=EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = hard.add_subparsers(dest="hard_verb", metavar="VERB")
    hard.set_defaults(func=lambda args: (hard.print_help(), 2)[1])

    def verb(name: str, func, help_text: str):
        parser = verbs.add_parser(name, help=help_text, description=help_text, epilog=EXIT_STATUS,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("--model", required=True, help="the encoder, e.g. hf:minilm-l6")
        parser.add_argument("--sor", default="", metavar="K=V,...", help="SOR settings (default: the paper's)")
        parser.add_argument("--mine", default="", metavar="K=V,...", help="mining settings (default: the paper's)")
        parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
        parser.set_defaults(func=func)
        return parser

    verb("train", cmd_train, "train (or find) the SOR encoder of a model")
    verb("mine", cmd_mine, "build (or find) HARD(M): phi of every pool instance of a MOH verb")
    stats = verb("stats", cmd_stats, "Table 4 statistics of HARD(M) at one or more thresholds")
    stats.add_argument("--xi", type=float, action="append", help="threshold(s) (default: 0.8 and 0.5)")
    vua = verb("vua-phi", cmd_vua_phi, "phi of the VUA-Verb test items under the model's SOR (for breakdowns)")
    vua.add_argument("--save", metavar="DIR", help="also write the portable table DIR/hard_phi/<name>/hard_phi.json "
                     "(for compare hardness --phi-table and the leaderboard), e.g. --save leaderboard/runs")
    fid = verb("fidelity", cmd_fidelity, "Spearman and phi < xi agreement with the authors' phi on hmd_proxy")
    fid.add_argument("--xi", type=float, default=0.8)
    gap = verb("gap", cmd_gap, "one detector on HARD(M) vs VUA-Verb: P/R gap with unpaired tests, recall by phi")
    gap.add_argument("hard_run", metavar="HARD_RUN", help="run folder of the detector on a hard_mi task (its "
                     "task's SOR and mining settings are used unless --sor/--mine are given)")
    gap.add_argument("vua_run", metavar="VUA_RUN", help="run folder of the same detector on vua_verb")
    gap.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    down = verbs.add_parser("breakdown", help=BREAKDOWN, description=BREAKDOWN + " (also `metabench compare "
                            "--phi-table/--phi-model`)")
    down.add_argument("runs", nargs="+", type=Path, metavar="RUN",
                      help="run folders or output folders (vua_verb or hard_mi tasks; searched recursively)")
    source = down.add_mutually_exclusive_group(required=True)
    source.add_argument("--phi-table", type=Path, metavar="FILE", help="a portable hard_phi.json written by `metabench "
                        "hard vua-phi --save` (or its folder)")
    source.add_argument("--model", help="phi from this machine's cache: the HARD(MODEL) build, e.g. hf:minilm-l6")
    down.add_argument("--sor", default="", metavar="K=V,...", help="with --model: its SOR settings")
    down.add_argument("--mine", default="", metavar="K=V,...", help="with --model: its mining settings")
    down.add_argument("--confidence", type=float, default=0.95, help="confidence level of the CIs (default 0.95)")
    down.add_argument("--json", action="store_true", help="print JSON instead of a table")
    down.set_defaults(func=cmd_breakdown)


BREAKDOWN = "precision/recall of VUA-Verb or HARD(M) runs per phi bin of a SOR model"


#: More torch threads than this is a typo, not a machine.
MAX_THREADS = 1024


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _setup(args):
    from metabench.plugin_api import default_registry  # noqa: PLC0415
    from .sor import SORSettings  # noqa: PLC0415
    from .store import parse_mine_settings  # noqa: PLC0415

    given = getattr(args, "xi", None)  # stats: a list or None; fidelity: one number; the other verbs: none
    for xi in given if isinstance(given, list) else [] if given is None else [given]:
        if not 0 < xi <= 1:  # NaN too: phi (in [0, 1]) < xi selects, so 0 selects nothing and above 1 all the same
            raise MetabenchError(f"--xi {xi}: must be a number in (0, 1], e.g. 0.8 (the paper) or 0.5",
                                 hint="phi lies in [0, 1]: a threshold of 0 selects no instance, one above 1 every one")
    if args.threads is not None:
        if not 1 <= args.threads <= MAX_THREADS:
            raise MetabenchError(f"--threads {args.threads}: must be between 1 and {MAX_THREADS}",
                                 hint="leave --threads out for torch's default (one per core), or give a count, e.g. --threads 2")
        import torch

        torch.set_num_threads(args.threads)
    return default_registry(), SORSettings.parse(args.sor), parse_mine_settings(args.mine)


def cmd_train(args) -> int:
    from .build import ensure_sor  # noqa: PLC0415

    registry, settings, _ = _setup(args)
    key, folder, meta = ensure_sor(registry, args.model, settings, log=_log)
    print(f"SOR encoder {key[:12]}: {folder}")
    print(f"trained in {meta.get('wall_seconds')} s on {meta.get('torch_threads')} thread(s); loss "
          f"{meta.get('loss_first_50', float('nan')):.3f} (first 50 steps) -> {meta.get('loss_last_50', float('nan')):.3f} (last 50)")
    return 0


def cmd_mine(args) -> int:
    from .build import ensure_hard  # noqa: PLC0415

    registry, settings, mine = _setup(args)
    folder = ensure_hard(registry, args.model, settings, mine, log=_log)
    print(f"HARD({args.model}) built: {folder}")
    return _print_stats(folder, (0.8, 0.5))


def cmd_stats(args) -> int:
    from .build import ensure_hard  # noqa: PLC0415

    registry, settings, mine = _setup(args)
    folder = ensure_hard(registry, args.model, settings, mine, log=_log)
    return _print_stats(folder, tuple(args.xi or (0.8, 0.5)))


def _print_stats(folder, thresholds) -> int:
    import json

    from .mine import statistics  # noqa: PLC0415

    rows = [json.loads(line) for line in (folder / "instances.jsonl").read_text(encoding="utf-8").splitlines()]
    for xi in thresholds:
        print(json.dumps(statistics(rows, xi), indent=2))
    return 0


def _build(args):
    from .store import find_build  # noqa: PLC0415

    registry, settings, mine = _setup(args)
    return registry, settings, mine, find_build(args.model, settings, mine, registry)


def cmd_vua_phi(args) -> int:
    import json
    from collections import Counter

    from .mine import phi_bin  # noqa: PLC0415
    from .store import sor_store  # noqa: PLC0415
    from .vua_phi import PHI_FILE, vua_phi  # noqa: PLC0415

    registry, settings, mine, build = _build(args)
    meta = json.loads((build / "build.json").read_text(encoding="utf-8"))
    sor_folder = sor_store().find(meta["sor_key"])
    rows, counts = vua_phi(registry, build, sor_folder, pool_min_instances=mine.pool_min_instances,
                           rate_min_instances=mine.rate_min_instances, k_rule=mine.k_rule,
                           max_length=mine.max_length, layer=settings.layer, log=_log)
    with open(build / PHI_FILE, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, sort_keys=True) + "\n")
    bins = Counter(phi_bin(r["phi"]) or "no phi" for r in rows)
    print(json.dumps({"file": str(build / PHI_FILE), **counts, "phi_bins": dict(sorted(bins.items()))}, indent=2))
    if args.save:
        from .phi_table import make_table, save_table  # noqa: PLC0415

        path = save_table(make_table(args.model, settings, mine, build, rows, counts), Path(args.save))
        print(f"phi table: {path}")
    return 0


def cmd_fidelity(args) -> int:
    import json

    from .fidelity import fidelity  # noqa: PLC0415

    registry, _, _, build = _build(args)
    print(json.dumps(fidelity(registry, build, args.xi), indent=2))
    return 0


def _instances(build) -> list[dict]:
    """The build's pool rows (instances.jsonl)."""
    import json

    return [json.loads(line) for line in (build / "instances.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def _phi_tables(build, rows=None):
    """(phi of HARD item ids, phi of VUA-Verb test ids or None before `hard vua-phi`) of one build."""
    import json

    from .vua_phi import PHI_FILE  # noqa: PLC0415

    rows = _instances(build) if rows is None else rows
    hard_phi = {f"hard:{r['id']}": r["phi"] for r in rows}
    vua_file = build / PHI_FILE
    vua_phi = ({r["id"]: r["phi"] for r in map(json.loads, vua_file.read_text(encoding="utf-8").splitlines())}
               if vua_file.is_file() else None)
    return hard_phi, vua_phi


def cmd_breakdown(args) -> int:
    from metabench.plugin_api import find_runs  # noqa: PLC0415

    return breakdown(find_runs(args.runs), table_file=args.phi_table, model=args.model, sor=args.sor, mine=args.mine,
                     confidence=args.confidence, as_json=args.json)


def breakdown(runs: list, *, table_file: Path | None, model: str | None, sor: str = "", mine: str = "",
              confidence: float = 0.95, as_json: bool = False, registry=None) -> int:
    """Print each verified run's precision and recall per phi bin (a rejected run is left out with a note,
    `report.verified_runs`), with phi from a portable table or from the HARD(M) build in this machine's cache
    (one of the two): ``metabench hard breakdown`` and ``compare hardness``."""
    import json  # noqa: PLC0415

    from metabench.plugin_api import default_registry, MetabenchError, verified_runs  # noqa: PLC0415
    from .report.hardness import format_hardness, hardness_row  # noqa: PLC0415

    registry = registry or default_registry()
    if table_file and model:
        raise MetabenchError("--phi-table and --phi-model are two sources of the same phi: give one")
    if not (table_file or model):
        raise MetabenchError("hardness needs phi: give --phi-table FILE (a portable hard_phi.json) or --phi-model MODEL "
                             "(this machine's HARD(MODEL) build)",
                             hint="metabench compare hardness --phi-table leaderboard/runs/hard_phi/minilm-l6 RUN...")
    runs, _ = verified_runs(registry, runs, "hardness")
    if not runs:
        raise MetabenchError("hardness: every run given failed verification (the reasons are above)",
                             hint="rerun them with the tasks as they are here, or leave them out")
    if table_file:
        from .phi_table import load_table  # noqa: PLC0415

        table = load_table(table_file)
    else:
        from .phi_table import cached_table  # noqa: PLC0415

        table = cached_table(registry, model, sor, mine)
    rows = [hardness_row(run, table, confidence) for run in runs]
    print(json.dumps({"hardness": rows}, indent=2) if as_json else format_hardness(rows))
    return 0


def _settings_of(hard_run, args) -> None:
    """--sor and --mine left out: the HARD run's own, recorded with its task (``dataset_args``), so the gap is
    computed on the build the run was tested on (a hard_mi task names non-default settings in its YAML)."""
    recorded = hard_run.record.task.config.dataset_args
    for name in ("sor", "mine"):
        if not getattr(args, name) and recorded.get(name):
            setattr(args, name, recorded[name])


def cmd_gap(args) -> int:
    import json

    from metabench.plugin_api import load_run  # noqa: PLC0415
    from .gap import format_report, report, sentence_units  # noqa: PLC0415

    hard_run, vua_run = load_run(Path(args.hard_run)), load_run(Path(args.vua_run))
    _settings_of(hard_run, args)
    _, _, _, build = _build(args)
    rows = _instances(build)
    hard_phi, vua_phi = _phi_tables(build, rows)
    data = report(vua_run, hard_run, hard_phi, vua_phi, sentence_units(rows))
    print(format_report(data))
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def _phi_arguments(group, *, deprecated: bool = False) -> None:
    """Where phi comes from; on compare itself (``deprecated``) each flag names the verb that replaces it."""
    verb = "use `metabench compare hardness --phi-table FILE RUN...`: " if deprecated else ""
    group.add_argument("--phi-table", type=Path, metavar="FILE",
                       help=f"{verb}a hard_phi.json written by `metabench hard vua-phi --save` (or its folder)")
    group.add_argument("--phi-model", metavar="MODEL",
                       help=f"{verb.replace('--phi-table FILE', '--phi-model MODEL')}phi from this machine's cache: "
                       "the HARD(MODEL) build (after `metabench hard mine` and `hard vua-phi`); also breaks down runs "
                       "of hard_mi tasks")
    group.add_argument("--phi-sor", default="", metavar="K=V,...", help="with --phi-model: its SOR settings")
    group.add_argument("--phi-mine", default="", metavar="K=V,...", help="with --phi-model: its mining settings")


def _compare_arguments(parser) -> None:
    _phi_arguments(parser.add_argument_group("where phi comes from (one of the two)"))
    parser.add_argument("--confidence", type=float, default=0.95, help="Wilson interval level (default 0.95)")


def _compare(args, runs: list, registry) -> int:
    return breakdown(runs, registry=registry, table_file=args.phi_table, model=args.phi_model, sor=args.phi_sor,
                     mine=args.phi_mine, confidence=args.confidence, as_json=args.json)


#: ``metabench compare hardness``, registered by the plugin (``metabench_register_compare_analyses``): the same
#: code as ``hard breakdown``; ``compare --phi-table/--phi-model`` is its deprecated form.
COMPARE_HARDNESS = Analysis(
    description="Break detectors down by hardness (docs/hard-metaphors.md): each run's recall and precision per phi "
    "bin, with phi from a portable table (--phi-table, written by `metabench hard vua-phi --save`) or from this "
    "machine's HARD(MODEL) build (--phi-model). The same as `metabench hard breakdown`.",
    examples="  metabench compare hardness --phi-table leaderboard/runs/hard_phi/minilm-l6 runs/vua_verb/M\n"
    "  metabench compare hardness --phi-model hf:minilm-l6 runs/vua_verb/M runs/hard_mi_minilm_l6/M",
    arguments=_compare_arguments, run=_compare,
    old_flags=lambda group: _phi_arguments(group, deprecated=True), old_dests=("phi_table", "phi_model"),
    alone=("--phi-table/--phi-model break runs down by hardness; they take no other comparison option",
           "metabench compare hardness --phi-table FILE RUN..."),
)
