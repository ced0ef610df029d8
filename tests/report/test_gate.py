"""`metabench gate`: exit 0 without regression, 1 with one, 2 when the runs cannot be compared."""

from __future__ import annotations

import json
import shutil

import pytest

from metabench import stats
from metabench.report.compare import Comparison
from metabench.report.gate import REGRESSION, verdict
from metabench.store import read_samples


def _flip_correct(run_dir, repredict, count: int) -> None:
    """Make ``count`` correct predictions of a toy_cls run wrong."""
    right = [r for r in read_samples(run_dir) if r["scores"]["correct"]][:count]
    repredict(run_dir, {r["id"]: "literal" if r["gold"] == "metaphorical" else "metaphorical" for r in right})


@pytest.fixture
def lookup_cls(toy_runs, copy_run):
    return copy_run(toy_runs / "toy_cls" / "lookup", "baseline")


def test_identical_runs_pass(cli, lookup_cls, toy_runs):
    code, out, err = cli("gate", "--baseline", lookup_cls, "--candidate", toy_runs / "toy_cls" / "lookup")
    assert code == 0, err
    assert "gate: PASS" in out and "no drop" in out


def test_significantly_worse_candidate_fails(cli, lookup_cls, copy_run, repredict):
    candidate = copy_run(lookup_cls, "candidate")
    _flip_correct(candidate, repredict, 10)  # accuracy 0.725 -> 0.475; McNemar b=10, c=0
    code, out, err = cli("gate", "--baseline", lookup_cls, "--candidate", candidate)
    assert code == 1, err
    assert "gate: FAIL, 1 regression(s)" in out and REGRESSION in out
    assert "toy_cls accuracy: 0.7250 -> 0.4750 (drop 0.2500 > 0" in out
    assert f"p adj {stats.mcnemar_from_counts(10, 0).pvalue:.4g}" in out


def test_worse_within_max_drop_passes(cli, lookup_cls, copy_run, repredict):
    candidate = copy_run(lookup_cls, "candidate")
    _flip_correct(candidate, repredict, 10)
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--max-drop", "0.3")
    assert code == 0 and "worse, within --max-drop" in out and "gate: PASS" in out
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--max-drop", "0.2")
    assert code == 1


def test_small_insignificant_drop_passes_and_alpha_applies(cli, lookup_cls, copy_run, repredict):
    candidate = copy_run(lookup_cls, "candidate")
    _flip_correct(candidate, repredict, 6)  # McNemar p = 2 / 2**6 = 0.03125
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--json")
    assert code == 1 and json.loads(out)["passed"] is False
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--alpha", "0.01")
    assert code == 0 and "worse, not significant" in out


def test_mismatched_items_missing_files_and_other_tasks_exit_2(cli, lookup_cls, toy_runs, short_runs, tmp_path):
    code, _, err = cli("gate", "--baseline", lookup_cls, "--candidate", short_runs / "toy_cls" / "lookup@limit=30")
    assert code == 2 and "10 item id(s) in A are not in B, e.g. 'test-30'" in err
    code, _, err = cli("gate", "--baseline", lookup_cls, "--candidate", toy_runs / "toy_tag" / "lookup")
    assert code == 2 and "--candidate has no run of task(s) toy_cls" in err
    code, _, err = cli("gate", "--baseline", tmp_path / "missing", "--candidate", lookup_cls)
    assert code == 2 and "no such file or folder" in err
    no_samples = tmp_path / "no_samples" / "toy_cls" / "lookup"
    shutil.copytree(lookup_cls, no_samples)
    (no_samples / "samples.jsonl").unlink()
    code, _, err = cli("gate", "--baseline", lookup_cls, "--candidate", no_samples)
    assert code == 2 and "has no samples.jsonl beside it" in err
    code, _, err = cli("gate", "--baseline", toy_runs, "--candidate", lookup_cls)
    assert code == 2 and "--baseline has 4 runs of task 'toy_cls'" in err


def test_output_folders_gate_every_task_with_correction(cli, report_registry, tmp_path, repredict):
    import toy_plugin

    from metabench.runner import RunOptions, run

    for name in ("base", "cand"):
        run(report_registry, "toy_all", ["lookup"],
            RunOptions(output_dir=tmp_path / name, progress=False, use_cache=False, data_dir=toy_plugin.DATA_DIR))
    _flip_correct(tmp_path / "cand" / "toy_cls" / "lookup", repredict, 10)
    code, out, _ = cli("gate", "--baseline", tmp_path / "base", "--candidate", tmp_path / "cand", "--json")
    report = json.loads(out)
    assert code == 1 and report["correction"] == "holm"
    verdicts = {c["task"]: c["verdict"] for c in report["comparisons"]}
    assert verdicts == {"toy_tag": "no drop", "toy_cls": REGRESSION}
    pvalues = [c["pvalue"] for c in report["comparisons"]]
    assert [c["p_adjusted"] for c in report["comparisons"]] == pytest.approx(list(stats.holm(pvalues)))


def _comparison(delta: float, p: float, higher: bool = True) -> Comparison:
    return Comparison(task="t", metric="m", baseline="a", candidate="b", baseline_run="a", candidate_run="b",
                      higher_is_better=higher, baseline_value=0.5, candidate_value=0.5 + delta, delta=delta,
                      n_items=10, seeds={}, pvalue=p, p_adjusted=p)


def test_verdict_respects_direction_max_drop_and_alpha():
    assert verdict(_comparison(-0.1, 0.001), 0.0, 0.05) == REGRESSION
    assert verdict(_comparison(+0.1, 0.001, higher=False), 0.0, 0.05) == REGRESSION  # a loss went up
    assert verdict(_comparison(-0.1, 0.001, higher=False), 0.0, 0.05) == "better"
    assert verdict(_comparison(-0.1, 0.001), 0.1, 0.05) == "worse, within --max-drop"  # a drop equal to the allowance
    assert verdict(_comparison(-0.1, 0.2), 0.0, 0.05) == "worse, not significant"
    assert verdict(_comparison(0.0, 1.0), 0.0, 0.05) == "no drop"
