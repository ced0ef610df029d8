"""Sentence-clustered resampling of token metrics, against a cluster bootstrap written here from scratch.

The fixture makes the clustering visible: the candidate gets whole sentences right or wrong (its errors come
in sentences, as a model's do when a topic or register throws it), so resampling tokens as if independent
gives a much narrower interval than resampling sentences.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from metabench.errors import MetabenchError
from metabench.report.compare import Options, compare_pair
from metabench.runs.stored import load_run
from metabench.store import write_run

N_SENTENCES, WORDS = 100, 20


def _gold(i: int) -> list[str]:
    return ["B-METAPHOR" if (i + w) % 3 == 0 else "O" for w in range(WORDS)]


def _tally(gold: list[str], pred: list[str]) -> tuple[int, int, int]:
    g = np.array([t != "O" for t in gold])
    p = np.array([t != "O" for t in pred])
    return int((g & p).sum()), int((p & ~g).sum()), int((g & ~p).sum())


def _f1(tp, fp, fn) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _write(path, model: str, predictions: list[list[str]], ids=None, cluster=None):
    samples, totals = [], np.zeros(3)
    for i, pred in enumerate(predictions):
        gold = _gold(i)
        tp, fp, fn = _tally(gold, pred)
        totals += (tp, fp, fn)
        samples.append({"id": ids[i] if ids else f"s{i}", "seed": 0, "gold": gold, "prediction": pred,
                        "scores": {"token_tp": float(tp), "token_fp": float(fp), "token_fn": float(fn)}})
    value = _f1(*totals)
    results = {
        "schema_version": 1, "created": "2026-01-01T00:00:00+00:00",
        "task": {"name": "syn_tag", "version": 1, "config_hash": "t" * 64, "kind": "tagging", "dataset": "syn",
                 "primary_metric": "token_f1", "source": "synthetic", "plugin": "tests",
                 "config": {"metrics": ["token_f1"], "labels": {"names": ["O", "B-METAPHOR"], "positive": "METAPHOR"},
                            "metadata": {"cluster": cluster} if cluster else {}}},
        "data": {"files": {"syn:test.tsv": "0" * 64}},
        "model": {"spec": model, "adapter": model, "family": "baseline", "args": {}, "fingerprint": model, "info": {}},
        "seeds": [0], "limit": None, "n_items": len(predictions), "higher_is_better": {"token_f1": True},
        "metrics": {"per_seed": {"0": {"token_f1": value}},
                    "aggregate": {"token_f1": {"mean": value, "std": 0.0, "n": 1}}},
    }
    write_run(path, results, samples)
    return load_run(path)


@pytest.fixture
def clustered_pair(tmp_path):
    rng = np.random.default_rng(7)
    golds = [_gold(i) for i in range(N_SENTENCES)]
    # baseline: an independent 20 % of words flipped; candidate: 30 % of whole sentences all-O, the rest perfect
    baseline = [[("O" if t != "O" else "B-METAPHOR") if rng.random() < 0.2 else t for t in g] for g in golds]
    candidate = [["O"] * WORDS if rng.random() < 0.3 else list(g) for g in golds]
    return _write(tmp_path / "a", "a", baseline), _write(tmp_path / "b", "b", candidate)


def _cluster_bootstrap(a, b, units: str, n_resamples: int, seed: int, confidence=0.95, want_deltas=False):
    """Percentile CI of F1(B) - F1(A), drawing documents, sentences or tokens with replacement (independent of
    metabench: documents are the id's part before '_'); the resampled deltas themselves with ``want_deltas``."""
    def table(run):
        rows = sorted(run.samples, key=lambda r: r["id"])
        if units == "documents":
            totals: dict = {}
            for r in rows:
                doc = r["id"].split("_")[0]
                totals[doc] = totals.get(doc, np.zeros(3)) + _tally(r["gold"], r["prediction"])
            return np.array([totals[d] for d in sorted(totals)])
        if units == "sentences":
            return np.array([_tally(r["gold"], r["prediction"]) for r in rows], dtype=float)
        return np.array([_tally([g], [p]) for r in rows for g, p in zip(r["gold"], r["prediction"])], dtype=float)

    ta, tb = table(a), table(b)
    rng = np.random.default_rng(seed)
    deltas = []
    for _ in range(n_resamples):
        draw = rng.integers(0, len(ta), len(ta))
        deltas.append(_f1(*tb[draw].sum(axis=0)) - _f1(*ta[draw].sum(axis=0)))
    if want_deltas:
        return np.array(deltas)
    tail = (1 - confidence) / 2
    return np.quantile(deltas, [tail, 1 - tail])


def test_sentence_clustering_widens_the_interval_and_matches_a_plain_cluster_bootstrap(report_registry, clustered_pair):
    a, b = clustered_pair
    sentences = compare_pair(report_registry, a, b, "token_f1", Options(n_resamples=3000, seed=1))
    tokens = compare_pair(report_registry, a, b, "token_f1", Options(n_resamples=3000, seed=1, unit="token"))
    assert (sentences.unit, tokens.unit) == ("sentences", "tokens")
    assert sentences.ci_method == "bootstrap 95% over sentences" and tokens.ci_method == "bootstrap 95% over tokens"
    assert sentences.delta == pytest.approx(tokens.delta)  # the same metric, cut finer
    width = {c.unit: c.ci_high - c.ci_low for c in (sentences, tokens)}
    assert width["sentences"] > 1.5 * width["tokens"]
    assert sentences.mde > 1.5 * tokens.mde
    for comparison, units in ((sentences, "sentences"), (tokens, "tokens")):
        low, high = _cluster_bootstrap(a, b, units, 3000, seed=11)
        tolerance = 0.08 * (high - low)  # two Monte Carlo estimates of one interval
        assert (comparison.ci_low, comparison.ci_high) == pytest.approx((low, high), abs=tolerance)


def test_token_unit_is_refused_for_other_metrics(report_registry, toy_runs):
    a, b = load_run(toy_runs / "toy_cls" / "majority"), load_run(toy_runs / "toy_cls" / "lookup")
    with pytest.raises(MetabenchError, match="--unit token resamples words"):
        compare_pair(report_registry, a, b, "accuracy", Options(n_resamples=100, unit="token"))


DOCS = {"name": "documents", "id_pattern": "^(doc[0-9]+)_[0-9]+$"}


@pytest.fixture
def documents_pair(tmp_path):
    """20 documents of 6 sentences; the candidate fails whole documents (a genre it cannot read)."""
    rng = np.random.default_rng(3)
    ids = [f"doc{d}_{s}" for d in range(20) for s in range(6)]
    golds = [_gold(i) for i in range(len(ids))]
    failed = {d for d in range(20) if rng.random() < 0.3}
    baseline = [[("O" if t != "O" else "B-METAPHOR") if rng.random() < 0.2 else t for t in g] for g in golds]
    candidate = [["O"] * WORDS if int(i.split("_")[0][3:]) in failed else list(g) for i, g in zip(ids, golds)]
    return (_write(tmp_path / "a", "a", baseline, ids, DOCS), _write(tmp_path / "b", "b", candidate, ids, DOCS))


def test_declared_documents_are_resampled_whole(report_registry, documents_pair):
    a, b = documents_pair
    documents = compare_pair(report_registry, a, b, "token_f1", Options(n_resamples=3000, seed=2))
    sentences = compare_pair(report_registry, a, b, "token_f1", Options(n_resamples=3000, seed=2, unit="item"))
    assert (documents.unit, sentences.unit) == ("documents", "sentences")
    assert documents.ci_method == "bootstrap SE × t(19) 95% over documents" and "metadata.cluster" in documents.reason
    assert documents.ci_high - documents.ci_low > 1.5 * (sentences.ci_high - sentences.ci_low)
    low, high = _cluster_bootstrap(a, b, "sentences", 3000, seed=13)
    assert (sentences.ci_low, sentences.ci_high) == pytest.approx((low, high), abs=0.08 * (high - low))
    # 20 documents: delta ± t(19) SE of the documents' bootstrap (few clusters: stats.few_units), not its percentiles
    deltas = _cluster_bootstrap(a, b, "documents", 3000, seed=13, want_deltas=True)
    half = scipy.stats.t.ppf(0.975, 19) * np.std(deltas, ddof=1)
    assert (documents.ci_low, documents.ci_high) == pytest.approx(
        (documents.delta - half, documents.delta + half), abs=0.08 * half)
    assert documents.pvalue == pytest.approx(
        2 * scipy.stats.t.sf(abs(documents.delta) / np.std(deltas, ddof=1), 19), abs=0.02)


def test_accuracy_over_declared_clusters_is_not_tested_by_mcnemar(report_registry, make_run, tmp_path):
    import json

    ids = [f"doc{d}_{s}" for d in range(10) for s in range(4)]
    a = make_run(tmp_path / "a", model="a", correct={0: [1] * 30 + [0] * 10}, ids=ids)
    b = make_run(tmp_path / "b", model="b", correct={0: [1] * 20 + [0] * 20}, ids=ids)
    for path in (a, b):
        results = json.loads((path / "results.json").read_text())
        results["task"]["config"]["metadata"] = {"cluster": DOCS}
        (path / "results.json").write_text(json.dumps(results))
    comparison = compare_pair(report_registry, load_run(a), load_run(b), "accuracy", Options(n_resamples=500))
    assert comparison.test == "bootstrap" and comparison.unit == "documents"
    assert comparison.delta == pytest.approx(-0.25)


def test_an_id_outside_the_pattern_is_named(report_registry, documents_pair, tmp_path):
    a, b = documents_pair
    bad = {"name": "documents", "id_pattern": "^(chapter[0-9]+)_"}
    moved = _write(tmp_path / "c", "c", [r["prediction"] for r in sorted(a.samples, key=lambda r: r["id"])],
                   sorted(r["id"] for r in a.samples), bad)
    with pytest.raises(MetabenchError, match=r"item id 'doc0_0' does not match metadata.cluster.id_pattern"):
        compare_pair(report_registry, moved, b, "token_f1", Options(n_resamples=100))


def test_the_schema_checks_the_pattern():
    from pydantic import ValidationError

    from metabench.config.schema import Cluster

    assert Cluster(name="documents", id_pattern="^(.+)_[0-9]+$").name == "documents"
    with pytest.raises(ValidationError, match="has 0 groups; give exactly one"):
        Cluster(name="documents", id_pattern="^doc")
    with pytest.raises(ValidationError, match="is not a regular expression"):
        Cluster(name="documents", id_pattern="(")
