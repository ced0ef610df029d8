"""#58 items 10-11 on the committed runs: a collapsed fit is read from a classifier's answers, not from a metric that
answering one label maximises (NewsMet's MiniLM is ≈ chance on F1 and has not collapsed), and where the primary
metric cannot carry a chance test (HARD's recall: answering "metaphor" everywhere scores 1.0) the test is made on
accuracy, the mark names it and leaderboard.md says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from metabench.report.compare import Options
from metabench.report.leaderboard import markdown
from metabench.report.leaderboard.board import build_board
from metabench.report.trivial import collapsed_fit, constant
from metabench.runs.stored import Run, find_runs, load_run

RUNS = Path(__file__).resolve().parents[2] / "leaderboard" / "runs"


def _board(report_registry, folder: Path):
    if not any(folder.glob("*/results.json")):
        pytest.skip(f"the committed runs of {folder.name} are not in this checkout")
    return build_board(report_registry, find_runs([folder]), options=Options(n_resamples=200), published=[])


def test_newsmet_minilm_is_at_chance_on_f1_but_not_a_collapsed_fit(report_registry):
    """Accuracy 0.577-0.590 and "metaphor" for 40-49 % of the items at every seed: below answering "metaphor"
    everywhere on F1 (which that constant maximises), so ≈ chance, but no seed answers one label."""
    board = _board(report_registry, RUNS / "newsmet_det")
    entry = next(e for e in board.tasks[0].entries if e.model == "hf:minilm-l6")
    run = load_run(Path(entry.run))
    shares = [s["share"] for s in constant(run)["seeds"]]
    assert len(shares) == 5 and max(shares) < 0.7  # both labels at every seed
    assert entry.marks.trivial.chance is True and entry.marks.trivial.tested_metric is None
    assert entry.caveats.collapsed_fit is None and entry.caveats.below_chance is None
    assert not any("collapsed fit" in note for note in entry.caveats.notes)
    line = next(line for line in markdown.render(board).splitlines() if line.startswith("| 1 | hf:minilm-l6"))
    assert "(≈ chance)" in line and "collapsed fit" not in line


def test_a_classifier_answering_one_label_at_a_seed_is_a_collapsed_fit():
    """The flag follows the answers: the same NewsMet run with one seed's answers all "metaphor" is a collapsed fit
    at that seed, whatever its F1; at every seed the constant mark says it (no second mark); a baseline answering
    one label has no fit to collapse."""
    source = RUNS / "newsmet_det" / "hf_minilm-l6"
    if not (source / "results.json").exists():
        pytest.skip("the committed NewsMet runs are not in this checkout")
    run = load_run(source)
    first = run.record.seeds[0]
    samples = [{**row, "prediction": "metaphor"} if row["seed"] == first else row for row in run.samples]
    flag = collapsed_fit(Run(run.path, run.record, samples))
    assert flag is not None and f"seed {first} of 5" in flag and '"metaphor"' in flag
    everywhere = [{**row, "prediction": "metaphor"} for row in run.samples]
    assert constant(Run(run.path, run.record, everywhere))["constant"]
    assert collapsed_fit(Run(run.path, run.record, everywhere)) is None
    assert collapsed_fit(load_run(RUNS / "newsmet_det" / "majority")) is None  # a baseline: the constant mark


def test_hard_runs_get_a_chance_test_on_accuracy_named_on_the_board(report_registry):
    """HARD's recall cannot tell answering "metaphor" everywhere (1.0000) from a perfect model; the runs are at
    chance on the balanced items' accuracy (0.495-0.504), so the mark is '≈ chance on accuracy' and the reason
    is in leaderboard.md's read-with-care lines, not only in the JSON."""
    board = _board(report_registry, RUNS / "hard_mi_minilm_l6_sor150")
    text = markdown.render(board)
    for entry in board.tasks[0].entries:
        trivial = entry.marks.trivial
        assert trivial.baseline_value == 1.0 and trivial.tested_metric == "accuracy"
        assert trivial.chance is True  # not above 0.5000 (no test needed), or not significantly (p ≥ 0.05)
        assert (trivial.note.endswith("not above the trivial baseline") if trivial.test is None
                else trivial.pvalue >= 0.05)
        assert "no chance test on recall" in trivial.note and "tested on accuracy instead" in trivial.note
        assert not entry.marks.eligible
        row = next(line for line in text.splitlines()
                   if line.startswith(f"| {entry.rank} | {markdown.escape(entry.model)} "))
        assert "(≈ chance on accuracy)" in row
        assert any(note.startswith("≈ chance: no chance test on recall") for note in entry.caveats.notes)
    assert "no chance test on recall" in text.split("Read with care:")[1]
