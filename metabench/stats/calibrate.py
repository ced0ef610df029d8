"""Error rates of metabench's tests and intervals, measured by simulation on data shaped like the real tasks.

Matching a reference implementation shows a formula is computed right, not that it is right for this field's
data: items cluster (sentences in documents), seeds are few, test sets are small (MOH-X folds of 64 items). So
every procedure `compare` and `gate` use is run here many times on simulated test sets and its error rates are
counted: the type-I error at ``alpha`` (true difference 0), the coverage of its 95 % interval, and its power at
the minimum detectable effect it prints. Targets (issue 38): type-I ≤ 6 %, coverage ≥ 94 %, power at the MDE
within 5 points of 80 %.

Test sets are drawn from a `Population` of real paired units: the outputs of two runs of one recipe (two
seeds) on a committed task, item by item or cluster by cluster (`metabench.report.task_shapes` reads them, one
population per pair of the run's seeds: every pair is simulated, each with its own generator and its own row,
so no pair that happens to suit a procedure stands for the shape).
A simulated test set draws as many units as the task has, with replacement, and, under the null, gives each
drawn unit's two outputs to the baseline and the candidate in a random order, so the two systems are
exchangeable and the true difference is exactly 0 while the units keep their real sizes, class balance and
within-cluster correlation. Under the alternative the candidate is then improved: each of its wrong items
(or missed positives, for F1) is fixed with a probability chosen so the population difference equals the
MDE the procedure prints on such data (the median over replications: `_alternative`).

Where a procedure missed, its correction runs beside it on the same test sets, and the corrections metabench
adopted (`metabench.stats.few_units`) are the rows it prints, with the procedure before them kept as a row "(before)":
the bootstrap over a task's clusters reads its standard error against t_{K-1} (K clusters), and the paired t's MDE
comes from the median-unbiased spread of the seeds' differences. The bootstrap's interval as BCa (`bca_interval`)
and as delta ± t_{n-1} SE over items are measured too. Each row that stands for what `compare` runs by default
carries its ``scope`` (test, unit, task pattern, metric, size), so a comparison of that shape can be told when
the row misses a target (`metabench.report.calibration_misses`).

Procedures are called as metabench calls them: McNemar through `mcnemar_from_counts`, the paired t through
`paired_t`, the MDEs through `metabench.stats.power`, the corrections through `holm` / `benjamini_hochberg`.
The bootstrap is the one exception: `paired_bootstrap` with a clustered metric is a Python loop per resample,
so it is replayed here vectorised (same draws: units with replacement, same resample for both systems; same
percentile interval, null-shifted p-value and standard error); `tests/stats/test_stats_calibrate.py` holds it
to the real function. Monte-Carlo standard errors use the Agresti–Coull estimate (x + 2) / (R + 4), so a rate
of 0 of R still carries its uncertainty instead of "0 ± 0". The power is measured at an MDE that is itself
estimated (a median of printed MDEs), so its error adds that estimate's (`_power_se`): a power printed ± its
binomial error alone would understate how far another run of the simulation could land.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import scipy.optimize
import scipy.stats

from metabench.stats.corrections import benjamini_hochberg, holm
from metabench.stats.few_units import median_unbiased_spread, t_reference
from metabench.stats.paired import mcnemar_from_counts, paired_t
from metabench.stats.power import mcnemar_mde, normal_mde, paired_t_mde

#: the targets of issue 38
TYPE_I_MAX, COVERAGE_MIN, POWER_TARGET, POWER_SLACK = 0.06, 0.94, 0.80, 0.05
_BESIDE = "coverage: the item bootstrap's interval, which compare prints beside McNemar"
#: what a row's figures are, where the procedure's name does not say
NOTES = {"McNemar exact": _BESIDE, "McNemar chi-square": _BESIDE,
         "bootstrap over sentences (ignores documents)": "what --unit item does on a task with documents"}


@dataclass(frozen=True)
class Population:
    """Real paired units to draw test sets from.

    ``a`` and ``b`` hold one record per item for the two runs: ``[score, 1]`` for a mean metric (accuracy:
    score 0/1), ``[tp, fp, fn]`` for an F1. ``cluster`` numbers each item's cluster (documents); ``None``
    makes every item its own unit. ``size`` is how many units a simulated test set draws (the task's own
    count), ``unit`` names them. ``tasks`` (a glob of task names) and ``metric_name`` say which real
    comparisons have this shape. ``seeds`` names the two seeded runs ``a`` and ``b`` come from (empty: not
    read from seeds); each pair gets its own random stream (`stream`).
    """

    task: str
    metric: str  # "mean" or "f1"
    a: np.ndarray
    b: np.ndarray
    unit: str
    size: int
    cluster: np.ndarray | None = None
    tasks: str = ""
    metric_name: str = ""
    seeds: tuple[int, ...] = ()

    def scope(self, test: str) -> dict:
        return {"test": test, "unit": self.unit, "tasks": self.tasks, "metric": self.metric_name, "size": self.size}

    @property
    def correctness(self) -> bool:
        """True when records are 0/1 correctness, so McNemar's test applies."""
        return self.metric == "mean" and bool(np.isin(self.a[:, 0], (0, 1)).all() and np.isin(self.b[:, 0], (0, 1)).all())

    def stream(self, seed: int, *more: int) -> np.random.Generator:
        """The generator of this population's draws: the simulation's ``seed``, the seed pair (each + 1: numpy's
        seed sequences ignore trailing zeros, so [0, 1, 0] would be [0, 1]) and ``more``; ``[seed]`` alone is
        ``seed``, so a population without seeds draws what it always did."""
        return np.random.default_rng([seed, *(s + 1 for s in self.seeds), *more])

    def units(self) -> list[np.ndarray]:
        """The item positions of each unit."""
        if self.cluster is None:
            return [np.array([i]) for i in range(len(self.a))]
        order = np.argsort(self.cluster, kind="stable")
        return np.split(order, np.flatnonzero(np.diff(self.cluster[order])) + 1)


@dataclass(frozen=True)
class SeedShape:
    """A paired t over seeds: ``seeds`` per run and ``sd``, the spread of the per-seed differences."""

    task: str
    seeds: int
    sd: float
    tasks: str = ""
    metric_name: str = ""

    def scope(self) -> dict:
        return {"test": "paired_t", "unit": "seeds", "tasks": self.tasks, "metric": self.metric_name,
                "size": self.seeds}


@dataclass
class Row:
    """One procedure on one task shape: rejection and coverage counts over ``replications`` per hypothesis;
    ``scope`` says which comparisons `compare` runs with this procedure by default (None: an alternative)."""

    procedure: str
    shape: str
    replications: int
    type_i: float
    coverage_null: float | None
    coverage_alt: float | None
    mde: float | None
    power: float | None
    note: str = ""
    se: dict = field(default_factory=dict)
    scope: dict | None = None
    seeds: str = ""  # the seed pair of the population, "0/2" (empty: the shape is not a pair of seeded runs)

    def verdicts(self) -> list[str]:
        """The targets this row misses: by more than two Monte-Carlo standard errors (a miss), or by less
        ("... within MC error": the simulation cannot tell); empty when it meets every target it has."""
        shortfalls = [("type-I", self.type_i - TYPE_I_MAX, "type_i")]
        shortfalls += [("coverage", COVERAGE_MIN - value, key) for key, value in
                       (("coverage_null", self.coverage_null), ("coverage_alt", self.coverage_alt)) if value is not None]
        if self.power is not None:
            shortfalls.append(("power", abs(self.power - POWER_TARGET) - POWER_SLACK, "power"))
        missed = {}
        for name, shortfall, key in shortfalls:
            if shortfall > 2 * self.se.get(key, 0.0):
                missed[name] = name
            elif shortfall > 0:
                missed.setdefault(name, f"{name} within MC error")
        return list(missed.values())

    def as_dict(self) -> dict:
        return {"procedure": self.procedure, "shape": self.shape, "replications": self.replications,
                "type_i": self.type_i, "coverage_null": self.coverage_null, "coverage_alt": self.coverage_alt,
                "mde": self.mde, "power": self.power, "se": self.se, "missed": self.verdicts(), "note": self.note,
                "scope": self.scope, "seeds": self.seeds}


def mc_se(rate: float, replications: int) -> float:
    """Monte-Carlo standard error of a rate, from the Agresti–Coull estimate (never 0)."""
    shrunk = (rate * replications + 2) / (replications + 4)
    return math.sqrt(shrunk * (1 - shrunk) / (replications + 4))


def metric_of(kind: str, sums: np.ndarray) -> np.ndarray:
    """The metric from summed records (last axis): mean = score / count, F1 = 2tp / (2tp + fp + fn), 0 if empty."""
    if kind == "mean":
        return sums[..., 0] / sums[..., 1]
    numerator, denominator = 2 * sums[..., 0], 2 * sums[..., 0] + sums[..., 1] + sums[..., 2]
    return np.divide(numerator, denominator, out=np.zeros_like(numerator, dtype=float), where=denominator > 0)


@dataclass(frozen=True)
class Bootstrap:
    """One paired bootstrap: the observed delta, percentile interval, null-shifted p-value and standard error."""

    delta: float
    ci_low: float
    ci_high: float
    pvalue: float
    std_error: float
    deltas: np.ndarray = field(repr=False, compare=False, default=None)


def bootstrap(kind: str, units_a: np.ndarray, units_b: np.ndarray, rng: np.random.Generator, *,
              n_resamples: int, confidence: float = 0.95) -> Bootstrap:
    """`metabench.stats.paired_bootstrap` over units whose records are summed per unit (rows of ``units_*``).

    Draws units with replacement, the same for both systems; the interval is the percentile interval of the
    resampled deltas and the p-value (1 + #{|delta* - delta| >= |delta|}) / (n_resamples + 1), as there."""
    n = len(units_a)
    delta = float(metric_of(kind, units_b.sum(0)) - metric_of(kind, units_a.sum(0)))
    draws = rng.integers(0, n, size=(n_resamples, n))
    sums = resampled_sums(np.concatenate([units_a, units_b], axis=1), draws)
    k = units_a.shape[1]
    deltas = metric_of(kind, sums[:, k:]) - metric_of(kind, sums[:, :k])
    tail = (1 - confidence) / 2
    low, high = np.quantile(deltas, [tail, 1 - tail])
    extreme = np.abs(deltas - delta) >= abs(delta) - 1e-9 * max(1.0, abs(delta))
    return Bootstrap(delta, float(low), float(high), (1 + int(extreme.sum())) / (n_resamples + 1),
                     float(np.std(deltas, ddof=1)), deltas)


#: bits per column when `resampled_sums` packs integer columns into one int64 (three columns a word)
_BITS = 21


def resampled_sums(columns: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """``columns[draws].sum(1)``: each resample's column sums (rows of ``draws`` index rows of ``columns``).

    The bootstrap's cost is this gather, one per column; where the columns are non-negative integers (0/1
    correctness, token counts) whose sums over a resample stay below 2^21, three of them are packed into one
    int64, gathered and summed once and unpacked: exact integer arithmetic, so the sums are the same numbers,
    a third of the gathers. A constant column (the count of a mean) is not gathered at all."""
    n, k = columns.shape
    out = np.empty((len(draws), k))
    constant = (columns == columns[:1]).all(0)
    out[:, constant] = columns[0, constant] * draws.shape[1]
    varying = np.flatnonzero(~constant)
    values = columns[:, varying]
    whole = values.size and bool((values >= 0).all() and (values == np.round(values)).all()
                                 and values.max() * draws.shape[1] < 2 ** _BITS)
    if not whole:
        for j in varying:
            out[:, j] = columns[:, j][draws].sum(1)
        return out
    values = values.astype(np.int64)
    mask = (1 << _BITS) - 1
    for start in range(0, len(varying), 3):
        group = varying[start:start + 3]
        word = sum(values[:, start + i] << (_BITS * i) for i in range(len(group)))
        total = word[draws].sum(1)
        for i, j in enumerate(group):
            out[:, j] = (total >> (_BITS * i)) & mask
    return out


def bca_interval(kind: str, units_a: np.ndarray, units_b: np.ndarray, boot: Bootstrap, *,
                 confidence: float = 0.95) -> tuple[float, float]:
    """Efron's bias-corrected and accelerated interval from the same resampled deltas (as
    ``scipy.stats.bootstrap(method="BCa")``): the percentiles move by the share of deltas below the observed one
    (bias) and by the skewness of the leave-one-unit-out deltas (acceleration), which a ratio such as F1 on a few
    dozen items has. Falls back to the percentile interval when every resampled delta lies on one side."""
    below = float(np.mean(boot.deltas < boot.delta) + np.mean(boot.deltas <= boot.delta)) / 2  # ties count half
    if not 0 < below < 1:
        return boot.ci_low, boot.ci_high
    z0 = scipy.stats.norm.ppf(below)
    total_a, total_b = units_a.sum(0), units_b.sum(0)
    jackknife = metric_of(kind, total_b - units_b) - metric_of(kind, total_a - units_a)
    spread = jackknife.mean() - jackknife
    denominator = 6 * np.sum(spread ** 2) ** 1.5
    acceleration = float(np.sum(spread ** 3) / denominator) if denominator > 0 else 0.0
    tail = (1 - confidence) / 2
    z = scipy.stats.norm.ppf([tail, 1 - tail])
    levels = scipy.stats.norm.cdf(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
    low, high = np.percentile(boot.deltas, 100 * levels)
    return float(low), float(high)


class _Draws:
    """Simulated test sets from a population: under H0 (random swap per unit) or with the candidate improved."""

    def __init__(self, population: Population):
        self.population = population
        self.members = population.units()
        k = population.a.shape[1]
        self.unit_a = np.array([population.a[m].sum(0) for m in self.members]).reshape(-1, k)
        self.unit_b = np.array([population.b[m].sum(0) for m in self.members]).reshape(-1, k)

    def true_delta(self, fix: float) -> float:
        """The population difference when the candidate fixes each wrong item (missed positive) with prob ``fix``."""
        mixed = (self.unit_a.sum(0) + self.unit_b.sum(0)) / 2
        return float(metric_of(self.population.metric, _improved(self.population.metric, mixed, fix))
                     - metric_of(self.population.metric, mixed))

    def fix_for(self, delta: float) -> float | None:
        """The fix probability that gives a population difference of ``delta`` (None: out of reach)."""
        if delta <= 0:
            return 0.0
        if self.true_delta(1.0) < delta:
            return None
        return float(scipy.optimize.brentq(lambda p: self.true_delta(p) - delta, 0.0, 1.0, xtol=1e-10))

    def draw(self, rng: np.random.Generator, fix: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Item records of A and B for one test set, and where each drawn unit starts among them (None: every
        item is a unit)."""
        population = self.population
        chosen = rng.integers(0, len(self.members), size=population.size)
        swap = rng.random(population.size) < 0.5
        if population.cluster is None:
            flat, starts = chosen, None
        else:
            items = [self.members[u] for u in chosen]
            sizes = np.array([len(m) for m in items])
            flat, swap = np.concatenate(items), np.repeat(swap, sizes)
            starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        a = np.where(swap[:, None], population.b[flat], population.a[flat])
        b = np.where(swap[:, None], population.a[flat], population.b[flat])
        if fix > 0:
            b = _improved(population.metric, b, fix, rng)
        return a, b, starts


def _improved(kind: str, records: np.ndarray, fix: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """The candidate's records with each wrong item (mean) or missed positive (F1) fixed with probability ``fix``;
    in expectation without ``rng``."""
    out = records.astype(float).copy()
    if kind == "mean":
        if rng is None:
            out[..., 0] += fix * (out[..., 1] - out[..., 0])
        else:
            wrong = out[:, 0] == 0
            out[wrong, 0] = (rng.random(int(wrong.sum())) < fix).astype(float)
        return out
    gained = fix * out[..., 2] if rng is None else rng.binomial(out[:, 2].astype(int), fix).astype(float)
    out[..., 0] += gained
    out[..., 2] -= gained
    return out


@lru_cache(maxsize=None)
def _mcnemar_p(b: int, c: int, method: str) -> float:
    return mcnemar_from_counts(b, c, method=method).pvalue


class _Tally:
    def __init__(self):
        self.rejected, self.covered, self.mdes = [], [], []

    def add(self, reject: bool, low: float | None, high: float | None, mde: float | None, *, truth: float) -> None:
        self.rejected.append(bool(reject))
        if low is not None:
            self.covered.append(low - 1e-12 <= truth <= high + 1e-12)
        if mde is not None and math.isfinite(mde):
            self.mdes.append(mde)


def _item_procedures(population: Population, resamples: int, alpha: float, power: float) -> dict:
    """name -> (function(a, b, starts, rng, memo) -> (reject, ci_low, ci_high, printed MDE), scope or None): what
    compare would run on one simulated test set, and which comparisons it runs so by default (`Row.scope`);
    ``memo`` shares one bootstrap per test set and unit between procedures."""
    kind, unit_name = population.metric, population.unit

    def boot(a, b, starts, rng, memo, by_unit: bool) -> Bootstrap:
        key = "units" if by_unit else "items"
        if key not in memo:
            sa, sb = (np.add.reduceat(a, starts), np.add.reduceat(b, starts)) if by_unit else (a, b)
            memo[key] = bootstrap(kind, sa, sb, rng, n_resamples=resamples)
        return memo[key]

    def boot_over(by_unit: bool):
        def run(a, b, starts, rng, memo):
            result = boot(a, b, starts, rng, memo, by_unit)
            units = len(starts) if by_unit else len(a)
            mde = normal_mde(result.std_error, units, alpha=alpha, power=power).mde if result.std_error > 0 else None
            return result.pvalue <= alpha, result.ci_low, result.ci_high, mde
        return run

    def t_over(by_unit: bool):
        def run(a, b, starts, rng, memo):
            result = boot(a, b, starts, rng, memo, by_unit)
            read = t_reference(result.delta, result.std_error, len(starts) if by_unit else len(a), alpha=alpha,
                               power=power)
            return read.pvalue <= alpha, read.ci_low, read.ci_high, read.mde if result.std_error > 0 else None
        return run

    def bca_over(by_unit: bool):
        def run(a, b, starts, rng, memo):
            result = boot(a, b, starts, rng, memo, by_unit)
            sa, sb = (np.add.reduceat(a, starts), np.add.reduceat(b, starts)) if by_unit else (a, b)
            low, high = bca_interval(kind, sa, sb, result)
            mde = normal_mde(result.std_error, len(sa), alpha=alpha, power=power).mde if result.std_error > 0 else None
            return not low <= 0 <= high, low, high, mde
        return run

    def mcnemar(method: str):
        def run(a, b, starts, rng, memo):
            right_a, right_b = a[:, 0] == 1, b[:, 0] == 1
            n_b, n_c = int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b))
            ci = boot(a, b, starts, rng, memo, False)  # the interval compare prints beside McNemar
            mde = mcnemar_mde(len(a), (n_b + n_c) / len(a), alpha=alpha, power=power).mde
            return _mcnemar_p(n_b, n_c, method) <= alpha, ci.ci_low, ci.ci_high, mde
        return run

    if population.correctness and population.cluster is None:
        return {"McNemar exact": (mcnemar("exact"), population.scope("mcnemar")),
                "McNemar chi-square": (mcnemar("chi2"), None),
                # McNemar is the test here; the bootstrap prints its interval (counted in McNemar's rows)
                f"bootstrap over {unit_name}": (boot_over(False), None)}
    if population.cluster is None:
        default = f"bootstrap over {unit_name}"
        return {default: (boot_over(False), population.scope("bootstrap")),
                f"{default}, BCa interval": (bca_over(False), None),
                f"{default}, t(n-1) interval": (t_over(False), None)}
    default = f"bootstrap over {unit_name}"
    # --unit item resamples the sentences, however many the task has
    ignoring = dict(population.scope("bootstrap"), unit="sentences", size=None)
    return {f"{default}, t(K-1) (default)": (t_over(True), population.scope("bootstrap")),
            f"{default}, percentile interval (before)": (boot_over(True), None),
            f"{default}, BCa interval": (bca_over(True), None),
            "bootstrap over sentences (ignores documents)": (boot_over(False), ignoring)}


def calibrate_population(population: Population, *, replications: int, resamples: int, seed: int,
                         alpha: float = 0.05, power: float = 0.8, only: tuple[str, ...] | None = None) -> list[Row]:
    """Every item-level procedure on one task shape: null pass (type-I, coverage, printed MDE), then an
    alternative pass per procedure at the median MDE it printed (power, coverage). Draws come from the
    population's own stream (`Population.stream`: each seed pair its own)."""
    draws = _Draws(population)
    procedures = _item_procedures(population, resamples, alpha, power)
    if only is not None:
        procedures = {name: entry for name, entry in procedures.items() if name in only}
    shape = f"{population.task} ({population.size} {population.unit})"
    pair = "/".join(map(str, population.seeds))
    null = {name: _Tally() for name in procedures}
    rng = population.stream(seed)
    for _ in range(replications):
        a, b, starts = draws.draw(rng, 0.0)
        memo: dict = {}
        for name, (procedure, _) in procedures.items():
            null[name].add(*procedure(a, b, starts, rng, memo), truth=0.0)
    rows = []
    for position, (name, (procedure, scope)) in enumerate(procedures.items()):
        alt_rng = population.stream(seed, position + 1)
        mde, mde_se, fix = _alternative(draws, procedure, null[name].mdes, alt_rng, max(1, replications // 4))
        alt, note = _Tally(), ""
        if fix is None:
            note = "the MDE is beyond any improvement of these outputs" if mde is not None else "no MDE printed"
        else:
            truth = draws.true_delta(fix)
            for _ in range(replications):
                a, b, starts = draws.draw(alt_rng, fix)
                alt.add(*procedure(a, b, starts, alt_rng, {}), truth=truth)
        rows.append(_row(name, shape, replications, null[name], alt, mde, note or NOTES.get(name, ""), scope,
                         mde_se=mde_se, alpha=alpha, seeds=pair))
    return rows


def _alternative(draws: _Draws, procedure, null_mdes: list[float], rng: np.random.Generator,
                 pilot: int) -> tuple[float | None, float, float | None]:
    """The MDE the procedure prints on data where the candidate is better by that MDE, the Monte-Carlo standard
    error of that estimate (`median_se`), and the fix probability that makes it so: the median MDE printed on
    null data, then the median printed on ``pilot`` test sets of that alternative (a better candidate adds
    discordant items, so its comparisons print a larger MDE)."""
    if not null_mdes:
        return None, 0.0, None
    mde, mde_se = float(np.median(null_mdes)), median_se(null_mdes)
    fix = draws.fix_for(mde)
    if fix is None:
        return mde, mde_se, None
    printed = _Tally()
    for _ in range(pilot):
        printed.add(*procedure(*draws.draw(rng, fix), rng, {}), truth=0.0)
    if printed.mdes:
        mde, mde_se = float(np.median(printed.mdes)), median_se(printed.mdes)
    return mde, mde_se, draws.fix_for(mde)


def median_se(values) -> float:
    """Monte-Carlo standard error of a sample median, distribution-free: the rank of the sample median among
    k values has standard deviation sqrt(k) / 2, so half the distance between the values that many ranks either
    side of the middle (0 for fewer than 2 values)."""
    ordered = np.sort(np.asarray(values, dtype=float))
    k = len(ordered)
    if k < 2:
        return 0.0
    half = math.sqrt(k) / 2
    low, high = max(0, math.floor(k / 2 - half)), min(k - 1, math.ceil(k / 2 + half) - 1)
    return float(ordered[high] - ordered[low]) / 2


def _power_se(power: float, replications: int, mde: float | None, mde_se: float, alpha: float) -> float:
    """The power's Monte-Carlo standard error: the binomial error of the rejections (`mc_se`) and, in
    quadrature, the error of the MDE it is measured at times the slope of the power curve there. The slope is
    the normal test's, phi(z_p) (z_p + z_{1-alpha/2}) / MDE with z_p = Phi^-1(power) (power 80 %: 0.78 / MDE);
    a t with few degrees of freedom has a flatter curve (3 seeds: 0.62 / MDE), so this overstates its share."""
    binomial = mc_se(power, replications)
    if not mde or mde_se <= 0:
        return binomial
    z = float(scipy.stats.norm.ppf(min(max(power, 0.01), 0.99)))
    slope = float(scipy.stats.norm.pdf(z)) * max(0.0, z + float(scipy.stats.norm.ppf(1 - alpha / 2))) / mde
    return math.hypot(binomial, slope * mde_se)


def _row(name: str, shape: str, replications: int, tally: _Tally, alt: _Tally, mde, note: str,
         scope: dict | None, *, mde_se: float, alpha: float, seeds: str = "") -> Row:
    """A row from its null and alternative tallies; ``mde_se`` is the error of the MDE the power is measured at
    (`_power_se`)."""
    rate = lambda values: float(np.mean(values)) if values else None  # noqa: E731
    row = Row(procedure=name, shape=shape, replications=replications, type_i=rate(tally.rejected),
              coverage_null=rate(tally.covered), coverage_alt=rate(alt.covered), mde=mde,
              power=rate(alt.rejected), note=note, scope=scope, seeds=seeds)
    row.se = {key: mc_se(value, replications) for key, value in
              (("type_i", row.type_i), ("coverage_null", row.coverage_null), ("coverage_alt", row.coverage_alt))
              if value is not None}
    if row.power is not None:
        row.se["power"] = _power_se(row.power, replications, mde, mde_se, alpha)
    if mde is not None:
        row.se["mde"] = mde_se
    return row


def paired_t_many(differences: np.ndarray, *, confidence: float = 0.95) -> tuple[np.ndarray, ...]:
    """`paired_t` (zeros, d) for each row d of ``differences``: p-values, interval lows and highs. The same
    `scipy.stats.ttest_rel` paired_t calls, along the rows at once; a row whose differences are all equal (never,
    for continuous noise) goes through paired_t itself. `tests/stats/test_stats_calibrate.py` holds the two equal."""
    differences = np.asarray(differences, dtype=float)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's cancellation warning on the degenerate rows
        result = scipy.stats.ttest_rel(differences, np.zeros_like(differences), axis=1)
        interval = result.confidence_interval(confidence_level=confidence)
    pvalue, low, high = (np.array(v, dtype=float) for v in (result.pvalue, interval.low, interval.high))
    for i in np.flatnonzero(np.ptp(differences, axis=1) <= 1e-12 * np.maximum(1.0, np.abs(differences).max(1))):
        one = paired_t(np.zeros(differences.shape[1]), differences[i], confidence=confidence)
        pvalue[i], low[i], high[i] = one.pvalue, one.ci_low, one.ci_high
    return pvalue, low, high


def _seed_tally(differences: np.ndarray, truth: float, alpha: float, mdes: np.ndarray | None = None) -> _Tally:
    pvalue, low, high = paired_t_many(differences)
    tally = _Tally()
    tally.rejected = list(pvalue <= alpha)
    tally.covered = list((low - 1e-12 <= truth) & (truth <= high + 1e-12))
    tally.mdes = [] if mdes is None else list(mdes)
    return tally


def calibrate_seeds(shape: SeedShape, *, replications: int, seed: int, alpha: float = 0.05,
                    power: float = 0.8) -> list[Row]:
    """The paired t over seeds with normal per-seed differences, and with heavy-tailed ones (t with 3 degrees of
    freedom, scaled to the same spread: a seed that diverges): type-I and coverage on null runs, and power at
    the median MDE printed on them, first as `compare` prints it (`few_units.seeds_mde`: the median-unbiased
    spread), then from the plain spread of the differences, as it did before (same null rows). A replication is
    a few numbers, so the tests run on all of them at once (`paired_t_many`) and ``replications`` can be tens of
    thousands, which the MDE's median needs for the power to be measured at the MDE and not near it."""
    rows = []
    for position, (label, noise) in enumerate((
            ("normal", lambda rng, size: rng.standard_normal(size)),
            ("heavy-tailed", lambda rng, size: rng.standard_t(3, size) / math.sqrt(3)))):
        rng = np.random.default_rng([seed, 100 + position])
        size = (replications, shape.seeds)
        # the MDE is linear in the spread: seeds_mde(d) = per_sd * sd(d) * median_unbiased_spread(n) (tested)
        per_sd = paired_t_mde(shape.seeds, 1.0, alpha=alpha, power=power).mde
        differences = shape.sd * noise(rng, size)
        null = _seed_tally(differences, 0.0, alpha, per_sd * np.std(differences, axis=1, ddof=1))
        name = f"paired t over seeds, {label} differences"
        plain, plain_se = float(np.median(null.mdes)), median_se(null.mdes)
        factor = median_unbiased_spread(shape.seeds)
        for mde, mde_se, suffix, scope in ((plain * factor, plain_se * factor, "", shape.scope()),
                                           (plain, plain_se, ", MDE from the plain spread (before)", None)):
            alt = _seed_tally(mde + shape.sd * noise(rng, size), mde, alpha)
            rows.append(_row(name + suffix, f"{shape.task} ({shape.seeds} seeds)", replications, null, alt, mde, "",
                             scope, mde_se=mde_se, alpha=alpha))
    return rows


def calibrate_corrections(checks: int, *, replications: int, seed: int, alpha: float = 0.05) -> list[Row]:
    """Holm's family-wise error with every check null, and Benjamini–Hochberg's false discovery rate with half
    the checks carrying an effect the single test finds with 80 % power (independent z-tests)."""
    rng = np.random.default_rng([seed, 200])
    shift = scipy.stats.norm.ppf(1 - alpha / 2) + scipy.stats.norm.ppf(0.8)
    null_p = rng.random((replications, checks))
    fwer = float(np.mean([np.any(holm(p) <= alpha) for p in null_p]))
    effects = np.arange(checks) < checks // 2
    z = rng.standard_normal((replications, checks)) + shift * effects
    mixed_p = 2 * scipy.stats.norm.sf(np.abs(z))
    discoveries = [benjamini_hochberg(p) <= alpha for p in mixed_p]
    fdr = float(np.mean([np.sum(d & ~effects) / max(1, np.sum(d)) for d in discoveries]))
    shape = f"{checks} checks"
    rows = []
    for name, rate, note in (("Holm (family-wise error, all null)", fwer, "type-I = P(any check rejected)"),
                             ("Benjamini-Hochberg (FDR, half null)", fdr, "type-I = false discovery rate")):
        row = Row(procedure=name, shape=shape, replications=replications, type_i=rate, coverage_null=None,
                  coverage_alt=None, mde=None, power=None, note=note)
        row.se = {"type_i": mc_se(rate, replications)}
        rows.append(row)
    return rows
