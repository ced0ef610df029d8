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
- A worker computes a job with :func:`metabench.launch.execute.execute`, the function the serial launcher calls, and
  returns its results and samples; the driver writes every run folder (:func:`metabench.launch.outcomes.written`) while
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

from ..errors import MetabenchError
from ..ray_start import import_ray, start
from ..registry import Registry
from ..store import sync
from .answers import answers_path, open_answers
from .job_groups import batches, model_family
from .outcomes import MAX_RETRIES, collect, failed

if TYPE_CHECKING:
    from ..jobs import Job

def launch(registry: Registry, jobs: list[Job], options) -> list:
    """``--launcher ray``: start or join Ray, run."""
    start(options.ray_address, options.workers)
    return run_jobs(registry, jobs, options.use_cache, options.workers, local=not options.ray_address)


def run_jobs(registry: Registry, jobs: list[Job], use_cache: bool, workers: int | None = None, *,
             local: bool = False) -> list:
    """Compute ``jobs`` on a pool of Ray workers and write their run folders here; outcomes in the jobs' order.

    ``local``: the Ray was started by this process, so every worker is on this machine and opens the answer
    cache itself, as the process launcher's workers do (SQLite on one local disk); on a cluster the cache
    stays behind one driver-side actor."""
    ray = import_ray()
    store, cache_path = None, None
    if use_cache and local:
        cache_path = answers_path(True)
        open_answers(cache_path).close()  # a damaged cache: one clear error, before any worker
    elif use_cache:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: PLC0415

        pin = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
        store = ray.remote(num_cpus=0)(AnswerStore).options(scheduling_strategy=pin).remote(
            answers_path(True))
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
        pools[shape] = ([actor.remote(store, cache_path) for _ in range(max(1, size))], batches(jobs, numbers, size, registry))

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
            computed = [failed(jobs[n], _ray_message(exc)) for n in numbers]
        collect(outcomes, jobs, numbers, computed)
    sync()  # the run folders were written without a flush each (store.write, durable=False)
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
        self.cache = open_answers(path)

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
    """What a worker hands :func:`metabench.launch.execute.execute` as its cache: calls into the driver-side store, blocking,
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
        from ..plugins import load  # noqa: PLC0415
        from .batch import compute_batch  # noqa: PLC0415 - a worker pays it once, at start

        self.registry = load()
        self.compute_batch = compute_batch
        if store is not None:
            self.cache = _RemoteCache(store)
        else:  # a local Ray: the cache file on this machine's disk, opened here (or no cache at all)
            self.cache = open_answers(cache_path)

    def compute(self, batch: list[Job]) -> list:
        """Per job: {results, samples, run_dir} to write, or its outcome (skipped, failed)."""
        return self.compute_batch(self.registry, batch, self.cache)
