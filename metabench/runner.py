"""Expanding tasks × models × seeds into jobs and running each: data → requests → answers → scores → run.

A job is one (task, model) (:class:`metabench.jobs.Job`; the task's data and kind come from
:func:`metabench.jobs.prepare`). For each seed the runner looks every test item up in the answer cache first;
the adapter is fitted (trained, for encoders) only if some item is still missing, then answers the missing
items batch by batch, each batch committed to the cache before the next starts. So an interrupted run
resumes where it stopped and a repeated run costs only the cache look-ups.

Computing a job (:func:`execute`: answers, scores, the results record) is apart from writing its run folder
(:func:`write`), so a launcher can compute on a worker and write on the driver.

Before any of that, a job whose inputs are unchanged since it last finished is taken whole from the job memo
(:mod:`metabench.job_memo`): no data loaded, nothing scored, the remembered run folder written again.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from tqdm.auto import tqdm

from . import job_memo
from .cache import AnswerCache, cache_root, item_key, job_key
from .config.index import LoadedTask, TaskIndex
from .connections import split_host_port
from .data.hashing import hashing_seconds
from .data.hf_source import register as register_source
from .errors import MetabenchError, NotBuiltError, UnsupportedError
from .extras import missing_extra
from .jobs import Job, RunOptions, TaskData, build_kind, prepare
from .models.base import Adapter
from .models.spec import build_adapter, check_model_spec, parse_model_spec
from .registry import Registry
from .requests import Training
from .store import (SCHEMA_VERSION, check_run_dir, check_writable, environment, golds_sha256, metabench_info, run_name,
                    samples_text, sync, write_run)
from .task_facts import task_facts
from .timings import Phases

@dataclass
class JobOutcome:
    task: str
    model: str
    status: str  # ok | skipped | failed
    run_dir: Path | None = None
    results: dict | None = None
    message: str = ""
    reason: str = ""  # short cause of a skip, counted in the run's closing line
    hint: str = ""


@dataclass
class JobResult:
    """What computing a job gives: the results record, the per-item samples (samples.jsonl's bytes) and the
    run folder they belong in."""

    job: Job
    results: dict
    samples: bytes
    run_dir: Path

    def payload(self) -> dict:
        """What a worker process sends back for the driver to write (the job itself the driver holds)."""
        return {"results": self.results, "samples": self.samples, "run_dir": str(self.run_dir)}

    @classmethod
    def from_payload(cls, job: Job, payload: dict) -> JobResult:
        return cls(job, payload["results"], payload["samples"], Path(payload["run_dir"]))


class RunReport(list):
    """The outcomes of a run (a list of :class:`JobOutcome`), with the task index the run selected from, so
    callers (the CLI's group means) need not read every task file again."""

    def __init__(self, outcomes: list[JobOutcome], index: TaskIndex):
        super().__init__(outcomes)
        self.index = index


def plan(index: TaskIndex, selection: str, models: list[str], options: RunOptions) -> list[Job]:
    """The jobs for a --tasks selection and the --model values, validated before anything runs."""
    specs = [parse_model_spec(m) for m in models]
    for spec in specs:
        check_model_spec(spec, index.registry)
    pairs = [(name, spec) for name in index.select(selection) for spec in specs]
    return [Job(index.load(name, defer_data=True), spec, options, (number, len(pairs)))
            for number, (name, spec) in enumerate(pairs, 1)]


LAUNCHERS = ("auto", "serial", "processes", "ray")
#: More worker processes than this is a typo (``--workers 10000``), not a machine: each one loads the plugins.
MAX_WORKERS = 1024


def check_options(options: RunOptions) -> None:
    """Bad parameters are one clear error before any work (``--limit -1`` once scored all but one item)."""
    if options.limit is not None and (isinstance(options.limit, bool) or options.limit < 1):
        raise MetabenchError(f"--limit {options.limit}: must be 1 or more",
                             hint="leave --limit out to evaluate the whole test split")
    if options.launcher not in LAUNCHERS:
        raise MetabenchError(f"unknown launcher {options.launcher!r}", hint=f"launchers: {', '.join(LAUNCHERS)}")
    if options.ray_address and options.launcher != "ray":
        raise MetabenchError("--ray-address only applies to --launcher ray", hint="add --launcher ray, or leave it out")
    if options.workers is not None and options.launcher not in ("processes", "ray"):
        raise MetabenchError("--workers only applies to --launcher processes or ray",
                             hint="add --launcher processes (this machine's cores) or ray, or leave it out")
    if options.workers is not None and not 1 <= options.workers <= MAX_WORKERS:
        raise MetabenchError(f"--workers {options.workers}: must be between 1 and {MAX_WORKERS}",
                             hint="leave --workers out to use every CPU, or give a count, e.g. --workers 2")
    if options.ray_address and options.ray_address != "auto":
        split_host_port(options.ray_address, option="--ray-address", example="127.0.0.1:6379 (or ray://HOST:10001)")


def run(registry: Registry, selection: str, models: list[str], options: RunOptions, launch=None) -> RunReport:
    """Plan and run the jobs. ``launch(registry, jobs, options) -> outcomes`` runs them elsewhere: the caller
    passes :func:`metabench.process_launcher.launch` for ``--launcher processes`` and ``auto``, and
    :func:`metabench.ray_launcher.launch` for ``ray`` (so this module never imports a launcher, which imports
    it back); ``None`` runs them here, one after another (:func:`run_serial`). Every launcher writes the same
    run folders."""
    check_options(options)
    if options.launcher != "serial" and launch is None:
        raise MetabenchError(f"launcher {options.launcher!r} was asked for but no launch function was given",
                             hint="pass launch=metabench.process_launcher.launch (processes, auto) or "
                             "metabench.ray_launcher.launch (ray) to runner.run, as the CLI does")
    index = TaskIndex(registry)
    jobs = plan(index, selection, models, options)
    check_writable(options.output_dir)
    if launch is not None:
        return RunReport(launch(registry, jobs, options), index)
    return RunReport(run_serial(registry, jobs, options), index)


def run_serial(registry: Registry, jobs: list[Job], options: RunOptions) -> list[JobOutcome]:
    """The jobs one after another in this process, sharing one answer cache."""
    cache = AnswerCache(cache_root() / "answers.sqlite" if options.use_cache else None)
    outcomes = []
    try:
        with collecting_less(), tqdm(total=len(jobs), desc="jobs", unit="job", disable=not options.progress) as bar:
            for job in jobs:
                outcomes.append(_run_guarded(registry, job, cache))
                bar.update()
    finally:
        cache.close()
        sync()  # the run folders were written without a flush each (store.write_run, durable=False)
    return outcomes


@contextmanager
def collecting_less():
    """Run with Python's cyclic garbage collector triggered 140x less often (it is only for reference cycles,
    which runs hardly make). A run holds ~10^6 parsed items and builds ~10^5 small objects per job (requests,
    per-item scores, samples); at the default threshold (700 allocations) every collection re-traverses the
    young ones and the older generations fill fast: a `--tasks all --model majority` with the data already
    parsed took 43.4 CPU s at the default and 31.9 s at a threshold of 200,000. Each job's loaded data is also
    frozen out of the collector's reach until the run ends (:func:`_freeze_loaded`)."""
    global _freezing
    saved, was_freezing = gc.get_threshold(), _freezing
    gc.set_threshold(100_000, 50, 100)
    _freezing = True
    try:
        yield
    finally:
        _freezing = was_freezing
        gc.set_threshold(*saved)
        if not was_freezing:
            gc.unfreeze()  # what the run froze is collectable again, as if nothing had been frozen


#: Inside :func:`collecting_less`: each job's loaded data is frozen out of the collector's reach.
_freezing = False


def _freeze_loaded() -> None:
    """Move every object alive now — the parsed slices and pools a job just loaded, kept for the jobs after
    it — out of the cyclic collector's generations (``gc.freeze``) until the run ends. They are acyclic
    and long-lived; every collection of the oldest generation re-traversed them (the first collection after
    a load was a quarter of the data-loading time of a run with the data already parsed). Garbage frozen
    with them is still freed by reference counting; only a reference cycle made before the freeze waits for
    the end of the run."""
    if _freezing:
        gc.freeze()


def _run_guarded(registry, job: Job, cache) -> JobOutcome:
    result = attempt(registry, job, cache)
    return result if isinstance(result, JobOutcome) else written(result)


def written(result: JobResult) -> JobOutcome:
    """Write a computed job's run folder; its outcome (failed when the store refuses to replace a run)."""
    try:
        write(result)
    except MetabenchError as exc:
        return JobOutcome(result.job.task.name, result.job.model.text, "failed", message=str(exc))
    return JobOutcome(result.job.task.name, result.job.model.text, "ok", result.run_dir, result.results)


def attempt(registry, job: Job, cache) -> JobResult | JobOutcome:
    """Compute a job (:func:`execute`); a skip or a failure is returned as the job's outcome."""
    task, spec = job.task.name, job.model.text
    try:
        return execute(registry, job, cache)
    except UnsupportedError as exc:
        return JobOutcome(task, spec, "skipped", message=exc.message, reason=exc.reason, hint=exc.hint or "")
    except NotBuiltError as exc:
        return JobOutcome(task, spec, "skipped", message=exc.message, reason=exc.reason, hint=exc.hint or "")
    except MetabenchError as exc:
        return JobOutcome(task, spec, "failed", message=str(exc))
    except ImportError as exc:  # an optional package the model needs: a fix to name, not a crash of the run
        error = missing_extra(exc, f"--model {spec}")
        if error is None:
            raise
        return JobOutcome(task, spec, "failed", message=str(error))


def compute_batch(registry, jobs: list[Job], cache) -> list[dict | JobOutcome]:
    """A parallel worker's share: each job computed (:func:`attempt`) and returned as the payload the driver
    writes, or as its outcome (skipped, failed). The files this worker verified are recorded now: a worker
    may exit without running atexit handlers."""
    from .data.resolve import flush_stamps  # noqa: PLC0415

    with collecting_less():
        results = [attempt(registry, job, cache) for job in jobs]
    flush_stamps()
    return [result if isinstance(result, JobOutcome) else result.payload() for result in results]


def write(result: JobResult) -> None:
    """Write a computed job's run folder (results.json + samples.jsonl), unflushed: a launcher calls
    :func:`metabench.store.sync` once after its last job (see ``write_run``'s ``durable``)."""
    write_run(result.run_dir, result.results, result.samples, overwrite=result.job.options.overwrite,
              started=time.perf_counter(), durable=False)


def _seeds(task: LoadedTask, adapter: Adapter, options: RunOptions | None) -> list[int]:
    """The seeds this job runs (``options`` None: the task's protocol seeds, which name the run folder)."""
    section = getattr(task.config.protocol, adapter.family, None)
    if section is None:
        raise UnsupportedError(
            f"task '{task.name}' has no protocol.{adapter.family} section, so {adapter.family} models "
            f"('{adapter.name}') cannot run it",
            hint=f"add protocol.{adapter.family} to {task.raw.path}, or choose another --model",
            reason=f"no protocol.{adapter.family} in the task",
        )
    seeds = options.seeds if options is not None and options.seeds is not None else section.seeds
    seeds = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    return seeds if adapter.seeded else seeds[:1]


def execute(registry: Registry, job: Job, cache) -> JobResult:
    """Compute one job: answers (from ``cache`` where it has them), per-item scores and the results record.

    Writes nothing but answers into ``cache`` (batch by batch); pass ``AnswerCache(None)`` to write nothing.
    """
    phases, hashed = Phases(), hashing_seconds()
    task, spec, options = job.task, job.model, job.options
    register_source(registry, task.config, task.raw, task.plugin, task.plugin_version)  # a spawned worker's too
    adapter = build_adapter(spec, registry, options.adapter_settings)
    seeds = _seeds(task, adapter, options)
    kind = build_kind(registry, task)
    if kind.request_type() is not None:  # a model that cannot serve the task is turned away before any loading
        adapter.check_request_type(kind.request_type(), task.name)
    _check_training(task, adapter, task.config.splits.train)
    fingerprint = adapter.task_fingerprint(getattr(task.config.protocol, adapter.family, None))
    memo = job_memo.key(registry, job, fingerprint, adapter.family, seeds)
    remembered = cache.get_run(memo) if memo is not None else None
    phases.lap("cache_lookup_s")
    if remembered is not None:
        return _remembered(registry, job, remembered, phases)
    answers_cache = cache if adapter.cache_answers else AnswerCache(None)
    data = prepare(registry, task, limit=options.limit, data_dir=options.data_dir, kind=kind)
    _freeze_loaded()
    test = data.test
    limited = options.limit if options.limit is not None and options.limit < data.n_test_items else None
    run_dir = options.output_dir / task.name / run_name(spec.slug, seeds, _seeds(task, adapter, None), limited)
    check_run_dir(run_dir)
    if kind.request_type() is None:  # a kind that does not declare it: probe the first item
        adapter.check_request_type(type(kind.request(test.items[0])), task.name)
    _check_training(task, adapter, data.splits["train"].items if data.splits["train"] else None)
    golds = _plain(test.golds(kind))
    phases.lap("load_s")
    phases.move(hashing_seconds() - hashed, "load_s", "data_hash_s")  # file hashes checked while loading
    data_hash = data.data_hash()
    training_hash = data.data_hash(("train", "validation"), with_limit=False)
    phases.lap("data_hash_s")

    ids = [str(item.id) for item in test.items]
    requests: dict[int, object] = {}  # built only for items the cache cannot answer
    per_seed, samples = {}, []
    timings = {"cached_items": 0}
    for seed in seeds:
        whole = job_key(fingerprint, task.hash, data_hash, seed, adapter.family)
        found = answers_cache.get_job(whole)
        if found is not None and len(found) == len(ids) and all(i in found for i in ids):
            preds = [found[i] for i in ids]
            timings["cached_items"] += len(preds)
            phases.lap("cache_lookup_s")
        else:
            preds = _seed_answers(job, data, adapter, answers_cache, seed, data_hash, training_hash, fingerprint,
                                  requests, timings, phases)
            answers_cache.put_job(whole, dict(zip(ids, preds)))
            phases.lap("cache_lookup_s")
        per_seed[str(seed)] = kind.aggregate(test.items, golds, preds)
        for item, gold, pred in zip(test.items, golds, preds):
            samples.append({"id": item.id, "seed": seed, "gold": gold, "prediction": pred, "scores": kind.item_scores(item, gold, pred)})
        phases.lap("score_s")

    lines = samples_text(samples).encode("utf-8")
    results = _results(registry, job, adapter, data, seeds, per_seed, timings)
    results["data"]["splits"]["test"]["golds_sha256"] = golds_sha256(zip(ids, golds))
    results["n_test_items"] = data.n_test_items  # the whole test split: n_items < n_test_items marks a partial run
    memo = memo or job_memo.key(registry, job, fingerprint, adapter.family, seeds)  # its slices are parsed now
    if memo is not None:
        cache.put_run(memo, job_memo.stored(results), run_dir.name, lines)
    phases.lap("write_s")  # encoding the samples, the record; write() adds the time writing the folder takes
    timings.update(phases.record())
    answered = len(test.items) * len(seeds) - timings["cached_items"]
    timings["items_per_s"] = answered / timings["predict_s"] if timings["predict_s"] > 0 else None
    return JobResult(job, results, lines, run_dir)


def _remembered(registry, job: Job, remembered: tuple[dict, str, bytes], phases: Phases) -> JobResult:
    """A job taken whole from the job memo: its data files re-verified, the process facts made fresh. The
    model's ``info`` stays the computing run's: it describes how these answers were made (the checkpoints
    trained, a search's trials), which an adapter that was never fitted here cannot say."""
    record, name, lines = remembered
    job_memo.verify_files(registry, record["data"]["files"], job.options.data_dir)
    phases.lap("data_hash_s")
    run_dir = job.options.output_dir / job.task.name / name
    check_run_dir(run_dir)
    results = {**record, **_process_facts(registry)}
    phases.lap("write_s")
    results["timings"] = {"cached_items": record["n_items"] * len(record["seeds"]), **phases.record(),
                          "items_per_s": None}
    return JobResult(job, results, lines, run_dir)


def _seed_answers(job: Job, data: TaskData, adapter, cache, seed, data_hash, training_hash, fingerprint,
                  requests: dict, timings: dict, phases: Phases) -> list:
    """One seed's answers item by item: those the cache has, then the missing ones computed (the adapter is
    fitted only if some item is missing, and requests are rendered only for the missing items). Without a
    cache (``--no-cache``, or a baseline) the items' own ids key the answers: no sha256 per item."""
    task, kind, items = job.task, data.kind, data.test.items
    if cache.enabled:
        keys = [item_key(fingerprint, task.hash, data_hash, item.id, seed, adapter.family) for item in items]
    else:  # unique within the test split (prepare checks it)
        keys = [item.id for item in items]
    answers = cache.get_many(keys)
    timings["cached_items"] += len(answers)
    missing = [i for i, key in enumerate(keys) if key not in answers]
    phases.lap("cache_lookup_s")
    if missing:
        if adapter.reads_requests(kind.request_type()):  # else predict is given None per item
            for i in missing:
                if i not in requests:
                    requests[i] = kind.request(items[i])
        phases.lap("load_s")
        adapter.fit(_training(data, adapter, seed, training_hash))
        phases.lap("fit_s")
        _answer(adapter, requests, keys, missing, answers, cache, seed,
                f"job {job.position[0]}/{job.position[1]} | {task.name} | {job.model.text} | seed {seed}",
                job.options)
        phases.lap("predict_s")
    return [answers[key] for key in keys]


def _check_training(task: LoadedTask, adapter: Adapter, train) -> None:
    """A model that learns from the training split cannot serve a task without one (``train``: the declared
    split, or its loaded items): a skip, not a failure.

    (Guessing a training distribution from the test labels would leak them, so there is no fallback.)
    """
    if adapter.needs_training and not train:
        raise UnsupportedError(
            f"model '{adapter.name}' learns from the training split, and task '{task.name}' has none",
            hint="models that need no training split: random, constant (`metabench ls models`)",
            reason="needs a training split",
        )


def _training(data: TaskData, adapter, seed, data_hash) -> Training | None:
    kind, task = data.kind, data.task
    train = data.splits["train"]
    if not adapter.needs_training or train is None:
        return None
    validation = data.splits["validation"]
    val_items = validation.items if validation else []
    val_golds = _plain(validation.golds(kind)) if validation else []

    def score_validation(preds: list) -> dict[str, float]:
        """The task's metrics on the validation split (model selection reads finetune.select_metric here)."""
        return kind.aggregate(val_items, val_golds, [_plain(p) for p in preds])

    return Training(
        requests=Rendered(kind, train.items),
        golds=_plain(train.golds(kind)),
        validation_requests=Rendered(kind, val_items),
        validation_golds=val_golds,
        labels=kind.labels(),
        protocol=getattr(task.config.protocol, adapter.family),
        seed=seed,
        data_hash=data_hash,
        score_validation=score_validation if val_items else None,
    )


def _answer(adapter, requests, keys, missing, answers, cache, seed, label, options) -> None:
    """Answer the ``missing`` requests batch by batch into ``answers``, committing each batch to ``cache``."""
    size = max(1, adapter.batch_size())
    with tqdm(total=len(missing), desc=label, unit="item", disable=not options.progress, leave=False) as bar:
        for start in range(0, len(missing), size):
            batch = missing[start : start + size]
            preds = adapter.predict([requests.get(i) for i in batch], seed)
            if len(preds) != len(batch):
                raise MetabenchError(f"model '{adapter.name}' returned {len(preds)} answers for {len(batch)} requests")
            pairs = list(zip((keys[i] for i in batch), _plain(list(preds))))
            cache.put_many(pairs)
            answers.update(pairs)
            bar.update(len(batch))


class Rendered(Sequence):
    """A split's requests, rendered on first use: an adapter that reads only the gold answers (``majority``)
    never pays for rendering the training split's prompts."""

    def __init__(self, kind, items: list):
        self._kind, self._items, self._requests = kind, items, None

    def _all(self) -> list:
        if self._requests is None:
            self._requests = [self._kind.request(item) for item in self._items]
        return self._requests

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):
        return self._all()[index]

    def __iter__(self):
        return iter(self._all())


_SCALARS = frozenset((str, int, float, bool, type(None)))
_SEQUENCES = frozenset((tuple, list))


def _plain(value):
    """JSON round-trip, so fresh and cached answers have identical types (tuples become lists). A list of
    plain scalars (labels, option indices: most golds and answers) is already what the round trip gives, so
    it is copied as it is (the round trips were ~7 of a cold ``--tasks all``'s seconds)."""
    if isinstance(value, list):
        types = set(map(type, value))
        if types <= _SCALARS:
            return list(value)
        if types <= _SEQUENCES and all(_SCALARS.issuperset(map(type, v)) for v in value):  # tag sequences
            return [list(v) for v in value]
    return json.loads(json.dumps(value))


def _aggregate(per_seed: dict[str, dict[str, float]]) -> dict[str, dict]:
    names = sorted({name for metrics in per_seed.values() for name in metrics})
    out = {}
    for name in names:
        values = [m[name] for m in per_seed.values() if name in m and m[name] is not None]
        out[name] = {
            "mean": statistics.fmean(values) if values else None,
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "n": len(values),
        }
    return out


def _process_facts(registry) -> dict:
    """The parts of a results record that describe the process writing it (fresh on a remembered job too)."""
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "metabench": metabench_info(),
        "environment": environment(),
        "plugins": [{k: p[k] for k in ("name", "version", "status")} for p in registry.plugins],
    }


#: Config parts a run's record leaves out: the search, as the config hash does; `hf_dataset` when unset, so
#: the records of tasks on registered datasets stay as they were before the key existed.
_UNRECORDED_HF = {"protocol": {"encoder": {"search"}}}
_UNRECORDED = {**_UNRECORDED_HF, "hf_dataset": True}


def _results(registry, job: Job, adapter, data: TaskData, seeds, per_seed, timings) -> dict:
    task, spec, options = job.task, job.model, job.options
    config = task.config
    higher = {m.name: registry.get("metric", m.name).meta.get("higher_is_better", True) for m in config.metric_specs()}
    files = {}
    for split in data.splits.values():
        if split is not None:
            files.update(split.files)
    return {
        "schema_version": SCHEMA_VERSION,
        **_process_facts(registry),
        "task": {
            "name": task.name,
            "version": config.metadata.version,
            "config_hash": task.hash,
            "kind": config.kind,
            "dataset": config.dataset,
            "primary_metric": config.primary,
            "source": config.metadata.source,
            "plugin": task.plugin,
            # protocol.encoder.search left out as from the config hash: a search that ran is in model.info
            "config": config.model_dump(mode="json", exclude=_UNRECORDED if config.hf_dataset is None else _UNRECORDED_HF),
            **task_facts(registry, task),
        },
        "data": {
            "files": files,
            "splits": {role: {"n": len(split.items), "ids_sha256": split.ids_sha256()}
                       for role, split in data.splits.items() if split is not None},
        },
        "model": {
            "spec": spec.text,
            "adapter": adapter.name,
            "family": adapter.family,
            "args": adapter.args,
            "fingerprint": adapter.fingerprint(),
            "info": adapter.info(),
        },
        "protocol": adapter.family,
        "seeds": seeds,
        "limit": options.limit,
        "n_items": len(data.test.items),
        "higher_is_better": higher,
        "metrics": {"per_seed": per_seed, "aggregate": _aggregate(per_seed)},
        "timings": timings,
    }
