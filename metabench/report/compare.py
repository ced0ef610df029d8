"""Comparing runs of one task with the right paired test, corrected for the number of comparisons.

Which test (unless ``--test`` names one):

1. both runs have the same two or more seeds: a paired t-test on the per-seed values (seed-to-seed
   variation is then the noise that matters);
2. otherwise, the metric is a proportion of correct items and each run has one seed: McNemar's exact test
   on per-item correctness;
3. otherwise, the metric can be rebuilt from per-item records (F1 from tp/fp/fn counts, accuracy averaged
   over seeds): a paired bootstrap over items (see `decompose`), also when the runs' seeds differ;
4. otherwise no paired test is possible (e.g. in-vocabulary F1 of single-seed runs), and the row says so.

Each comparison says which test ran and why (``reason``). When both runs have two or more seeds, their seed
distributions are also compared by almost stochastic order (`metabench.stats.seed_order`, Dror et al.
2019), which needs neither paired nor equally many seeds: ``aso`` holds eps_min both ways.

Every difference is ``delta = candidate - baseline``. The CI is the test's own (bootstrap, t) or, for a
test without one (McNemar, Wilcoxon, randomisation), a paired bootstrap over items. Over a task's declared
clusters (a few dozen documents) the bootstrap's standard error is read against t with K - 1 degrees of freedom
for the CI, p-value and MDE (`metabench.stats.few_units`: the percentile interval measured too narrow there).
Every comparison also carries its minimum detectable effect (`metabench.stats.power`): the |delta| the test would
find with ``power`` (80 %) at ``alpha``, analytic for McNemar (from the observed discordance) and the paired
t-test (from the spread of the per-seed differences, made median-unbiased: `few_units.seeds_mde`), from the
spread of the bootstrap deltas otherwise. A comparison whose shape `metabench stats calibrate` measured missing a
target carries a note saying so (`calibration_misses`). Tests are looked up
in the registry (``metabench_register_tests``) and fed according to what each registration says it
consumes, so a plugin's test works with ``--test`` like a built-in one.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from ..errors import MetabenchError
from ..registry import Registry
from ..printable import escape
from ..stats import benjamini_hochberg, holm, paired_bootstrap
from ..stats.few_units import seeds_mde, t_reference
from ..stats.power import PowerResult, discordance, mcnemar_mde, normal_mde
from ..runs.align import AlignmentError, describe, pair
from ..runs.clusters import cluster_members, clustered, declared
from ..runs.decompose import ItemMetric, item_metrics, token_units
from ..runs.stored import Run, by_task
from .calibration_misses import calibration_notes
from .run_marks import marks, short
from .unread import LEGEND, beside, run_rate

#: the resampling units that are not a task's declared clusters
ITEM_UNITS = ("items", "sentences", "tokens")

#: More resamples than this buy nothing but memory (the p-value's resolution is already 1e-6).
MAX_RESAMPLES = 1_000_000

#: --correction value -> (name shown in tables, adjustment function or None)
CORRECTIONS = {"holm": ("Holm", holm), "bh": ("Benjamini-Hochberg", benjamini_hochberg), "none": ("none", None)}


@dataclass(frozen=True)
class Options:
    """How tests run: a forced test name, CI level, the resampling settings (seeded: reruns agree) and the
    level and power at which the minimum detectable effect is computed."""

    test: str | None = None
    confidence: float = 0.95
    n_resamples: int = 10_000
    seed: int = 0
    alpha: float = 0.05
    power: float = 0.8
    unit: str = "auto"

    def __post_init__(self):
        """Checked here, so the command line and :func:`metabench.compare` refuse the same values (named by
        their command-line flags, which the Python keywords mirror)."""
        for flag, value, kind in (("--confidence", self.confidence, float), ("--resamples", self.n_resamples, int),
                                  ("--seed", self.seed, int), ("--alpha", self.alpha, float), ("--power", self.power, float)):
            if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
                raise MetabenchError(f"{flag} {value!r}: must be {'a number' if kind is float else 'a whole number'}",
                                     hint=f"e.g. {flag} {getattr(Options, flag.lstrip('-').replace('resamples', 'n_resamples'))}")
        if not 0 < self.confidence < 1:  # also refuses NaN
            raise MetabenchError(f"--confidence {self.confidence}: must lie strictly between 0 and 1, e.g. 0.95")
        if not 1 <= self.n_resamples <= MAX_RESAMPLES:
            raise MetabenchError(f"--resamples {self.n_resamples}: must be between 1 and {MAX_RESAMPLES:,}",
                                 hint="the default, 10000, is enough for p-values down to 1e-4")
        if not 0 <= self.seed <= 2**32 - 1:
            raise MetabenchError(f"--seed {self.seed}: must be between 0 and {2**32 - 1}")
        if not 0 < self.alpha < 1:
            raise MetabenchError(f"--alpha {self.alpha}: must lie strictly between 0 and 1 (e.g. 0.05)")
        if not 0 < self.power < 1:
            raise MetabenchError(f"--power {self.power}: must lie strictly between 0 and 1, e.g. 0.8")


@dataclass
class Comparison:
    """One metric of one candidate run against a baseline run of the same task."""

    task: str
    metric: str
    baseline: str
    candidate: str
    baseline_run: str
    candidate_run: str
    higher_is_better: bool
    baseline_value: float
    candidate_value: float
    delta: float
    n_items: int
    seeds: dict[str, list[int]]
    test: str | None = None
    pvalue: float | None = None
    p_adjusted: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str = ""
    mde: float | None = None
    mde_method: str = ""
    reason: str = ""
    unit: str = ""
    aso: dict | None = None
    notes: list[str] = field(default_factory=list)
    #: each run's marks with their reasons (`run_marks`: partial, unverified), set by `compare_runs`
    baseline_marks: list[str] = field(default_factory=list)
    candidate_marks: list[str] = field(default_factory=list)
    #: each run's format-failure rate where it answered by generating text (`report.unread`), else None
    baseline_unread: float | None = None
    candidate_unread: float | None = None

    @property
    def drop(self) -> float:
        """How much worse the candidate is (positive = worse), whichever direction is better."""
        return -self.delta if self.higher_is_better else self.delta

    def as_dict(self) -> dict:
        return asdict(self)


def _recorded_mean(run: Run, metric: str) -> float:
    """The run's recorded mean of ``metric``; an error naming the metrics it has where it has none."""
    value = run.record.mean(metric)
    if value is None:
        raise MetabenchError(f"{describe(run)} has no value for metric '{metric}'",
                             hint=f"task '{run.record.task.name}' reports: {', '.join(sorted(run.record.metrics.aggregate))}")
    return value


def compare_pair(registry: Registry, a: Run, b: Run, metric: str, options: Options = Options()) -> Comparison:
    """Test ``metric`` of candidate ``b`` against baseline ``a``; raises `AlignmentError` if they cannot pair."""
    aligned = pair(a, b)
    value_a, value_b = _recorded_mean(a, metric), _recorded_mean(b, metric)
    item_a, item_b, unit = _resampling_unit(aligned, metric, registry, options.unit)
    comparison = Comparison(
        task=a.record.task.name, metric=metric, baseline=a.record.model.spec, candidate=b.record.model.spec,
        baseline_run=str(a.path), candidate_run=str(b.path), higher_is_better=a.record.higher_is_better_for(metric),
        baseline_value=value_a, candidate_value=value_b, delta=value_b - value_a,
        n_items=len(aligned.ids), seeds={"baseline": a.record.seeds, "candidate": b.record.seeds}, unit=unit,
        baseline_unread=run_rate(a), candidate_unread=run_rate(b),
    )
    if len(a.record.seeds) >= 2 and len(b.record.seeds) >= 2:
        comparison.aso = _seed_order(a, b, metric, options)
    name = options.test or choose_test(a, b, item_a, item_b)
    comparison.reason = "forced by --test" if options.test else REASONS.get(name or "", "")
    if name == "bootstrap" and unit not in ITEM_UNITS and not options.test:
        comparison.reason = (f"the task resamples its {unit} whole (metadata.cluster): their items are not "
                             "independent, so McNemar's test does not apply")
    if name is None:
        comparison.notes.append(
            f"no paired test: {metric} cannot be rebuilt from per-item samples and the runs do not share 2+ seeds "
            "(a metric gets item-level tests by declaring its decomposition: metabench.metrics.decomposition)"
        )
        return comparison
    if len(a.record.seeds) >= 2 and len(b.record.seeds) >= 2 and a.record.seeds != b.record.seeds and not options.test:
        comparison.notes.append(f"seeds differ ({a.record.seeds} vs {b.record.seeds}): items paired, each run averaged over its seeds")
    return _run_test(registry.get("test", name, where="--test"), comparison, a, b, item_a, item_b, options)


def _resampling_unit(aligned, metric: str, registry: Registry, unit: str) -> tuple:
    """Per-unit readings of the metric for both runs and the unit's name: the task's declared clusters
    (``auto``, the default), each item (a sentence for tagging tasks), or each token (``token``)."""
    a = aligned.a
    item_a, item_b = item_metrics(aligned, metric, registry)
    if unit == "token":
        tokens = token_units(aligned, metric)
        if tokens is None:
            raise MetabenchError(f"--unit token resamples words, but {metric} of task '{a.record.task.name}' is not a token_* "
                                 "metric of a tagging task", hint="drop --unit, or compare a token_* metric")
        return (*tokens, "tokens")
    spec = declared(a) or declared(aligned.b)
    if unit == "auto" and spec and item_a is not None and item_b is not None:
        members = cluster_members(aligned.ids, spec, a.record.task.name)
        return clustered(item_a, members), clustered(item_b, members), spec.name
    return item_a, item_b, "sentences" if a.record.task.kind == "tagging" else "items"


#: why `choose_test` picked each test, as `compare` prints it
REASONS = {
    "paired_t": "both runs have the same 2+ seeds: seed-to-seed variation is the noise that matters",
    "mcnemar": "a proportion of correct items at one seed: exact, uses only the items the runs disagree on",
    "bootstrap": "a corpus metric rebuilt from per-item records (or seeds that differ): resampling items recomputes it",
}


def _seed_order(a: Run, b: Run, metric: str, options: Options) -> dict | None:
    """Almost stochastic order of the two runs' per-seed values (higher is better after the sign flip)."""
    from ..stats.seed_order import THRESHOLD, almost_stochastic_order

    values_a, values_b = a.record.per_seed(metric), b.record.per_seed(metric)
    if None in values_a or None in values_b:
        return None
    sign = 1.0 if a.record.higher_is_better_for(metric) else -1.0
    result = almost_stochastic_order([sign * v for v in values_a if v is not None],
                                     [sign * v for v in values_b if v is not None],  # none is None: checked above
                                     confidence=options.confidence, seed=options.seed)
    return dict(result.as_dict(), threshold=THRESHOLD)


def choose_test(a: Run, b: Run, item_a: ItemMetric | None, item_b: ItemMetric | None) -> str | None:
    """The default test for a pair (rules in the module docstring); None when no paired test applies."""
    if len(a.record.seeds) >= 2 and a.record.seeds == b.record.seeds:
        return "paired_t"
    if item_a is None or item_b is None:
        return None
    if item_a.correct is not None and item_b.correct is not None:
        return "mcnemar"
    return "bootstrap"


def _run_test(entry, comparison: Comparison, a: Run, b: Run, item_a, item_b, options: Options) -> Comparison:
    consumes, args = entry.meta.get("input"), dict(entry.meta.get("args", {}))
    test = entry.load()
    metric = comparison.metric
    if consumes == "correctness":
        if item_a is None or item_a.correct is None or item_b.correct is None:
            raise MetabenchError(
                f"--test {entry.name} needs one 0/1 score per item and run, but {metric} of task "
                f"'{comparison.task}' is not a proportion of correct items at a single seed",
                hint="use --test bootstrap (any metric, any seeds) or --test paired_t (2+ seeds)",
            )
        result = test(item_a.correct, item_b.correct, **args)
    elif consumes == "records":
        if item_a is None:
            raise MetabenchError(
                f"--test {entry.name} resamples items, but {metric} cannot be rebuilt from the per-item samples",
                hint="use --test paired_t or wilcoxon on runs with the same 2+ seeds",
            )
        if entry.meta.get("swaps_items") and item_a.layout != item_b.layout:
            raise MetabenchError(
                f"--test {entry.name} exchanges the runs' outputs item by item, so both need the same seeds, but "
                f"{describe(a)} has seeds {a.record.seeds} and {describe(b)} has seeds {b.record.seeds}",
                hint="use --test bootstrap, which resamples items without exchanging them",
            )
        result = _call(test, item_a.records, item_b.records, item_a.metric, n_resamples=options.n_resamples,
                       seed=options.seed, confidence=options.confidence, **args)
    elif consumes == "seeds":
        if a.record.seeds != b.record.seeds or len(a.record.seeds) < 2:
            raise AlignmentError(
                f"--test {entry.name} pairs runs seed by seed, but {describe(a)} has seeds {a.record.seeds} and "
                f"{describe(b)} has seeds {b.record.seeds}",
                hint="rerun both with the same --seeds (2 or more), or use --test bootstrap to pair items",
            )
        values_a, values_b = a.record.per_seed(metric), b.record.per_seed(metric)
        if None in values_a or None in values_b:
            raise MetabenchError(f"task '{comparison.task}': {metric} is missing for some seed in results.json")
        result = _call(test, values_a, values_b, confidence=options.confidence, **args)
    else:
        raise MetabenchError(
            f"--test {entry.name} compares independent item sets ({consumes}), but two runs of one task hold the "
            "same items: use a paired test",
            hint="`metabench compare gap` tests subsets of different items; `metabench ls tests` lists the tests",
        )
    pvalue = _finite(result.pvalue)
    boot = result if getattr(result, "std_error", None) is not None else None
    unit = "seeds" if consumes == "seeds" else comparison.unit  # what the test paired or resampled
    if hasattr(result, "ci_low"):
        ci = (result.ci_low, result.ci_high, f"{entry.name} {options.confidence:.0%} over {unit}")
    elif item_a is not None and item_b is not None:
        boot = paired_bootstrap(item_a.records, item_b.records, item_a.metric, n_resamples=options.n_resamples,
                                seed=options.seed, confidence=options.confidence)
        ci = (boot.ci_low, boot.ci_high, f"bootstrap {options.confidence:.0%} over {comparison.unit}")
    else:
        ci = (None, None, "")
    power = _power(consumes, comparison, a, b, item_a, item_b, boot, options)
    units = len(a.record.seeds) if consumes == "seeds" else len(item_a.records) if item_a is not None else comparison.n_items
    if entry.name == "bootstrap" and unit not in ITEM_UNITS and boot is not None and math.isfinite(boot.std_error):
        # few clusters: the bootstrap's standard error against t with K - 1 degrees of freedom (stats.few_units)
        read = t_reference(boot.delta, boot.std_error, units, confidence=options.confidence, alpha=options.alpha,
                           power=options.power)
        pvalue, ci = read.pvalue, (read.ci_low, read.ci_high,
                                   f"bootstrap SE × t({read.df}) {options.confidence:.0%} over {unit}")
        power = None if boot.std_error == 0 else PowerResult(
            mde=read.mde, alpha=options.alpha, power=options.power, n=units,
            method=f"t({read.df}) × bootstrap standard error", nuisance=boot.std_error)
    notes = comparison.notes + ([result.note] if getattr(result, "note", None) else [])
    notes += calibration_notes(comparison.task, metric, entry.name, unit, units)
    return replace(comparison, test=entry.name, pvalue=pvalue, ci_low=_finite(ci[0]), ci_high=_finite(ci[1]),
                   ci_method=ci[2], notes=notes, mde=None if power is None else _finite(power.mde),
                   mde_method="" if power is None else power.method, unit=unit)


def _power(consumes: str, comparison: Comparison, a: Run, b: Run, item_a, item_b, boot,
           options: Options) -> PowerResult | None:
    """The minimum detectable effect of the test that ran (see the module docstring), None if unknown."""
    level = {"alpha": options.alpha, "power": options.power}
    if consumes == "seeds":
        return seeds_mde(np.subtract(np.asarray(b.record.per_seed(comparison.metric), dtype=float),
                                     np.asarray(a.record.per_seed(comparison.metric), dtype=float)), **level)
    if consumes == "correctness":
        return mcnemar_mde(comparison.n_items, discordance(item_a.correct, item_b.correct), **level)
    # resamples that all agree (identical outputs, a metric constant on these items) say nothing about power
    if boot is not None and math.isfinite(boot.std_error) and boot.std_error > 0:
        return normal_mde(boot.std_error, comparison.n_items, method="bootstrap standard error", **level)
    return None


def _call(fn, *args, **kwargs):
    """Call ``fn`` with the keyword arguments it accepts (a plugin's test may not take ``confidence``)."""
    parameters = inspect.signature(fn).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in parameters}
    return fn(*args, **kwargs)


def _finite(value) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def adjust(comparisons: list, correction: str) -> None:
    """Set ``p_adjusted`` on every comparison, treating all of them as one family."""
    _, method = CORRECTIONS[correction]
    pvalues = [c.pvalue if c.pvalue is not None else math.nan for c in comparisons]
    adjusted = method(pvalues) if method is not None and pvalues else np.asarray(pvalues, dtype=float)
    for comparison, p in zip(comparisons, adjusted):
        comparison.p_adjusted = _finite(p)


def reference_run(group: list[Run], baseline: str | None) -> Run:
    """The baseline of a task's runs: the one matching ``--baseline`` (model, folder name or path), or the first."""
    if baseline is None:
        return group[0]
    for run in group:
        if baseline in (run.record.model.spec, run.path.name) or Path(baseline).resolve() == run.path.resolve():
            return run
    raise MetabenchError(
        f"task '{group[0].record.task.name}': no run of the --baseline model {baseline!r} (its runs: "
        f"{', '.join(repr(r.record.model.spec) for r in group)})",
    )


class NotCompared(str):
    """One line saying what was not compared and why; ``reason`` names the kind of reason, so a folder's
    summary prints one count line per reason (the lines themselves with ``--verbose``)."""

    reason: str
    task: str
    #: the commands that would make the runs comparable (a run left alone over its own items), else none
    reruns: list[str]

    def __new__(cls, text: str, reason: str, task: str) -> "NotCompared":
        line = super().__new__(cls, text)
        line.reason, line.task, line.reruns = reason, task, []
        return line


def compare_runs(
    registry: Registry, runs: list[Run], *, metrics: list[str] | None = None, baseline: str | None = None,
    options: Options = Options(),
) -> tuple[list[Comparison], list[NotCompared]]:
    """Every run of a task against the task's baseline run, for each metric (default: the primary).

    Runs are verified first (:mod:`verify`); a run that fails is not compared and becomes a note. Pairs what
    it can: a task that cannot be compared (one run, no run of the ``--baseline`` model, runs over different
    items, a metric it lacks) becomes one note with the reason, and the other tasks are still compared.
    Raises only when nothing at all could be paired. Returns the comparisons and the notes.
    """
    from ..runs.verify import verify_runs

    runs, rejected, verdicts = verify_runs(registry, runs)
    notes = [NotCompared(f"task '{v.run.record.task.name}': {describe(v.run)} rejected by verification: {'; '.join(v.problems)}",
                         "rejected by verification (the run's files disagree with each other)", v.run.record.task.name)
             for v in rejected]
    comparisons = []
    for task, whole in by_task(runs).items():
        item_sets = _by_item_set(whole)
        for group in item_sets:
            others = [run for run in whole if run not in group]
            comparisons += _compare_group(registry, task, group, others, metrics, baseline, options, notes)
    for comparison in comparisons:
        for side in ("baseline", "candidate"):
            run = next(r for r in runs if str(r.path) == getattr(comparison, f"{side}_run"))
            setattr(comparison, f"{side}_marks", marks(run, verdicts[id(run)]))
    if not comparisons:
        reruns = list(dict.fromkeys(line for note in notes for line in note.reruns))
        raise MetabenchError(
            "nothing could be paired:\n  " + "\n  ".join(notes),
            hint="rerun one side so that both hold the same items, then compare again:\n    " + "\n    ".join(reruns)
            if reruns else "pass two or more runs of the same task over the same items (run folders, results.json "
            "files or an output folder)",
        )
    return comparisons, notes


def rerun_commands(lone: Run, others: list[Run]) -> list[str]:
    """The commands that would give ``lone`` a partner over its items: another model rerun with ``lone``'s
    ``--limit`` (or without one, where ``lone`` has none), cheapest first (baselines), then ``lone`` rerun over
    the items of the other runs. Each writes next to the runs it pairs with."""
    import shlex

    def command(run: Run, limit: int | None) -> str:
        out = run.path.parent.parent
        try:
            out = out.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            pass
        seeds = f" --seeds {','.join(map(str, run.record.seeds))}" if "@seeds=" in run.path.name else ""
        return (f"metabench --tasks {shlex.quote(run.record.task.name)} --model {shlex.quote(run.record.model.spec)}{seeds}"
                + (f" --limit {limit}" if limit is not None else "") + f" -o {shlex.quote(str(out))}")

    def family(run: Run) -> str:
        return run.record.model.family or ""

    partners = sorted({run.record.model.spec: run for run in others}.values(), key=lambda run: family(run) != "baseline")
    lines = [command(run, lone.record.limit) for run in partners[:2]]
    limits = {run.record.limit for run in others}
    if len(limits) == 1:  # the others agree on their items: lone rerun over them
        lines.append(command(lone, limits.pop()))
    return lines


def _by_item_set(group: list[Run]) -> list[list[Run]]:
    """A task's runs split by the items they scored (`--limit`, and how many), in the order given.

    A full run and a `--limit 200` run of the same task cannot be paired; a folder holding both pairs of each
    (the README's runs, then its run config) tests both pairs instead of only those of the first run's items.
    """
    sets: dict[tuple, list[Run]] = {}
    for run in group:
        sets.setdefault((run.record.limit, run.record.n_items), []).append(run)
    return list(sets.values())


def _items_phrase(run: Run) -> str:
    return f"{run.record.n_items} items" + (f", {run.record.limit_label}" if run.record.limit is not None else "")


def _compare_group(registry: Registry, task: str, group: list[Run], others: list[Run], metrics: list[str] | None,
                   baseline: str | None, options: Options, notes: list[NotCompared]) -> list[Comparison]:
    """Every run of one item set of a task against its baseline; what cannot be paired goes to ``notes``.

    ``others`` are the task's runs over other items, named in the note of a run left alone over its own.
    """
    comparisons: list[Comparison] = []
    several = bool(others)
    if len(group) < 2:
        if several:
            held = "; ".join(f"{run.path.name}: {_items_phrase(run)}" for run in others)
            note = NotCompared(f"task '{task}': {group[0].path} is the only run over its items "
                               f"({_items_phrase(group[0])}); the task's other runs hold other items ({held})",
                               "the only run over its items", task)
            note.reruns = rerun_commands(group[0], others)
            notes.append(note)
        else:
            notes.append(NotCompared(f"task '{task}': a single run ({group[0].record.model.spec}), nothing to compare it with",
                                     "a single run of the task", task))
        return comparisons
    try:
        reference = reference_run(group, baseline)
    except MetabenchError as exc:
        notes.append(NotCompared(exc.message + (f" over {_items_phrase(group[0])}" if several else ""),
                                 "no run of the --baseline model", task))
        return comparisons
    for metric in metrics or [reference.record.primary_metric]:
        if reference.record.aggregate(metric) is None:
            notes.append(NotCompared(f"task '{task}': no metric '{metric}'", "the metric is not reported", task))
            continue
        for run in group:
            if run is reference:
                continue
            try:
                comparisons.append(compare_pair(registry, reference, run, metric, options))
            except MetabenchError as exc:
                notes.append(NotCompared(
                    f"task '{task}': {run.record.model.spec} not paired with {reference.record.model.spec}: {exc.message}",
                    "runs over other items, config or data" if isinstance(exc, AlignmentError)
                    else "no value or test for the metric", task))
    return comparisons


def correction_phrase(correction: str, count: int) -> str:
    if correction == "none":
        return f"p not adjusted for the {count} comparison(s)"
    return f"p adjusted over {count} comparison(s) by {CORRECTIONS[correction][0]}"


def format_p(p: float | None) -> str:
    if p is None:
        return "—"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def format_ci(low: float | None, high: float | None) -> str:
    return "—" if low is None else f"[{low:+.4f}, {high:+.4f}]"


def aso_phrase(aso: dict) -> str:
    """ASO in words: eps_min both ways and what they allow one to claim (Dror et al. 2019's threshold)."""
    eps, reverse, threshold = aso["eps_min"], aso["eps_min_reverse"], aso["threshold"]
    if eps < threshold:
        verdict = "the candidate is almost stochastically better"
    elif reverse < threshold:
        verdict = "the baseline is almost stochastically better"
    else:
        verdict = "neither seed distribution almost dominates the other"
    return (f"almost stochastic order over {aso['n_a']} vs {aso['n_b']} seeds: eps_min(candidate better) = {eps:.3f}, "
            f"eps_min(baseline better) = {reverse:.3f}; {verdict} (threshold {threshold})")


def format_mde(mde: float | None) -> str:
    return "—" if mde is None else f"±{mde:.4f}"


def comparison_rows(comparisons: list[Comparison], alpha: float) -> list[list]:
    """Table rows; a pair is named by its run folders where model names do not tell the rows apart (one model,
    or a task compared over several item sets, such as its full and its `--limit` runs)."""
    items: dict[str, set[int]] = {}
    for c in comparisons:
        items.setdefault(c.task, set()).add(c.n_items)
    rows = []
    for c in comparisons:
        same = c.baseline == c.candidate or len(items[c.task]) > 1
        significant = c.p_adjusted is not None and c.p_adjusted <= alpha
        rows.append([
            *map(escape, (c.task, c.metric, (c.baseline_run if same else c.baseline) + short(c.baseline_marks),
                          (c.candidate_run if same else c.candidate) + short(c.candidate_marks))),
            beside(f"{c.baseline_value:.4f}", c.baseline_unread), beside(f"{c.candidate_value:.4f}", c.candidate_unread),
            f"{c.delta:+.4f}", format_ci(c.ci_low, c.ci_high),
            format_mde(c.mde), escape(f"{c.test} ({c.unit})") if c.test else "—", format_p(c.pvalue),
            format_p(c.p_adjusted) + (" *" if significant else ""),
        ])
    return rows


#: compare reruns no model: what its numbers are, said under every table (the board and the export say it too).
NOT_REPRODUCED = ("reproduction: never tried: compare reruns no model, so each number is its run's own account, held "
                  "to the checks of its files and its data (metabench verify-run --reproduce K RUN reruns a run here)")


def _first_last(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 3 else f"{names[0]} … {names[-1]}"


def format_comparisons(comparisons: list[Comparison], notes: list[str], *, correction: str, alpha: float,
                       confidence: float, power: float = 0.8, verbose: bool = True) -> str:
    """The table, its legend and notes, then what was not compared: every line (``verbose``), or one count
    line per reason, so a folder of hundreds of runs still opens on its table."""
    from tabulate import tabulate

    name = CORRECTIONS[correction][0]
    headers = ["task", "metric", "baseline", "candidate", "A", "B", "Δ (B−A)", f"{confidence:.0%} CI", "MDE", "test",
               "p", f"p ({name})"]
    lines = [tabulate(comparison_rows(comparisons, alpha), headers=headers, disable_numparse=True), ""]
    lines.append(f"Δ = candidate − baseline; {correction_phrase(correction, len(comparisons))}; "
                 f"* = significant at alpha {alpha}; MDE = the smallest |Δ| the test detects with {power:.0%} power "
                 f"at alpha {alpha} (unadjusted).")
    reasons = {c.test: c.reason for c in comparisons if c.test and c.reason}
    lines.extend(f"test {escape(test)}: {escape(reason)}" for test, reason in reasons.items())
    lines.extend(_marks_lines(comparisons))
    if any(c.baseline_unread is not None or c.candidate_unread is not None for c in comparisons):
        lines.append(LEGEND + ".")
    if comparisons:
        lines.append(NOT_REPRODUCED)
    shared: dict[str, list[str]] = {}  # a note many comparisons carry (a k-fold's calibration) is printed once
    for c in comparisons:
        named = escape(f"{c.task} {c.metric} {c.candidate}")
        if c.aso:
            lines.append(f"seeds {named}: {aso_phrase(c.aso)}")
        for note in c.notes:
            shared.setdefault(note, []).append(named)
    lines.extend(f"note: {names[0] if len(names) == 1 else f'{len(names)} comparisons ({_first_last(names)})'}: "
                 f"{escape(note)}" for note, names in shared.items())
    if verbose:
        lines.extend(f"not compared: {escape(n)}" for n in notes)
        return "\n".join(lines)
    tasks: dict[str, list[str]] = {}
    for note in notes:
        tasks.setdefault(getattr(note, "reason", "other"), []).append(getattr(note, "task", ""))
    lines.extend(f"not compared: {len(named)} × {escape(reason)}{_tasks_phrase(named)}" for reason, named in tasks.items())
    if tasks:
        lines.append("(--verbose lists each one)")
    return "\n".join(lines)


def _marks_lines(comparisons: list[Comparison]) -> list[str]:
    """One line per marked run, with every mark's reason (`run_marks`): a partial or unverified number is
    never read as a whole, checked one."""
    found: dict[str, list[str]] = {}
    for c in comparisons:
        for run, run_marks in ((c.baseline_run, c.baseline_marks), (c.candidate_run, c.candidate_marks)):
            if run_marks:
                found[run] = run_marks
    if not found:
        return []
    return ["marked runs ([partial]: scored part of the test split; [unverified]: not "
            "checked against the data its task names, so its items and golds are the run's own account; "
            "[unchecked]: metrics not rebuilt from its golds and predictions):",
            *(f"  {escape(run)}: {escape('; '.join(run_marks))}" for run, run_marks in found.items())]


def _tasks_phrase(tasks: list[str], shown: int = 5) -> str:
    """Which tasks a count line covers, so the short form still says what was left out."""
    distinct = list(dict.fromkeys(t for t in tasks if t))
    if not distinct:
        return ""
    more = f" and {len(distinct) - shown} more" if len(distinct) > shown else ""
    return f" (task{'s' if len(distinct) > 1 else ''} {', '.join(escape(t) for t in distinct[:shown])}{more})"
