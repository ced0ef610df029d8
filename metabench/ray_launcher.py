"""The run matrix on Ray (`metabench run --launcher ray`): one Ray task per (task, model) job.

Why it is shaped this way:

- A worker computes a job with :func:`metabench.runner.execute`, the function the serial launcher calls, and
  returns its results and samples; the driver writes every run folder (:func:`metabench.runner.write`). So
  the run files are the serial launcher's, whatever worker computed them.
- The answer cache stays one SQLite file on the driver's local disk (SQLite must not live on a network file
  system). No worker opens it: workers look answers up and commit each batch through :class:`AnswerStore`,
  one actor the driver starts pinned to its own node, the only process that opens the cache.
- A worker lost mid-job (killed, out of memory, its node gone) is a system failure, which Ray retries
  (``max_retries``). Every batch the lost worker finished was committed before it asked for the next, so the
  retry finds those answers in the cache and recomputes only the batch that was in flight.
- ``--ray-address`` joins a running cluster; without it a local Ray is started in this process with
  ``--workers`` CPUs, no dashboard, no usage reporting, listening on loopback only.
- Model jobs ask for one GPU each when the cluster has GPUs; baselines ask for one CPU.
"""

from __future__ import annotations

import os
from functools import lru_cache

from typing import TYPE_CHECKING

from .cache import AnswerCache, cache_root
from .errors import MetabenchError, UnsupportedError
from .registry import Registry

if TYPE_CHECKING:
    from .jobs import Job

# Forwarded to workers started on other nodes (local workers inherit the driver's environment anyway).
_FORWARDED_PREFIXES = ("METABENCH_", "HF_", "TRANSFORMERS_", "TOKENIZERS_")
MAX_RETRIES = 3


def _ray():
    try:
        import ray  # noqa: PLC0415 - optional dependency, only for --launcher ray
    except ImportError:
        raise MetabenchError(
            "--launcher ray needs the `ray` package", hint="pip install 'metabench[ray]' (or pip install ray)"
        ) from None
    return ray


def start(address: str | None, workers: int | None) -> None:
    """Start a local Ray (``address=None``) or join the cluster at ``address``."""
    if workers is not None and workers < 1:
        raise MetabenchError(f"--workers {workers}: a local Ray needs at least one CPU", hint="e.g. --workers 2")
    if not address:
        # Bind every Ray service to 127.0.0.1: Ray otherwise resolves "127.0.0.1" to the machine's outward
        # address (its ENABLE_RAY_CLUSTER switch, read from this variable by the driver and every child).
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray = _ray()
    if ray.is_initialized():
        return
    if not address:
        import ray._private.ray_constants as constants  # noqa: PLC0415 - ray may have been imported already

        constants.ENABLE_RAY_CLUSTER = False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
    # Ray's agents and workers register within 30-60 s by default; on a loaded machine the first imports take
    # longer than that and Ray aborts its own start-up. Waiting is cheaper than failing the run.
    os.environ.setdefault("RAY_agent_register_timeout_ms", "600000")
    os.environ.setdefault("RAY_worker_register_timeout_seconds", "600")
    os.environ.setdefault("RAY_raylet_start_wait_time_s", "600")
    env_vars = {k: v for k, v in os.environ.items() if k.startswith(_FORWARDED_PREFIXES)}
    common = {"include_dashboard": False, "log_to_driver": True, "configure_logging": False,
              "runtime_env": {"env_vars": env_vars}}
    if address:
        ray.init(address=address, **common)
    else:
        ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, _node_ip_address="127.0.0.1",
                 object_store_memory=256 * 1024**2, **common)


def launch(registry: Registry, jobs: list[Job], options) -> list:
    """The ``launch`` that :func:`metabench.runner.run` takes for ``--launcher ray``: start or join Ray, run."""
    start(options.ray_address, options.workers)
    return run_jobs(registry, jobs, options.use_cache)


def run_jobs(registry: Registry, jobs: list[Job], use_cache: bool) -> list:
    """Compute ``jobs`` on Ray and write their run folders here; the outcomes in the jobs' order."""
    from .runner import JobOutcome  # noqa: PLC0415 - import time stays free of runner (and torch)

    ray = _ray()
    store = None
    if use_cache:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: PLC0415

        pin = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
        store = ray.remote(num_cpus=0)(AnswerStore).options(scheduling_strategy=pin).remote(
            str(cache_root() / "answers.sqlite"))
    gpus = ray.cluster_resources().get("GPU", 0) > 0
    compute = ray.remote(_compute_remote)
    pending = {}
    for n, job in enumerate(jobs):
        wanted = resources(_family(registry, job), gpus=gpus)
        pending[compute.options(**wanted, max_retries=MAX_RETRIES).remote(job, store)] = n
    outcomes: list = [None] * len(jobs)
    while pending:
        (ref,), _ = ray.wait(list(pending), num_returns=1)
        n = pending.pop(ref)
        job = jobs[n]
        try:
            status, payload = ray.get(ref)
        except ray.exceptions.RayError as exc:  # retries exhausted, or a bug in a plugin: this job fails
            outcomes[n] = JobOutcome(job.task.name, job.model.text, "failed", message=_ray_message(exc))
            continue
        if status != "ok":
            outcomes[n] = JobOutcome(job.task.name, job.model.text, status, message=payload)
            continue
        result = _job_result(job, payload)
        from .runner import write  # noqa: PLC0415

        write(result)
        outcomes[n] = JobOutcome(job.task.name, job.model.text, "ok", result.run_dir, result.results)
    return outcomes


def resources(family: str, *, gpus: bool) -> dict:
    """What one job asks Ray for: a CPU, and a GPU for a model (not a baseline) when the cluster has GPUs."""
    return {"num_cpus": 1, "num_gpus": 1 if gpus and family != "baseline" else 0}


def _job_result(job: Job, payload: dict):
    from pathlib import Path  # noqa: PLC0415

    from .runner import JobResult  # noqa: PLC0415

    return JobResult(job, payload["results"], payload["samples"], Path(payload["run_dir"]))


def _family(registry: Registry, job: Job) -> str:
    try:
        return getattr(registry.resolve("model", job.model.name), "family", "")
    except Exception:  # noqa: BLE001 - an unloadable adapter fails on the worker, with its own message
        return ""


def _ray_message(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"the Ray task failed: {text[-1] if text else type(exc).__name__}"


class AnswerStore:
    """The answer cache, opened by one process on the driver's node; workers call it once per batch."""

    def __init__(self, path: str):
        from pathlib import Path  # noqa: PLC0415

        self.cache = AnswerCache(Path(path))

    def get_many(self, keys: list[str]) -> dict:
        return self.cache.get_many(keys)

    def put_many(self, pairs: list) -> int:
        self.cache.put_many(pairs)
        return len(pairs)


class _RemoteCache:
    """What a worker hands :func:`runner.execute` as its cache: calls into the driver-side store, blocking,
    so a batch is committed before the next one is computed."""

    def __init__(self, store):
        self.store = store

    def get_many(self, keys: list[str]) -> dict:
        import ray  # noqa: PLC0415

        return ray.get(self.store.get_many.remote(keys))

    def put_many(self, pairs: list) -> None:
        import ray  # noqa: PLC0415

        ray.get(self.store.put_many.remote(pairs))


@lru_cache(maxsize=1)
def _worker_registry() -> Registry:
    """The registry, built once per worker process (Ray reuses workers across tasks)."""
    from .plugins import load  # noqa: PLC0415

    return load()


def _compute_remote(job: Job, store) -> tuple[str, object]:
    """Runs on a worker: ("ok", {results, samples}) or ("skipped"/"failed", message)."""
    from .runner import execute  # noqa: PLC0415

    cache = _RemoteCache(store) if store is not None else AnswerCache(None)
    try:
        result = execute(_worker_registry(), job, cache)
    except UnsupportedError as exc:
        return "skipped", str(exc)
    except MetabenchError as exc:
        return "failed", str(exc)
    return "ok", {"results": result.results, "samples": result.samples, "run_dir": str(result.run_dir)}
