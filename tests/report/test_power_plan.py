"""`metabench power`: the MDE a task (or a k-fold group) allows, against closed forms written here."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.stats

from metabench.report.analyses.power_plan import plan
from metabench.runs.stored import find_runs
from metabench.stats.power import mcnemar_mde

Z = scipy.stats.norm.ppf(0.975) + scipy.stats.norm.ppf(0.8)


def _fold(make_run, root, k: int, correct: list[int], members: list[str]):
    path = make_run(root / f"fold{k}" / "m", task=f"fold{k}", correct={0: correct}, ids=[f"f{k}-{i}" for i in range(len(correct))])
    results = json.loads((path / "results.json").read_text())
    results["task"]["groups"] = [{"name": "folds", "members": members, "source": "test"}]
    (path / "results.json").write_text(json.dumps(results))
    return path


def test_single_task_plan_matches_the_binomial_standard_error_and_mcnemar(report_registry, make_run, tmp_path):
    correct = [1] * 420 + [0] * 180  # accuracy 0.7 on 600 items
    make_run(tmp_path / "syn" / "m", correct={0: correct})
    result = plan(report_registry, find_runs([tmp_path]), "syn", n_resamples=4000)
    assert (result.n_items, result.metric, result.value) == (600, "accuracy", pytest.approx(0.7))
    assert result.std_error == pytest.approx(math.sqrt(0.7 * 0.3 / 600), rel=0.05)
    independent, half, _, mcnemar = (row["mde"] for row in result.rows)
    assert independent == pytest.approx(Z * math.sqrt(2) * result.std_error)
    assert half == pytest.approx(independent / math.sqrt(2))
    assert mcnemar == pytest.approx(mcnemar_mde(600, 2 * 0.7 * 0.3).mde)
    assert independent == pytest.approx(mcnemar, rel=0.06)  # two routes to the same planning number


def test_a_group_plans_over_all_its_members(report_registry, make_run, tmp_path, cli):
    members = ["fold0", "fold1", "fold2"]
    rng = np.random.default_rng(0)
    folds = [list((rng.random(80) < p).astype(int)) for p in (0.6, 0.7, 0.8)]
    for k, correct in enumerate(folds):
        _fold(make_run, tmp_path / "runs", k, correct, members)
    result = plan(report_registry, find_runs([tmp_path / "runs"]), "folds", n_resamples=4000)
    assert result.tasks == members and result.n_items == 240
    assert result.value == pytest.approx(np.mean([np.mean(c) for c in folds]))
    expected = math.sqrt(sum(np.mean(c) * (1 - np.mean(c)) / 80 for c in folds)) / 3  # SE of a mean of folds
    assert result.std_error == pytest.approx(expected, rel=0.06)

    code, out, err = cli("power", "folds", "--baseline", tmp_path / "runs", "--resamples", "500")
    assert code == 0, err
    assert "folds (mean of 3 tasks): accuracy of m = " in out and "over 240 items" in out
    assert "With 240 items a paired test at alpha 0.05 detects a change of ±" in out

    (tmp_path / "runs" / "fold2" / "m" / "results.json").unlink()
    code, _, err = cli("power", "folds", "--baseline", tmp_path / "runs")
    assert code == 2 and "'folds' averages 3 tasks, but --baseline has no run of fold2" in err
    code, _, err = cli("power", "nothing", "--baseline", tmp_path / "runs")
    assert code == 2 and "no run of task or group 'nothing'" in err


def test_declared_clusters_are_planned_whole(report_registry, make_run, tmp_path):
    ids = [f"doc{d}_{s}" for d in range(30) for s in range(10)]
    correct = [1 if d % 3 else 0 for d in range(30) for _ in range(10)]  # whole documents right or wrong
    path = make_run(tmp_path / "syn" / "m", correct={0: correct}, ids=ids)
    results = json.loads((path / "results.json").read_text())
    results["task"]["config"]["metadata"] = {"cluster": {"name": "documents", "id_pattern": "^(doc[0-9]+)_"}}
    (path / "results.json").write_text(json.dumps(results))
    result = plan(report_registry, find_runs([tmp_path]), "syn", n_resamples=4000)
    assert result.unit == "documents" and len(result.rows) == 3  # no McNemar row: items are not independent
    p = 20 / 30
    assert result.std_error == pytest.approx(math.sqrt(p * (1 - p) / 30), rel=0.06)  # 30 documents, not 300 items
    # 30 clusters: t quantiles with 29 degrees of freedom, as compare reads a cluster bootstrap
    t = scipy.stats.t.ppf(0.975, 29) + scipy.stats.t.ppf(0.8, 29)
    assert result.rows[0]["mde"] == pytest.approx(t * math.sqrt(2) * result.std_error)
    assert result.rows[0]["method"].endswith("t(29)")
