"""The vectorised resampling gives the numbers of the one-resample-at-a-time loop, bit for bit.

The leaderboard's p-values, intervals and ≈ chance marks come from paired bootstraps over count metrics (F1,
macro-F1). They used to call the metric once per resample; now a block of resamples is tallied at once
(`decompose._Tallies`, `metabench.stats.paired.over_rows`). The draws are the same (the same generator calls),
and every delta must be the same float, or a committed page would change. Checked three ways: against the
same metric without its vectorised form (the old path), against a bootstrap written out here from the
documented draws, and on committed runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from metabench.metrics.common import prf
from metabench.runs.decompose import _Counts, _positional
from metabench.stats import approximate_randomisation, paired_bootstrap

RUNS = Path(__file__).resolve().parents[2] / "leaderboard" / "runs"


def _one_at_a_time(metric):
    """The metric without its vectorised form: the bootstrap then calls it once per resample, as it used to."""
    return lambda records: metric(records)


def _tables(rng, n, seeds, labels, fixed):
    tables = [rng.integers(0, 3, size=(n, seeds, labels, 3)).astype(float) for _ in range(2)]
    if not fixed:  # every item has a gold label, as in real runs: a resample never lacks every label
        for table in tables:
            table[:, :, 0, 2] += 1
    return tables


@pytest.mark.parametrize("stat", ["precision", "recall", "f1"])
@pytest.mark.parametrize("fixed", [True, False])
def test_vectorised_count_metrics_equal_the_per_resample_loop(stat, fixed):
    rng = np.random.default_rng(len(stat) + fixed)
    for n, seeds, labels in ((7, 1, 1), (120, 3, 2), (1500, 1, 3)):
        a, b = _positional(*(_Counts(t, stat, fixed) for t in _tables(rng, n, seeds, labels, fixed)))
        assert hasattr(a.metric, "over_rows")
        for test in (paired_bootstrap, approximate_randomisation):
            fast = test(a.records, b.records, a.metric, n_resamples=400, seed=n)
            slow = test(a.records, b.records, _one_at_a_time(a.metric), n_resamples=400, seed=n)
            assert fast == slow


def _binary_pair(seed: int, n: int, seeds: tuple[int, int]):
    """Two runs' span counts (0/1 tp, fp, fn per item and seed) and their F1 readings over positions."""
    rng = np.random.default_rng(seed)
    tables = [rng.integers(0, 2, size=(n, k, 1, 3)).astype(float) for k in seeds]
    return tables, _positional(*(_Counts(t, "f1", True) for t in tables))


def test_runs_of_different_seeds_are_drawn_from_each_run_alone():
    _, (a, b) = _binary_pair(3, 300, (3, 1))
    fast = paired_bootstrap(a.records, b.records, a.metric, n_resamples=700, seed=11)
    assert fast == paired_bootstrap(a.records, b.records, _one_at_a_time(a.metric), n_resamples=700, seed=11)


def _reference_bootstrap(table_a, table_b, n_resamples, seed, confidence=0.95):
    """A paired bootstrap of span F1 written out from the documented draws: numpy ``default_rng(seed)``, blocks
    of ``max(1, 2**19 // n)`` resamples of n indices, one F1 per seed from the summed counts, averaged."""
    def f1(rows):
        totals = rows.sum(axis=0)  # seeds × 3
        return sum(prf(*seed)["f1"] for seed in totals.tolist()) / len(totals)

    n = len(table_a)
    rng = np.random.default_rng(seed)
    deltas, rows = [], max(1, (1 << 19) // n)
    for start in range(0, n_resamples, rows):
        for indices in rng.integers(0, n, size=(min(rows, n_resamples - start), n)):
            deltas.append(f1(table_b[indices]) - f1(table_a[indices]))
    deltas = np.asarray(deltas)
    delta = f1(table_b) - f1(table_a)
    low, high = np.quantile(deltas, [(1 - confidence) / 2, (1 + confidence) / 2])
    extreme = np.abs(deltas - delta) >= np.abs(delta) - 1e-9 * max(1.0, abs(delta))
    return delta, float(low), float(high), (1 + int(extreme.sum())) / (n_resamples + 1)


def test_the_bootstrap_equals_one_written_out_from_its_documented_draws():
    (table_a, table_b), (a, b) = _binary_pair(5, 900, (2, 2))
    got = paired_bootstrap(a.records, b.records, a.metric, n_resamples=1500, seed=9)
    delta, low, high, p = _reference_bootstrap(table_a[:, :, 0, :], table_b[:, :, 0, :], 1500, 9)
    assert (got.delta, got.ci_low, got.ci_high, got.pvalue) == (delta, low, high, p)


@pytest.mark.parametrize("task", ["vua_verb", "boisson_card_n_random_f0@default"])
def test_committed_runs_compare_the_same_through_either_path(report_registry, task):
    """A committed pair (VUA-Verb's 3-seed F1 run against a 1-seed one; a Boisson macro-F1 pair), as the
    leaderboard compares it, through the vectorised metric and through the old one-resample loop."""
    from metabench.runs.align import pair
    from metabench.runs.decompose import item_metrics
    from metabench.runs.stored import find_runs

    runs = find_runs([RUNS / task])
    aligned = next(pair(a, b) for a in runs for b in runs if a is not b and a.record.raw["task"]["config_hash"]
                   == b.record.raw["task"]["config_hash"])
    item_a, item_b = item_metrics(aligned, runs[0].record.primary_metric, report_registry)
    assert hasattr(item_a.metric, "over_rows")
    fast = paired_bootstrap(item_a.records, item_b.records, item_a.metric, n_resamples=300, seed=0)
    slow = paired_bootstrap(item_a.records, item_b.records, _one_at_a_time(item_a.metric), n_resamples=300, seed=0)
    assert fast == slow
