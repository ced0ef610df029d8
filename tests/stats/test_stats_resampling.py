"""Paired bootstrap and approximate randomisation: determinism, edge cases, agreement with scipy."""

import numpy as np
import pytest
import scipy.stats

from metabench.stats import approximate_randomisation, paired_bootstrap

TESTS = [paired_bootstrap, approximate_randomisation]


def _correctness(seed, n, p_a=0.7, p_b=0.75):
    rng = np.random.default_rng(seed)
    return rng.random(n) < p_a, rng.random(n) < p_b


def f1(records):
    """Binary F1 of (gold, prediction) pairs: corpus-level, not a mean of per-item scores."""
    tp = sum(1 for gold, pred in records if gold and pred)
    errors = sum(1 for gold, pred in records if gold != pred)
    return 2 * tp / (2 * tp + errors) if tp + errors else 0.0


def _f1_records(seed, n):
    rng = np.random.default_rng(seed)
    gold = rng.random(n) < 0.4
    pred_a = np.where(rng.random(n) < 0.75, gold, ~gold)
    pred_b = np.where(rng.random(n) < 0.85, gold, ~gold)
    return list(zip(gold.tolist(), pred_a.tolist())), list(zip(gold.tolist(), pred_b.tolist()))


@pytest.mark.parametrize("test", TESTS)
def test_deterministic_for_a_seed(test):
    a, b = _correctness(0, 300, p_b=0.7)
    assert test(a, b, n_resamples=2000, seed=7) == test(a, b, n_resamples=2000, seed=7)
    assert test(a, b, n_resamples=2000, seed=7).pvalue != test(a, b, n_resamples=2000, seed=8).pvalue


@pytest.mark.parametrize("seed", range(5))
def test_bootstrap_ci_contains_observed_delta(seed):
    a, b = _correctness(seed, 400)
    result = paired_bootstrap(a, b, n_resamples=2000, seed=seed)
    assert result.delta == pytest.approx(b.mean() - a.mean(), abs=1e-12)
    assert result.ci_low <= result.delta <= result.ci_high
    assert (result.metric_a, result.metric_b, result.n_items) == (a.mean(), b.mean(), 400)


@pytest.mark.parametrize("seed", range(3))
def test_bootstrap_ci_matches_scipy_paired_percentile_bootstrap(seed):
    a, b = _correctness(seed, 300)
    result = paired_bootstrap(a, b, n_resamples=10000, seed=seed)
    reference = scipy.stats.bootstrap(
        (a.astype(float), b.astype(float)), lambda x, y, axis: np.mean(y, axis=axis) - np.mean(x, axis=axis),
        paired=True, method="percentile", n_resamples=10000, random_state=np.random.default_rng(seed + 100),
    ).confidence_interval
    # Different random draws: agreement up to Monte Carlo error (bootstrap SD here is ~0.035).
    assert result.ci_low == pytest.approx(reference.low, abs=0.005)
    assert result.ci_high == pytest.approx(reference.high, abs=0.005)


def test_bootstrap_ci_width_matches_normal_theory():
    rng = np.random.default_rng(3)
    a = rng.normal(0.6, 0.2, 2000)
    b = a + rng.normal(0.02, 0.1, 2000)
    result = paired_bootstrap(a, b, n_resamples=5000)
    expected_half_width = 1.96 * np.std(b - a, ddof=1) / np.sqrt(2000)
    assert (result.ci_high - result.ci_low) / 2 == pytest.approx(expected_half_width, rel=0.05)


@pytest.mark.parametrize("seed", range(3))
def test_randomisation_matches_exact_scipy_sign_flip_test(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(0.7, 0.05, 12)
    b = a + rng.normal(0.02, 0.04, 12)
    result = approximate_randomisation(a, b, n_resamples=20000, seed=seed)
    exact = scipy.stats.permutation_test(
        (a, b), lambda x, y, axis: np.mean(y - x, axis=axis), permutation_type="samples",
        alternative="two-sided", n_resamples=np.inf,
    )
    assert result.pvalue == pytest.approx(exact.pvalue, abs=0.015)


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("fast", [True, False])
def test_identical_systems_have_zero_delta_and_p_one(test, fast):
    a, _ = _correctness(1, 200)
    result = test(a, a.copy(), "mean" if fast else np.mean, n_resamples=500)
    assert (result.delta, result.pvalue) == (0.0, 1.0)


@pytest.mark.parametrize("test", TESTS)
def test_single_item(test):
    result = test([1.0], [0.0], n_resamples=100)
    assert result.delta == -1.0
    assert 0.0 < result.pvalue <= 1.0


def test_randomisation_all_correct_vs_all_wrong_is_significant():
    result = approximate_randomisation([False] * 30, [True] * 30, n_resamples=2000)
    assert result.delta == 1.0 and result.pvalue == pytest.approx(1 / 2001)


@pytest.mark.parametrize("test", TESTS)
def test_fast_mean_path_agrees_with_callable_path(test):
    a, b = _correctness(2, 250)
    fast = test(a, b, n_resamples=3000, seed=5)
    slow = test(a.astype(float), b.astype(float), np.mean, n_resamples=3000, seed=5)
    as_list = test(a.tolist(), b.tolist(), lambda xs: sum(xs) / len(xs), n_resamples=3000, seed=5)
    for other in (slow, as_list):
        assert other.pvalue == fast.pvalue
        assert other.delta == pytest.approx(fast.delta, abs=1e-12)
        if test is paired_bootstrap:
            assert (other.ci_low, other.ci_high) == pytest.approx((fast.ci_low, fast.ci_high), abs=1e-12)


@pytest.mark.parametrize("test", TESTS)
def test_non_decomposable_f1_metric(test):
    records_a, records_b = _f1_records(4, 300)
    result = test(records_a, records_b, f1, n_resamples=1000, seed=1)
    assert result.metric_a == pytest.approx(f1(records_a)) and result.metric_b == pytest.approx(f1(records_b))
    assert result.delta == pytest.approx(f1(records_b) - f1(records_a))
    assert result.delta > 0 and result.pvalue < 0.05
    if test is paired_bootstrap:
        assert result.ci_low <= result.delta <= result.ci_high
        # F1 is not the mean of per-item F1s: the bootstrap must see whole resamples.
        assert result.delta != pytest.approx(
            np.mean([g == p for g, p in records_b]) - np.mean([g == p for g, p in records_a])
        )


@pytest.mark.parametrize("test", TESTS)
def test_numpy_record_arrays_are_resampled_by_row(test):
    records_a, records_b = _f1_records(4, 300)
    seen = []

    def f1_rows(rows):
        seen.append(type(rows))
        return f1([tuple(row) for row in rows])

    from_arrays = test(np.array(records_a), np.array(records_b), f1_rows, n_resamples=300, seed=2)
    from_lists = test(records_a, records_b, f1, n_resamples=300, seed=2)
    assert set(seen) == {np.ndarray}
    assert from_arrays == from_lists


@pytest.mark.parametrize("test", TESTS)
def test_invalid_inputs(test):
    with pytest.raises(ValueError, match=r"lengths 3 and 2"):
        test([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="empty"):
        test([], [])
    with pytest.raises(ValueError, match="callable or the string 'mean'"):
        test([1, 0], [1, 1], "f1")
    with pytest.raises(ValueError, match="n_resamples must be a positive integer"):
        test([1, 0], [1, 1], n_resamples=0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        test([1, 0], [1, 1], seed=-1)
    with pytest.raises(ValueError, match="must contain numbers"):
        test(["a", "b"], ["a", "c"])


def test_bootstrap_rejects_bad_confidence_and_non_finite_metric():
    with pytest.raises(ValueError, match="confidence must be strictly between 0 and 1"):
        paired_bootstrap([1, 0], [1, 1], confidence=95)
    with pytest.raises(ValueError, match="non-finite value"):
        paired_bootstrap([1, 0, 0], [1, 1, 0], lambda xs: 1.0 / sum(xs) if sum(xs) else float("nan"), n_resamples=200)
    with pytest.raises(ValueError, match="metric returned nan on items_a"):
        paired_bootstrap([1, 0], [1, 1], lambda xs: float("nan"))
