"""What a run would do, before it does it: ``metabench run --dry-run``.

`--tasks all --model hf:roberta-base` is hundreds of fine-tunes of up to five seeds each; a user should see that
before the first one starts. The plan is made from what planning already has — the task files, the model's
adapter class and arguments, the datasets' declared counts, finished run folders — so no model is loaded, no
data file is read and nothing is written. Per job it says whether it would run, is already done (a finished run
in the output folder for the same task config and model, or a remembered job in the answer cache) or would be
skipped and why; what it fine-tunes (seeds × epochs × training items); and what that costs: training examples
(items × epochs × seeds) and an upper bound on the tokens the model reads (every input at ``max_length``), with
the seconds per training example measured by earlier runs of the same model where there are some.
"""

from __future__ import annotations

import glob
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from . import answering, job_memo
from .cache import cache_root
from .config.index import MODEL_SPECIFIC, LoadedTask
from .config.validate import resolve_split, split_values
from .errors import ExplainedError, MetabenchError, UnsupportedError
from .jobs import Job
from .launch.execute import job_seeds, preflight
from .models.spec import ModelSpec
from .partial_runs import cutting_limit
from .registry import Registry
from .run_record import RunRecord
from .store import COMMITTED_RUNS, check_run_dir, read_record, run_name

#: A run with more fine-tunes (seeds × tasks) than this asks before it starts, in an interactive terminal.
CONFIRM_ABOVE = 20


@dataclass
class PlannedJob:
    """One (task, model) as planned: its status and, for a job that runs, its size."""

    task: str
    model: str
    status: str  # run | done | skipped | failed
    reason: str = ""
    seeds: int = 0
    epochs: float | None = None  # fine-tuning epochs; None: the model trains nothing
    train_items: int | None = None  # None: not declared by the dataset (known once loaded)
    validation_items: int | None = None
    test_items: int | None = None
    max_length: int | None = None
    run_dir: Path | None = None  # where its run folder is (or would be) written
    family: str = ""  # the adapter's: a baseline reads no tokens worth bounding
    draws: int = 1  # --repeat: the test items are answered this many times per seed
    #: an API model's prompts per item and token bounds (``request_budget``: metabench.models.openai_decoder)
    api: object | None = None
    way: str = ""  # a decoder's: scored, generated or fine-tuned (metabench.answering)

    @property
    def fine_tunes(self) -> int:
        return self.seeds if self.status == "run" and self.epochs else 0

    @property
    def training_examples(self) -> float | None:
        """Items × epochs × seeds: what fine-tuning costs, in examples seen."""
        if not self.fine_tunes:
            return 0
        return None if self.train_items is None else self.fine_tunes * self.epochs * self.train_items

    @property
    def forward_items(self) -> float | None:
        """Inputs the model reads: training examples, validation after each epoch, the test items per seed."""
        if self.status != "run":
            return 0
        validation = (self.validation_items or 0) * (self.epochs or 0) * self.seeds
        training = self.training_examples
        return None if training is None or self.test_items is None else training + validation + self.test_answers

    @property
    def test_answers(self) -> int | None:
        """Answers the test items take: items × seeds × draws (``--repeat``)."""
        return self.test_items and self.test_items * self.seeds * self.draws

    @property
    def api_requests(self) -> int | None:
        """Prompts an API model would be sent: test answers × prompts per item (before the answer cache)."""
        per_item = self.api.requests_per_item if self.api is not None else None
        answers = self.test_answers
        return None if per_item is None or answers is None else answers * per_item

    @property
    def api_tokens(self) -> tuple[int | None, int | None]:
        """Bounds on an API model's tokens in and out: every prompt at max_length, every answer at its limit."""
        requests = self.api_requests
        if requests is None:
            return None, None
        out = self.api.tokens_out_per_request
        return requests * self.api.tokens_in_per_request, None if out is None else requests * out

    @property
    def token_bound(self) -> float | None:
        if self.api is not None:
            tokens_in, tokens_out = self.api_tokens
            return None if tokens_in is None or tokens_out is None else tokens_in + tokens_out
        items = self.forward_items
        return None if items is None or self.max_length is None else items * self.max_length


@dataclass
class Rate:
    """Seconds per training example (items × epochs), measured by finished fine-tunes of one model."""

    seconds_per_example: float
    fine_tunes: int
    source: Path


@dataclass
class RunPlan:
    jobs: list[PlannedJob]
    rates: dict[str, Rate]
    #: Tasks `all` left out because their data was built for one model (tag model_specific).
    left_out: list[str] = field(default_factory=list)
    #: The folders of finished runs the sizes and rates were read from, in the order looked at.
    runs_read: list[Path] = field(default_factory=list)

    @property
    def fine_tunes(self) -> int:
        return sum(job.fine_tunes for job in self.jobs)


def plan_jobs(registry: Registry, jobs: list[Job], *, cache_path: Path | None, runs_from: Path | None) -> RunPlan:
    """The plan of ``jobs`` (from :func:`metabench.runner.plan`). ``cache_path``: the answer cache whose
    remembered jobs count as done (None: not looked at); ``runs_from``: a folder of finished runs to measure
    the training speed from and to read split sizes the datasets do not declare from (None: the output
    folder, then the committed runs when run from the repository root, so a fresh clone's plan has both)."""
    folders = [runs_from] if runs_from is not None else _run_folders(jobs[0].options.output_dir) if jobs else []
    planned = [_plan_one(registry, job, cache_path, folders) for job in jobs]
    models = {job.model.text: job.model for job in jobs}
    rates = {text: rate for text, spec in sorted(models.items())
             if (rate := next(filter(None, (measured_rate(folder, spec) for folder in folders)), None))}
    return RunPlan(planned, rates, runs_read=folders)


def _run_folders(output_dir: Path) -> list[Path]:
    """The output folder, then the committed runs (when they are there and are not the output folder)."""
    folders = [Path(output_dir)]
    if COMMITTED_RUNS.is_dir() and COMMITTED_RUNS.resolve() != Path(output_dir).resolve():
        folders.append(COMMITTED_RUNS)
    return folders


def _plan_one(registry: Registry, job: Job, cache_path: Path | None, runs: list[Path]) -> PlannedJob:
    task, spec, options = job.task, job.model, job.options
    out = PlannedJob(task.name, spec.text, "run")
    try:
        adapter, kind, seeds = preflight(registry, job)
    except UnsupportedError as exc:
        out.status, out.reason = "skipped", exc.reason or exc.message
        return out
    except MetabenchError as exc:
        out.status, out.reason = "failed", exc.message
        return out
    out.seeds, out.family, out.draws = len(seeds), adapter.family, options.repeat
    budget = getattr(adapter, "request_budget", None)  # an API model: what it would be sent
    out.api = budget(kind) if budget is not None else None
    out.way = answering.way_of(kind, adapter)
    recorded = next(filter(None, (_recorded_sizes(folder, task) for folder in runs)), {})
    items = lambda role: _items(registry, task, role) or recorded.get(role)  # noqa: E731
    out.test_items = items("test")
    limited = cutting_limit(options.limit, out.test_items)  # partial_runs' rule, as the run names its folder
    out.test_items = limited or out.test_items
    finetune = getattr(getattr(task.config.protocol, adapter.family, None), "finetune", None)
    if adapter.needs_training and finetune is not None:  # an encoder, or a decoder fine-tuned as a tagger
        out.epochs = float(getattr(adapter, "recipe", {}).get("epochs", finetune.epochs))
        out.max_length = getattr(adapter, "max_length", None) or finetune.max_length
        out.train_items = items("train")
        cap = getattr(adapter, "max_train", None)
        if cap is not None and out.train_items is not None:
            out.train_items = min(out.train_items, cap)
        out.validation_items = items("validation") if finetune.select_metric else 0
    protocol_seeds = job_seeds(task, adapter, None, kind.protocol)
    out.run_dir = options.output_dir / task.name / run_name(spec.slug, seeds, protocol_seeds, limited, options.repeat)
    try:  # a file where its task or run folder goes fails the job when it runs: the plan says so
        check_run_dir(out.run_dir)
    except MetabenchError as exc:
        out.status, out.reason = "failed", exc.message
        return out
    if _finished(out.run_dir, job) or _remembered(registry, job, adapter, seeds, cache_path):
        out.status, out.reason = "done", "finished run found"
    return out


def _items(registry: Registry, task: LoadedTask, role: str) -> int | None:
    """A split role's item count from its datasets' declared counts (``split`` or ``split:arg=value,...``)."""
    total = 0
    for value in split_values(getattr(task.config.splits, role)):
        dataset, split, args = resolve_split(task.config, value)
        counts = registry.resolve("dataset", dataset).counts.get("items", {})
        key = split + (":" + ",".join(f"{k}={v}" for k, v in sorted(args.items())) if args else "")
        if key not in counts:
            return None
        total += counts[key]
    return total


def _recorded_sizes(runs: Path, task: LoadedTask) -> dict[str, int]:
    """Split sizes recorded by a finished run of the same task config (any model): a dataset with folds or
    derived cells declares no counts, and its runs know them."""
    for path in sorted((runs / task.name).glob("*/results.json")):
        record = _read_results(path)
        if record and record.task.config_hash == task.hash:
            splits = (record.data.splits if record.data is not None else None) or {}
            sizes = {role: split.n for role, split in splits.items()}
            return {**sizes, "test": record.n_test_items if record.n_test_items is not None else sizes.get("test")}
    return {}


def _finished(folder: Path, job: Job) -> bool:
    """A finished run of this task config and model spec where this run would write."""
    record = _read_results(folder / "results.json")
    return bool(record) and record.task.config_hash == job.task.hash and record.model.spec == job.model.text


def _remembered(registry: Registry, job: Job, adapter, seeds: list[int], cache_path: Path | None) -> bool:
    """Whether the answer cache remembers this job whole. Only for a model whose fingerprint needs no model
    files (the baselines): an encoder's is a hash of its weights, which a registered model may first have to
    build, and a dry run builds nothing."""
    if cache_path is None or adapter.family != "baseline" or not cache_path.is_file():
        return False
    key = job_memo.key(registry, job, adapter.task_fingerprint(None), adapter.family, seeds)
    if key is None:
        return False
    try:
        with sqlite3.connect(f"file:{cache_path}?mode=ro", uri=True) as db:  # read-only: creates nothing
            return db.execute("SELECT 1 FROM runs WHERE key = ?", (key,)).fetchone() is not None
    except sqlite3.Error:
        return False  # a cache in use or damaged: the run finds out, and says so


def _read_results(path: Path) -> RunRecord | None:
    """A run's results.json as its record, or None when there is none or it cannot be read: a plan only counts
    what it can read, and the run itself names a damaged file."""
    try:
        return read_record(path)
    except (OSError, ValueError, ExplainedError):
        return None


def measured_rate(folder: Path, spec: ModelSpec) -> Rate | None:
    """Seconds per training example of the model over the fine-tunes recorded in ``folder``'s runs of it (same
    spec). A seed loaded from the checkpoint cache carries the record its training wrote, so it counts too, once
    per checkpoint: runs that share a checkpoint (re-assembled from cached seeds) do not count it twice."""
    seconds = examples = 0.0
    count, seen = 0, set()
    for path in sorted(folder.glob(f"*/{glob.escape(spec.slug)}*/results.json")):
        record = _read_results(path)
        if not record or record.model.spec != spec.text:
            continue
        train = record.split("train")
        n_train, cap = train.n if train is not None else None, record.model.args.get("max_train")
        if n_train and cap and str(cap).isdigit():  # a max_train= run trained on at most that many
            n_train = min(n_train, int(cap))
        for fit in (record.model.info.checkpoints or {}).values():
            epochs = len(fit.get("history") or [])
            key = fit.get("key")
            if (key is not None and key in seen) or not n_train or not epochs or not fit.get("fit_s"):
                continue
            seen.add(key)
            seconds, examples, count = seconds + fit["fit_s"], examples + n_train * epochs, count + 1
    return Rate(seconds / examples, count, folder) if examples else None


def plan_lines(plan: RunPlan) -> list[str]:
    """The plan as ``--dry-run`` prints it: the jobs that would run (or are done), the skipped ones by reason,
    then the cost."""
    from tabulate import tabulate

    jobs = plan.jobs
    active = [j for j in jobs if j.status in ("run", "done")]
    counts = {status: sum(j.status == status for j in jobs) for status in ("run", "done", "skipped", "failed")}
    n_tasks, n_models = len(dict.fromkeys(j.task for j in jobs)), len(dict.fromkeys(j.model for j in jobs))
    lines = [f"plan: {n_tasks} task(s) × {n_models} model(s) = {len(jobs)} job(s): {counts['run']} to run "
             f"({plan.fine_tunes} fine-tune(s)), {counts['done']} done already, {counts['skipped']} skipped, "
             f"{counts['failed']} failing", ""]
    if active:
        rows = [[j.task, j.model, f"{j.status} ({j.way})" if j.way else j.status, j.seeds, _finetune(j), _number(j.training_examples),
                 _number(j.test_answers), _tokens(j)] for j in active]
        draws = max(j.draws for j in active)
        answers = "test items × seeds" + (f" × {draws} draws (--repeat)" if draws > 1 else "")
        lines += tabulate(rows, headers=["task", "model", "status", "seeds", "fine-tune (seeds × epochs × train items)",
                                         "training examples", answers, "tokens ≤"],
                          disable_numparse=True).split("\n")
        lines += unknown_lines(plan, active)
    for status in ("skipped", "failed"):
        by_reason: dict[str, list[str]] = {}
        for job in (j for j in jobs if j.status == status):
            by_reason.setdefault(job.reason, []).append(job.task if n_models == 1 else f"{job.task} with {job.model}")
        for reason, names in sorted(by_reason.items()):
            lines += ["", f"{status} ({reason}): {len(names)} job(s): {', '.join(names)}"]
    if plan.left_out:
        lines += ["", f"left out of all: {len(plan.left_out)} task(s) whose data was built for one model (tag "
                  f"{MODEL_SPECIFIC}; name them to run them): {', '.join(plan.left_out)}"]
    lines += ["", *cost_lines(plan), "", "a dry run: no model loaded, no data read, nothing written"]
    return lines


def unknown_lines(plan: RunPlan, active: list[PlannedJob]) -> list[str]:
    """Why a cell says ``?``: a plan that cannot know a number says so instead of leaving a bare mark."""
    sizes = sum(j.test_items is None or (j.fine_tunes > 0 and j.train_items is None) for j in active)
    prompts = sum(_tokens(j) == "?" and j.test_items is not None and (not j.fine_tunes or j.train_items is not None)
                  for j in active)
    read = " or ".join(f"{folder}/" for folder in plan.runs_read) or "no runs folder"
    lines = []
    if sizes:
        lines.append(f"?: {sizes} job(s) whose split sizes are unknown until the data is read: the dataset declares "
                     f"no count for the split and no finished run of the task in {read} records one")
    if prompts:
        lines.append(f"tokens ?: {prompts} job(s) of a model without a max_length bound (a prompted model's input "
                     "length is known once its prompts are rendered, which a dry run does not do)")
    return [""] + lines if lines else []


def cost_lines(plan: RunPlan) -> list[str]:
    running = [j for j in plan.jobs if j.status == "run"]
    examples = [j.training_examples for j in running]
    tokens = [j.token_bound for j in running if j.fine_tunes]
    unknown = sum(e is None for e in examples)
    known = sum(e for e in examples if e is not None)
    lines = [f"cost: {plan.fine_tunes} fine-tune(s); {_number(known)} training examples (train items × epochs × seeds)"
             + (f", plus {unknown} job(s) whose training split size the dataset does not declare (known once loaded)"
                if unknown else "")
             + (f"; ≤ {_number(sum(t for t in tokens if t is not None))} tokens through the model (every input at "
                "max_length)" if tokens else "")]
    for model, rate in plan.rates.items():
        mine = sum(e for j in running if j.model == model and (e := j.training_examples) is not None)
        lines.append(f"measured by {rate.fine_tunes} fine-tune(s) of {model} in {rate.source}, on the machine(s) that "
                     f"ran them: {rate.seconds_per_example * 1000:.1f} ms per training example → ≈ "
                     f"{_duration(mine * rate.seconds_per_example)} of fine-tuning for the jobs above whose size is known")
    trained = {j.model for j in running if j.fine_tunes}
    read = " or ".join(f"{folder}/" for folder in plan.runs_read) or "the runs folder"
    for model in sorted(trained - set(plan.rates)):
        lines.append(f"no time estimate for {model}: no finished fine-tune of it in {read} to measure its speed from "
                     "(a run of one task, e.g. with --limit, gives one)")
    return lines + api_lines(running)


def api_lines(running: list[PlannedJob]) -> list[str]:
    """Per API model: the prompts it would be sent, bounds on their tokens and, given its prices (model
    arguments price_in, price_out: per million tokens), on what they cost."""
    by_model: dict[str, list[PlannedJob]] = {}
    for job in running:
        if job.api is not None:
            by_model.setdefault(job.model, []).append(job)
    lines = []
    for model, jobs in by_model.items():
        requests = [j.api_requests for j in jobs]
        tokens = [j.api_tokens for j in jobs]
        known_in = sum(t_in for t_in, _ in tokens if t_in is not None)
        known_out = sum(t_out for _, t_out in tokens if t_out is not None)
        unknown = sum(r is None or t_out is None for r, (_, t_out) in zip(requests, tokens))
        budget = jobs[0].api
        if unknown == len(jobs):
            lines.append(f"API {model}: requests and tokens known once the data is read ({unknown} job(s) whose test "
                         "split size or prompts per item the plan cannot know; --limit N bounds them)")
            continue
        line = (f"API {model}: {_number(sum(r for r in requests if r is not None))} request(s) (test items × seeds × "
                f"prompts per item; answers in the cache are not sent again); ≤ {_number(known_in)} tokens in (every "
                f"prompt at max_length={budget.tokens_in_per_request}) and ≤ {_number(known_out)} out (every answer "
                "at its token limit)")
        if unknown:
            line += f", plus {unknown} job(s) whose size is known once the data is read"
        if budget.price_in is None and budget.price_out is None:
            line += "; add price_in=,price_out= (per million tokens) to the model's arguments for a cost bound"
        else:
            cost = (known_in * (budget.price_in or 0) + known_out * (budget.price_out or 0)) / 1e6
            line += (f"; cost ≤ {cost:,.4f} at price_in={budget.price_in or 0:g}, price_out={budget.price_out or 0:g} "
                     "per million tokens")
        lines.append(line)
    return lines


def _tokens(job: PlannedJob) -> str:
    return "—" if job.family == "baseline" else _number(job.token_bound)


def _finetune(job: PlannedJob) -> str:
    if not job.fine_tunes:
        return "—"
    return f"{job.seeds} × {job.epochs:g} × {_number(job.train_items)}"


def _number(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:,.0f}"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def plan_run(tasks, models, *, seeds=None, limit=None, output_dir=None, data_dir=None, use_cache: bool = True,
             registry=None, runs_from=None, repeat: int = 1, **settings) -> RunPlan:
    """The plan of :func:`metabench.evaluate` with the same arguments (``settings``: its launcher, progress,
    workers... which do not change what runs); ``runs_from``: the finished runs to measure the training speed
    and read undeclared split sizes from (default: the output folder)."""
    from .cache import read_only

    with read_only():  # a plan writes nothing: not even the cache's verified-files record or task index
        return _plan_run(tasks, models, seeds=seeds, limit=limit, output_dir=output_dir, data_dir=data_dir,
                         use_cache=use_cache, registry=registry, runs_from=runs_from, repeat=repeat)


def _plan_run(tasks, models, *, seeds, limit, output_dir, data_dir, use_cache, registry, runs_from, repeat) -> RunPlan:
    from .run_values import joined, listed, seed_list
    from .config.index import TaskIndex
    from .jobs import RunOptions
    from .runner import check_options, plan, warn_superseded

    options = RunOptions(output_dir=output_dir if output_dir is not None else "runs", seeds=seed_list(seeds),
                         limit=limit, data_dir=data_dir, use_cache=use_cache, repeat=repeat)
    check_options(options)
    if registry is None:
        from .plugins import default_registry

        registry = default_registry()
    index, selection = TaskIndex(registry), joined(tasks, "tasks")
    jobs = plan(index, selection, listed(models, "models"), options)
    warn_superseded(jobs)
    cache_path = cache_root() / "answers.sqlite" if use_cache else None
    planned = plan_jobs(registry, jobs, cache_path=cache_path, runs_from=None if runs_from is None else Path(runs_from))
    if "all" in (part.strip() for part in selection.split(",")):
        chosen = {job.task.name for job in jobs}
        planned.left_out = [name for name in index.tags.get(MODEL_SPECIFIC, []) if name not in chosen]
    return planned
