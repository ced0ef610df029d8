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


@pytest.mark.slow
@pytest.mark.heavy
def test_the_record_is_what_the_command_computes(report_registry):
    """Minutes: the whole simulation again with the record's settings, figure for figure."""
    record = _record()
    assert run(report_registry, RUNS, Settings(**record["settings"])) == record
