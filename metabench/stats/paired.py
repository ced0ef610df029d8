"""Significance tests for two systems evaluated on the *same* items or seeds.

Pairing matters: two models scored on one test set make correlated errors, and a test that ignores the
pairing (e.g. a two-proportion z-test on their accuracies) is badly miscalibrated. Every function here
takes the two systems' per-item (or per-seed) results aligned by position.

Conventions, shared by the whole module:

* The first argument is the baseline (A), the second the candidate (B).
* Every signed difference is ``delta = candidate - baseline`` (B - A): a positive delta means the
  candidate is better on a higher-is-better metric.
* All tests are two-sided.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import scipy.stats

from metabench.stats import validation
from metabench.stats.results import JsonResult

McNemarMethod = Literal["exact", "chi2", "chi2_cc"]
_MCNEMAR_METHODS = get_args(McNemarMethod)

# Resampling draws this many random numbers per block; ~4 MiB of int64 keeps the index matrix in cache,
# which measured fastest, and bounds memory whatever n_items * n_resamples is.
_BLOCK_ELEMENTS = 1 << 19


@dataclass(frozen=True)
class McNemarResult(JsonResult):
    """McNemar's test on the discordant pairs of two systems' per-item correctness.

    ``b``: items the baseline A got right and the candidate B got wrong; ``c``: A wrong, B right.
    ``n`` is the number of items (``None`` when built from counts without it).
    """

    b: int
    c: int
    statistic: float
    pvalue: float
    method: str
    n: int | None


@dataclass(frozen=True)
class PairedTResult(JsonResult):
    """Paired t-test on per-seed scores; ``mean_difference`` is mean(B - A).

    ``note`` is ``None`` for a regular test and explains the value chosen in degenerate cases:

    * n = 1: no variance estimate, so statistic, p-value and CI are NaN (``None`` in `as_dict`).
    * all differences identical and zero (identical runs): statistic 0, p = 1, CI [0, 0].
    * all differences identical and non-zero: statistic +/-inf, p = 0, CI [d, d] -- the limit of the
      t-test as the spread of the differences goes to zero (floating-point noise would otherwise give an
      arbitrary huge t). With so few seeds that they agree exactly, report the seeds, not the p-value.
    """

    mean_difference: float
    statistic: float
    df: int
    pvalue: float
    ci_low: float
    ci_high: float
    confidence: float
    n: int
    note: str | None


@dataclass(frozen=True)
class WilcoxonResult(JsonResult):
    """Wilcoxon signed-rank test on the differences B - A.

    ``statistic`` is scipy's two-sided statistic, the smaller of the positive- and negative-rank sums.
    ``n_nonzero`` counts the differences that enter the test (zeros are dropped, ``zero_method="wilcox"``).
    ``note`` is ``None`` unless all differences are zero, in which case statistic = 0 and p = 1.
    """

    statistic: float
    pvalue: float
    median_difference: float
    n: int
    n_nonzero: int
    zero_method: str
    note: str | None


@dataclass(frozen=True)
class BootstrapResult(JsonResult):
    """Paired bootstrap over items: ``delta = metric(candidate) - metric(baseline)``.

    ``ci_low``/``ci_high`` is the percentile interval of the resampled deltas at ``confidence``;
    ``pvalue`` is the two-sided null-shifted bootstrap p-value (see `paired_bootstrap`). ``std_error`` is the
    standard deviation of the resampled deltas (what `metabench.stats.power.normal_mde` needs; NaN for one
    resample).
    """

    delta: float
    ci_low: float
    ci_high: float
    pvalue: float
    metric_a: float
    metric_b: float
    confidence: float
    n_items: int
    n_resamples: int
    seed: int
    std_error: float = float("nan")


@dataclass(frozen=True)
class RandomisationResult(JsonResult):
    """Approximate randomisation test: ``delta = metric(candidate) - metric(baseline)``, two-sided p."""

    delta: float
    pvalue: float
    metric_a: float
    metric_b: float
    n_items: int
    n_resamples: int
    seed: int


def mcnemar(
    correct_a: Sequence[bool], correct_b: Sequence[bool], *, method: McNemarMethod = "exact"
) -> McNemarResult:
    """McNemar's test of whether baseline A and candidate B have the same accuracy on the same items.

    Only discordant items carry information: ``b`` (A right, B wrong) and ``c`` (A wrong, B right).
    ``method="exact"`` (the default, correct at any sample size) is the two-sided exact binomial test of
    b against Binomial(b + c, 1/2), with statistic min(b, c); ``"chi2"`` is (b - c)^2 / (b + c) and
    ``"chi2_cc"`` adds Edwards' continuity correction, (|b - c| - 1)^2 / (b + c), both against chi2(1).
    Matches ``statsmodels.stats.contingency_tables.mcnemar``, except that with no discordant pairs
    (b = c = 0) the chi-square statistics are 0 with p = 1 instead of undefined.
    """
    a = validation.correctness_vector(correct_a, "correct_a")
    b_ = validation.correctness_vector(correct_b, "correct_b")
    n = validation.same_length(a, b_, "correct_a", "correct_b")
    return _mcnemar(int(np.sum(a & ~b_)), int(np.sum(~a & b_)), method, n)


def mcnemar_from_counts(b: int, c: int, *, method: McNemarMethod = "exact", n: int | None = None) -> McNemarResult:
    """McNemar's test from the discordant counts alone (b: A right & B wrong, c: A wrong & B right).

    For reproducing published results where only the counts are known; ``n``, the total number of items,
    is optional and only recorded.
    """
    b, c = validation.count(b, "b"), validation.count(c, "c")
    if n is not None and validation.count(n, "n") < b + c:
        raise ValueError(f"n={n} items cannot hold b + c = {b + c} discordant items")
    return _mcnemar(b, c, method, n)


def _mcnemar(b: int, c: int, method: str, n: int | None) -> McNemarResult:
    if method not in _MCNEMAR_METHODS:
        raise ValueError(f"unknown McNemar method {method!r}; choose one of {', '.join(_MCNEMAR_METHODS)}")
    discordant = b + c
    if method == "exact":
        statistic = float(min(b, c))
        pvalue = min(1.0, 2.0 * float(scipy.stats.binom.cdf(min(b, c), discordant, 0.5)))
    elif discordant == 0:
        statistic, pvalue = 0.0, 1.0
    else:
        correction = 1 if method == "chi2_cc" else 0
        statistic = (abs(b - c) - correction) ** 2 / discordant
        pvalue = float(scipy.stats.chi2.sf(statistic, 1))
    return McNemarResult(b=b, c=c, statistic=statistic, pvalue=pvalue, method=method, n=n)


def paired_t(scores_a: Sequence[float], scores_b: Sequence[float], *, confidence: float = 0.95) -> PairedTResult:
    """Paired t-test on per-seed (or per-fold) metric values of baseline A and candidate B.

    Uses `scipy.stats.ttest_rel` on B vs A, so the statistic and CI are for mean(B - A). Degenerate
    inputs (n = 1, all differences identical) do not raise; see `PairedTResult` for the values returned.
    """
    a = validation.score_vector(scores_a, "scores_a")
    b = validation.score_vector(scores_b, "scores_b")
    n = validation.same_length(a, b, "scores_a", "scores_b")
    confidence = validation.confidence(confidence)
    differences = b - a
    mean = float(differences.mean())
    common = {"mean_difference": mean, "df": n - 1, "confidence": confidence, "n": n}
    if n == 1:
        nan = float("nan")
        return PairedTResult(
            **common, statistic=nan, pvalue=nan, ci_low=nan, ci_high=nan,
            note="n=1: no variance estimate, so the t-test is undefined",
        )
    # Equal up to floating-point rounding (0.2 vs 0.20000000000000007) counts as equal: scipy would report
    # catastrophic cancellation and an absurd t.
    if np.allclose(differences, differences[0], rtol=1e-12, atol=1e-12):
        if abs(mean) <= 1e-12:
            return PairedTResult(
                **common, statistic=0.0, pvalue=1.0, ci_low=0.0, ci_high=0.0,
                note="all differences are zero (identical runs): p = 1",
            )
        return PairedTResult(
            **common, statistic=float(np.sign(mean) * np.inf), pvalue=0.0, ci_low=mean, ci_high=mean,
            note="all differences are identical and non-zero (zero variance): p = 0 is the limiting value",
        )
    result = scipy.stats.ttest_rel(b, a)
    interval = result.confidence_interval(confidence_level=confidence)
    return PairedTResult(
        **common, statistic=float(result.statistic), pvalue=float(result.pvalue),
        ci_low=float(interval.low), ci_high=float(interval.high), note=None,
    )


def wilcoxon(scores_a: Sequence[float], scores_b: Sequence[float]) -> WilcoxonResult:
    """Wilcoxon signed-rank test on per-seed scores of baseline A and candidate B (differences B - A).

    A rank test for when a handful of seeds makes the t-test's normality assumption doubtful. Zero
    differences are dropped before ranking (``zero_method="wilcox"``, scipy's and R's default, so results
    match what readers reproduce); scipy picks the exact null distribution for small samples without
    ties or zeros and the normal approximation otherwise. If every difference is zero there is no
    evidence of a difference: statistic 0, p = 1.
    """
    a = validation.score_vector(scores_a, "scores_a")
    b = validation.score_vector(scores_b, "scores_b")
    n = validation.same_length(a, b, "scores_a", "scores_b")
    differences = b - a
    n_nonzero = int(np.count_nonzero(differences))
    common = {
        "median_difference": float(np.median(differences)), "n": n, "n_nonzero": n_nonzero, "zero_method": "wilcox"
    }
    if n_nonzero == 0:
        return WilcoxonResult(**common, statistic=0.0, pvalue=1.0, note="all differences are zero: p = 1")
    result = scipy.stats.wilcoxon(differences, zero_method="wilcox")
    return WilcoxonResult(**common, statistic=float(result.statistic), pvalue=float(result.pvalue), note=None)


def paired_bootstrap(
    items_a: Sequence[Any],
    items_b: Sequence[Any],
    metric: Callable[[Any], float] | Literal["mean"] = "mean",
    *,
    n_resamples: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap over items for ``delta = metric(items_b) - metric(items_a)`` (candidate - baseline).

    Each resample draws n item indices with replacement (numpy ``default_rng(seed)``) and applies the
    *same* indices to both systems, which keeps the pairing. ``metric`` is applied to a whole resample,
    so corpus-level, non-decomposable metrics such as F1 are handled correctly:

    * a callable receives the resampled records (a numpy array if ``items_*`` are numpy arrays, indexed
      along the first axis, otherwise a list) and returns a finite float. Records can be anything the
      metric understands, e.g. (gold, prediction) pairs;
    * ``"mean"`` treats the items as numeric per-item scores (correctness, per-item F1...) and uses a
      vectorised fast path: 10k resamples of 10k items take well under a second. It draws the same
      indices as the callable path, so it agrees with ``metric=np.mean`` up to rounding.
    * a callable built with `over_rows` (numpy records only) is evaluated a block of resamples at a time,
      on the same index matrices: the same deltas as calling it once per resample, without a Python call
      per resample (the leaderboard's F1 comparisons draw tens of millions of items).

    The CI is the percentile interval of the resampled deltas. The p-value is two-sided and null-shifted
    (Berg-Kirkpatrick et al., 2012): the bootstrap distribution is centred at 0 by subtracting the
    observed delta, and p = (1 + #{|delta* - delta| >= |delta|}) / (n_resamples + 1); the +1 counts the
    observed sample, so p is never 0. Identical systems give delta = 0 and p = 1.
    """
    n = validation.same_length(items_a, items_b, "items_a", "items_b")
    n_resamples = validation.n_resamples(n_resamples)
    confidence = validation.confidence(confidence)
    seed = validation.seed(seed)
    if _is_mean(metric):
        a = validation.score_vector(items_a, "items_a")
        b = validation.score_vector(items_b, "items_b")
        metric_a, metric_b = float(a.mean()), float(b.mean())
        differences = b - a
        deltas = np.concatenate([differences[block].mean(axis=1) for block in _seeded_blocks(seed, n, n_resamples)])
    else:
        take_a, take_b = _selector(items_a), _selector(items_b)
        everything = np.arange(n)
        metric_a = _evaluate(metric, take_a(everything), "items_a")
        metric_b = _evaluate(metric, take_b(everything), "items_b")
        arrays = isinstance(items_a, np.ndarray) and isinstance(items_b, np.ndarray)
        draws = ((block, block) for block in _seeded_blocks(seed, n, n_resamples))
        deltas = _resampled_deltas(metric, items_a, items_b, draws, arrays)
    delta = metric_b - metric_a
    tail = (1.0 - confidence) / 2.0
    ci_low, ci_high = np.quantile(deltas, [tail, 1.0 - tail])
    extreme = np.abs(deltas - delta) >= np.abs(delta) - _tie_tolerance(delta)
    return BootstrapResult(
        delta=delta, ci_low=float(ci_low), ci_high=float(ci_high),
        pvalue=(1 + int(extreme.sum())) / (n_resamples + 1),
        metric_a=metric_a, metric_b=metric_b, confidence=confidence,
        n_items=n, n_resamples=n_resamples, seed=seed,
        std_error=float(np.std(deltas, ddof=1)) if n_resamples > 1 else float("nan"),
    )


def approximate_randomisation(
    items_a: Sequence[Any],
    items_b: Sequence[Any],
    metric: Callable[[Any], float] | Literal["mean"] = "mean",
    *,
    n_resamples: int = 10000,
    seed: int = 0,
) -> RandomisationResult:
    """Approximate randomisation (paired permutation) test for ``delta = metric(B) - metric(A)``.

    Under the null hypothesis the two systems are exchangeable on every item, so each shuffle swaps each
    item's pair of outputs with probability 1/2 (numpy ``default_rng(seed)``) and recomputes the delta.
    The two-sided p-value is p = (count + 1) / (n_resamples + 1), where count is the number of shuffles
    with |delta*| >= |delta| (Noreen, 1989; the +1 counts the observed assignment, so p is never 0).
    ``metric`` is as in `paired_bootstrap`; ``"mean"`` is vectorised (a swap flips the sign of that
    item's difference). Identical systems give delta = 0 and p = 1.
    """
    n = validation.same_length(items_a, items_b, "items_a", "items_b")
    n_resamples = validation.n_resamples(n_resamples)
    seed = validation.seed(seed)
    rng = np.random.default_rng(seed)
    if _is_mean(metric):
        a = validation.score_vector(items_a, "items_a")
        b = validation.score_vector(items_b, "items_b")
        metric_a, metric_b = float(a.mean()), float(b.mean())
        differences = b - a
        # Swapping item i flips the sign of its difference d_i, so delta* = (sum(d) - 2 * swaps @ d) / n.
        deltas = np.concatenate([
            (differences.sum() - 2.0 * (swaps @ differences)) / n for swaps in _swap_blocks(rng, n, n_resamples)
        ])
    else:
        # Records of both systems in one pool: index i is item i of A, index n + i is item i of B.
        arrays = isinstance(items_a, np.ndarray) and isinstance(items_b, np.ndarray)
        pool = np.concatenate((items_a, items_b)) if arrays else [*items_a, *items_b]
        both = _selector(pool)
        from_a, from_b = np.arange(n), np.arange(n, 2 * n)
        metric_a = _evaluate(metric, both(from_a), "items_a")
        metric_b = _evaluate(metric, both(from_b), "items_b")
        draws = ((np.where(swaps, from_b, from_a), np.where(swaps, from_a, from_b))
                 for swaps in _swap_blocks(rng, n, n_resamples))
        deltas = _resampled_deltas(metric, pool, pool, draws, arrays)
    delta = metric_b - metric_a
    count = int((np.abs(deltas) >= np.abs(delta) - _tie_tolerance(delta)).sum())
    return RandomisationResult(
        delta=delta, pvalue=(count + 1) / (n_resamples + 1), metric_a=metric_a, metric_b=metric_b,
        n_items=n, n_resamples=n_resamples, seed=seed,
    )


def over_rows(metric: Callable[[Any], float],
              rows: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[Any], float]:
    """``metric`` marked with its vectorised form: ``rows(records, indices)`` is the metric of every resample
    of a block, ``[metric(records[i]) for i in indices]`` (``indices``: one resample per row) bit for bit.
    `paired_bootstrap` and `approximate_randomisation` then evaluate a whole block in one call, and hand
    both systems' calls the same draws; a metric without it is called once per resample, as before. ``rows``
    gets the records and the indices rather than the records drawn, so a metric whose records are positions
    in a table of its own (`metabench.runs.decompose`) skips the copy."""
    metric.over_rows = rows
    return metric


def _resampled_deltas(metric: Callable[[Any], float], records_a: Sequence[Any], records_b: Sequence[Any],
                      draws: Iterator[tuple[np.ndarray, np.ndarray]], arrays: bool) -> np.ndarray:
    """metric(B) - metric(A) of every resample; ``draws`` gives blocks of A's and B's indices (one resample per
    row). Whole blocks when the metric has `over_rows` and the records are numpy ``arrays``, else resample by
    resample; both read the same draws, so they give the same deltas."""
    rows = getattr(metric, "over_rows", None) if arrays else None
    take_a, take_b = _selector(records_a), _selector(records_b)
    deltas = []
    for indices_a, indices_b in draws:
        if rows is not None:
            deltas.append(np.asarray(rows(records_b, indices_b), dtype=float)
                          - np.asarray(rows(records_a, indices_a), dtype=float))
        else:
            deltas.append(np.asarray([metric(take_b(b)) - metric(take_a(a)) for a, b in zip(indices_a, indices_b)],
                                     dtype=float))
    return _finite_deltas(np.concatenate(deltas))


def _is_mean(metric: object) -> bool:
    """True for the vectorised ``"mean"`` path, False for a callable metric; anything else is an error."""
    if isinstance(metric, str):
        if metric != "mean":
            raise ValueError(f"metric must be a callable or the string 'mean'; got {metric!r}")
        return True
    if not callable(metric):
        raise ValueError(f"metric must be a callable or the string 'mean'; got {metric!r}")
    return False


def _selector(records: Sequence[Any]) -> Callable[[np.ndarray], Any]:
    """Selects records by an index array: numpy arrays stay arrays (first axis), other sequences become lists."""
    if isinstance(records, np.ndarray):
        return lambda indices: np.take(records, indices, axis=0)  # ~4x faster than fancy indexing
    records = list(records)
    return lambda indices: [records[i] for i in indices]


def _evaluate(metric: Callable[[Any], float], records: Any, name: str) -> float:
    value = float(metric(records))
    if not np.isfinite(value):
        raise ValueError(f"metric returned {value} on {name}; it must return a finite float")
    return value


def _finite_deltas(deltas: np.ndarray) -> np.ndarray:
    array = np.asarray(deltas, dtype=float)
    if not np.isfinite(array).all():
        raise ValueError(
            f"metric returned a non-finite value on {int((~np.isfinite(array)).sum())} resample(s); it must return a "
            "finite float for any resample (e.g. define F1 as 0 when there are no predicted positives)"
        )
    return array


def _tie_tolerance(delta: float) -> float:
    """Slack for comparing resampled deltas with the observed one.

    A resampled delta that equals the observed one mathematically (common with accuracy-like metrics)
    can differ from it in the last bits because it was summed in another order; without slack such ties
    would be counted or not by chance. Distinct metric values differ by far more than 1e-9.
    """
    return 1e-9 * max(1.0, abs(delta))


#: Draws kept for the next bootstrap of the same seed and size, up to this many bytes (as int32: the same
#: values in half the memory): a leaderboard makes every comparison of a task's items with seed 0, so they all
#: draw the same indices. 256 MiB keeps the draws of a task of 6,700 items at 10,000 resamples; at the old
#: 64 MiB (int64) the committed leaderboard drew 2.4 G indices where 0.55 G are distinct.
_KEPT_DRAW_BYTES = 256 << 20
_kept: dict[tuple[int, int, int], tuple[np.ndarray, ...]] = {}


def _seeded_blocks(seed: int, n: int, n_resamples: int) -> Iterator[np.ndarray]:
    """`_index_blocks` of ``default_rng(seed)``: the same blocks, drawn once for consecutive bootstraps of one
    seed and size (the last such set is kept, read-only, when it fits in ``_KEPT_DRAW_BYTES``)."""
    key = (seed, n, n_resamples)
    if key in _kept:
        return iter(_kept[key])
    blocks = _index_blocks(np.random.default_rng(seed), n, n_resamples)
    if n * n_resamples * 4 > _KEPT_DRAW_BYTES:
        return blocks
    _kept.clear()  # the last set's memory goes before the next is drawn
    kept = tuple(block.astype(np.int32) for block in blocks)
    for block in kept:
        block.flags.writeable = False
    _kept[key] = kept
    return iter(kept)


def _index_blocks(rng: np.random.Generator, n: int, n_resamples: int) -> Iterator[np.ndarray]:
    """Bootstrap index matrices, a block of resamples (rows) at a time, the same for every metric path."""
    rows = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, rows):
        yield rng.integers(0, n, size=(min(rows, n_resamples - start), n))


def _swap_blocks(rng: np.random.Generator, n: int, n_resamples: int) -> Iterator[np.ndarray]:
    """Boolean swap masks (True: exchange the two systems' outputs on that item), a block at a time.

    Each mask entry is one random bit, unpacked from random bytes: ten times faster than comparing
    uniform floats with 0.5, and the same fair coin.
    """
    rows = max(1, _BLOCK_ELEMENTS // n)
    row_bytes = (n + 7) // 8
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        random_bytes = np.frombuffer(rng.bytes(size * row_bytes), dtype=np.uint8).reshape(size, row_bytes)
        yield np.unpackbits(random_bytes, axis=1, count=n).view(bool)
