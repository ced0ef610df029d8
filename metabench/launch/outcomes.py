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
from ..store import SealedRun, seal, write

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
    #: the run as it will be written, once sealed (:meth:`seal`: its record holds the samples' digest)
    sealed: SealedRun | None = None

    def payload(self) -> dict:
        """What a worker process sends back for the driver to write (the job itself the driver holds)."""
        return {"record": self.record, "samples": self.samples, "run_dir": str(self.run_dir), "sealed": self.sealed}

    @classmethod
    def from_payload(cls, job: Job, payload: dict) -> JobResult:
        return cls(job, payload["record"], payload["samples"], Path(payload["run_dir"]), payload.get("sealed"))

    def seal(self) -> JobResult | JobOutcome:
        """This result with its run sealed (:func:`metabench.store.seal`; a parallel launcher's worker does it,
        else :func:`written`), the time it took in its ``write_s``; a record the model refuses fails the job,
        before anything is written."""
        try:
            sealed = seal(self.record, self.samples, started=time.perf_counter(), where=self.run_dir)
        except MetabenchError as exc:
            return failed(self.job, str(exc))
        return JobResult(self.job, sealed.record, self.samples, self.run_dir, sealed)


def written(result: JobResult) -> JobOutcome:
    """Write a computed job's run folder (its run sealed first, unless a worker did), unflushed: a launcher calls
    :func:`metabench.store.sync` once after its last job (see :func:`metabench.store.write`'s ``durable``). The
    outcome holds the record as written (failed when the store refuses the record or to replace a run)."""
    try:
        sealed = result.sealed or seal(result.record, result.samples, started=time.perf_counter(), where=result.run_dir)
        write(result.run_dir, sealed, overwrite=result.job.options.overwrite, durable=False)
    except MetabenchError as exc:
        return failed(result.job, str(exc))
    return JobOutcome(result.job.task.name, result.job.model.text, "ok", result.run_dir, sealed.record)


def collect(outcomes: list, jobs: list[Job], numbers: list[int], computed: list) -> None:
    """Write what a worker computed for ``jobs[n]`` (``n`` in ``numbers``) and set ``outcomes[n]``: a payload
    becomes its run folder, an outcome (skipped, failed) is kept as it is."""
    for n, done in zip(numbers, computed):
        outcomes[n] = done if isinstance(done, JobOutcome) else written(JobResult.from_payload(jobs[n], done))


def failed(job: Job, message: str, hint: str = "") -> JobOutcome:
    """The outcome of a job that could not be computed (its worker lost too often, a Ray error)."""
    return JobOutcome(job.task.name, job.model.text, "failed", message=message, hint=hint)
