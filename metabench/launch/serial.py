"""``--launcher serial``: the jobs one after another in this process, sharing one answer cache."""

from __future__ import annotations

from .. import progress
from ..jobs import Job, RunOptions
from ..registry import Registry
from ..store import sync
from .answers import answers_path, open_answers
from .batch import attempt
from .gc_tuning import collecting_less
from .outcomes import JobOutcome, written


def run_serial(registry: Registry, jobs: list[Job], options: RunOptions) -> list[JobOutcome]:
    """The jobs one after another in this process, sharing one answer cache."""
    cache = open_answers(answers_path(options.use_cache))
    outcomes = []
    try:
        with collecting_less(), progress.run_style(options.progress_style), \
                progress.meter(len(jobs), "run", "job", leave=True) as bar:
            for job in jobs:
                outcomes.append(_run_guarded(registry, job, cache))
                progress.count_jobs(bar, outcomes[-1:], len(jobs))
    finally:
        cache.close()
        sync()  # the run folders were written without a flush each (store.write, durable=False)
    return outcomes


def _run_guarded(registry, job: Job, cache) -> JobOutcome:
    result = attempt(registry, job, cache)
    return result if isinstance(result, JobOutcome) else written(result)
