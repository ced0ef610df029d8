"""The Python API: :func:`evaluate` runs tasks × models, :func:`compare` tests stored runs against each other.

``metabench run`` and ``metabench compare`` call these same functions, so a script and the command line
get the same validation, the same launchers and the same run folders. Both return typed dataclasses built
from what the run folders hold (results.json), so a result read back from disk and one just computed look
alike. Nothing heavy is imported here: torch and transformers load only when a job's model needs them.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import environ
from .errors import MetabenchError
from .run_record import RunRecord
from .run_values import Names, joined, listed, seed_list

#: What ``tasks``/``models``/``runs`` accept: one value or several.
PathLike = str | os.PathLike


@dataclass(frozen=True)
class MetricValue:
    """A metric over a job's seeds: the mean, the sample standard deviation and the number of seeds."""

    mean: float | None
    std: float | None
    n: int

    def __str__(self) -> str:
        from .report.summary import format_metric

        return format_metric({"mean": self.mean, "std": self.std, "n": self.n})


@dataclass
class TaskResult:
    """One (task, model) job of an evaluation.

    ``status`` is ``ok``, ``skipped`` (the model cannot serve the task: ``reason`` says why) or ``failed``
    (``message`` says why). For an ok job, ``metrics`` holds mean ± std over the seeds, ``per_seed`` each
    seed's values, ``run_dir`` the run folder (results.json + samples.jsonl, what ``compare`` reads) and
    ``partial`` whether the run scored only part of the test split (``RunRecord.partial``: a ``limit`` at or
    above the split's size keeps every item, so it is not; label a partial run's numbers wherever they appear).
    ``record`` is the run's results.json as a typed :class:`metabench.run_record.RunRecord`
    (docs/results-format.md), ``results`` the same as plain JSON.
    """

    task: str
    model: str
    status: str
    run_dir: Path | None = None
    seeds: list[int] = field(default_factory=list)
    primary_metric: str | None = None
    metrics: dict[str, MetricValue] = field(default_factory=dict)
    per_seed: dict[int, dict[str, float]] = field(default_factory=dict)
    n_items: int = 0
    partial: bool = False
    message: str = ""
    reason: str = ""
    hint: str = ""
    results: dict | None = field(default=None, repr=False)
    record: RunRecord | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def score(self) -> MetricValue | None:
        """The task's primary metric (None unless the job is ok)."""
        return self.metrics.get(self.primary_metric) if self.primary_metric else None

    @classmethod
    def from_outcome(cls, outcome) -> TaskResult:
        """From a runner outcome (:class:`metabench.launch.outcomes.JobOutcome`)."""
        result = cls(outcome.task, outcome.model, outcome.status, outcome.run_dir, message=outcome.message,
                     reason=outcome.reason, hint=outcome.hint)
        if outcome.record is not None:
            result._fill(outcome.record)
        return result

    @classmethod
    def from_run(cls, run) -> TaskResult:
        """From a stored run (:class:`metabench.runs.stored.Run`)."""
        result = cls(run.record.task.name, run.record.model.spec, "ok", run.path)
        result._fill(run.record)
        return result

    def _fill(self, record: RunRecord) -> None:
        self.results, self.record = record.raw, record
        self.seeds, self.primary_metric, self.n_items = list(record.seeds), record.task.primary_metric, record.n_items
        self.partial = record.partial  # partial_runs' one rule: --limit 10000 on a 500-item split is not partial
        self.metrics = {name: MetricValue(a.mean, a.std, a.n) for name, a in record.metrics.aggregate.items()}
        self.per_seed = {int(seed): dict(values) for seed, values in record.metrics.per_seed.items()}


@dataclass
class Evaluation:
    """What :func:`evaluate` returns: one :class:`TaskResult` per (task, model) job, in run order."""

    results: list[TaskResult]
    outcomes: list = field(default_factory=list, repr=False)  # the runner's own outcomes (the CLI's tables)

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def get(self, task: str, model: str) -> TaskResult:
        """The result of one job; a clear error naming the jobs there are when it is not one of them."""
        for result in self.results:
            if result.task == task and result.model == model:
                return result
        jobs = ", ".join(f"({r.task}, {r.model})" for r in self.results[:6]) or "none"
        raise MetabenchError(f"no job ({task}, {model}) in this evaluation", hint=f"its jobs: {jobs}")

    @property
    def failed(self) -> list[TaskResult]:
        return [r for r in self.results if r.status == "failed"]

    @property
    def run_dirs(self) -> list[Path]:
        """The run folders written, for :func:`compare`."""
        return [r.run_dir for r in self.results if r.ok and r.run_dir is not None]


def evaluate(
    tasks: Names,
    models: Names,
    *,
    seeds: int | Sequence[int] | None = None,
    limit: int | None = None,
    output_dir: PathLike | None = None,
    launcher: str = "auto",
    data_dir: PathLike | None = None,
    use_cache: bool = True,
    progress: bool | str = True,
    workers: int | None = None,
    ray_address: str | None = None,
    overwrite: bool = False,
    repeat: int = 1,
    log_responses: bool = False,
    registry=None,
) -> Evaluation:
    """Run ``models`` on ``tasks`` and write a run folder per job, as ``metabench run`` does.

    ``tasks``: names, globs, tags or groups (a list, or one comma-separated string; ``"all"``). ``models``:
    ``--model`` specs (``"majority"``, ``"hf:minilm-l6"``). ``seeds``: a count (``3`` = seeds 0, 1, 2) or a
    list; default the task's protocol. ``limit``: the first N test items only (the run is then partial).
    ``output_dir``: where run folders go (default ``runs``). ``launcher``: ``auto``, ``serial``,
    ``processes`` or ``ray`` (docs/scaling.md). ``repeat``: draws per item and seed of a sampled decoder, the
    majority answer scored (docs/decoders.md, Repeated draws). ``log_responses``: keep each generated answer's
    text in samples.jsonl (``response``; off by default: a model's text can quote the dataset). ``progress``:
    ``True`` shows bars where stderr is a terminal and a plain line every 30 s elsewhere (a log, CI), ``False``
    nothing, ``"bars"`` or ``"lines"`` that style (:mod:`metabench.progress`). A job that fails or is skipped does not raise: its
    :class:`TaskResult` says why; bad usage (an unknown task or model, a bad option) raises
    :class:`metabench.errors.MetabenchError`.
    """
    from .jobs import RunOptions
    from .runner import run

    registry = checked_registry(registry)
    options = RunOptions(
        output_dir=output_dir if output_dir is not None else "runs", seeds=seed_list(seeds), limit=limit,
        data_dir=data_dir,
        use_cache=use_cache, progress=progress, launcher=launcher, ray_address=ray_address, workers=workers,
        overwrite=overwrite, repeat=repeat, log_responses=log_responses,
    )
    with library_bars(shown=options.progress_style == "bars"):  # lines: the libraries' bars would redraw in a log
        outcomes = run(registry, joined(tasks, "tasks"), listed(models, "models"), options)
    return Evaluation([TaskResult.from_outcome(o) for o in outcomes], outcomes)


@contextlib.contextmanager
def library_bars(shown: bool):
    """``progress=False`` also for the libraries' own bars (transformers' weight loading, hub downloads,
    lm-eval): they read these switches when first imported, which has not happened yet (heavy libraries are
    imported lazily). The environment is restored afterwards, so the caller is not left silenced."""
    switches = {} if shown else dict.fromkeys(("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS"), "1")
    with environ.variables(switches):
        if not shown and sys.modules.get("transformers") is not None:  # None: blocked, as an import that failed
            sys.modules["transformers"].utils.logging.disable_progress_bar()
        yield


@dataclass
class ComparisonReport:
    """What :func:`compare` returns: the paired tests (:class:`metabench.report.compare.Comparison`: Δ, test,
    p, p adjusted by ``correction``, CI), the notes on what could not be paired, and the group means."""

    comparisons: list
    notes: list[str]
    correction: str
    groups: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"correction": self.correction, "comparisons": [c.as_dict() for c in self.comparisons],
                "groups": self.groups, "notes": self.notes}


def compare(
    runs: PathLike | Evaluation | TaskResult | Iterable,
    *,
    baseline: str | None = None,
    metrics: Names | None = None,
    test: str | None = None,
    correction: str = "holm",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    power: float = 0.8,
    unit: str = "auto",
    registry=None,
) -> ComparisonReport:
    """Paired significance tests between stored runs of the same task, as ``metabench compare`` does.

    ``runs``: run folders, results.json files or output folders (``str`` or ``Path``), an :class:`Evaluation`
    or :class:`TaskResult`, or a list of them. Each task's runs are tested against its ``baseline`` run (a
    model, folder name or path; default the first): McNemar for accuracy, a paired bootstrap for F1, a paired
    t-test across seeds when both runs have 2+ seeds; ``test`` forces one (``metabench ls tests``).
    p-values are adjusted over all comparisons (``holm``, ``bh`` or ``none``); each comparison's minimum
    detectable effect is computed at ``alpha`` and ``power``. ``unit``: what item-level tests resample (``auto``:
    the clusters the task declares; ``item``; ``token``: the words of a tagging task's token metrics).
    """
    from .report.compare import CORRECTIONS, Options, adjust, compare_runs
    from .report.groups import compare_groups
    from .runs.stored import find_runs

    registry = checked_registry(registry)
    if correction not in CORRECTIONS:
        raise MetabenchError(f"unknown correction {correction!r}", hint=f"corrections: {', '.join(CORRECTIONS)}")
    options = Options(test=test, confidence=confidence, n_resamples=resamples, seed=seed, alpha=alpha, power=power,
                      unit=unit)
    found = find_runs(run_paths(runs))
    comparisons, notes = compare_runs(registry, found, metrics=None if metrics is None else listed(metrics, "metrics"),
                                      baseline=baseline, options=options)
    adjust(comparisons, correction)
    groups = compare_groups([r.record for r in found if not r.partial], baseline, confidence)
    return ComparisonReport(comparisons, notes, correction, groups)


def checked_registry(registry):
    """``registry=`` of :func:`evaluate` and :func:`compare`: None (the installed plugins, loaded here) or a
    :class:`metabench.registry.Registry`; anything else (a name, a dict, the plugins module, ``plugins.load``
    itself) is a clear error before any work, not an AttributeError from deep inside the run."""
    from .registry import Registry

    if registry is None:
        from .plugins import default_registry

        return default_registry()
    if not isinstance(registry, Registry):
        raise MetabenchError(f"registry: expected a metabench Registry (what metabench.plugins.load() returns), got "
                             f"{type(registry).__name__} {_short(registry)}",
                             hint="leave registry out to use the installed plugins, or pass "
                             "metabench.plugins.load(extra_plugins=(my_plugin,))")
    return registry


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def run_paths(runs) -> list[Path]:
    """Folders from whatever names runs: a path (str or Path), a result, an evaluation, or a list of them."""
    if isinstance(runs, (str, os.PathLike)):
        return [Path(runs)]
    from .runs.stored import Run

    if isinstance(runs, Run):
        return [runs.path]
    if isinstance(runs, TaskResult):
        if runs.run_dir is None:
            raise MetabenchError(f"({runs.task}, {runs.model}) has no run folder: it {runs.status}",
                                 hint=runs.message or runs.reason or "compare only jobs that ran")
        return [runs.run_dir]
    if isinstance(runs, Evaluation):
        return runs.run_dirs
    if isinstance(runs, Iterable):
        return [path for run in runs for path in run_paths(run)]
    raise MetabenchError(f"runs: expected run folders (str or Path), an Evaluation or TaskResults, got {type(runs).__name__}")
