"""Verifying stored runs before anything ranks them: a published number must be the one its samples give.

A run's files can be readable and still wrong: a row dropped or listed twice, golds that are not the
dataset's, a metric edited in results.json by hand or by a broken script. Ranked, such a run could take the
★, and the healthy runs it cannot pair with would be the ones marked "not comparable". So `leaderboard
build`, `compare` and `gate` verify every run first and set aside those that fail, each with its reasons:

1. samples.jsonl is the file results.json was written with (its recorded sha256), every line a sample;
2. every item appears exactly once at every seed, with one gold at every seed, and ``n_items`` counts them;
3. the item ids are the ones the dataset's split gave at run time (``data.splits.test.ids_sha256``) and so
   are the golds (``golds_sha256``, see `metabench.store.golds_sha256`). Runs written before the golds
   digest existed are checked against each other instead: among runs of one task, config and data, golds
   that disagree with a strict majority (or with a run that recorded its digest) are rejected; a tie
   rejects every disputed run, since run files alone cannot tell which one is right;
4. every metric results.json reports that the samples can rebuild (`decompose.seed_values`) is rebuilt
   at each seed and must equal the recorded value, and each aggregate mean and std must be those of the
   per-seed values. Metrics the samples cannot rebuild (in/out-of-vocabulary F1, breakdowns by an item
   field) are listed as unchecked;
5. checks 1-4 read the run's own account, which a careful forger rewrites whole. So the run is then checked
   against the data its task names (`verify_data`): config hash, data files, split sizes and ids, and the
   samples' test ids and golds, recomputed once per task and limit. A run whose data cannot be had here is
   *unverified*: kept, marked, never ranked above a verified run and never crowned.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import ExplainedError
from ..store import golds_sha256
from .align import item_rows
from .decompose import seed_values
from .stored import Run
from .verified_metrics import VerifiedMetrics
from .verify_data import DataVerifier

#: What every run passes before it is ranked (written on the leaderboard's pages).
CHECKS = ("samples.jsonl matches the sha256 recorded in results.json; every item appears once at every seed and "
          "n_items counts them; item ids and golds match the digests recorded from the dataset at run time (runs "
          "older than the golds digest: the golds agree with the strict majority of runs of the same task, config "
          "and data); every metric the samples can rebuild equals results.json at every seed, and each mean and std "
          "are those of the per-seed values; the task config hash, data files, split ids and the samples' test ids "
          "and golds match those recomputed from the data the task names. A run that fails is listed under rejected "
          "runs, never ranked; a run whose data is not available where the board is built is marked unverified, "
          "ranked below every verified run and never given the ★.")
#: Rebuilt and recorded values may differ by float rounding only.
TOLERANCE = 1e-6
_LABEL_METRICS = ("precision", "recall", "f1", "macro_f1")


@dataclass
class Verdict:
    """What verification found for one run: ``problems`` (empty: the run may be ranked), the metrics rebuilt
    from the samples and found equal, and those the samples cannot rebuild."""

    run: Run
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    golds: str | None = None  # digest of the samples' (id, gold) pairs, for the cross-run check
    ids: str | None = None  # digest of the samples' item ids, for the check against the data
    unverified: str | None = None  # why the run could not be checked against the data (check 5)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> dict:
        return {"checked": self.checked, "unchecked": self.unchecked,
                "data": self.unverified or "checked against the data the task names"}


def verify_runs(registry, runs: list[Run], done: Callable[[], None] | None = None, *, remember: bool = False,
                metrics: VerifiedMetrics | None = None) -> tuple[list[Run], list[Verdict], dict[int, Verdict]]:
    """(runs that passed, verdicts of those that failed, every verdict keyed by ``id(run)``); ``done`` is called
    after each run (a progress bar). Runs that passed but could not be checked against the data carry
    ``Verdict.unverified``. ``remember``: check 4's verdicts are read from and kept in the cache
    (`verified_metrics`; the leaderboard build, which verifies the same committed runs build after build);
    ``metrics``: that cache, opened and saved by the caller (a build's worker processes share the parent's)."""
    opened = VerifiedMetrics(registry) if remember and metrics is None else None
    verdicts, data, metrics = [], DataVerifier(registry), metrics or opened
    for run in runs:
        verdict = verify_run(registry, run, metrics)
        if verdict.ok:
            found = data.problems(run.results, verdict.ids, verdict.golds)
            if isinstance(found, str):
                verdict.unverified = found
            else:
                verdict.problems.extend(found)
        verdicts.append(verdict)
        if done is not None:
            done()
    data.release()
    if opened is not None:
        opened.save()
    _cross_check_golds([v for v in verdicts if v.ok])
    return ([v.run for v in verdicts if v.ok], [v for v in verdicts if not v.ok],
            {id(v.run): v for v in verdicts})


def verify_run(registry, run: Run, metrics: VerifiedMetrics | None = None) -> Verdict:
    """Checks 1, 2, 4 and the recorded half of 3 (module docstring) on one run: its own files only; check 4 as
    ``metrics`` last found it where the run and the code are unchanged (`verified_metrics`)."""
    verdict = Verdict(run)
    try:
        table = item_rows(run)  # reads samples.jsonl: digest, lines, one row per item and seed
    except ExplainedError as exc:  # a damaged or mixed-up run file, or rows missing or listed twice
        verdict.problems.append(_with_fix(exc))
        return verdict
    ids = list(table)
    golds = {}
    for item, rows in table.items():
        if len(rows) > 1 and len({json.dumps(r["gold"], sort_keys=True) for r in rows}) > 1:
            verdict.problems.append(f"item {item!r} has different golds at different seeds")
            return verdict
        golds[item] = rows[0]["gold"]
    if run.n_items != len(ids):
        verdict.problems.append(f"results.json says n_items = {run.n_items} but samples.jsonl holds {len(ids)} item(s)")
    recorded = run.results.get("data", {}).get("splits", {}).get("test", {})
    verdict.ids = _ids_sha256(ids)
    if "ids_sha256" in recorded and verdict.ids != recorded["ids_sha256"]:
        verdict.problems.append("the item ids in samples.jsonl are not the test items the run recorded "
                                "(data.splits.test.ids_sha256): a row was dropped, added or renamed")
    verdict.golds = golds_sha256(golds.items())
    if "golds_sha256" in recorded and verdict.golds != recorded["golds_sha256"]:
        verdict.problems.append("the golds in samples.jsonl are not the ones the dataset gave at run time "
                                "(data.splits.test.golds_sha256)")
    found = metrics.get(run) if metrics is not None else None
    if found is None:
        before = len(verdict.problems)
        _check_metrics(registry, run, [table[i] for i in ids], verdict)
        if metrics is not None:
            metrics.put(run, verdict.problems[before:], verdict.checked, verdict.unchecked)
    else:
        verdict.problems.extend(found[0])
        verdict.checked.extend(found[1])
        verdict.unchecked.extend(found[2])
    return verdict


def _with_fix(exc: ExplainedError) -> str:
    """The reader's diagnostic with its fix: a rejection is often the only place a user sees why a run file
    is unusable (a run written before digests needs tools/migrate_runs.py, not a re-run)."""
    return f"{exc.message} (fix: {exc.hint})" if exc.hint else exc.message


def _ids_sha256(ids: list[str]) -> str:
    """As `metabench.jobs.ids_sha256` computes it from the items."""
    return hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).hexdigest()


def _check_metrics(registry, run: Run, rows: list, verdict: Verdict) -> None:
    per_seed = run.results["metrics"]["per_seed"]
    aggregate = run.results["metrics"]["aggregate"]
    # the built-in classification kind scores the stored label itself (no metric_input), so its label
    # metrics read exactly the samples' gold and prediction; other kinds may map answers before scoring
    labels_exact = run.results["task"].get("kind") == "classification" and all(
        r["scores"].get("correct") == float(r["gold"] == r["prediction"]) for item in rows for r in item)
    for metric in sorted(aggregate):
        recorded = [per_seed.get(str(seed), {}).get(metric) for seed in run.seeds]
        problem = _aggregate_problem(metric, aggregate[metric], recorded)
        if problem:
            verdict.problems.append(problem)
            continue
        rebuilt = seed_values(run, rows, metric, registry)
        if rebuilt is None:
            verdict.unchecked.append(metric)
            continue
        values, exact = rebuilt
        exact = exact or (metric in _LABEL_METRICS and labels_exact)
        wrong = [(seed, r, v) for seed, r, v in zip(run.seeds, recorded, values)
                 if r is not None and not math.isclose(r, v, rel_tol=0, abs_tol=TOLERANCE)]
        if not wrong:
            verdict.checked.append(metric)
        elif exact:
            seed, r, v = wrong[0]
            verdict.problems.append(f"{metric} at seed {seed} is {r:.6f} in results.json but {v:.6f} rebuilt "
                                    "from samples.jsonl")
        else:  # a reading by convention (raw answers parsed before scoring): not the metric's input
            verdict.unchecked.append(metric)


def _aggregate_problem(metric: str, aggregate: dict, recorded: list) -> str | None:
    """The recorded mean/std/n must be those of the recorded per-seed values."""
    values = [v for v in recorded if v is not None]
    if not values:
        return None if aggregate.get("mean") is None else f"{metric}: a mean is recorded but no per-seed value"
    mean, std = statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0
    for name, expected in (("mean", mean), ("std", std)):
        got = aggregate.get(name)
        if not isinstance(got, (int, float)) or not math.isclose(got, expected, rel_tol=0, abs_tol=TOLERANCE):
            return f"{metric}: aggregate {name} is {got!r} in results.json but the per-seed values give {expected:.6f}"
    return None


def _cross_check_golds(verdicts: list[Verdict]) -> None:
    """Check 3 for runs without a recorded golds digest: against runs of the same task, config and data."""
    groups: dict[tuple, list[Verdict]] = {}
    for v in verdicts:
        results = v.run.results
        files = json.dumps(results.get("data", {}).get("files"), sort_keys=True)  # a minimal record has none
        key = (v.run.task, results["task"].get("config_hash"), files,
               results.get("data", {}).get("splits", {}).get("test", {}).get("ids_sha256"), v.run.n_items)
        groups.setdefault(key, []).append(v)
    for group in groups.values():
        if len({v.golds for v in group}) < 2:
            continue
        recorded = {v.golds for v in group if _recorded(v)}
        if recorded:
            reference = next(iter(recorded)) if len(recorded) == 1 else None
        else:
            counts: dict[str, int] = {}
            for v in group:
                counts[v.golds] = counts.get(v.golds, 0) + 1
            top = max(counts.values())
            majority = [g for g, n in counts.items() if n == top and n * 2 > len(group)]
            reference = majority[0] if majority else None
        for v in group:
            if _recorded(v):  # already checked against the dataset's own digest
                continue
            if reference is None:
                v.problems.append("runs of this task, config and data disagree on the golds, and none is a strict "
                                  "majority or recorded the dataset's golds digest: run files cannot tell which is right")
            elif v.golds != reference:
                v.problems.append("its golds differ from those of the other runs of this task, config and data "
                                  "(a strict majority, or a run that recorded the dataset's golds digest)")


def _recorded(verdict: Verdict) -> bool:
    return "golds_sha256" in verdict.run.results.get("data", {}).get("splits", {}).get("test", {})
