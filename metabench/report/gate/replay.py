"""How often `gate` fails a candidate that is no worse: null comparisons replayed through its Python entry point.

A CI gate runs on every change, so its false-fail rate is what users meet most. Each replay scores one
checkpoint twice: a committed MOH-X fold run is copied to a baseline and a candidate, and each copy's
predictions are disturbed independently, item by item and seed by seed, as two scorings of one checkpoint
differ: *order noise* (batch order and padding flip a near-tie item's label now and then, here 2 % of items)
for the multi-seed encoder runs, which the gate tests with a paired t over seeds, and *sampling noise* (a sampled
decoder's answer redrawn, here 10 % of items get a label drawn at random) for the single-seed runs, which it
tests with a paired bootstrap. Both copies come from the same process, so the candidate is equal to the
baseline in expectation, and every FAIL (exit status 1) is a false fail. A candidate identical to the baseline
is replayed too. The copies are rescored with the task's registered metrics and written as real run folders
(the gate verifies every run it reads), then gated with the defaults (tolerance 0, alpha 0.005, Holm) and again
with ``--alpha 0.05``, the default before: at tolerance 0 a null check fails whenever its drop is significant,
about alpha / 2 of the time by construction, which is why the gate's default level is 0.005 (`gate.ALPHA`).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...run_record import Metrics, MetricSummary, RunRecord
from ...store import read_samples, write_run
from . import gate
from ...runs.stored import Run, find_runs

#: (scenario, run folder under each MOH-X fold, share of items disturbed per seed, how); the scenario names the
#: runs' own seed count (`replay` fills it in)
SCENARIOS = (
    ("order noise, {seeds} (paired t)", "hf_minilm-l6", 0.02, "flip"),
    ("sampling noise, {seeds} (bootstrap)", "lookup", 0.10, "redraw"),
)
FOLDS = "moh_x_cv_fold*"
#: the gate's default level before issue 38
BEFORE_ALPHA = 0.05


@dataclass(frozen=True)
class ReplayResult:
    """False fails (exit status 1) and inconclusive verdicts (exit status 3) of ``replays`` null gates with the
    defaults, and the false fails of the same comparisons gated at ``BEFORE_ALPHA``. ``codes`` holds each gate's
    exit status in replay order, with the defaults and at ``BEFORE_ALPHA`` ("30" for 3 then 0): the counts are
    sums over it, and a check can replay the first few gates alone and hold them to it (the draws are one stream
    per scenario, so a replay of k gates makes the first k of a longer one)."""

    scenario: str
    replays: int
    false_fails: int
    inconclusive: int
    false_fails_before: int
    codes: tuple[str, ...] = ()

    @classmethod
    def of(cls, scenario: str, codes: list[str]) -> "ReplayResult":
        return cls(scenario, len(codes), sum(c[0] == "1" for c in codes), sum(c[0] == "3" for c in codes),
                   sum(c[1] == "1" for c in codes), tuple(codes))

    def as_dict(self) -> dict:
        return {"scenario": self.scenario, "replays": self.replays, "false_fails": self.false_fails,
                "inconclusive": self.inconclusive, "false_fails_before": self.false_fails_before,
                "codes": " ".join(self.codes)}


def _disturbed(run: Run, samples: list[dict], rng: np.random.Generator, share: float, how: str,
               registry) -> tuple[RunRecord, list[dict]]:
    """The run's record and samples with ``share`` of its predictions disturbed at each seed, rescored."""
    labels = run.record.task.config.labels.names or []
    rows = [dict(row, scores=dict(row["scores"])) for row in samples]
    for row in rows:
        if rng.random() < share:
            if how == "flip":
                row["prediction"] = next(label for label in labels if label != row["prediction"])
            else:
                row["prediction"] = labels[int(rng.integers(len(labels)))]
            row["scores"]["correct"] = float(row["prediction"] == row["gold"])
    per_seed: dict[str, dict[str, float | None]] = {}
    for seed in run.record.seeds:
        golds = [r["gold"] for r in rows if int(r["seed"]) == seed]
        predictions = [r["prediction"] for r in rows if int(r["seed"]) == seed]
        per_seed[str(seed)] = {
            name: float(registry.resolve("metric", name)(golds, predictions, **args))
            for name, args in (((s, {}) if isinstance(s, str) else (s.name, s.args))
                               for s in run.record.task.config.metrics)}
    aggregate = {}
    for name in per_seed[str(run.record.seeds[0])]:
        values = np.array([per_seed[str(seed)][name] for seed in run.record.seeds])
        aggregate[name] = MetricSummary(mean=float(values.mean()),
                                        std=float(values.std(ddof=1)) if len(values) > 1 else 0.0, n=len(values))
    return run.record.evolve(metrics=Metrics(per_seed=per_seed, aggregate=aggregate)), rows


def replay(registry, root: Path, work: Path, *, replays: int, seed: int) -> list[ReplayResult]:
    """``replays`` null gates per scenario (folds taken in turn), and as many with an identical candidate."""
    out = []
    for position, (scenario, folder, share, how) in enumerate(SCENARIOS):
        runs = find_runs(sorted(p for p in root.glob(f"{FOLDS}/{folder}") if p.is_dir()))
        samples = [read_samples(run.path, run.record) for run in runs]
        rng = np.random.default_rng([seed, position])
        codes = []
        for number in range(replays):
            which = number % len(runs)
            sides = []
            for side in ("baseline", "candidate"):
                results, rows = _disturbed(runs[which], samples[which], rng, share, how, registry)
                target = work / side / runs[which].record.task.name / folder
                write_run(target, results, rows, overwrite=True, durable=False)
                sides.append(find_runs([target]))
            codes.append(_codes(registry, *sides))
        out.append(ReplayResult.of(scenario.format(seeds=_seeds(runs)), codes))
    identical = work / "identical"
    runs = find_runs(sorted(p for p in root.glob(f"{FOLDS}/{SCENARIOS[0][1]}") if p.is_dir()))
    codes = []
    for run in runs:
        copy = identical / run.record.task.name / run.path.name
        shutil.copytree(run.path, copy, dirs_exist_ok=True)
        codes.append(_codes(registry, [run], find_runs([copy])))
    out.append(ReplayResult.of(f"identical candidate, {_seeds(runs)}", codes))
    return out


def _codes(registry, baseline: list[Run], candidate: list[Run]) -> str:
    """The gate's exit status with the defaults and at ``BEFORE_ALPHA``, as two digits."""
    now = gate(registry, baseline, candidate).exit_code
    return f"{now}{gate(registry, baseline, candidate, alpha=BEFORE_ALPHA).exit_code}"


def _seeds(runs: list[Run]) -> str:
    count = len(runs[0].record.seeds)
    return f"{count} seed{'s' if count > 1 else ''}"

