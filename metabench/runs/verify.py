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
4. the recorded task config hashes to the recorded ``config_hash`` (a config edited with its hash kept is
   rejected; whether that hash is the task's as it is here is check 5's), and what decides how the task ranks
   is that config's, never the run's own say: ``task.primary_metric`` is the config's primary metric and
   ``higher_is_better`` each metric's registered direction (`_ranking_problem`). Every metric results.json reports
   that the samples can rebuild (`decompose.seed_values`) is rebuilt at each seed with the task's config as it
   is here (labels, positive class; the run's own copy only where the task is not installed, or is another
   version than the run's), and must equal the recorded value, and each aggregate mean and std must be those of the
   per-seed values. The per-item scores that come from gold and prediction alone (classification's
   ``correct``, tagging's span and token counts) are recomputed, not read: a run whose scores disagree with
   its predictions is rejected. Metrics the samples cannot rebuild are listed as unchecked;
5. checks 1-4 read the run's own account, which a careful forger rewrites whole. So the run is then checked
   against the data its task names (`verify_data`): config hash, data files, split sizes and ids, and the
   samples' test ids and golds, recomputed once per task and limit; then every sample is scored and every seed aggregated
   again by the task's kind on the data's items (`rebuild`), so every metric the kind computes is checked.
   The split's size loaded there is the one "partial" is judged by (`Run.split_size`). A run whose data cannot
   be had here is *unverified*: kept, marked, never ranked above a verified run and never crowned.

A metric neither check rebuilds is *unchecked*: every report that shows it says so (`unchecked_note`), and a
run whose primary metric is unchecked is never ranked as if it were checked.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from ..config.loader import dumped_config_hash
from ..errors import ExplainedError
from ..metrics.tagging import sentence_counts
from ..run_record import RecordedConfig
from ..store import golds_sha256
from .align import item_rows
from .decompose import seed_values
from .rebuild import rebuilt_from_data, score_mismatch
from .stored import Run
from .verified_metrics import VerifiedMetrics
from .verify_data import DataVerifier, rerun_hint

#: What every run passes before it is ranked (written on the leaderboard's pages).
CHECKS = ("samples.jsonl matches the sha256 recorded in results.json; every item appears once at every seed and "
          "n_items counts them; item ids and golds match the digests recorded from the dataset at run time (runs "
          "older than the golds digest: the golds agree with the strict majority of runs of the same task, config "
          "and data); the recorded task config hashes to the recorded config hash, which is the task's as it is "
          "here, and the run's primary metric and ranking directions are that config's and the registered metrics'; every metric the samples can rebuild, with the task's config as it is here, equals results.json "
          "at every seed, each mean and std are those of the per-seed values, and per-item scores agree with the "
          "predictions; the data files, split ids and the samples' test ids and golds match those recomputed from "
          "the data the task names, and every sample's scores and every metric are rebuilt from the golds and "
          "predictions by the task's kind on the data's items. A run that fails is listed under rejected runs, "
          "never ranked; a run whose data is not available where the board is built is marked unverified, and a "
          "run whose primary metric could not be rebuilt is marked unchecked: both are ranked below every verified "
          "run and never given the ★; whether a run is partial is judged against the split's size in the data.")
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
    split_size: int | None = None  # the whole test split's size in the data (check 5), what "partial" reads
    #: the board's account of its reproduction (``leaderboard build --reproduce K``): status, mark, k, reason
    reproduction: dict | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> dict:
        found = {"checked": self.checked, "unchecked": self.unchecked,
                 "data": self.unverified or "checked against the data the task names"}
        return found if self.reproduction is None else {**found, "reproduction": self.reproduction}

    def unchecked_note(self, metric: str) -> str | None:
        """Why ``metric``'s number is only the run's own account ("unchecked: ..."), or None where it was
        rebuilt: what the board, ``compare`` and the Hub export print beside it."""
        if metric not in self.unchecked:
            return None
        return f"{metric} could not be rebuilt from the samples' golds and predictions; it is the run's own account"


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
        verdict = verify_run(registry, run, metrics, task=data.task(run.record.task.name))
        if verdict.ok and verdict.ids is not None and verdict.golds is not None:  # both set when it is ok
            found = data.problems(run.record, verdict.ids, verdict.golds)
            if isinstance(found, str):
                verdict.unverified = found
            else:
                verdict.problems.extend(found)
            if not verdict.problems and not verdict.unverified:
                _check_against_data(data.expected(run.record.task.name, run.record.limit), run, verdict, metrics,
                                    data.reader(run.record))
        run.split_size = verdict.split_size
        verdicts.append(verdict)
        if done is not None:
            done()
    data.release()
    if opened is not None:
        opened.save()
    _cross_check_golds([v for v in verdicts if v.ok])
    return ([v.run for v in verdicts if v.ok], [v for v in verdicts if not v.ok],
            {id(v.run): v for v in verdicts})


def verify_run(registry, run: Run, metrics: VerifiedMetrics | None = None, *, task=None) -> Verdict:
    """Checks 1, 2, 4 and the recorded half of 3 (module docstring) on one run: its own files and ``task``, the
    task as it is here (`verify_data.DataVerifier.task`; None: not installed, the run's recorded config is
    read); check 4 as ``metrics`` last found it where the run, the task and the code are unchanged."""
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
    if run.record.n_items != len(ids):
        verdict.problems.append(f"results.json says n_items = {run.record.n_items} but samples.jsonl holds {len(ids)} item(s)")
    test = run.record.split("test")
    recorded = test.as_json() if test is not None else {}
    verdict.ids = _ids_sha256(ids)
    if "ids_sha256" in recorded and verdict.ids != recorded["ids_sha256"]:
        verdict.problems.append("the item ids in samples.jsonl are not the test items the run recorded "
                                "(data.splits.test.ids_sha256): a row was dropped, added or renamed")
    verdict.golds = golds_sha256(golds.items())
    if "golds_sha256" in recorded and verdict.golds != recorded["golds_sha256"]:
        verdict.problems.append("the golds in samples.jsonl are not the ones the dataset gave at run time "
                                "(data.splits.test.golds_sha256)")
    config = _config_problem(run, task, verdict)
    if config is None:
        return verdict
    ranking = _ranking_problem(registry, run, config)
    if ranking is not None:
        verdict.problems.append(ranking)
        return verdict
    # the config read has the run's recorded config hash (the task's is used only where it is the same), so
    # results.json alone keys the verdict
    found = metrics.get(run) if metrics is not None else None
    if found is None:
        before = len(verdict.problems)
        _check_metrics(registry, run, [table[i] for i in ids], verdict, config)
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


def _config_problem(run: Run, task, verdict: Verdict) -> RecordedConfig | None:
    """The config check 4 rebuilds metrics with: the task's as it is here where the run's config hash is the
    task's (a run of another version of the task is rejected by check 5, or stays unverified without its data,
    and is read with its own config), else the run's recorded one; None after adding to the verdict that the
    recorded config does not hash to the recorded hash."""
    recorded = run.record.task
    # a record whose config does not name its task is no task config (a hand-made minimal record): nothing to
    # hash, and nothing a report reads from it is trusted where the task is here (its config is read instead)
    if recorded.config.has("task") and dumped_config_hash(recorded.config.as_json()) != recorded.config_hash:
        verdict.problems.append(f"its recorded task config (results.json task.config) does not hash to its "
                                f"task.config_hash: the config was edited after the run (fix: {rerun_hint(run.record)})")
        return None
    if task is not None and recorded.config_hash == task.hash:
        return RecordedConfig.model_validate(task.config.model_dump(mode="json"))
    return recorded.config


def _ranking_problem(registry, run: Run, config: RecordedConfig) -> str | None:
    """Check 4's half on what decides how a task ranks: the record's ``task.primary_metric`` must be the one its
    config gives (the task's as it is here, or the run's hash-checked copy) and its ``higher_is_better`` the
    direction each metric of that config is registered with here. Both sit outside the hashed config, so a run
    that set them itself would choose the metric its whole task ranks by, or turn the ranking upside down."""
    names = config.metric_names
    primary = config.primary
    recorded = run.record.task.primary_metric
    if isinstance(primary, str) and recorded != primary:
        return (f"results.json names {recorded!r} as the task's primary metric (task.primary_metric), but the task's "
                f"config ranks by {primary!r}: a run does not choose the metric its task is ranked by")
    for name in names:
        if isinstance(name, str) and registry.has("metric", name):
            direction = bool(registry.get("metric", name).meta.get("higher_is_better", True))
            if run.record.higher_is_better_for(name) != direction:
                return (f"results.json says {name} is {'higher' if not direction else 'lower'}-is-better "
                        f"(higher_is_better), but the metric is registered as "
                        f"{'higher' if direction else 'lower'}-is-better: a run does not choose its ranking direction")
    return None


def _check_against_data(expected, run: Run, verdict: Verdict, metrics: VerifiedMetrics | None,
                        reader=None) -> None:
    """Check 5's second half: every score and metric rebuilt by the task's kind on the data (`rebuild`), and a
    generated run's readings read again from its responses by ``reader``, kept in ``metrics`` like check 4 (the
    data is pinned by the run's recorded file hashes, already matched)."""
    verdict.split_size = expected.n_test_items
    found = metrics.get(run, "data") if metrics is not None else None
    if found is None:
        problems, checked = rebuilt_from_data(expected.data, run, item_rows(run), reader)
        if metrics is not None:
            metrics.put(run, problems, checked, [], "data")
    else:
        problems, checked = found[0], found[1]
    verdict.problems.extend(problems)
    verdict.checked = sorted(set(verdict.checked) | set(checked))
    verdict.unchecked = [m for m in verdict.unchecked if m not in checked]


def _classification_scores(gold, prediction, positive) -> dict[str, float]:
    return {"correct": float(gold == prediction)}


def _tagging_scores(gold, prediction, positive) -> dict[str, float]:
    span, token = sentence_counts(gold, prediction, positive)
    return {**{f"span_{k}": float(span[k]) for k in ("tp", "fp", "fn")},
            **{f"token_{k}": float(token[k]) for k in ("tp", "fp", "fn")},
            "correct": float(tuple(gold) == tuple(prediction))}


#: per-item scores the built-in kinds compute from gold and prediction alone (check 4 recomputes them)
_SAMPLE_SCORES = {"classification": _classification_scores, "tagging": _tagging_scores}


def _scores_problem(run: Run, rows: list, config: RecordedConfig) -> str | None:
    """The first sample whose stored scores are not those its gold and prediction give (the built-in kinds
    whose scores need nothing else), or None."""
    score = _SAMPLE_SCORES.get(run.record.task.kind)
    if score is None:
        return None
    positive = config.labels.positive
    for item in rows:
        for row in item:
            stored = row.get("scores") or {}
            for key, value in score(row["gold"], row["prediction"], positive).items():
                if key in stored and stored[key] != value:
                    return score_mismatch(row, key, value)
    return None


def _check_metrics(registry, run: Run, rows: list, verdict: Verdict, config: RecordedConfig) -> None:
    per_seed = run.record.metrics.per_seed
    aggregate = run.record.metrics.aggregate
    mismatch = _scores_problem(run, rows, config)
    if mismatch:
        verdict.problems.append(mismatch)
        return
    # the built-in classification kind scores the stored label itself (no metric_input), and its scores were
    # just found to be its labels', so its label metrics read exactly the samples' gold and prediction; other
    # kinds may map answers before scoring
    labels_exact = run.record.task.kind == "classification"
    for metric in sorted(aggregate):
        recorded = [per_seed.get(str(seed), {}).get(metric) for seed in run.record.seeds]
        problem = _aggregate_problem(metric, aggregate[metric].as_json(), recorded)
        if problem:
            verdict.problems.append(problem)
            continue
        rebuilt = seed_values(run, rows, metric, registry, config)
        if rebuilt is None:
            verdict.unchecked.append(metric)
            continue
        values, exact = rebuilt
        exact = exact or (metric in _LABEL_METRICS and labels_exact)
        wrong = [(seed, r, v) for seed, r, v in zip(run.record.seeds, recorded, values)
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
        record = v.run.record
        files = json.dumps(record.data_files, sort_keys=True)  # a minimal record has none
        test = record.split("test")
        key = (v.run.record.task.name, record.task.config_hash, files, test.ids_sha256 if test else None, v.run.record.n_items)
        groups.setdefault(key, []).append(v)
    for group in groups.values():
        if len({v.golds for v in group}) < 2:
            continue
        recorded = {v.golds for v in group if _recorded(v)}
        if recorded:
            reference = next(iter(recorded)) if len(recorded) == 1 else None
        else:
            counts: dict[str | None, int] = {}
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
    test = verdict.run.record.split("test")
    return test is not None and test.golds_sha256 is not None
