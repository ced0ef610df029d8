"""A metric that declares nothing, f(golds, preds), still gets a paired bootstrap: recomputed on each resample.

The metric is scikit-learn's balanced_accuracy_score registered as a plugin would (no decomposition); the
expected interval is computed here with the same index draws, so the comparison is exact.
"""

from __future__ import annotations

import numpy as np
import pytest
from lazy import lazy

from metabench.hookspecs import hookimpl
from metabench.report.compare import Options, compare_pair
from metabench.runs.stored import load_run
from metabench.store import write_run

skm = lazy("sklearn.metrics")

METRIC = "plain_balanced_accuracy"


class _Plugin:
    @hookimpl
    def metabench_register_metrics(self, register):
        register(METRIC, "sklearn.metrics:balanced_accuracy_score", description="test: no decomposition")


@pytest.fixture(scope="module")
def registry():
    import toy_plugin

    from metabench import plugins

    return plugins.load(extra_plugins=(toy_plugin, _Plugin()))


def _write(path, model, golds, preds, seeds=(0,)):
    samples = [{"id": f"i{i}", "seed": s, "gold": g, "prediction": p[k], "scores": {}}
               for k, s in enumerate(seeds) for i, (g, p) in enumerate(zip(golds, zip(*preds)))]
    per_seed = {str(s): {METRIC: float(skm.balanced_accuracy_score(golds, list(pr)))} for s, pr in zip(seeds, preds)}
    values = [m[METRIC] for m in per_seed.values()]
    results = {
        "schema_version": 1, "created": "2026-01-01T00:00:00+00:00",
        "task": {"name": "syn_ba", "version": 1, "config_hash": "b" * 64, "kind": "classification", "dataset": "syn",
                 "primary_metric": METRIC, "source": "synthetic", "plugin": "tests",
                 "config": {"metrics": [METRIC], "labels": {"names": ["x", "y", "z"]}}},
        "data": {"files": {"syn:test.tsv": "0" * 64}},
        "model": {"spec": model, "adapter": model, "family": "baseline", "args": {}, "fingerprint": model, "info": {}},
        "seeds": list(seeds), "limit": None, "n_items": len(golds), "higher_is_better": {METRIC: True},
        "metrics": {"per_seed": per_seed,
                    "aggregate": {METRIC: {"mean": float(np.mean(values)), "std": 0.0, "n": len(values)}}},
    }
    write_run(path, results, samples)
    return load_run(path)


def test_an_undeclared_metric_is_bootstrapped_by_recomputing_it(registry, tmp_path):
    rng = np.random.default_rng(2)
    golds = list(rng.choice(["x", "y", "z"], 90, p=[0.6, 0.3, 0.1]))
    pred_a = [g if rng.random() < 0.6 else "x" for g in golds]
    pred_b = [g if rng.random() < 0.8 else "x" for g in golds]
    a = _write(tmp_path / "a", "a", golds, [pred_a])
    b = _write(tmp_path / "b", "b", golds, [pred_b])
    comparison = compare_pair(registry, a, b, METRIC, Options(n_resamples=500, seed=5))
    assert comparison.test == "bootstrap" and not any("no paired test" in n for n in comparison.notes)
    assert comparison.delta == pytest.approx(skm.balanced_accuracy_score(golds, pred_b) - skm.balanced_accuracy_score(golds, pred_a))

    # the same draws as metabench.stats.paired_bootstrap (one block of 500 x 90 indices), by hand
    draws = np.random.default_rng(5).integers(0, 90, size=(500, 90))
    g, pa, pb = np.array(golds), np.array(pred_a), np.array(pred_b)
    deltas = [skm.balanced_accuracy_score(g[d], pb[d]) - skm.balanced_accuracy_score(g[d], pa[d]) for d in draws]
    low, high = np.quantile(deltas, [0.025, 0.975])
    assert (comparison.ci_low, comparison.ci_high) == pytest.approx((low, high), abs=1e-12)
    observed = comparison.delta
    extreme = np.abs(np.array(deltas) - observed) >= abs(observed) - 1e-9 * max(1.0, abs(observed))
    assert comparison.pvalue == pytest.approx((1 + extreme.sum()) / 501)
    assert comparison.mde == pytest.approx(2.8016 * np.std(deltas, ddof=1), rel=1e-3)


def test_a_metric_whose_samples_do_not_reproduce_results_gets_no_item_test(registry, tmp_path):
    golds = ["x", "y"] * 20
    a = _write(tmp_path / "a", "a", golds, [["x"] * 40])
    b = _write(tmp_path / "b", "b", golds, [golds])
    # the stored value is not what the samples give (a kind that parsed raw outputs before scoring)
    import json

    results = json.loads((b.path / "results.json").read_text())
    results["metrics"]["aggregate"][METRIC]["mean"] = 0.9
    (b.path / "results.json").write_text(json.dumps(results))
    comparison = compare_pair(registry, a, load_run(b.path), METRIC, Options(n_resamples=200))
    assert comparison.test is None and "no paired test" in comparison.notes[0]
