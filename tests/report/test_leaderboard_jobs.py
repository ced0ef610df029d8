"""A leaderboard built in several processes is the one built in one (metabench/report/leaderboard/task_workers.py).

The tasks here are committed runs of several datasets (so there are several chunks to spread), with a k-fold
group, partial runs and SOR tables among them; one run is forged so a worker has a rejection to hand back, and
the verification cache must end up holding every run's verdict whichever process checked it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from metabench.report.leaderboard.board import build_board
from metabench.runs.stored import find_runs
from metabench.runs.verified_metrics import FILE, VerifiedMetrics

RUNS = Path(__file__).resolve().parents[2] / "leaderboard" / "runs"
TASKS = ["vua_verb", "hard_phi", "m4x_int_en_ft_all_met", "m4x_int_en_ft_all_nomet", "boisson_moh_lexical_f0@default",
         "moh_x_cv_fold0", "moh_x_cv_fold1", "trofi_cv_fold0"]


@pytest.fixture(scope="module")
def runs_with_a_forgery(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("jobs") / "runs"
    for name in TASKS:
        shutil.copytree(RUNS / name, root / name)
    forged = next(p.parent for p in sorted((root / "moh_x_cv_fold1" / "lookup").rglob("results.json")))
    results = json.loads((forged / "results.json").read_text())
    first = next(iter(results["metrics"]["aggregate"]))
    results["metrics"]["aggregate"][first]["mean"] += 0.2
    (forged / "results.json").write_text(json.dumps(results))
    return root


def _board(registry, root: Path, jobs: int) -> str:
    board = build_board(registry, find_runs([root]), options=_options(), jobs=jobs)
    return json.dumps(board.to_dict(), sort_keys=True)


def _options():
    from metabench.report.compare import Options

    return Options(n_resamples=2_000)


@pytest.mark.slow
def test_two_processes_build_the_board_one_builds(report_registry, runs_with_a_forgery, tmp_path, monkeypatch):
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    one = _board(report_registry, runs_with_a_forgery, jobs=1)
    shutil.rmtree(tmp_path / "cache")
    two = _board(report_registry, runs_with_a_forgery, jobs=2)
    assert two == one
    board = json.loads(two)
    assert len(board["rejected_runs"]) == 1 and "moh_x_cv_fold1" in board["rejected_runs"][0]["run"]
    assert {t["name"] for t in board["tasks"]} >= {"vua_verb", "trofi_cv_fold0", "moh_x_cv_fold0", "moh_x_cv_fold1"}
    remembered = VerifiedMetrics(report_registry)  # the workers' verdicts, saved once by the parent
    found = find_runs([runs_with_a_forgery])
    assert all(remembered.get(run) is not None for run in found), "a worker's verdict did not reach the cache"
    assert (tmp_path / "cache" / FILE).is_file()
    again = _board(report_registry, runs_with_a_forgery, jobs=2)  # from the cache: the same board
    assert again == one


def test_jobs_must_be_a_whole_number_of_one_or_more(cli, tmp_path):
    code, _, err = cli("leaderboard", "build", str(RUNS / "trofi_cv_fold0"), "-o", str(tmp_path / "site"), "--jobs", "0")
    assert code == 2 and "--jobs 0" in err and "one per CPU" in err
