"""What a launcher hands back per job, and the one way every launcher turns computed jobs into outcomes.

Computing a job (:mod:`metabench.launch.execute`, on whichever process or node) is apart from writing its run
folder (:func:`write`, always on the driver), so the run files are the serial launcher's whichever worker
computed them. A worker returns, per job, either the payload of a :class:`JobResult` or the job's
:class:`JobOutcome` (skipped, failed); :func:`collect` is the loop every launcher runs over what came back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import MetabenchError
from ..jobs import Job
from ..run_record import RunRecord
from ..store import seal, write_run

#: How often a batch whose worker died (killed, out of memory, its node gone) is run again before its jobs
#: fail: every answer committed before is found in the cache, so a retry recomputes only the batch in flight.
MAX_RETRIES = 3


@dataclass
class JobOutcome:
    task: str
    model: str
    status: str  # ok | skipped | failed
    run_dir: Path | None = None
    #: the record as written (ok jobs)
    record: RunRecord | None = None
    message: str = ""
    reason: str = ""  # short cause of a skip, counted in the run's closing line
    hint: str = ""


@dataclass
class JobResult:
    """What computing a job gives: the results record, the per-item samples (samples.jsonl's bytes) and the
    run folder they belong in."""

    job: Job
    record: RunRecord
    samples: bytes
    run_dir: Path
    #: results.json's bytes once the record is sealed (:meth:`seal`: ``record`` then holds the samples' digest)
    body: bytes | None = None

    def payload(self) -> dict:
        """What a worker process sends back for the driver to write (the job itself the driver holds)."""
        return {"record": self.record, "samples": self.samples, "run_dir": str(self.run_dir), "body": self.body}

    @classmethod
    def from_payload(cls, job: Job, payload: dict) -> JobResult:
        return cls(job, payload["record"], payload["samples"], Path(payload["run_dir"]), payload.get("body"))

    def seal(self) -> JobResult | JobOutcome:
        """This result with its record sealed and encoded (:func:`metabench.store.seal`; a parallel launcher's
        worker does it, else :func:`written`), the time it took in its ``write_s``; a record the model refuses
        fails the job, before anything is written."""
        try:
            record, body = seal(self.record, self.samples, self.run_dir, started=time.perf_counter())
        except MetabenchError as exc:
            return failed(self.job, str(exc))
        return JobResult(self.job, record, self.samples, self.run_dir, body)


def written(result: JobResult) -> JobOutcome:
    """Write a computed job's run folder (its record sealed first, unless a worker did); its outcome, which
    holds the record as written (failed when the store refuses the record or to replace a run)."""
    if result.body is None:
        result = result.seal()
        if isinstance(result, JobOutcome):
            return result
    try:
        write(result)
    except MetabenchError as exc:
        return failed(result.job, str(exc))
    return JobOutcome(result.job.task.name, result.job.model.text, "ok", result.run_dir, result.record)


def write(result: JobResult) -> None:
    """Write a computed job's run folder (results.json + samples.jsonl), unflushed: a launcher calls
    :func:`metabench.store.sync` once after its last job (see ``write_run``'s ``durable``). The record is held to
    the whole :class:`metabench.run_record.RunRecord` first (``complete``, or already by :meth:`JobResult.seal`):
    a field the model does not declare, or one it declares left out, fails the job before anything is written."""
    write_run(result.run_dir, result.record, result.samples, overwrite=result.job.options.overwrite,
              started=time.perf_counter(), durable=False, complete=True, body=result.body)


def collect(outcomes: list, jobs: list[Job], numbers: list[int], computed: list) -> None:
    """Write what a worker computed for ``jobs[n]`` (``n`` in ``numbers``) and set ``outcomes[n]``: a payload
    becomes its run folder, an outcome (skipped, failed) is kept as it is."""
    for n, done in zip(numbers, computed):
        outcomes[n] = done if isinstance(done, JobOutcome) else written(JobResult.from_payload(jobs[n], done))


def failed(job: Job, message: str, hint: str = "") -> JobOutcome:
    """The outcome of a job that could not be computed (its worker lost too often, a Ray error)."""
    return JobOutcome(job.task.name, job.model.text, "failed", message=message, hint=hint)
