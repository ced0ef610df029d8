"""Each run's facts once (#59 item 4): the board makes a ranked run's verdicts in one place (`board._facts`), from
one reading of its items: the best constant answer is scored once per run and metric and shared by the ≈ chance
mark and the below-chance caveat (they each scored it before), the aligned rows are kept by `runs.align` and not
written onto the `Run`, and a registered section receives the facts the board's entries carry."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from metabench.report import trivial
from metabench.report.compare import Options
from metabench.report.leaderboard.board import build_board
from metabench.runs.align import item_rows
from metabench.runs.stored import find_runs, load_run

#: A committed decoder run below its best constant answer on a two-answer task (30 items): both the ≈ chance mark
#: and the below-chance caveat are made on it.
BELOW = Path(__file__).resolve().parents[2] / "leaderboard" / "runs" / "flute_gap_dec_idiom"


def test_the_best_constant_answer_is_scored_once_for_the_mark_and_the_caveat(report_registry, monkeypatch):
    if not any(BELOW.glob("*/results.json")):
        pytest.skip("the committed flute_gap_dec_idiom runs are not in this checkout")
    scored: Counter = Counter()
    best = trivial._best

    def counted(registry, run, rows, metric=None):
        scored[(str(run.path), metric or run.record.primary_metric)] += 1
        return best(registry, run, rows, metric)

    monkeypatch.setattr(trivial, "_best", counted)
    board = build_board(report_registry, find_runs([BELOW]), options=Options(n_resamples=200), published=[], jobs=1)
    [entry] = board.tasks[0].entries
    assert entry.caveats.below_chance and entry.caveats.below_chance.startswith("below chance on a two-answer task")
    assert entry.marks.trivial.chance is True  # not above it: ≈ chance, the mark beside the caveat
    assert scored == Counter({(entry.run, board.tasks[0].primary_metric): 1})


def test_the_assessment_gives_what_the_separate_verdicts_give(report_registry):
    if not any(BELOW.glob("*/results.json")):
        pytest.skip("the committed flute_gap_dec_idiom runs are not in this checkout")
    run = load_run(next(BELOW.glob("*/results.json")).parent)
    found = trivial.assessment(report_registry, run)
    assert found.below_chance == trivial.below_chance(report_registry, run)
    assert found.trivial == trivial.chance(report_registry, run, Options(), trivial.ALPHA)
    assert found.collapsed_fit == trivial.collapsed_fit(run) is None  # a decoder: no fit to collapse
    assert found.marks() == trivial.assess(report_registry, run, Options(), trivial.ALPHA)


def test_aligned_rows_are_kept_by_alignment_not_written_onto_the_run(toy_runs):
    run = find_runs([toy_runs])[0]
    before = set(vars(run))
    rows = item_rows(run)
    assert item_rows(run) is rows  # made once per run
    assert set(vars(run)) == before  # the run is its folder, record and samples: nothing written onto it


#: What the section below was given, per build.
_SEEN: list = []


def section_reading_facts(inputs):
    """A registered section that reads the runs' facts (`BoardInputs.facts`)."""
    from metabench.report.leaderboard.sections import BoardSection

    _SEEN.append(inputs.facts)
    return BoardSection({"runs": len(inputs.facts)})


def test_a_section_receives_the_facts_the_entries_carry(toy_runs):
    from metabench import hookimpl, plugins

    class Plugin:
        @hookimpl
        def metabench_register_board_sections(self, register):
            register("facts_seen", f"{__name__}:section_reading_facts")

    _SEEN.clear()
    registry = plugins.load(extra_plugins=(Plugin(),))
    board = build_board(registry, find_runs([toy_runs]), options=Options(n_resamples=50), published=[])
    [facts] = _SEEN
    entries = [e for t in board.tasks for e in t.entries]
    assert set(facts) == {e.run for e in entries} and board.section("facts_seen") == {"runs": len(entries)}
    for entry in entries:
        assert facts[entry.run].marks == entry.marks and facts[entry.run].caveats == entry.caveats
