"""``metabench export lm-eval`` writes a metabench ``aggregate: mean`` group (k-fold CV: ``moh_x_cv``, ``trofi_cv``)
as an lm-eval group per decoder way, ``<group>_scored`` and ``<group>_generated`` (#56): lm-eval's TaskManager
loads it with every member, and the group mean lm-eval computes is metabench's group aggregate (each member's
metric on its own items, then the unweighted mean over members), not the size-weighted mean lm-eval defaults to."""

from __future__ import annotations

import json
import statistics
from types import SimpleNamespace

import pytest

#: Two "folds" of the toy benchmark on different test items (40 and 30: sizes that make a weighted mean differ).
FOLD_A = "toy_bench_fold_a"
FOLD_B = "toy_bench_fold_b"


@pytest.fixture
def cv_registry(monkeypatch, tmp_path):
    import decoder_tasks_plugin
    import toy_plugin

    from metabench import plugins
    from metabench.hookspecs import hookimpl

    folder = tmp_path / "cv_tasks"
    folder.mkdir()
    bench = (decoder_tasks_plugin.TASKS / "toy_bench.yaml").read_text()
    (folder / f"{FOLD_A}.yaml").write_text(bench.replace("task: toy_bench", f"task: {FOLD_A}"))
    (folder / f"{FOLD_B}.yaml").write_text(bench.replace("task: toy_bench", f"task: {FOLD_B}")
                                           .replace("splits: {train: train, test: test}",
                                                    "splits: {train: test, test: train}"))
    (folder / "toy_cv.yaml").write_text(f"group: toy_cv\ntask: [{FOLD_A}, {FOLD_B}]\naggregate: mean\n")
    cv_plugin = SimpleNamespace(__name__="toy_cv_plugin",  # registers the folder, as a plugin's task folder
                                metabench_register_tasks=hookimpl(lambda register: register(str(folder))))
    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin, decoder_tasks_plugin, cv_plugin))


@pytest.fixture
def cv_export(cv_registry, tmp_path):
    from metabench.export.lmeval import export_lmeval

    out = tmp_path / "export"
    return out, {e.task: e for e in export_lmeval(cv_registry, "toy_cv", out)}


def _load(out, names):
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=str(out), include_defaults=False).load(list(names))


def test_a_mean_group_is_one_lm_eval_group_per_way_with_unweighted_means(cv_export):
    out, done = cv_export
    groups = {name: e for name, e in done.items() if e.is_group}
    assert set(groups) == {"toy_cv_scored", "toy_cv_generated"}
    assert groups["toy_cv_scored"].members == [f"{FOLD_A}_scored", f"{FOLD_B}_scored"]
    assert groups["toy_cv_scored"].items == 40 + 30
    loaded = _load(out, sorted(groups))
    assert loaded["group_map"] == {"toy_cv_scored": [f"{FOLD_A}_scored", f"{FOLD_B}_scored"],
                                   "toy_cv_generated": [f"{FOLD_A}_generated", f"{FOLD_B}_generated"]}
    assert {len(list(t.eval_docs)) for t in loaded["tasks"].values()} == {40, 30}
    aggregated = {name: [(a.metric, tuple(a.filter_list), a.aggregation, a.weight_by_size)
                         for a in group.aggregate_metric_list] for name, group in loaded["groups"].items()}
    assert aggregated == {
        "toy_cv_scored": [(m, ("none",), "mean", False) for m in ("acc", "acc_norm", "f1")],
        "toy_cv_generated": [("exact_match", ("strict",), "mean", False)],
    }
    readme = (out / "README.md").read_text()
    assert "| toy_cv_scored |" in readme and "unweighted mean" in readme


def test_the_group_mean_lm_eval_computes_is_metabenchs_group_aggregate(cv_export):
    """lm-eval's Group.aggregate on constructed per-fold results (folds of 40 and 30 items) against metabench's
    mean_over_members on the same per-fold values: equal, and not the size-weighted mean."""
    from metabench.report.groups import mean_over_members

    out, _ = cv_export
    group = _load(out, ["toy_cv_scored"])["groups"]["toy_cv_scored"]
    per_fold = {f"{FOLD_A}_scored": {"f1": 0.25, "acc": 0.5, "acc_norm": 0.6, "n": 40},
                f"{FOLD_B}_scored": {"f1": 0.75, "acc": 0.9, "acc_norm": 0.3, "n": 30}}
    task_metrics = {task: {**{f"{m},none": v[m] for m in ("f1", "acc", "acc_norm")},
                           **{f"{m}_stderr,none": 0.01 for m in ("f1", "acc", "acc_norm")}, "sample_len": v["n"]}
                    for task, v in per_fold.items()}
    theirs = group.aggregate(task_metrics)
    records = [SimpleNamespace(metrics=SimpleNamespace(per_seed={"0": {m: v[m] for m in ("f1", "acc", "acc_norm")}}))
               for v in per_fold.values()]
    ours = mean_over_members(records)
    for metric in ("f1", "acc", "acc_norm"):
        assert theirs[f"{metric},none"] == pytest.approx(ours[metric]["mean"])
        assert ours[metric]["mean"] == pytest.approx(statistics.fmean(v[metric] for v in per_fold.values()))
    weighted = (0.25 * 40 + 0.75 * 30) / 70
    assert theirs["f1,none"] == pytest.approx(0.5) and theirs["f1,none"] != pytest.approx(weighted, abs=0.01)


def test_a_group_selected_in_part_is_not_written(cv_registry, tmp_path):
    from metabench.export.lmeval import export_lmeval

    done = export_lmeval(cv_registry, FOLD_A, tmp_path)
    assert not any(e.is_group for e in done) and not (tmp_path / "toy_cv_scored.yaml").exists()
    assert "toy_cv (1 of 2 members exported" in (tmp_path / "README.md").read_text()


def test_the_k_fold_benchmarks_export_as_groups_lm_eval_loads(real_registry, tmp_path):
    """MOH-X and TroFi's ten folds, each way: the groups the issue names, as lm-eval loads them."""
    from metabench.export.lmeval import export_lmeval

    from mirror import mirror_dir

    if mirror_dir() is None:
        pytest.skip("needs the data mirror (METABENCH_DATA_DIR or ../shared/data)")
    done = {e.task: e for e in export_lmeval(real_registry, "moh_x_cv,trofi_cv", tmp_path, limit=2)}
    groups = sorted(name for name, e in done.items() if e.is_group)
    assert groups == ["moh_x_cv_generated", "moh_x_cv_scored", "trofi_cv_generated", "trofi_cv_scored"]
    loaded = _load(tmp_path, groups)
    for name in groups:
        stem, way = name.rsplit("_", 1)
        assert loaded["group_map"][name] == [f"{stem}_fold{k}_{way}" for k in range(10)]
    assert len(loaded["tasks"]) == 40
    assert json.loads((tmp_path / "data" / "moh_x_cv_fold3_scored.jsonl").read_text().splitlines()[0])["choices"] == [
        " literal", " metaphor"]  # the positive label second: lm-eval's f1 is the fold's F1


@pytest.mark.slow
def test_lm_eval_reports_the_fold_mean_of_its_own_per_fold_results(cv_export, tiny_decoder):
    """The whole path on the tiny decoder: lm-eval runs the group, and its group f1 and accuracy are the unweighted
    mean of the per-fold values it reports, i.e. metabench's group aggregate of those folds."""
    from lm_eval.evaluator import simple_evaluate
    from lm_eval.tasks import TaskManager

    out, _ = cv_export
    results = simple_evaluate(model=tiny_decoder.lm, tasks=["toy_cv_scored"], bootstrap_iters=0,
                              task_manager=TaskManager(include_path=str(out), include_defaults=False))
    table = {**results["results"], **results.get("groups", {})}
    folds = [table[f"{FOLD_A}_scored"], table[f"{FOLD_B}_scored"]]
    for metric in ("f1,none", "acc,none"):
        assert table["toy_cv_scored"][metric] == pytest.approx(statistics.fmean(f[metric] for f in folds))
