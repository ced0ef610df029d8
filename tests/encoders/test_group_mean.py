"""Groups with aggregate: mean report the unweighted mean of their members (k-fold cross-validation)."""

from __future__ import annotations

import math
import statistics

import pytest

from metabench.report.groups import group_rows, group_table
from metabench.runner import RunOptions, run


@pytest.fixture
def registry(monkeypatch, tmp_path):
    import enc_toy_plugin
    import toy_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin, enc_toy_plugin))


def test_group_mean_over_members_per_seed(registry, tmp_path):
    outcomes = run(registry, "enc_toy_cv", ["random", "majority"], RunOptions(output_dir=tmp_path, progress=False, seeds=[0, 1, 2]))
    rows = {row["model"]: row for row in group_rows([o.record for o in outcomes if o.status == "ok"])}
    assert set(rows) == {"random", "majority"}
    row = rows["random"]
    assert row["group"] == "enc_toy_cv" and row["members"] == 2 and row["primary_metric"] == "span_f1"
    by_task = {o.task: o.record.raw for o in outcomes if o.model == "random"}
    per_seed = [statistics.fmean(by_task[t]["metrics"]["per_seed"][s]["span_f1"] for t in by_task) for s in ("0", "1", "2")]
    agg = row["aggregate"]["span_f1"]
    assert agg["n"] == 3 and agg["mean"] == pytest.approx(statistics.fmean(per_seed))
    assert agg["std"] == pytest.approx(statistics.stdev(per_seed))
    assert rows["majority"]["aggregate"]["span_f1"]["n"] == 1  # deterministic baseline: one seed
    assert "enc_toy_cv" in group_table(list(rows.values()))

    partial = [o for o in outcomes if o.task == "enc_toy_tag"]
    (missing,) = [r for r in group_rows([o.record for o in partial if o.status == "ok"]) if r["model"] == "random"]
    assert missing["missing"] == ["enc_toy_tag_on_train"]


def test_groups_are_recorded_in_the_runs_and_reach_compare(registry, tmp_path):
    """Membership comes from the run files (task.groups), so a k-fold mean is compared without the task index."""
    import scipy.stats

    from metabench.report.groups import compare_groups

    outcomes = run(registry, "enc_toy_cv", ["random", "majority"], RunOptions(output_dir=tmp_path, progress=False, seeds=[0, 1]))
    results = [o.record.raw for o in outcomes]
    members = sorted({o.task for o in outcomes})
    assert all(r["task"]["groups"] == [{"name": "enc_toy_cv", "members": members, "source": r["task"]["groups"][0]["source"]}]
               for r in results)
    (row,) = compare_groups([o.record for o in outcomes], "majority")
    value = {(o.task, o.model): o.record.raw["metrics"]["aggregate"]["span_f1"]["mean"] for o in outcomes}
    a, b = [value[(m, "majority")] for m in members], [value[(m, "random")] for m in members]
    assert row["baseline"] == "majority" and row["candidate"] == "random" and row["members"] == len(members)
    assert row["delta"] == pytest.approx(statistics.fmean(b) - statistics.fmean(a))
    expected = scipy.stats.ttest_rel(b, a).pvalue
    assert (row["pvalue"] is None and not math.isfinite(expected)) or row["pvalue"] == pytest.approx(expected)
