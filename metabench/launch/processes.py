"""The run matrix on this machine's cores (`metabench run --launcher processes`, and what ``auto`` picks for
runs of baselines): worker processes compute batches of jobs, the driver writes their run folders.

Why it is shaped this way:

- Jobs are batched by the datasets they read (:mod:`metabench.launch.job_groups`), largest batch first to whichever
  worker is free, so each worker parses a dataset (or builds a derived pool) once for all its tasks.
- A worker computes a job with :func:`metabench.launch.batch.attempt`, the function the serial launcher calls, and
  returns its results and samples; the driver writes every run folder while the workers go on, so the run
  files are the serial launcher's, whichever worker computed them.
- Workers are forked where the platform can (Linux), so they start in milliseconds with the driver's
  registry and plugins; elsewhere they are spawned and load the plugins again (``plugins.load()``).
- Every worker opens the answer cache itself: the processes share one machine and one local disk, where
  SQLite's WAL journal and lock timeout serialise the writers (the Ray launcher, whose workers may sit on other
  nodes, keeps the cache on the driver instead). A batch of answers is committed before the next is computed.
- A worker lost mid-batch (killed, out of memory) breaks the pool, which stops the other workers too; the
  batches not returned are run again in a fresh pool, up to :data:`MAX_RETRIES` times. Every answer committed
  before is found in the cache and every finished job in the job memo, so only the items of the batches in
  flight (answered, not yet committed) are computed again.

``auto`` (the default) uses processes only where they cannot hurt: every model of the run is a baseline
(single-threaded Python, no device), the machine has more than one CPU and the run has more than one batch.
Models run serially in-process, since torch already uses every core (and a GPU is shared badly by processes);
``--launcher processes`` or ``ray`` parallelises them when asked.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

from .. import progress
from ..errors import MetabenchError
from ..store import sync
from .answers import answers_path, open_answers
from .batch import compute_batch
from .job_groups import batches, model_family
from .outcomes import MAX_RETRIES, collect, failed
from .serial import run_serial

if TYPE_CHECKING:
    from ..jobs import Job, RunOptions
    from ..registry import Registry

#: The worker's state, set once per process by :func:`_start_worker`.
_WORKER: dict = {}


def available_cpus() -> int:
    """The CPUs this process may run on (the affinity mask, which containers and ``taskset`` narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def auto_workers(registry: Registry, jobs: list[Job]) -> int:
    """How many worker processes ``--launcher auto`` uses for ``jobs``: 1 (serial, in-process) unless every
    job's model is a baseline; else one per CPU, at most one per batch."""
    if not jobs or any(model_family(registry, job) != "baseline" for job in jobs):
        return 1
    cpus = available_cpus()
    return min(cpus, len(batches(jobs, list(range(len(jobs))), cpus, registry)))


def launch(registry: Registry, jobs: list[Job], options: RunOptions) -> list:
    """``--launcher processes`` (``options.workers``
    processes, default: every CPU) and ``auto`` (:func:`auto_workers`; one means serial, in this process):
    the outcomes in the jobs' order."""
    if options.launcher == "auto":
        workers = auto_workers(registry, jobs)
        if workers <= 1:
            return run_serial(registry, jobs, options)
    else:
        workers = options.workers or available_cpus()
    if workers < 1:
        raise MetabenchError(f"--workers {workers}: at least one worker is needed", hint="e.g. --workers 2")
    with progress.run_style(options.progress_style), progress.meter(len(jobs), "run", "job", leave=True) as bar:
        return run_jobs(registry, jobs, options.use_cache, workers, done=lambda done: progress.count_jobs(bar, done, len(jobs)))


def run_jobs(registry: Registry, jobs: list[Job], use_cache: bool, workers: int, done=None) -> list:
    """``done(outcomes)``: called with the outcomes of each batch that comes back (a progress meter)."""
    queue = batches(jobs, list(range(len(jobs))), workers, registry)
    outcomes: list = [None] * len(jobs)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    cache_path = answers_path(use_cache)
    if cache_path is not None:  # a damaged cache is one clear error here, not a worker dying at start-up
        open_answers(cache_path).close()
    for _ in range(MAX_RETRIES + 1):
        queue = _run_pool(context, registry if method == "fork" else None, jobs, queue, cache_path,
                          min(workers, len(queue)), outcomes, done or (lambda finished: None))
        if not queue:
            break
    else:
        for numbers in queue:
            for n in numbers:
                outcomes[n] = failed(jobs[n], f"its worker process died {MAX_RETRIES + 1} times (killed, or out of memory)",
                                     hint="run it alone with --launcher serial to see why")
    sync()  # the run folders were written without a flush each (store.write, durable=False)
    return outcomes


def _run_pool(context, registry, jobs, queue, cache_path, workers, outcomes, returned) -> list:
    """One pool's pass over ``queue``, writing each batch's folders as it returns; the batches it could not
    finish because a worker died."""
    lost: list[list[int]] = []
    with ProcessPoolExecutor(max_workers=max(1, workers), mp_context=context, initializer=_start_worker,
                             initargs=(registry, jobs, cache_path)) as pool:
        pending = {pool.submit(_compute, numbers): numbers for numbers in queue}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                numbers = pending.pop(future)
                try:
                    computed = future.result()
                except BrokenProcessPool:
                    lost.append(numbers)
                    continue
                collect(outcomes, jobs, numbers, computed)
                returned([outcomes[n] for n in numbers])
    return sorted(lost, key=len, reverse=True)


def _start_worker(registry, jobs, cache_path) -> None:
    if registry is None:  # spawned: a fresh interpreter loads the plugins again
        from ..plugins import load  # noqa: PLC0415

        registry = load()
    try:
        cache = open_answers(cache_path)
    except MetabenchError as exc:  # damaged after the driver checked it: every job says so (an initializer
        cache = exc                # that raises breaks the pool, which reads as a worker dying)
    _WORKER.update(registry=registry, jobs=jobs, cache=cache)


def _compute(numbers: list[int]) -> list:
    """Per job of the batch: its payload to write, or its outcome (skipped, failed)."""
    jobs = [_WORKER["jobs"][n] for n in numbers]
    if isinstance(_WORKER["cache"], MetabenchError):
        return [failed(job, str(_WORKER["cache"])) for job in jobs]
    return compute_batch(_WORKER["registry"], jobs, _WORKER["cache"])
