"""`metabench gate`: exit 0 without regression, 1 with one, 2 when the runs cannot be compared."""

from __future__ import annotations

import json
import shutil

import pytest

from metabench import stats
from metabench.report.compare import Comparison
from metabench.report.gate import ALPHA, INCONCLUSIVE, PASS, REGRESSION, Tolerance, verdict
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
    assert "toy_cls accuracy: 0.7250 -> 0.4750 (drop 0.2500, tolerance 0; Δ -0.2500" in out
    assert f"p adj {stats.mcnemar_from_counts(10, 0).pvalue:.4g}" in out


def test_worse_within_max_drop_passes(cli, lookup_cls, copy_run, repredict):
    candidate = copy_run(lookup_cls, "candidate")
    _flip_correct(candidate, repredict, 10)
    # at alpha 0.05, where 40 items can detect a drop of 0.3 (at the default 0.005 they cannot: inconclusive)
    gate = ("gate", "--baseline", lookup_cls, "--candidate", candidate, "--alpha", "0.05")
    code, out, _ = cli(*gate, "--max-drop", "0.3")
    assert code == 0 and "worse, within tolerance" in out and "gate: PASS" in out
    assert cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--max-drop", "0.3")[0] == 3
    code, out, _ = cli(*gate, "--max-drop", "0.2")
    assert code == 1
    # relative: 0.25 / 0.725 = 34.5 % of the baseline's accuracy
    assert cli(*gate, "--tolerance", "35%")[0] == 0
    assert cli(*gate, "--tolerance", "34%")[0] == 1


def test_small_insignificant_drop_passes_and_alpha_applies(cli, lookup_cls, copy_run, repredict):
    candidate = copy_run(lookup_cls, "candidate")
    _flip_correct(candidate, repredict, 6)  # McNemar p = 2 / 2**6 = 0.03125
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--alpha", "0.05", "--json")
    assert code == 1 and json.loads(out)["passed"] is False
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--json")
    assert code == 3 and json.loads(out)["alpha"] == ALPHA == 0.005  # the gate's default level, not compare's
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--alpha", "0.01")
    # not significant, and 40 items cannot detect a drop of 0: inconclusive, not a pass
    assert code == 3 and "worse, not significant; INCONCLUSIVE" in out and "gate: INCONCLUSIVE" in out
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--alpha", "0.01",
                       "--inconclusive-ok")
    assert code == 0 and "(--inconclusive-ok: passing)" in out


def test_three_states_on_one_pair(cli, lookup_cls, copy_run, repredict):
    """The same 6-item drop (0.15 of accuracy, McNemar p = 0.031) is a regression, a pass or inconclusive,
    depending on the tolerance and on whether 40 items can detect it (at alpha 0.05: at the gate's default 0.005
    the drop is not significant)."""
    from metabench.stats.power import mcnemar_mde

    candidate = copy_run(lookup_cls, "candidate")
    _flip_correct(candidate, repredict, 6)
    mde = mcnemar_mde(40, 6 / 40).mde
    assert 0.1 < mde < 0.3
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--tolerance", "0.1",
                       "--alpha", "0.05", "--json")
    assert code == 1 and json.loads(out)["outcome"] == REGRESSION
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--tolerance", "0.4",
                       "--alpha", "0.05", "--json")
    (check,) = json.loads(out)["comparisons"]
    assert code == 0 and check["status"] == PASS and check["verdict"] == "worse, within tolerance"
    assert check["mde"] == pytest.approx(mde)
    # not significant at alpha 0.01, and a tolerance the 40 items cannot resolve
    code, out, _ = cli("gate", "--baseline", lookup_cls, "--candidate", candidate, "--tolerance", "0.05",
                       "--alpha", "0.01", "--json")
    report = json.loads(out)
    assert code == 3 and report["outcome"] == INCONCLUSIVE and report["exit_code"] == 3


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
    verdicts = {c["task"]: (c["status"], c["verdict"]) for c in report["comparisons"]}
    assert verdicts == {"toy_tag": (PASS, "no drop"), "toy_cls": (REGRESSION, "REGRESSION")}
    pvalues = [c["pvalue"] for c in report["comparisons"]]
    assert [c["p_adjusted"] for c in report["comparisons"]] == pytest.approx(list(stats.holm(pvalues)))


def _comparison(delta: float, p: float, higher: bool = True, mde: float | None = 0.0,
                ci: tuple = (None, None)) -> Comparison:
    return Comparison(task="t", metric="m", baseline="a", candidate="b", baseline_run="a", candidate_run="b",
                      higher_is_better=higher, baseline_value=0.5, candidate_value=0.5 + delta, delta=delta,
                      n_items=10, seeds={}, pvalue=p, p_adjusted=p, mde=mde, ci_low=ci[0], ci_high=ci[1])


def _seen(comparison, tolerance, alpha=0.05):
    found = verdict(comparison, tolerance, alpha)
    return found.status, found.label


def test_verdict_respects_direction_tolerance_and_alpha():
    assert _seen(_comparison(-0.1, 0.001), 0.0) == (REGRESSION, "REGRESSION")
    assert _seen(_comparison(+0.1, 0.001, higher=False), 0.0) == (REGRESSION, "REGRESSION")  # a loss went up
    assert _seen(_comparison(-0.1, 0.001, higher=False), 0.0) == (PASS, "better")
    assert _seen(_comparison(-0.1, 0.001), 0.1) == (PASS, "worse, within tolerance")  # a drop equal to the allowance
    assert _seen(_comparison(-0.1, 0.2), 0.0) == (PASS, "worse, not significant")
    assert _seen(_comparison(0.0, 1.0), 0.0) == (PASS, "no drop")


def test_verdict_is_inconclusive_when_the_test_cannot_see_the_tolerance():
    status, label = _seen(_comparison(-0.01, 0.5, mde=0.08), 0.05)
    assert status == INCONCLUSIVE and label == "worse, not significant; INCONCLUSIVE: MDE 0.08 > tolerance 0.05"
    assert _seen(_comparison(-0.01, 0.5, mde=0.05), 0.05)[0] == PASS  # an MDE equal to the tolerance suffices
    assert _seen(_comparison(+0.01, 0.5, mde=None), 0.05)[0] == INCONCLUSIVE  # better, but by how much is unknown
    # a CI that excludes drops beyond the tolerance settles it whatever the MDE (here a loss: higher is worse)
    assert _seen(_comparison(-0.01, 0.5, mde=0.08, ci=(-0.03, 0.04)), 0.05)[0] == PASS
    assert _seen(_comparison(-0.01, 0.5, mde=0.08, higher=False, ci=(-0.03, 0.06)), 0.05)[0] == INCONCLUSIVE


def test_tolerance_parsing():
    assert Tolerance.parse("0.01").of(0.8) == 0.01
    assert Tolerance.parse("2%").of(0.8) == pytest.approx(0.016)
    assert str(Tolerance.parse("2%")) == "2%" and str(Tolerance.parse("0.01")) == "0.01"
