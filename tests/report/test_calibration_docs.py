"""The calibration figures in docs/reporting.md come from `metabench stats calibrate --write`, never typed: the
committed record must be what the command computes from today's code and runs (the docs tables themselves are
held to the record by test_docs_tables)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metabench.report.calibration import RECORD, Settings, fingerprint, misses, run
from metabench.report.calibration_misses import MISSES
from metabench.report.docs.blocks import find_blocks
from metabench.stats.calibrate import Row

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "leaderboard" / "runs"


def _record() -> dict:
    return json.loads((ROOT / RECORD).read_text(encoding="utf-8"))


def test_the_calibration_record_is_current():
    """A change to the simulation, the statistics it calls, the gate or the runs it reads makes the record stale."""
    record = _record()
    assert fingerprint(RUNS, Settings(**record["settings"])) == record["fingerprint"], (
        "benchmarks/results/calibration.json is stale: run `metabench stats calibrate --write && metabench report docs`")


def test_the_committed_misses_are_the_records():
    """compare, gate and the leaderboard read the misses from the package: the same command writes them."""
    assert json.loads(MISSES.read_text(encoding="utf-8")) == misses(_record()), (
        "metabench/report/calibration_misses.json is stale: run `metabench stats calibrate --write`")


def test_a_changed_setting_changes_the_fingerprint():
    assert fingerprint(RUNS, Settings()) != fingerprint(RUNS, Settings(seed=1))


def test_reporting_md_shows_both_generated_tables():
    text = (ROOT / "docs" / "reporting.md").read_text(encoding="utf-8")
    names = {block.name for block in find_blocks(Path("reporting.md"), text)}
    assert {"calibration", "gate-false-fails"} <= names


def test_each_rows_missed_targets_follow_from_its_rates():
    for entry in _record()["rows"]:
        row = Row(**{k: entry[k] for k in ("procedure", "shape", "replications", "type_i", "coverage_null",
                                           "coverage_alt", "mde", "power", "note", "se")})
        assert row.verdicts() == entry["missed"], entry["procedure"]


@pytest.mark.slow
def test_the_command_prints_every_procedure_and_the_gate(cli):
    code, out, _ = cli("stats", "calibrate", "--runs", RUNS, "--replications", "4", "--resamples", "40",
                       "--gate-replays", "2")
    assert code == 0
    for name in ("McNemar exact", "bootstrap over documents, t(K-1) (default)", "paired t over seeds", "Holm",
                 "order noise, 3 seeds (paired t)", "identical candidate"):
        assert name in out


#: The committed runs' task shapes the simulation reads (task_shapes.populations): one part of the replay each.
POPULATIONS = 6
#: The record, in parts that the test workers replay side by side: each part draws from its own generator, seeded
#: by the settings, as run() does, so a part computed alone is that part of the whole record.
PARTS = [f"population {i}" for i in range(POPULATIONS)] + ["seeds", "corrections", "gate"]


def _part(registry, part: str, settings: Settings) -> tuple[str, list[dict]]:
    """(the record's list the part belongs to, its entries) for one part of run()'s record."""
    import tempfile

    from metabench.report import task_shapes
    from metabench.report.gate import replay as gate_replay
    from metabench.stats import calibrate

    if part.startswith("population "):
        population = task_shapes.populations(RUNS)[int(part.split()[1])]
        rows = calibrate.calibrate_population(population, replications=settings.replications,
                                              resamples=settings.resamples, seed=settings.seed)
    elif part == "seeds":
        rows = [row for shape in task_shapes.seed_shapes(RUNS)
                for row in calibrate.calibrate_seeds(shape, replications=settings.replications, seed=settings.seed)]
    elif part == "corrections":
        rows = calibrate.calibrate_corrections(task_shapes.family_size(RUNS),
                                               replications=settings.correction_replications, seed=settings.seed)
    else:
        with tempfile.TemporaryDirectory(prefix="metabench-gate-replay-") as work:
            replays = gate_replay.replay(registry, RUNS, Path(work), replays=settings.gate_replays, seed=settings.seed)
        return "gate", [r.as_dict() for r in replays]
    return "rows", [row.as_dict() for row in rows]


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.parametrize("part", PARTS)
def test_the_record_is_what_the_command_computes(report_registry, part):
    """Minutes in all: every part of the simulation again with the record's settings, figure for figure."""
    record = _record()
    where, entries = _part(report_registry, part, Settings(**record["settings"]))
    found = [i for i in range(len(record[where]) - len(entries) + 1) if record[where][i:i + len(entries)] == entries]
    assert entries and found, f"{part}: the record's figures are not what the simulation computes"


@pytest.mark.slow
def test_the_record_has_the_parts_and_only_them(report_registry):
    """The parts the test above replays are the record's whole layout: run() with a few replications gives the
    same procedures, shapes and scenarios in the same order, and its fingerprint and settings are the record's."""
    from metabench.report import task_shapes

    record = _record()
    assert len(task_shapes.populations(RUNS)) == POPULATIONS, "update POPULATIONS to the committed runs' shapes"
    small = Settings(replications=4, resamples=40, gate_replays=2, correction_replications=40,
                     seed=record["settings"]["seed"])
    cheap = run(report_registry, RUNS, small)
    assert [(r["procedure"], r["shape"]) for r in cheap["rows"]] == [(r["procedure"], r["shape"]) for r in record["rows"]]
    assert [r["scenario"] for r in cheap["gate"]] == [r["scenario"] for r in record["gate"]]
    assert set(record) == set(cheap) and record["fingerprint"] == fingerprint(RUNS, Settings(**record["settings"]))
    parts = [_part(report_registry, part, small) for part in PARTS]
    assert [r for where, entries in parts if where == "rows" for r in entries] == cheap["rows"]
    assert [r for where, entries in parts if where == "gate" for r in entries] == cheap["gate"]
