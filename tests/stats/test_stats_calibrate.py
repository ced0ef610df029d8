"""The calibration engine on small fixed-seed cases (seconds): it reproduces metabench's own procedures, and the
rates it measures are the known ones where theory gives them."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from metabench.stats import paired_bootstrap
from metabench.stats.calibrate import (Population, SeedShape, bootstrap, calibrate_corrections, calibrate_population,
                                       calibrate_seeds, mc_se, metric_of)


def _correctness(n=400, seed=1):
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.7).astype(float)
    b = np.where(rng.random(n) < 0.2, 1 - a, a)
    return np.stack([a, np.ones(n)], 1), np.stack([b, np.ones(n)], 1)


def test_the_vectorised_bootstrap_is_paired_bootstrap_on_f1_counts():
    """Clustered F1 as compare runs it (a callable over drawn clusters' counts) against the replay here."""
    rng = np.random.default_rng(3)
    counts_a, counts_b = rng.integers(0, 6, (30, 3)).astype(float), rng.integers(0, 6, (30, 3)).astype(float)

    def f1(records):
        return float(metric_of("f1", np.asarray(records)[:, :3].sum(0) if len(records) else np.zeros(3)))

    real = paired_bootstrap(counts_a, counts_b, f1, n_resamples=4000, seed=5)
    replay = bootstrap("f1", counts_a, counts_b, np.random.default_rng(5), n_resamples=4000)
    assert replay.delta == pytest.approx(real.delta, abs=1e-12)
    assert replay.std_error == pytest.approx(real.std_error, rel=0.05)
    for mine, theirs in ((replay.ci_low, real.ci_low), (replay.ci_high, real.ci_high)):
        assert mine == pytest.approx(theirs, abs=0.15 * real.std_error)
    assert replay.pvalue == pytest.approx(real.pvalue, abs=0.03)


def test_exact_mcnemar_type_i_is_at_most_alpha_on_a_small_null():
    a, b = _correctness()
    population = Population("toy", "mean", a, b, "items", 60)
    rows = {r.procedure: r for r in calibrate_population(population, replications=300, resamples=200, seed=0,
                                                         only=("McNemar exact",))}
    exact = rows["McNemar exact"]
    assert exact.type_i <= 0.05 + 2 * exact.se["type_i"]
    assert exact.power is not None and exact.power > exact.type_i  # the alternative is detected more often


def test_bootstrap_coverage_on_a_known_case_is_within_mc_error_of_95():
    """400 items of a mean difference: the percentile interval's coverage is ~95 % (large n)."""
    a, b = _correctness(n=2000, seed=2)
    population = Population("toy", "mean", a, b, "items", 400)
    row, = calibrate_population(population, replications=300, resamples=400, seed=1, only=("bootstrap over items",))
    assert abs(row.coverage_null - 0.95) <= 3 * row.se["coverage_null"]
    assert abs(row.power - 0.80) <= 3 * row.se["power"] + 0.05


def test_ignoring_clusters_inflates_type_i():
    """Items that share a cluster effect: the document bootstrap holds its level, the item bootstrap does not."""
    rng = np.random.default_rng(4)
    clusters, size = 40, 25
    effect = np.repeat(rng.normal(0, 0.25, clusters), size)  # the candidate's document-level luck
    a = (rng.random(clusters * size) < 0.6).astype(float)
    b = (rng.random(clusters * size) < np.clip(0.6 + effect, 0, 1)).astype(float)
    population = Population("toy", "mean", np.stack([a, np.ones_like(a)], 1), np.stack([b, np.ones_like(b)], 1),
                            "documents", clusters, np.repeat(np.arange(clusters), size))
    rows = {r.procedure: r for r in calibrate_population(
        population, replications=150, resamples=300, seed=2,
        only=("bootstrap over documents, t(K-1) (default)", "bootstrap over sentences (ignores documents)"))}
    assert rows["bootstrap over sentences (ignores documents)"].type_i > 0.15
    assert rows["bootstrap over documents, t(K-1) (default)"].type_i < 0.10
    assert rows["bootstrap over documents, t(K-1) (default)"].scope == {
        "test": "bootstrap", "unit": "documents", "tasks": "", "metric": "", "size": clusters}


def test_paired_t_is_exact_under_normal_differences():
    normal, _, heavy, _ = calibrate_seeds(SeedShape("toy", 5, 0.1, "toy_*", "f1"), replications=800, seed=0)
    assert abs(normal.type_i - 0.05) <= 3 * normal.se["type_i"]
    assert abs(normal.coverage_null - 0.95) <= 3 * normal.se["coverage_null"]
    assert heavy.procedure.endswith("heavy-tailed differences")
    assert normal.scope == {"test": "paired_t", "unit": "seeds", "tasks": "toy_*", "metric": "f1", "size": 5}


def test_holm_holds_the_family_wise_error_and_bh_the_fdr():
    holm, bh = calibrate_corrections(10, replications=4000, seed=0)
    assert abs(holm.type_i - (1 - 0.995 ** 10)) <= 3 * holm.se["type_i"]  # Holm's first step, exactly
    assert bh.type_i <= 0.05 * 0.5 + 3 * bh.se["type_i"]  # BH: FDR <= alpha * m0 / m


def test_mc_se_is_never_zero():
    assert mc_se(0.0, 200) > 0.005 and mc_se(1.0, 200) > 0.005


def test_bca_interval_matches_scipy():
    """The BCa interval from the replayed resamples against scipy.stats.bootstrap(method="BCa") on item indices
    (ties at the observed delta count half, as scipy's percentile of score does)."""
    from metabench.stats.calibrate import bca_interval

    rng = np.random.default_rng(7)
    gold = rng.random(64) < 0.4
    a = np.stack([gold & (rng.random(64) < 0.5), ~gold & (rng.random(64) < 0.1), gold & (rng.random(64) >= 0.5)], 1)
    b = np.stack([gold & (rng.random(64) < 0.7), ~gold & (rng.random(64) < 0.2), gold & (rng.random(64) >= 0.7)], 1)
    a, b = a.astype(float), b.astype(float)
    boot = bootstrap("f1", a, b, np.random.default_rng(1), n_resamples=6000)
    low, high = bca_interval("f1", a, b, boot)
    reference = scipy.stats.bootstrap(
        (np.arange(64),), lambda i: float(metric_of("f1", b[i].sum(0)) - metric_of("f1", a[i].sum(0))),
        vectorized=False, n_resamples=6000, method="BCa", random_state=np.random.default_rng(2)).confidence_interval
    # scipy draws its own resamples: F1 on 64 items moves a 6000-resample endpoint by ~0.1 SE between seeds
    assert low == pytest.approx(reference.low, abs=0.3 * boot.std_error)
    assert high == pytest.approx(reference.high, abs=0.3 * boot.std_error)
    assert (low, high) != (boot.ci_low, boot.ci_high)  # the correction moved the percentile interval


def test_the_median_unbiased_spread_brings_the_paired_t_to_its_promised_power():
    """With 3 normal seeds the MDE compare prints (the median-unbiased spread) is found 80 % of the time within MC
    error; from the plain spread, as before, less often."""
    rows = calibrate_seeds(SeedShape("toy", 3, 0.1), replications=800, seed=0)
    corrected, plain = rows[0], rows[1]
    assert plain.procedure.endswith("MDE from the plain spread (before)") and plain.scope is None
    assert plain.power < 0.8 - 2 * plain.se["power"]
    assert abs(corrected.power - 0.8) <= 3 * corrected.se["power"]


def test_resampled_sums_are_the_gathered_sums():
    """The packed gather (integer columns three to an int64) gives the same numbers as summing each column's
    gather, for counts, 0/1 scores with a constant count column, large counts, and (unpacked) real scores."""
    from metabench.stats.calibrate import resampled_sums

    rng = np.random.default_rng(0)
    n = 300
    for columns in (rng.integers(0, 5, (n, 6)).astype(float),
                    np.stack([rng.integers(0, 2, n), np.ones(n), rng.integers(0, 2, n), np.ones(n)], 1).astype(float),
                    rng.integers(0, 100_000, (n, 3)).astype(float),  # sums past 2^21: not packed
                    rng.random((n, 4))):
        draws = rng.integers(0, n, (50, n))
        expected = np.stack([columns[:, j][draws].sum(1) for j in range(columns.shape[1])], axis=1)
        assert np.array_equal(resampled_sums(columns, draws), expected)


def test_paired_t_many_is_paired_t_row_by_row():
    from metabench.stats.calibrate import paired_t_many
    from metabench.stats.paired import paired_t

    rng = np.random.default_rng(3)
    differences = rng.standard_normal((100, 3))
    differences[7], differences[8] = 0.25, 0.0  # the degenerate rows paired_t answers itself
    pvalue, low, high = paired_t_many(differences)
    for i, row in enumerate(differences):
        one = paired_t(np.zeros(3), row)
        assert (pvalue[i], low[i], high[i]) == pytest.approx((one.pvalue, one.ci_low, one.ci_high), abs=1e-12)


def test_the_median_se_is_the_spread_of_a_median():
    """Over many samples of 400 normals the medians spread as the median's SE says (sqrt(pi / 2) / sqrt(400))."""
    from metabench.stats.calibrate import median_se

    rng = np.random.default_rng(5)
    samples = rng.standard_normal((2000, 400))
    estimates = [median_se(s) for s in samples[:200]]
    assert np.mean(estimates) == pytest.approx(np.std(np.median(samples, axis=1)), rel=0.1)
    assert np.mean(estimates) == pytest.approx(np.sqrt(np.pi / 2) / 20, rel=0.1)
    assert median_se([1.0]) == 0.0


def test_each_seed_pair_draws_its_own_stream():
    """Two pairs of one shape never share their draws (numpy's seed sequences drop trailing zeros: pair 0/1 is
    not 0/1/0); a population without seeds draws what np.random.default_rng(seed) does."""
    a, b = _correctness(n=50)
    streams = [Population("toy", "mean", a, b, "items", 50, seeds=pair).stream(0).integers(0, 10 ** 9, 4).tolist()
               for pair in ((0, 1), (0, 2), (1, 2))]
    streams += [Population("toy", "mean", a, b, "items", 50, seeds=(0, 1)).stream(0, k).integers(0, 10 ** 9, 4).tolist()
                for k in (1, 2)]
    assert len({tuple(s) for s in streams}) == len(streams)
    plain = Population("toy", "mean", a, b, "items", 50).stream(7).integers(0, 10 ** 9, 4)
    assert plain.tolist() == np.random.default_rng(7).integers(0, 10 ** 9, 4).tolist()


def test_a_rows_power_error_counts_its_mde_error():
    """Power measured at an estimated MDE: its error is more than the binomial one, by the MDE's error times the
    slope of the power curve, so a lucky MDE cannot pass for a precise power."""
    rows = calibrate_seeds(SeedShape("toy", 3, 0.1), replications=400, seed=0)
    corrected = rows[0]
    assert corrected.se["mde"] > 0
    assert corrected.se["power"] > mc_se(corrected.power, 400)
    population = Population("toy", "mean", *_correctness(), "items", 60, seeds=(0, 2))
    row, = calibrate_population(population, replications=40, resamples=100, seed=0, only=("bootstrap over items",))
    assert row.seeds == "0/2" and row.as_dict()["seeds"] == "0/2"
    assert row.se["power"] > mc_se(row.power, 40) and row.se["mde"] > 0
