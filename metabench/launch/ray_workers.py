"""The run matrix on Ray (`metabench run --launcher ray`): a pool of long-lived worker actors, fed batches of
jobs grouped by the data they read.

Why it is shaped this way:

- One Ray task per job cost more than the jobs: every task paid a scheduling round trip, and a worker process
  started for it loaded the plugins and parsed its data again. Instead each worker is an actor started once
  (``--workers`` of them, default: the cluster's CPUs) that builds the registry in its constructor and keeps
  every dataset slice it parsed in memory (``jobs._load_memo``) for the process's life. Jobs are grouped by
  the datasets their task reads and a group goes to one worker as one call, so a dataset is parsed or
  unpickled once per worker that needs it, not once per job; groups go largest first to whichever worker is
  free, and very large groups are cut so that no worker is left with all the work.
- A worker computes a job with :func:`metabench.runner.execute`, the function the serial launcher calls, and
  returns its results and samples; the driver writes every run folder (:func:`metabench.runner.write`) while
  the workers go on. So the run files are the serial launcher's, whatever worker computed them.
- The answer cache stays one SQLite file on the driver's local disk (SQLite must not live on a network file
  system). On a cluster (``--ray-address``) no worker opens it: workers look answers up and commit each batch
  through :class:`AnswerStore`, one actor the driver starts pinned to its own node, the only process that
  opens the cache. A local Ray's workers all run on the driver's machine and open the file themselves, as
  the process launcher's do (WAL and a lock timeout serialise the writers): the actor's round trip per job
  look-up and per batch cost more than they protected there.
- A worker lost mid-call (killed, out of memory, its node gone) is restarted by Ray and the call is run again
  (``max_restarts``/``max_task_retries``). Every batch the lost worker finished was committed before it asked
  for the next, so the retry finds those answers in the cache and recomputes only the batch in flight (the
  jobs of the call that had finished are rebuilt from the cache: no item is predicted twice).
- ``--ray-address`` joins a running cluster; without it a local Ray is started in this process with
  ``--workers`` CPUs, no dashboard, no log forwarding, no usage reporting, listening on loopback only.
- Model jobs go to workers holding one GPU each when the cluster has GPUs; baselines to CPU workers.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from typing import TYPE_CHECKING

from .cache import AnswerCache, cache_root
from .connections import RAY_CONNECT, RAY_JOIN, probe, split_host_port, within
from .errors import MetabenchError
from .job_groups import batches, model_family
from .registry import Registry

if TYPE_CHECKING:
    from .jobs import Job

# Forwarded to workers started on other nodes (local workers inherit the driver's environment anyway).
_FORWARDED_PREFIXES = ("METABENCH_", "HF_", "TRANSFORMERS_", "TOKENIZERS_")
MAX_RETRIES = 3


def import_ray():
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
        raise MetabenchError(f"--workers {workers}: Ray needs at least one worker", hint="e.g. --workers 2")
    if not address:
        # Bind every Ray service to 127.0.0.1: Ray otherwise resolves "127.0.0.1" to the machine's outward
        # address (its ENABLE_RAY_CLUSTER switch, read from this variable by the driver and every child).
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray = import_ray()
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
    # No log forwarding: workers print nothing a run needs (errors come back as results), and forwarding
    # costs a thread and a pipe per worker.
    common = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False,
              "runtime_env": {"env_vars": env_vars}}
    if address:
        _reachable(address)
        # A cluster on this machine's loopback (`ray start --head --node-ip-address 127.0.0.1`): the driver
        # must say it is on 127.0.0.1 too, or it looks for a raylet on the outward address and waits forever.
        local = address.rpartition(":")[0] in ("127.0.0.1", "localhost")
        try:
            within(RAY_JOIN, lambda: ray.init(address=address, **({"_node_ip_address": "127.0.0.1"} if local else {}), **common),
                   what=f"joining the Ray cluster at --ray-address {address}",
                   fix="check that `ray status --address ADDRESS` works from this machine (the head's recorded address "
                       "must be reachable from here)")
        except (ConnectionError, RuntimeError, ValueError) as exc:  # something listens there, but not a Ray we can join
            raise MetabenchError(f"cannot join the Ray cluster at --ray-address {address}: {type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0][:300] if str(exc) else ''}",
                                 hint="check that `ray status --address ADDRESS` works from this machine and that "
                                      "its Ray and Python versions match this one") from None
    else:
        # No worker processes started ahead of need (the actors are the only workers a run uses).
        os.environ.setdefault("RAY_prestart_worker_first_driver", "0")
        ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, _node_ip_address="127.0.0.1",
                 object_store_memory=256 * 1024**2, **common)


def _reachable(address: str) -> None:
    """``ray.init`` on an address where no cluster listens retries for ever: probe it first, within
    ``METABENCH_RAY_CONNECT_TIMEOUT_S``. ``auto`` (the cluster this machine's ``ray start`` recorded) is Ray's own."""
    if address == "auto":
        return
    host, port = split_host_port(address, option="--ray-address", example="127.0.0.1:6379 (or ray://HOST:10001)")
    probe(host, port, limit=RAY_CONNECT, what="a Ray cluster (--ray-address)",
          fix="start one there (`ray start --head --port PORT`) or correct --ray-address; without --ray-address "
              "metabench starts a local Ray", grpc=True)


def launch(registry: Registry, jobs: list[Job], options) -> list:
    """The ``launch`` that :func:`metabench.runner.run` takes for ``--launcher ray``: start or join Ray, run."""
    start(options.ray_address, options.workers)
    return run_jobs(registry, jobs, options.use_cache, options.workers, local=not options.ray_address)


def run_jobs(registry: Registry, jobs: list[Job], use_cache: bool, workers: int | None = None, *,
             local: bool = False) -> list:
    """Compute ``jobs`` on a pool of Ray workers and write their run folders here; outcomes in the jobs' order.

    ``local``: the Ray was started by this process, so every worker is on this machine and opens the answer
    cache itself, as the process launcher's workers do (SQLite on one local disk); on a cluster the cache
    stays behind one driver-side actor."""
    from .runner import JobOutcome, JobResult, written  # noqa: PLC0415 - import time stays free of runner (and torch)
    from .store import sync  # noqa: PLC0415

    ray = import_ray()
    store, cache_path = None, None
    if use_cache and local:
        cache_path = str(cache_root() / "answers.sqlite")
        AnswerCache(cache_root() / "answers.sqlite").close()  # a damaged cache: one clear error, before any worker
    elif use_cache:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: PLC0415

        pin = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
        store = ray.remote(num_cpus=0)(AnswerStore).options(scheduling_strategy=pin).remote(
            str(cache_root() / "answers.sqlite"))
    cluster = ray.cluster_resources()
    gpus = int(cluster.get("GPU", 0))
    shapes = defaultdict(list)  # resource shape -> job numbers
    for n, job in enumerate(jobs):
        shapes[json.dumps(resources(model_family(registry, job), gpus=gpus > 0), sort_keys=True)].append(n)
    cpus = workers or max(1, int(cluster.get("CPU", 1)))
    pools = {}
    for shape, numbers in shapes.items():
        wanted = json.loads(shape)
        size = min(gpus, len(numbers)) if wanted["num_gpus"] else min(cpus, len(numbers))
        actor = ray.remote(max_restarts=MAX_RETRIES, max_task_retries=MAX_RETRIES, **wanted)(Worker)
        pools[shape] = ([actor.remote(store, cache_path) for _ in range(max(1, size))], batches(jobs, numbers, size))

    outcomes: list = [None] * len(jobs)
    running: dict = {}  # object ref -> (actor, pool shape, job numbers)
    idle = {shape: list(actors) for shape, (actors, _) in pools.items()}

    def feed(shape: str) -> None:
        queue = pools[shape][1]
        while idle[shape] and queue:
            actor, numbers = idle[shape].pop(), queue.pop(0)
            running[actor.compute.remote([jobs[n] for n in numbers])] = (actor, shape, numbers)
        if not queue:  # nothing left for this pool: free its CPUs for the other pool's workers
            while idle[shape]:
                ray.kill(idle[shape].pop())

    for shape in pools:
        feed(shape)
    while running:
        (ref,), _ = ray.wait(list(running), num_returns=1)
        actor, shape, numbers = running.pop(ref)
        idle[shape].append(actor)
        feed(shape)  # the worker starts its next batch before the driver writes this one's folders
        try:
            computed = ray.get(ref)
        except ray.exceptions.RayError as exc:  # retries exhausted, or a bug in a plugin: these jobs fail
            computed = [JobOutcome(jobs[n].task.name, jobs[n].model.text, "failed", message=_ray_message(exc))
                        for n in numbers]
        for n, done in zip(numbers, computed):
            outcomes[n] = done if isinstance(done, JobOutcome) else written(JobResult.from_payload(jobs[n], done))
    sync()  # the run folders were written without a flush each (store.write_run, durable=False)
    return outcomes


def resources(family: str, *, gpus: bool) -> dict:
    """What one worker asks Ray for: a CPU, and a GPU for models (not baselines) when the cluster has GPUs."""
    return {"num_cpus": 1, "num_gpus": 1 if gpus and family != "baseline" else 0}


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

    def get_job(self, key: str) -> dict | None:
        return self.cache.get_job(key)

    def put_job(self, key: str, answers: dict) -> None:
        self.cache.put_job(key, answers)

    def get_run(self, key: str):
        return self.cache.get_run(key)

    def put_run(self, key: str, record: dict, run_name: str, lines: bytes) -> None:
        self.cache.put_run(key, record, run_name, lines)


class _RemoteCache:
    """What a worker hands :func:`runner.execute` as its cache: calls into the driver-side store, blocking,
    so a batch is committed before the next one is computed."""

    enabled = True

    def __init__(self, store):
        self.store = store

    def get_many(self, keys: list[str]) -> dict:
        import ray  # noqa: PLC0415

        return ray.get(self.store.get_many.remote(keys))

    def put_many(self, pairs: list) -> None:
        import ray  # noqa: PLC0415

        ray.get(self.store.put_many.remote(pairs))

    def get_job(self, key: str) -> dict | None:
        import ray  # noqa: PLC0415

        return ray.get(self.store.get_job.remote(key))

    def put_job(self, key: str, answers: dict) -> None:
        import ray  # noqa: PLC0415

        ray.get(self.store.put_job.remote(key, answers))

    def get_run(self, key: str):
        import ray  # noqa: PLC0415

        return ray.get(self.store.get_run.remote(key))

    def put_run(self, key: str, record: dict, run_name: str, lines: bytes) -> None:
        import ray  # noqa: PLC0415

        ray.get(self.store.put_run.remote(key, record, run_name, lines))


class Worker:
    """A Ray actor computing batches of jobs. It builds the registry once and keeps, for its whole life, every
    dataset slice it has parsed (``jobs._load_memo``), which is why jobs reading the same data are sent to it
    together."""

    def __init__(self, store, cache_path: str | None = None):
        from .plugins import load  # noqa: PLC0415
        from .runner import compute_batch  # noqa: PLC0415 - a worker pays it once, at start

        self.registry = load()
        self.compute_batch = compute_batch
        if store is not None:
            self.cache = _RemoteCache(store)
        else:  # a local Ray: the cache file on this machine's disk, opened here (or no cache at all)
            from pathlib import Path  # noqa: PLC0415

            self.cache = AnswerCache(Path(cache_path) if cache_path else None)

    def compute(self, batch: list[Job]) -> list:
        """Per job: {results, samples, run_dir} to write, or its outcome (skipped, failed)."""
        return self.compute_batch(self.registry, batch, self.cache)
