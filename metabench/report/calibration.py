"""`metabench stats calibrate`: every procedure's simulated error rates on every task shape, and the gate's false
fails, as one JSON record that the docs' calibration tables are generated from.

The simulation takes minutes, too long for `metabench report docs` to rerun on every check, so the command
writes its figures to ``benchmarks/results/calibration.json`` with a fingerprint of what they depend on: the
settings, the source of the simulation and of the statistics it calls, and the samples digest of every
committed run it reads. `tests/report/test_calibration_docs.py` recomputes the fingerprint and fails when the
record is stale; `metabench report docs` renders the tables from the record (docs_calibration). The rows that
miss a target go, with their scope, to ``metabench/report/calibration_misses.json`` (`misses`), which compare,
gate and the leaderboard read (`calibration_misses`). numpy and the simulation load only when it runs, so
building the command line stays cheap.

A shape read from seeded runs is simulated once per pair of their seeds (`task_shapes.populations`: all ten
pairs of five seeds), one row each, with ``replications`` test sets per hypothesis each: a procedure that meets
its targets on one pair and misses them on another is listed as missing them, with the pairs it misses on
(`misses`). Every rate is printed with its Monte-Carlo standard error, the MDE too, and the power's error counts
the MDE's (`calibrate._power_se`). The default replications (600 per pair: ten pairs at 600 cost what three
pairs at 1,500 did) keep a rate's error near 5 % or 95 % to about 0.9 points and the power's to about two, and
the command to minutes (docs/reporting.md says how many it took): every pair at that error, rather than three
pairs at 0.6 points and a worst pair that may lie among the seven not simulated (#58 item 12).

The gate replay records each null gate's exit status (`ReplayResult.codes`), so a check can replay the first
few gates of each scenario and hold them to the record without replaying them all (the replay's draws are one
stream per scenario: the first k of 200 gates are the k a replay of k makes).
"""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from ..store import read_record

RECORD = Path("benchmarks/results/calibration.json")
#: the modules whose source the figures depend on (the simulation, the statistics it calls, the gate's path)
SOURCES = ("metabench/stats/calibrate.py", "metabench/stats/paired.py", "metabench/stats/power.py",
           "metabench/stats/corrections.py", "metabench/stats/few_units.py", "metabench/report/task_shapes.py",
           "metabench/report/gate/replay.py",
           "metabench/report/gate/__init__.py", "metabench/report/calibration.py")


@dataclass(frozen=True)
class Settings:
    """Replications per hypothesis, procedure and seed pair, bootstrap resamples in each simulated test, null
    gates per scenario, the seed of everything, and the replications of the cheap parts (families of Holm and
    BH, paired t's over seeds: numbers, not test sets, so tens of thousands cost seconds)."""

    replications: int = 600
    resamples: int = 500
    gate_replays: int = 200
    seed: int = 0
    correction_replications: int = 20_000
    seed_replications: int = 20_000


def fingerprint(root: Path, settings: Settings) -> str:
    """sha256 of the settings, the sources in ``SOURCES`` and the samples digests of the runs read."""
    from . import task_shapes
    from .gate import replay as gate_replay

    repo = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256(json.dumps(asdict(settings), sort_keys=True).encode())
    for source in SOURCES:
        digest.update((repo / source).read_bytes())
    read = task_shapes.READ + tuple((gate_replay.FOLDS, folder) for _, folder, _, _ in gate_replay.SCENARIOS)
    for results in sorted(root.glob("*/*/results.json")):
        if any(results.match(f"{task}/{folder}/results.json") for task, folder in read):
            digest.update(str(read_record(results).samples_sha256).encode())
    return digest.hexdigest()


def run(registry, root: Path, settings: Settings = Settings()) -> dict:
    """The record: calibration rows (procedure × shape) and the gate's null replays."""
    from ..stats import calibrate
    from . import task_shapes
    from .gate import replay as gate_replay

    rows = []
    for population in task_shapes.populations(root):
        rows += calibrate.calibrate_population(population, replications=settings.replications,
                                               resamples=settings.resamples, seed=settings.seed)
    for shape in task_shapes.seed_shapes(root):
        rows += calibrate.calibrate_seeds(shape, replications=settings.seed_replications, seed=settings.seed)
    rows += calibrate.calibrate_corrections(task_shapes.family_size(root),
                                            replications=settings.correction_replications, seed=settings.seed)
    with tempfile.TemporaryDirectory(prefix="metabench-gate-replay-") as work:
        replays = gate_replay.replay(registry, root, Path(work), replays=settings.gate_replays, seed=settings.seed)
    return {"settings": asdict(settings), "fingerprint": fingerprint(root, settings),
            "rows": [row.as_dict() for row in rows], "gate": [r.as_dict() for r in replays]}


def percent(rate: float | None, se: float | None = None) -> str:
    if rate is None:
        return "—"
    return f"{100 * rate:.1f}" + ("" if se is None else f" ± {100 * se:.1f}")


def _mde(value: float | None, se: float | None) -> str:
    """The MDE to as many decimals as its Monte-Carlo error needs (two significant digits of the error). An
    error of 0 is a median of discrete MDEs (McNemar's) whose neighbouring ranks print the same value."""
    if value is None:
        return "—"
    if not se:
        return f"{value:.4f} ± 0"
    decimals = max(4, 1 - math.floor(math.log10(se)))
    return f"{value:.{decimals}f} ± {se:.{decimals}f}"


def table_rows(record: dict) -> list[list[str]]:
    """One row per procedure, shape and seed pair: type-I, coverage under H0 and H1, printed MDE, power at it,
    targets missed; each figure ± its Monte-Carlo standard error."""
    out = []
    for row in record["rows"]:
        se = row["se"]
        coverage = "—" if row["coverage_null"] is None else (
            f"{percent(row['coverage_null'], se.get('coverage_null'))} / {percent(row['coverage_alt'], se.get('coverage_alt'))}")
        out.append([row["procedure"], row["shape"], row.get("seeds") or "—", percent(row["type_i"], se.get("type_i")),
                    coverage, _mde(row["mde"], se.get("mde")), percent(row["power"], se.get("power")),
                    ", ".join(row["missed"]) or "none", row["note"]])
    return out


HEADER = ["procedure", "task shape", "seeds", "type-I % (α 0.05)", "coverage % H0 / H1", "MDE printed",
          "power % at MDE", "missed", "note"]
GATE_HEADER = ["null comparison", "gates", "false fails (exit 1), defaults", "inconclusive (exit 3), defaults",
               "false fails, --alpha 0.05 (the default before)"]


def gate_rows(record: dict) -> list[list]:
    return [[r["scenario"], r["replays"], r["false_fails"], r["inconclusive"], r["false_fails_before"]]
            for r in record["gate"]]


def _figures(row: dict) -> str:
    """The targets a record row misses, each with its measured rate and Monte-Carlo standard error."""
    from ..stats import calibrate

    se, out = row["se"], []
    for missed in row["missed"]:
        name = missed.split(" within")[0]
        soft = " (within Monte-Carlo error)" if missed.endswith("MC error") else ""
        if name == "type-I":
            out.append(f"type-I {percent(row['type_i'], se['type_i'])} % at alpha 0.05 (target ≤ "
                       f"{100 * calibrate.TYPE_I_MAX:g} %){soft}")
        elif name == "coverage":
            alt = ("" if row["coverage_alt"] is None else
                   f", {percent(row['coverage_alt'], se.get('coverage_alt'))} % under H1")  # None: no alternative
            out.append(f"95 % interval coverage {percent(row['coverage_null'], se['coverage_null'])} % under H0{alt} "
                       f"(target ≥ {100 * calibrate.COVERAGE_MIN:g} %){soft}")
        else:
            out.append(f"power {percent(row['power'], se['power'])} % at the printed MDE (target "
                       f"{100 * calibrate.POWER_TARGET:g} ± {100 * calibrate.POWER_SLACK:g} %){soft}")
    return "; ".join(out)


def misses(record: dict) -> dict:
    """What ``calibration_misses.json`` holds: every procedure and shape that stands for a default procedure (its
    rows have a scope) and misses a target on any of its seed pairs, with the figures in words: one entry per
    procedure and shape (one note per comparison), naming each pair that misses and what it measured there, and
    how many pairs were simulated ("seeds 0/2 (of 3 pairs): ...")."""
    groups: dict[tuple, list[dict]] = {}
    for row in record["rows"]:
        if row.get("scope"):
            key = (row["procedure"], row["shape"], json.dumps(row["scope"], sort_keys=True))
            groups.setdefault(key, []).append(row)
    out = []
    for (procedure, shape, _), rows in groups.items():
        missed = [row for row in rows if row["missed"]]
        if not missed:
            continue
        paired = len(rows) > 1 or bool(rows[0].get("seeds"))
        among = f"of {len(rows)} pairs" if len(rows) > 1 else "the only pair"
        figures = "; ".join((f"seeds {row['seeds']} ({among}): " if paired else "") + _figures(row)
                            for row in missed)
        out.append({"procedure": procedure, "shape": shape, "scope": rows[0]["scope"], "figures": figures})
    return {"fingerprint": record["fingerprint"], "misses": out}


def format_record(record: dict) -> str:
    from tabulate import tabulate

    from ..stats import calibrate

    settings = record["settings"]
    return "\n".join([
        tabulate(table_rows(record), headers=HEADER, disable_numparse=True), "",
        f"{settings['replications']} replications per hypothesis and seed pair, {settings['resamples']} bootstrap "
        f"resamples per test, {settings['seed_replications']} per paired t over seeds, seed {settings['seed']}; "
        "± = Monte-Carlo standard error (the power's counts the MDE's). "
        f"Targets: type-I ≤ {100 * calibrate.TYPE_I_MAX:g} %, "
        f"coverage ≥ {100 * calibrate.COVERAGE_MIN:g} %, power {100 * calibrate.POWER_TARGET:g} ± "
        f"{100 * calibrate.POWER_SLACK:g} %.", "",
        tabulate(gate_rows(record), headers=GATE_HEADER, disable_numparse=True),
    ])
