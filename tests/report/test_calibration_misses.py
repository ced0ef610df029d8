"""A comparison whose shape the calibration measured missing a target says so: compare's notes, gate's warning
lines and the leaderboard cell's note all carry the procedure, the shape and the measured rates."""

from __future__ import annotations

import json

import pytest

from metabench.report import calibration_misses
from metabench.report.calibration_misses import applies, calibration_notes
from metabench.report.compare import Options, compare_pair
from metabench.runs.stored import load_run

MISS = {"procedure": "McNemar exact", "shape": "toy_cls (40 items)",
        "scope": {"test": "mcnemar", "unit": "items", "tasks": "toy_c*", "metric": "accuracy", "size": 40},
        "figures": "type-I 8.0 ± 1.6 % at alpha 0.05 (target ≤ 6 %)"}


@pytest.fixture
def toy_miss(monkeypatch):
    monkeypatch.setattr(calibration_misses, "_misses", lambda: (MISS,))


def test_a_shape_applies_to_its_test_unit_metric_tasks_and_size():
    scope = MISS["scope"]
    assert applies(scope, "toy_cls", "accuracy", "mcnemar", "items", 40)
    assert applies(scope, "toy_cls", "accuracy", "mcnemar", "items", 49)  # within 1.25x: folds of 64 or 65 items
    for task, metric, test, unit, units in (("toy_tag", "accuracy", "mcnemar", "items", 40),
                                            ("toy_cls", "f1", "mcnemar", "items", 40),
                                            ("toy_cls", "accuracy", "bootstrap", "items", 40),
                                            ("toy_cls", "accuracy", "mcnemar", "documents", 40),
                                            ("toy_cls", "accuracy", "mcnemar", "items", 400)):
        assert not applies(scope, task, metric, test, unit, units)
    assert applies(dict(scope, size=None), "toy_cls", "accuracy", "mcnemar", "items", 4000)


def test_the_committed_misses_name_their_shape_and_rates():
    for miss in json.loads(calibration_misses.MISSES.read_text(encoding="utf-8"))["misses"]:
        note, = [n for n in calibration_notes(miss["scope"]["tasks"].replace("*", "0"), miss["scope"]["metric"],
                                              miss["scope"]["test"], miss["scope"]["unit"], miss["scope"]["size"] or 1)
                 if miss["shape"] in n and miss["procedure"] in n]
        assert miss["figures"] in note and "%" in miss["figures"]


def test_compare_and_gate_print_the_miss(toy_miss, report_registry, toy_runs, copy_run, cli):
    a, b = load_run(toy_runs / "toy_cls" / "majority"), load_run(toy_runs / "toy_cls" / "lookup")
    comparison = compare_pair(report_registry, a, b, "accuracy", Options(n_resamples=200))
    assert comparison.test == "mcnemar"
    assert any(n.startswith("calibration: McNemar exact on the shape toy_cls (40 items)") and MISS["figures"] in n
               for n in comparison.notes)
    baseline = copy_run(toy_runs / "toy_cls" / "lookup", "baseline")
    code, out, _ = cli("gate", "--baseline", baseline, "--candidate", toy_runs / "toy_cls" / "lookup",
                       "--metric", "accuracy")
    assert code == 0
    assert "warning: toy_cls accuracy: calibration: McNemar exact on the shape toy_cls (40 items)" in out
    assert MISS["figures"] in out


def test_the_leaderboard_marks_the_cell_and_prints_the_note(toy_miss, report_registry, toy_runs):
    from metabench.report.leaderboard.board import build_board
    from metabench.report.leaderboard.markdown import render
    from metabench.runs.stored import find_runs

    board = build_board(report_registry, find_runs([toy_runs / "toy_cls"]), options=Options(n_resamples=50),
                        published=[])
    (task,) = board.tasks
    marked = [e for e in task.entries if e.vs_best and e.vs_best.test == "mcnemar"]
    assert marked and all(any(MISS["figures"] in n for n in e.vs_best.notes) for e in marked)
    text = render(board)
    assert " †" in text and "† calibration: McNemar exact on the shape toy_cls (40 items)" in text
