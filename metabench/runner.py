"""Expanding tasks × models × seeds into jobs and running each: data → requests → answers → scores → run.

A job is one (task, model). For each seed the runner looks every test item up in the answer cache first;
the adapter is fitted (trained, for encoders) only if some item is still missing, then answers the missing
items batch by batch, each batch committed to the cache before the next starts. So an interrupted run
resumes where it stopped and a repeated run costs only the cache look-ups.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import datetime, timezone
from pathlib import Path

from tqdm.auto import tqdm

from .cache import AnswerCache, cache_root, item_key
from .config.index import LoadedTask, TaskIndex
from .config.validate import resolve_split, split_values
from .data.load import load_split
from .errors import MetabenchError, NotBuiltError, UnsupportedError, unknown
from .models.base import Adapter
from .models.spec import ModelSpec, build_adapter, parse_model_spec
from .registry import Registry
from .requests import Training
from .store import SCHEMA_VERSION, check_run_dir, check_writable, environment, metabench_info, run_name, write_run
from .task_facts import task_facts


@dataclass
class RunOptions:
    output_dir: Path = Path("runs")
    seeds: list[int] | None = None
    limit: int | None = None
    data_dir: Path | None = None
    use_cache: bool = True
    progress: bool = True
    overwrite: bool = False


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
class _Split:
    items: list
    files: dict[str, str] = field(default_factory=dict)


def plan(index: TaskIndex, selection: str, models: list[str]) -> list[tuple[LoadedTask, ModelSpec]]:
    """The jobs for a --tasks selection and the --model values, validated before anything runs."""
    specs = [parse_model_spec(m) for m in models]
    for spec in specs:
        if not index.registry.has("model", spec.name):
            raise unknown("model", spec.name, index.registry.names("model"), where=f"--model {spec.text}")
    return [(index.load(name), spec) for name in index.select(selection) for spec in specs]


def check_options(options: RunOptions) -> None:
    """Bad parameters are one clear error before any work (``--limit -1`` once scored all but one item)."""
    if options.limit is not None and (isinstance(options.limit, bool) or options.limit < 1):
        raise MetabenchError(f"--limit {options.limit}: must be 1 or more",
                             hint="leave --limit out to evaluate the whole test split")


def run(registry: Registry, selection: str, models: list[str], options: RunOptions) -> list[JobOutcome]:
    check_options(options)
    index = TaskIndex(registry)
    jobs = plan(index, selection, models)
    check_writable(options.output_dir)
    cache = AnswerCache(cache_root() / "answers.sqlite" if options.use_cache else None)
    outcomes = []
    try:
        for task, spec in jobs:
            outcomes.append(_run_guarded(registry, task, spec, cache, options))
    finally:
        cache.close()
    return outcomes


def _run_guarded(registry, task, spec, cache, options) -> JobOutcome:
    try:
        adapter = build_adapter(spec, registry)
        adapter.registry, adapter.use_cache, adapter.progress = registry, options.use_cache and adapter.use_cache, options.progress
        results, run_dir = run_job(registry, task, spec, adapter, cache, options)
        return JobOutcome(task.name, spec.text, "ok", run_dir, results)
    except UnsupportedError as exc:
        return JobOutcome(task.name, spec.text, "skipped", message=exc.message, reason=exc.reason, hint=exc.hint or "")
    except NotBuiltError as exc:
        return JobOutcome(task.name, spec.text, "skipped", message=exc.message, reason="dataset not built yet",
                          hint=exc.hint or "")
    except MetabenchError as exc:
        return JobOutcome(task.name, spec.text, "failed", message=str(exc))


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


@lru_cache(maxsize=32)
def _load_memo(registry, dataset: str, split: str, args_json: str, data_dir):
    """Each dataset slice is read once per process, however many tasks and models use it."""
    return load_split(registry, dataset, split, json.loads(args_json), data_dir)


def _load(registry, task: LoadedTask, role: str, options: RunOptions) -> _Split | None:
    value = getattr(task.config.splits, role)
    if value is None:
        return None
    out = _Split([])
    for one in split_values(value):  # a list of slices is concatenated in order (e.g. EN + ES training data)
        dataset, split, args = resolve_split(task.config, one)
        loaded = _load_memo(registry, dataset, split, json.dumps(args, sort_keys=True), options.data_dir)
        out.items.extend(loaded.items)
        out.files.update({f"{dataset}:{path}": sha for path, sha in loaded.files.items()})
    return out


def _data_hash(task: LoadedTask, splits: dict[str, _Split | None], roles: tuple[str, ...], limit: int | None = None) -> str:
    """Identifies the data of some split roles: which dataset slice plays each role and the files' hashes.

    The answer cache keys on all roles (and --limit); a trained checkpoint keys on train and validation
    only, so every task that trains on the same data reuses it whatever its test set.
    """
    payload: dict = {"limit": limit}
    for role in roles:
        value = getattr(task.config.splits, role)
        if value is not None and splits.get(role) is not None:
            slices = [resolve_split(task.config, one) for one in split_values(value)]
            payload[role] = {"slice": slices if isinstance(value, list) else slices[0], "files": splits[role].files,
                             "ids": _ids_sha256(splits[role].items)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _ids_sha256(items: list) -> str:
    """sha256 of a split's sorted item ids: fold membership is part of what a score depends on."""
    return hashlib.sha256("\n".join(sorted(str(i.id) for i in items)).encode("utf-8")).hexdigest()


def run_job(registry, task: LoadedTask, spec: ModelSpec, adapter: Adapter, cache: AnswerCache, options: RunOptions):
    started = time.perf_counter()
    config = task.config
    metric_fns = {m.name: registry.resolve("metric", m.name) for m in config.metric_specs()}
    kind = registry.resolve("kind", config.kind)(config, metric_fns)
    seeds = _seeds(task, adapter, options)

    splits = {role: _load(registry, task, role, options) for role in ("test", "train", "validation")}
    test = splits["test"]
    n_test_items = len(test.items)
    limited = options.limit if options.limit is not None and options.limit < n_test_items else None
    if limited is not None:
        test.items = test.items[:limited]
    run_dir = options.output_dir / task.name / run_name(spec.slug, seeds, _seeds(task, adapter, None), limited)
    check_run_dir(run_dir)
    if not test.items:
        raise MetabenchError(f"task '{task.name}': the test split is empty")
    _check_unique_ids(task, test.items)
    requests = [kind.request(item) for item in test.items]
    adapter.check_request_type(type(requests[0]), task.name)
    _check_training(task, adapter, splits["train"])
    golds = [_plain(kind.gold(item)) for item in test.items]
    if splits["train"] is not None:
        kind.fit_context(splits["train"].items)
    data_hash = _data_hash(task, splits, ("test", "train", "validation"), options.limit)
    training_hash = _data_hash(task, splits, ("train", "validation"))
    load_s = time.perf_counter() - started

    fingerprint = adapter.fingerprint()
    per_seed, samples, timings = {}, [], {"load_s": load_s, "fit_s": 0.0, "predict_s": 0.0, "cached_items": 0}
    for seed in seeds:
        keys = [item_key(fingerprint, task.hash, data_hash, item.id, seed, adapter.family) for item in test.items]
        answers = cache.get_many(keys)
        timings["cached_items"] += len(answers)
        missing = [i for i, key in enumerate(keys) if key not in answers]
        if missing:
            fit_started = time.perf_counter()
            adapter.fit(_training(kind, splits, task, adapter, seed, training_hash))
            timings["fit_s"] += time.perf_counter() - fit_started
            predict_started = time.perf_counter()
            _answer(adapter, requests, keys, missing, answers, cache, seed, f"{task.name} | {spec.text} | seed {seed}", options)
            timings["predict_s"] += time.perf_counter() - predict_started
        preds = [answers[key] for key in keys]
        per_seed[str(seed)] = kind.aggregate(test.items, golds, preds)
        for item, gold, pred in zip(test.items, golds, preds):
            samples.append({"id": item.id, "seed": seed, "gold": gold, "prediction": pred, "scores": kind.score(item, gold, pred)})

    timings["total_s"] = time.perf_counter() - started
    answered = len(test.items) * len(seeds) - timings["cached_items"]
    timings["items_per_s"] = answered / timings["predict_s"] if timings["predict_s"] > 0 else None
    results = _results(registry, task, spec, adapter, splits, seeds, per_seed, timings, options, len(test.items))
    results["n_test_items"] = n_test_items  # the whole test split: n_items < n_test_items marks a partial run
    write_run(run_dir, results, samples, overwrite=options.overwrite)
    return results, run_dir


def _check_unique_ids(task: LoadedTask, items: list) -> None:
    seen = set()
    for item in items:
        if item.id in seen:
            raise MetabenchError(
                f"task '{task.name}': item id '{item.id}' appears twice in the test split",
                hint="ids must be unique for caching and paired tests; fix the dataset loader",
            )
        seen.add(item.id)


def _check_training(task: LoadedTask, adapter: Adapter, train: _Split | None) -> None:
    """A model that learns from the training split cannot serve a task without one: a skip, not a failure.

    (Guessing a training distribution from the test labels would leak them, so there is no fallback.)
    """
    if adapter.needs_training and (train is None or not train.items):
        raise UnsupportedError(
            f"model '{adapter.name}' learns from the training split, and task '{task.name}' has none",
            hint="models that need no training split: random, constant (`metabench ls models`)",
            reason="needs a training split",
        )


def _training(kind, splits, task, adapter, seed, data_hash) -> Training | None:
    train = splits["train"]
    if not adapter.needs_training or train is None:
        return None
    validation = splits["validation"]
    val_items = validation.items if validation else []
    val_golds = [_plain(kind.gold(i)) for i in val_items]

    def score_validation(preds: list) -> dict[str, float]:
        """The task's metrics on the validation split (model selection reads finetune.select_metric here)."""
        return kind.aggregate(val_items, val_golds, [_plain(p) for p in preds])

    return Training(
        requests=[kind.request(i) for i in train.items],
        golds=[_plain(kind.gold(i)) for i in train.items],
        validation_requests=[kind.request(i) for i in val_items],
        validation_golds=val_golds,
        labels=kind.labels(),
        protocol=getattr(task.config.protocol, adapter.family),
        seed=seed,
        data_hash=data_hash,
        score_validation=score_validation if val_items else None,
    )


def _answer(adapter, requests, keys, missing, answers, cache, seed, label, options) -> None:
    size = max(1, adapter.batch_size())
    with tqdm(total=len(missing), desc=label, unit="item", disable=not options.progress, leave=False) as bar:
        for start in range(0, len(missing), size):
            batch = missing[start : start + size]
            preds = adapter.predict([requests[i] for i in batch], seed)
            if len(preds) != len(batch):
                raise MetabenchError(f"model '{adapter.name}' returned {len(preds)} answers for {len(batch)} requests")
            pairs = [(keys[i], _plain(p)) for i, p in zip(batch, preds)]
            cache.put_many(pairs)
            answers.update(pairs)
            bar.update(len(batch))


def _plain(value):
    """JSON round-trip, so fresh and cached answers have identical types (tuples become lists)."""
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


def _results(registry, task, spec, adapter, splits, seeds, per_seed, timings, options, n_items) -> dict:
    config = task.config
    higher = {m.name: registry.get("metric", m.name).meta.get("higher_is_better", True) for m in config.metric_specs()}
    files = {}
    for split in splits.values():
        if split is not None:
            files.update(split.files)
    return {
        "schema_version": SCHEMA_VERSION,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "metabench": metabench_info(),
        "environment": environment(),
        "plugins": [{k: p[k] for k in ("name", "version", "status")} for p in registry.plugins],
        "task": {
            "name": task.name,
            "version": config.metadata.version,
            "config_hash": task.hash,
            "kind": config.kind,
            "dataset": config.dataset,
            "primary_metric": config.primary,
            "source": config.metadata.source,
            "plugin": task.plugin,
            "config": config.model_dump(mode="json"),
            **task_facts(registry, task),
        },
        "data": {
            "files": files,
            "splits": {role: {"n": len(split.items), "ids_sha256": _ids_sha256(split.items)}
                       for role, split in splits.items() if split is not None},
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
        "n_items": n_items,
        "higher_is_better": higher,
        "metrics": {"per_seed": per_seed, "aggregate": _aggregate(per_seed)},
        "timings": timings,
    }
