"""docs/reporting.md's calibration tables, rendered from the record `metabench stats calibrate --write` committed
(``benchmarks/results/calibration.json``, next to the repository's committed runs): the simulation takes minutes,
so `metabench report docs` reads its figures instead of rerunning it, and a test fails when the record is stale.

The simulation makes every pair of each shape's seeds (#58 item 12: VUA-18's sentence bootstrap missed by more on
a pair outside the first three seeds', the pairs simulated before), at fewer test sets per pair than three pairs
had. The note under the table says so beside the figures, with the reason and the Monte-Carlo error it costs,
and a second table prints each procedure's mean over the pairs and the worst of them. It lives here, not in
`report/calibration.py`, whose source is part of the record's fingerprint."""

from __future__ import annotations

import json
import math
from pathlib import Path

from ...errors import MetabenchError
from ...store import read_record
from ..calibration import GATE_HEADER, HEADER, RECORD, gate_rows, percent, table_rows
from ..task_shapes import READ
from .blocks import markdown

#: the design before every pair was simulated: the pairs of the first three seeds, at 1,500 test sets each
BEFORE = (3, 1500)
PAIRS_HEADER = ["procedure", "task shape", "seed pairs simulated", "type-I %: mean", "type-I %: worst pair",
                "coverage % H0: mean", "coverage % H0: worst pair"]


def _record(context, file: str) -> dict:
    path = Path(context.runs_dir).resolve().parents[1] / file
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MetabenchError(f"{path}: no calibration record", hint="run `metabench stats calibrate --write`") from None


def calibration_table(context, file: str = str(RECORD)) -> list[str]:
    """Procedure × task shape → type-I, coverage, printed MDE, power, and the targets missed."""
    record = _record(context, file)
    settings = record["settings"]
    held = held_pairs(record, Path(context.runs_dir))
    return [*markdown(HEADER, table_rows(record)), "",
            f"{settings['replications']} simulated test sets per hypothesis, procedure and seed pair (the seeds "
            "column: every pair of the committed runs' seeds, each its own row), "
            f"{settings['resamples']} "
            f"bootstrap resamples in each, {settings['seed_replications']} simulated paired t's over seeds, seed "
            f"{settings['seed']} ({settings['correction_replications']} families for Holm and BH); ± is the "
            "Monte-Carlo standard error, for the power counting the error of the MDE it is measured at.", "",
            pairs_note(record, held), "", *markdown(PAIRS_HEADER, pair_rows(record, held))]


def _pattern(rows: list[dict]) -> str | None:
    """The task pattern a shape's rows were read from (the scope of its default procedures' rows)."""
    return next((row["scope"]["tasks"] for row in rows if row.get("scope")), None)


def held_pairs(record: dict, runs_dir: Path) -> dict[str, tuple[int, int]]:
    """Shape -> (seed pairs simulated, seed pairs its committed run holds), for every shape simulated per pair:
    the run is the first of `task_shapes.READ` for the shape's task pattern (the one its pairs are read from);
    a shape whose run is not under ``runs_dir`` is left out."""
    shapes: dict[str, list[dict]] = {}
    for row in record["rows"]:
        if row.get("seeds"):
            shapes.setdefault(row["shape"], []).append(row)
    out = {}
    for shape, rows in shapes.items():
        pattern = _pattern(rows)
        folder = next((folder for task, folder in READ if task == pattern), None)
        found = sorted(runs_dir.glob(f"{pattern}/{folder}/results.json")) if folder else []
        if found:
            seeds = len(read_record(found[0].parent).seeds)
            out[shape] = (len({row["seeds"] for row in rows}), math.comb(seeds, 2))
    return out


def pairs_note(record: dict, held: dict[str, tuple[int, int]]) -> str:
    """Beside the figures: how many of the seed pairs each shape's runs hold were simulated, and at what cost in
    Monte-Carlo error; where a shape's runs hold pairs the record lacks (a record older than the runs), that the
    worst of every pair is not known, and the command that fixes it."""
    replications = record["settings"]["replications"]
    error = lambda n: 100 * math.sqrt(0.05 * 0.95 / n)  # noqa: E731 - a rate's Monte-Carlo error near 5 %
    cut = {shape: pairs for shape, pairs in held.items() if pairs[0] < pairs[1]}
    if not cut:
        most = max((total for _, total in held.values()), default=0)
        return (f"Every seed pair the committed runs hold is simulated (up to {most} per shape), each at "
                f"{replications} test sets per hypothesis, not the {BEFORE[1]:,} per pair of the {BEFORE[0]} pairs "
                f"simulated before (#58 item 12): {most} pairs at {replications} cost about what {BEFORE[0]} at "
                f"{BEFORE[1]:,} did, so a rate near 5 % carries ± {error(replications):.1f} points of Monte-Carlo "
                f"error on each pair instead of ± {error(BEFORE[1]):.1f}, and the worst pair is one the simulation "
                "saw. The table below gives each procedure's mean over the pairs and its worst pair.")
    counts = sorted(set(cut.values()))
    shown = ", ".join(f"{done} of {total} pairs on {', '.join(s for s, p in cut.items() if p == (done, total))}"
                      for done, total in counts)
    return (f"Seed pairs simulated: {shown}: the committed runs hold pairs the record lacks, so the worst pair of "
            "all is not known: a pair not simulated may miss a target by more than any printed here. Rerun "
            "`metabench stats calibrate --write` and `metabench report docs`.")


def pair_rows(record: dict, held: dict[str, tuple[int, int]]) -> list[list[str]]:
    """Per procedure and shape simulated on more than one seed pair: the pairs simulated (of those held), the
    mean type-I and H0 coverage over them and the worst pair of each, with its seeds."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in record["rows"]:
        if row.get("seeds") and row["type_i"] is not None:
            groups.setdefault((row["procedure"], row["shape"]), []).append(row)
    out = []
    for (procedure, shape), rows in groups.items():
        if len(rows) < 2:
            continue
        done, total = held.get(shape, (len(rows), None))
        simulated = (f"{done} of {total}" + ("" if done == total else " (worst of all: not known)")) if total else f"{done}"
        worst = max(rows, key=lambda r: r["type_i"])
        line = [procedure, shape, simulated, percent(sum(r["type_i"] for r in rows) / len(rows)),
                f"{percent(worst['type_i'], worst['se']['type_i'])} (seeds {worst['seeds']})"]
        covered = [r for r in rows if r["coverage_null"] is not None]
        if covered:
            low = min(covered, key=lambda r: r["coverage_null"])
            line += [percent(sum(r["coverage_null"] for r in covered) / len(covered)),
                     f"{percent(low['coverage_null'], low['se']['coverage_null'])} (seeds {low['seeds']})"]
        else:
            line += ["—", "—"]
        out.append(line)
    return out


def gate_table(context, file: str = str(RECORD)) -> list[str]:
    """The gate's false fails on null replays, and what its default level promises for as many gates."""
    import scipy.stats

    from ..gate import ALPHA

    record = _record(context, file)
    replays = record["settings"]["gate_replays"]
    rate = ALPHA / 2  # only a drop fails: a one-sided test at alpha / 2
    return [*markdown(GATE_HEADER, gate_rows(record)), "",
            f"By design, a null gate at the default `--alpha {ALPHA:g}` fails at most α / 2 = {100 * rate:g} % of the "
            f"time (Holm keeps it so across checks), so {replays} null gates show at most one false fail with "
            f"probability {100 * scipy.stats.binom.cdf(1, replays, rate):.0f} % (binomial); at `--alpha 0.05`, "
            f"{100 * scipy.stats.binom.cdf(1, replays, 0.025):.0f} %."]
