"""Degenerate runs named, not crowned: constant predictors, and runs no better than a trivial baseline.

A run that answers one label for every item, or one that is only as good as answering one label, can top a
task where every model is weak (a lookup that predicts "literal" everywhere scores F1 0.000 and was the
only run of its fold). Two marks keep such runs from the ★:

- **constant**: at every seed, one answer for at least ``CONSTANT_SHARE`` of the items (single-label
  answers), or no positive span in any item (tag sequences: an empty span set everywhere);
- **≈ chance**: not significantly better than the task's best trivial baseline. The baselines are
  computed here, on the run's own items and golds: every constant answer (each gold label, the majority
  among them; for tag sequences all words outside a span, and all words a one-word span of the positive
  type), scored as the task's kind scores them. The best of them by the primary metric is tested against
  the run with the paired test `compare` would choose (McNemar's exact test for accuracy at one seed, else
  a paired bootstrap over items), two-sided at ``alpha``; the run is ≈ chance unless it is better with
  p ≤ alpha. A run not above the baseline's value is ≈ chance without a test. Where a constant answer scores
  a perfect value on items whose golds differ (recall, answering the positive class everywhere), the metric is
  blind to constant predictors there (`_blind`): the test is made on another metric the run reports that is not
  blind (accuracy first: HARD's mined items, scored by recall, are balanced), the verdict names that metric
  (``tested_metric``) and the note says why; with none, no test, and the note says so.

Two flags name a cause, each from what it can see: a decoder significantly below the best constant answer on a
two-answer task reads its answers wrongly (`below_chance`: a probable answer-format failure, by the paired test);
a fitted classifier whose answers collapse onto one label at a seed is a collapsed fit (`collapsed_fit`: read
from its answers' distribution, never from a metric such as F1 that answering one label everywhere maximises —
NewsMet's MiniLM is below that constant on F1 and has not collapsed).

Where the samples cannot rebuild the primary metric for the baseline (a kind that parses raw text), the
test is not made and the row says so; the constant mark does not need it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace

from ..errors import MetabenchError
from ..metrics.tagging import DEFAULT_POSITIVE, sentence_counts, spans
from ..runs.align import item_rows
from .calibration_misses import PREFIX as CALIBRATION
from .compare import Options, compare_pair
from ..runs.decompose import seed_values
from ..run_record import Metrics, MetricSummary
from ..runs.stored import Run

#: One answer for at least this share of a seed's items makes the seed constant.
CONSTANT_SHARE = 0.99

RULE = (f"constant: one answer for ≥ {CONSTANT_SHARE:.0%} of the items at every seed (tag sequences: no predicted "
        "span anywhere); ≈ chance: not significantly better than the best constant answer on the same items and "
        "golds (every gold label, the majority among them; for tag sequences no span or every word a span), by "
        "the paired test compare chooses (McNemar at one seed, else a paired bootstrap over items), two-sided "
        "p ≤ α; where a constant answer scores a perfect value on items whose golds differ (the metric cannot tell "
        "it from a perfect model there) the test is made on another metric the task reports (accuracy first) and "
        "the mark names it, else none is made. Neither mark can hold the ★.")


def _is_sequence(answer) -> bool:
    return isinstance(answer, list) and all(isinstance(t, str) for t in answer)


def _positive(run: Run) -> str:
    return run.record.task.config.labels.positive or DEFAULT_POSITIVE


def constant(run: Run) -> dict:
    """Whether the run's answers are constant at every seed, with the answer and its share at each seed."""
    by_seed: dict[int, list] = {}
    for row in run.samples:
        by_seed.setdefault(row["seed"], []).append(row["prediction"])
    seeds = []
    for seed, answers in by_seed.items():
        if answers and all(_is_sequence(a) for a in answers):
            positive = _positive(run)
            empty = sum(not spans(a, positive) for a in answers)
            seeds.append({"seed": seed, "answer": "no span", "share": empty / len(answers),
                          "constant": empty == len(answers)})
            continue
        answer, count = Counter(json.dumps(a, sort_keys=True) for a in answers).most_common(1)[0]
        share = count / len(answers)
        seeds.append({"seed": seed, "answer": json.loads(answer), "share": share, "constant": share >= CONSTANT_SHARE})
    return {"constant": bool(seeds) and all(s["constant"] for s in seeds), "seeds": seeds}


def _candidates(run: Run, golds: list) -> list[tuple[str, object]]:
    """(name, answer maker) of every constant answer: a function of the gold (tag sequences need its length)."""
    if golds and all(_is_sequence(g) for g in golds):
        positive = _positive(run)
        return [("no span", lambda gold: ["O"] * len(gold)),
                (f"every word a {positive} span", lambda gold: [f"B-{positive}"] * len(gold))]
    counts = Counter(json.dumps(g, sort_keys=True) for g in golds)
    ordered = [json.loads(k) for k, _ in counts.most_common()]
    return [(("majority " if i == 0 else "constant ") + json.dumps(label, ensure_ascii=False), lambda _, lab=label: lab)
            for i, label in enumerate(ordered)]


def _scores(run: Run, gold, answer, keys) -> dict:
    """The per-item scores the kind would give a constant answer, for the keys the run's samples hold."""
    scores = {}
    if "correct" in keys:
        scores["correct"] = float(gold == answer)
    if "span_tp" in keys or "token_tp" in keys:
        span, token = sentence_counts(gold, answer, _positive(run))
        scores.update({f"span_{k}": float(v) for k, v in span.items()})
        scores.update({f"token_{k}": float(v) for k, v in token.items()})
    return scores


def trivial_run(registry, run: Run, name: str, make, rows, metric: str | None = None) -> Run | None:
    """A run answering ``make(gold)`` for every item of ``run`` at its first seed (in memory, never written),
    scored on ``metric`` (default: the primary metric); None when the samples cannot rebuild it for it."""
    seed, keys = run.record.seeds[0], set(rows[0][0]["scores"])
    samples = []
    for item in rows:
        gold = item[0]["gold"]
        answer = make(gold)
        samples.append({"id": item[0]["id"], "seed": seed, "gold": gold, "prediction": answer,
                        "scores": _scores(run, gold, answer, keys)})
    record = run.record.evolve(seeds=[seed], model=run.record.model.model_copy(update={"spec": f"trivial: {name}"}),
                               metrics=Metrics(per_seed={}, aggregate={}))
    baseline = Run(run.path / f"<{name}>", record, samples)
    metric = metric or run.record.primary_metric
    rebuilt = seed_values(baseline, [(s,) for s in samples], metric, registry)
    if rebuilt is None:
        return None
    value = rebuilt[0][0]
    record.metrics = Metrics(per_seed={str(seed): {metric: value}},
                             aggregate={metric: MetricSummary(mean=value, std=0.0, n=1)})
    return baseline


def _rows(run: Run) -> list:
    """The run's samples per item (every seed's row), read once per test."""
    return list(item_rows(run).values())


def _golds(rows: list) -> set[str]:
    """The distinct golds of the items, as JSON."""
    return {json.dumps(item[0]["gold"], sort_keys=True) for item in rows}


def _best(registry, run: Run, rows: list, metric: str | None = None) -> Run | None:
    """The best constant answer on the run's items by ``metric`` (default: its primary metric; in memory), None
    if none rebuilds."""
    metric = metric or run.record.primary_metric
    higher = run.record.higher_is_better_for(metric)
    found = [b for name, make in _candidates(run, [item[0]["gold"] for item in rows])
             if (b := trivial_run(registry, run, name, make, rows, metric)) is not None]
    scored = [(value, b) for b in found if (value := b.record.mean(metric)) is not None]
    return max(scored, key=lambda pair: pair[0] * (1 if higher else -1))[1] if scored else None


#: Where the primary metric is blind to constant answers, the metric the ≈ chance test is made on instead,
#: first found first (then any other metric the run reports): accuracy is never blind on items whose golds differ.
FALLBACK_METRICS = ("accuracy",)


class _Items:
    """One run's items read once for every verdict on them: its aligned rows, their distinct golds, and the best
    constant answer per metric (scoring every constant answer is the costly part), made on first use."""

    def __init__(self, registry, run: Run):
        self.registry, self.run = registry, run
        self.rows = _rows(run)
        self.golds = _golds(self.rows)
        self._best: dict[str, Run | None] = {}

    def best(self, metric: str) -> Run | None:
        if metric not in self._best:
            self._best[metric] = _best(self.registry, self.run, self.rows, metric)
        return self._best[metric]


def chance(registry, run: Run, options: Options, alpha: float) -> dict:
    """The run against its task's best trivial baseline (module docstring): ``chance`` is True (≈ chance),
    False (significantly better) or None (no test possible), with the baseline and its value on the primary
    metric and the test; ``tested_metric`` names the metric tested where it is not the primary (blind there)."""
    return _chance(_Items(registry, run), options, alpha)


def _chance(items: _Items, options: Options, alpha: float) -> dict:
    run = items.run
    found = _against(items, run.record.primary_metric, options, alpha)
    if not found.pop("blind", False):
        return found
    for metric in _fallbacks(run):
        other = _against(items, metric, options, alpha)
        if other.pop("blind", False) or other["chance"] is None:
            continue
        return {**found, "chance": other["chance"], "test": other["test"], "pvalue": other["pvalue"],
                "tested_metric": metric, "tested_baseline_value": other["baseline_value"],
                "note": (f"{found['note']}; tested on {metric} instead ({other['baseline']} = "
                         f"{other['baseline_value']:.4f}): {other['note'] or 'significantly better'}"),
                **({"calibration": other["calibration"]} if other.get("calibration") else {})}
    return found


def _fallbacks(run: Run) -> list[str]:
    """The metrics the run reports that the ≈ chance test may use instead of the primary, in order."""
    reported = [m for m in run.record.metrics.aggregate if m != run.record.primary_metric and run.record.mean(m) is not None]
    return [m for m in FALLBACK_METRICS if m in reported] + [m for m in reported if m not in FALLBACK_METRICS]


def _against(items: _Items, metric: str, options: Options, alpha: float) -> dict:
    """`chance` on one ``metric``; ``blind`` is True where a constant answer scores a perfect value on it."""
    registry, run = items.registry, items.run
    higher = run.record.higher_is_better_for(metric)
    best = items.best(metric)
    if best is None:
        return {"chance": None, "note": f"no trivial baseline: {metric} cannot be rebuilt from the samples"}
    value, mine = best.record.mean(metric), run.record.mean(metric)
    out = {"baseline": best.record.model.spec.removeprefix("trivial: "), "baseline_value": value, "test": None, "pvalue": None}
    if mine is None or value is None:  # the best constant answer always has one (`_best`)
        return {**out, "chance": None, "note": f"the run has no {metric}"}
    if _blind(items.golds, best, metric, higher):
        return {**out, "chance": None, "note": _blind_note(best, metric), "blind": True}
    if (mine <= value) if higher else (mine >= value):
        return {**out, "chance": True, "note": "not above the trivial baseline"}
    try:
        comparison = compare_pair(registry, best, run, metric, replace(options, test=None))
    except MetabenchError as exc:
        return {**out, "chance": None, "note": f"no test: {exc.message}"}
    if comparison.pvalue is None:
        return {**out, "chance": None, "note": "; ".join(comparison.notes) or "no paired test applies"}
    better = comparison.pvalue <= alpha and comparison.drop < 0
    # where this test misses a calibration target on the comparison's shape, the mark says so (the Hub export)
    missed = [note for note in comparison.notes if note.startswith(CALIBRATION)]
    return {**out, "test": comparison.test, "pvalue": comparison.pvalue, "chance": not better,
            "note": "" if better else f"not significantly better ({comparison.test}, p = {comparison.pvalue:.3g})",
            **({"calibration": missed} if missed else {})}


def _blind(golds: set[str], best: Run, metric: str, higher: bool) -> bool:
    """A constant answer scores a perfect ``metric`` on items whose golds differ (recall of the positive class,
    answered everywhere): the metric cannot tell a constant predictor from a perfect model here, so a run below
    it is neither ≈ chance nor below chance. Items of one gold are not blind: answering that gold is the honest
    baseline there, and a run below it is below chance."""
    value = best.record.mean(metric)
    return higher and value is not None and value >= 1.0 and len(golds) > 1


def _blind_note(best: Run, metric: str) -> str:
    return (f"no chance test on {metric}: {best.record.model.spec.removeprefix('trivial: ')} scores a perfect {metric} on these "
            f"items, so {metric} cannot tell a constant answer from a perfect model")


#: The ≈ chance test's level wherever a headline is printed beside its best constant answer (the board's default,
#: `metabench leaderboard build --alpha`).
ALPHA = 0.05


@dataclass(frozen=True)
class Assessment:
    """Every verdict of one run against the constant answers, made from one reading of its items (`_Items`: its
    aligned rows and, per metric, its best constant answer, shared by the ≈ chance test and the below-chance
    flag) and one count of its answers (`constant`, shared by the constant mark and the collapsed-fit flag)."""

    #: `constant`: whether every seed is constant, and each seed's most frequent answer
    constant: dict
    #: `chance`: the run against its best constant answer
    trivial: dict
    #: `FORMAT_RULE`'s flag (a decoder significantly below its best constant answer), or None
    below_chance: str | None
    #: `COLLAPSE_RULE`'s flag (a fitted classifier collapsed at some of its seeds), or None
    collapsed_fit: str | None

    @property
    def is_constant(self) -> bool:
        """The constant mark: one answer at every seed."""
        return self.constant["constant"]

    @property
    def constant_seeds(self) -> list[dict]:
        """Each seed's most frequent answer and its share."""
        return self.constant["seeds"]

    @property
    def eligible(self) -> bool:
        """Neither mark: the run may hold the ★."""
        return not self.is_constant and self.trivial["chance"] is not True

    def marks(self) -> dict:
        """Both marks (module docstring), as `assess` gives them."""
        return {"constant": self.is_constant, "constant_seeds": self.constant_seeds, "trivial": self.trivial,
                "eligible": self.eligible}


def assessment(registry, run: Run, options: Options = Options(), alpha: float = ALPHA) -> Assessment:
    """Both marks and both flags of one run, its items read once and each paired test made once: the ≈ chance
    test is made where the run is above its best constant answer, the below-chance test where it is below."""
    items = _Items(registry, run)
    const = constant(run)
    trivial = _chance(items, options, alpha)
    mean, baseline = run.record.mean(run.record.primary_metric), trivial.get("baseline_value")
    below = (mean is not None and baseline is not None
             and (mean < baseline if run.record.higher_is_better_for(run.record.primary_metric) else mean > baseline))
    return Assessment(const, trivial, _below_chance(items, options, alpha) if below else None,
                      _collapsed_fit(run, const))


def assess(registry, run: Run, options: Options, alpha: float) -> dict:
    """Both marks of one run (module docstring), for the board; ``eligible``: it may hold the ★."""
    return assessment(registry, run, options, alpha).marks()


FORMAT_RULE = ("probable answer-format failure: a task with two possible answers (two gold labels) where the run is "
               "significantly below the best constant answer on the same items (the same paired test, two-sided "
               "p ≤ α): a model that knew nothing would tie it, so answers read as the wrong label (a parser, a "
               "label map, a prompt's answer words) are the likelier cause than the model. Only for runs whose answers "
               "are read from generated or scored text (the decoder family); a classifier's labels are read directly "
               "and its collapse is read from its answers (collapsed fit)")

COLLAPSE_RULE = (f"a fitted classifier (not a decoder, not a baseline) that answers one label for "
                 f"≥ {CONSTANT_SHARE:.0%} of the items at some of its seeds (tag sequences: no span anywhere), the "
                 "constant mark's share; at every seed the constant mark says it. Read from its answers, never from "
                 "a metric (F1 of the positive class) that answering one label everywhere maximises")


def collapsed_fit(run: Run) -> str | None:
    """`COLLAPSE_RULE`'s flag for one run, naming its collapsed seeds and their answer, or None (a decoder or a
    baseline: no fit to collapse; no seed collapsed; every seed: the constant mark says more, as it does for
    the seed-stability marks)."""
    return _collapsed_fit(run, None)


def _collapsed_fit(run: Run, const: dict | None) -> str | None:
    """`collapsed_fit` from the run's `constant` verdict where it was made (None: made here)."""
    if run.record.model.family in ("decoder", "baseline"):
        return None
    seeds = (const or constant(run))["seeds"]
    collapsed = [s for s in seeds if s["constant"]]
    if not collapsed or len(collapsed) == len(seeds):
        return None
    answers = sorted({json.dumps(s["answer"], ensure_ascii=False) for s in collapsed})
    where = f"seed{'s' if len(collapsed) > 1 else ''} {', '.join(str(s['seed']) for s in collapsed)} of {len(seeds)}"
    return (f"a collapsed fit: one answer ({' / '.join(answers)}) for ≥ {CONSTANT_SHARE:.0%} of the items at {where} "
            "(read from its answers; its labels are read directly, not parsed from text)")


def below_chance(registry, run: Run, options: Options = Options(), alpha: float = ALPHA) -> str | None:
    """``FORMAT_RULE``'s flag for one decoder run with its test, or None (not a decoder: `collapsed_fit` reads a
    classifier's collapse from its answers; more than two answers, tag sequences, not significantly below, or no
    test possible)."""
    return _below_chance(_Items(registry, run), options, alpha)


def _below_chance(items: _Items, options: Options, alpha: float) -> str | None:
    run, registry, golds = items.run, items.registry, items.golds
    if run.record.model.family != "decoder":
        return None
    if len(golds) != 2 or any(_is_sequence(json.loads(g)) for g in golds):
        return None
    metric = run.record.primary_metric
    best = items.best(metric)
    if best is None or run.record.mean(metric) is None or _blind(golds, best, metric, run.record.higher_is_better_for(metric)):
        return None
    try:
        comparison = compare_pair(registry, best, run, metric, replace(options, test=None))
    except MetabenchError:
        return None
    if comparison.pvalue is None or comparison.pvalue > alpha or comparison.drop <= 0:
        return None
    # where this test misses a calibration target on the comparison's shape (a 64-item MOH-X fold), the flag says so
    missed = [note for note in comparison.notes if note.startswith(CALIBRATION)]
    return (f"below chance on a two-answer task ({comparison.candidate_value:.4f} vs "
            f"{comparison.baseline_value:.4f} for {best.record.model.spec.removeprefix('trivial: ')}, {comparison.test} "
            f"p = {comparison.pvalue:.3g}): probable answer-format failure" + "".join(f"; {note}" for note in missed))


def beside(registry, runs: list[Run], mean: float, alpha: float = ALPHA) -> str:
    """The best constant answer's score on the same items and golds beside a headline ``mean`` of ``runs`` (per
    fold, then their mean, for a k-fold group) with the ≈ chance mark: a headline never stands alone beside a
    number that answering one label for every item reaches (MOH-X: 'metaphor' everywhere beats MiniLM). The one
    rule for the docs' headline table and ``compare published`` (the leaderboard reads `pooled` itself)."""
    verdicts = [chance(registry, run, Options(), alpha) for run in runs]
    found = pooled(verdicts, mean)
    if found is None:
        return "— (" + next(v["note"] for v in verdicts if v.get("baseline_value") is None) + ")"
    text = f"{found['value']:.4f} ({', '.join(found['answers'])})"
    if found["folds"] > 1:
        text += (f"; ≈ chance in {found['near']} of {found['folds']} folds" if found["near"]
                 else f"; above it in all {found['folds']} folds")
    elif found["near"]:
        text += "; ≈ chance"
    if found["not_above"]:
        text = "≈ " + text + ": the headline is not above it"
    return text


def pooled(verdicts: list[dict], mean: float | None) -> dict | None:
    """`chance` verdicts of a headline's runs (a k-fold group's folds) as one: the constant answers' mean value,
    their names (a fold's majority answer is one of the constant answers: named once), the folds at ≈ chance
    and whether the headline ``mean`` is not above the value; None where a run has no baseline."""
    values = [value for v in verdicts if (value := v.get("baseline_value")) is not None]
    if not values or len(values) < len(verdicts):
        return None
    value = sum(values) / len(values)
    return {"value": value, "answers": sorted({v["baseline"].replace("majority ", "constant ", 1) for v in verdicts}),
            "near": sum(v["chance"] is True for v in verdicts), "folds": len(verdicts),
            "not_above": mean is not None and mean <= value}
