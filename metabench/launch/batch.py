"""A worker's share of a run: each job of a batch computed, a skip or a failure kept as the job's outcome."""

from __future__ import annotations

from ..data.resolve import flush_stamps
from ..errors import MetabenchError, NotBuiltError, UnsupportedError
from ..extras import missing_extra
from ..jobs import Job
from .execute import execute
from .gc_tuning import collecting_less
from .outcomes import JobOutcome, JobResult


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
    """A parallel worker's share: each job computed (:func:`attempt`), its record sealed, and returned as the
    payload the driver writes, or as its outcome (skipped, failed). The files this worker verified are
    recorded now: a worker may exit without running atexit handlers."""
    with collecting_less():
        results = [attempt(registry, job, cache) for job in jobs]
        results = [result if isinstance(result, JobOutcome) else result.seal() for result in results]
    flush_stamps()
    return [result if isinstance(result, JobOutcome) else result.payload() for result in results]
