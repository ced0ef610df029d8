"""What a long run or build says while it works (#56 item 7): counts that describe the work left, never silence."""

from __future__ import annotations

import io

from metabench import progress
from metabench.launch.outcomes import JobOutcome
from metabench.report.leaderboard.progress import Progress


def _outcome(status: str) -> JobOutcome:
    return JobOutcome(task="t", model="m", status=status)


def test_skipped_jobs_leave_the_runs_total_instead_of_counting_as_done():
    with progress.run_style(progress.LINES), progress.meter(27, "run", "job") as bar:
        progress.count_jobs(bar, [_outcome("skipped")] * 24, 27)
        progress.count_jobs(bar, [_outcome("skipped")], 27)
        progress.count_jobs(bar, [_outcome("ok")], 27)
        assert (bar.n, bar.total) == (1, 2)  # "1/2 jobs (50 %)", not "26/27 jobs (96 %)"
        assert bar.postfix == {"skipped": 25} and not hasattr(bar, "skipped")  # the total's loss, no count of its own
        assert "1/2 jobs (50 %)" in bar.line()
        progress.count_jobs(bar, [_outcome("failed")], 27)
        assert (bar.n, bar.total) == (2, 2)


def test_a_silent_meter_takes_the_counts_too():
    bar = progress.meter(3, "run", "job")  # no run style: nothing shown
    progress.count_jobs(bar, [_outcome("skipped"), _outcome("ok")], 3)
    assert (bar.n, bar.total) == (1, 2)


def test_a_leaderboard_build_in_a_log_says_when_a_phase_starts_and_how_far_it_has_come(monkeypatch):
    monkeypatch.setattr(progress, "interval", lambda: 0.0)  # every step is past the interval
    stream = io.StringIO()
    with Progress(stream=stream).phase("verifying runs", 3, "run") as done:
        for _ in range(3):
            done()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "leaderboard: verifying runs: 3 run(s) to do"
    assert lines[1].startswith("leaderboard: verifying runs: 1/3 run(s), ")
    assert lines[-1].startswith("leaderboard: verifying runs: 3 run(s) in ")


def test_a_quiet_build_prints_nothing():
    stream = io.StringIO()
    with Progress(enabled=False, stream=stream).phase("verifying runs", 3, "run") as done:
        done()
    assert stream.getvalue() == ""
