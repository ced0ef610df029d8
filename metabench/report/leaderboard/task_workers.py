"""The build's per-task work (verify, keep the newest, rank and test) spread over worker processes.

Everything a task's rows need is the task's own runs: verification's cross-run gold check, "the newest run per
model and item set" and every paired test stay within one task, and every resample is seeded per comparison,
so a task's rows do not depend on which process computed them or in what order. A build of the 829 committed
runs spends most of its time there (reading samples, bootstrapping, the ≈ chance tests), one CPU at a time
until this module; with ``jobs`` processes it takes about 1/``jobs`` of that (measured in
``benchmarks/bench_leaderboard.py``). ``jobs=1`` is the same work in this process, in the same order: the
reference the parallel path is tested against (`tests/report/test_leaderboard_jobs.py`).

Workers are forked, so they start with the parent's registry, runs and caches already in memory, and hand
back picklable data (the tasks' typed board parts and each run's verdict fields, no `Run`). Where ``fork`` does not exist (Windows, some macOS setups) the
work stays in this process.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from ...errors import MetabenchError
from ...launch.processes import available_cpus

@dataclass(frozen=True)
class _Worker:
    """In a worker process: the work function and its shared state, set once per process by `_start`."""

    work: Callable[[Any, Sequence], Any]
    state: Any


_WORKER: _Worker | None = None


def run_chunks(work: Callable[[Any, Sequence], Any], state: Any, chunks: Sequence[Sequence], costs: Sequence[float],
               jobs: int | None, done: Callable[[], None]) -> list:
    """``work(state, chunk)`` for every chunk, in chunk order; ``done()`` once per element of a chunk as it
    finishes (a progress bar counts tasks).

    With ``jobs`` > 1 (and ``fork`` available) the chunks run in that many forked processes, the costliest
    first (``costs``: so the last one to start is a small one and no process idles while another finishes
    a large task); ``work`` must be a module-level function and return picklable data."""
    jobs = jobs or available_cpus()  # default: one worker per CPU this process may use
    if jobs <= 1 or len(chunks) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        in_order = []
        for chunk in chunks:
            in_order.append(work(state, chunk))
            _count(done, chunk)
        return in_order
    order = sorted(range(len(chunks)), key=lambda i: -costs[i])
    results: list = [None] * len(chunks)
    try:
        with ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), mp_context=multiprocessing.get_context("fork"),
                                 initializer=_start, initargs=(work, state)) as pool:
            pending = {pool.submit(_run, chunks[i]): i for i in order}
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    index = pending.pop(future)
                    results[index] = future.result()
                    _count(done, chunks[index])
    except BrokenProcessPool:
        raise MetabenchError("a leaderboard worker process died (killed, or out of memory)",
                             hint="build with fewer processes, e.g. --jobs 1 (one process, the least memory)") from None
    return results


def _count(done: Callable[[], None], chunk: Sequence) -> None:
    for _ in chunk:
        done()


def _start(work: Callable, state: Any) -> None:
    global _WORKER
    _WORKER = _Worker(work, state)


def _run(chunk: Sequence) -> Any:
    if _WORKER is None:
        raise RuntimeError("a leaderboard worker ran a chunk before its initializer (_start)")
    return _WORKER.work(_WORKER.state, chunk)
