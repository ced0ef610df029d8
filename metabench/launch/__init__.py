"""Executing planned jobs: the one owner of how a job is computed, where, and how its run folder is written.

:func:`launch` picks the launcher from ``options.launcher`` alone (``serial``, ``processes``, ``auto``, ``ray``).
Every launcher computes a job with :func:`metabench.launch.execute.execute` (through
:func:`metabench.launch.batch.attempt`) and writes its folder on the driver (:mod:`metabench.launch.outcomes`),
so the run files are the same whichever launcher ran them. Planning — which jobs a ``--tasks`` selection and
``--model`` values make — is :mod:`metabench.runner`'s, one floor up.
"""

from __future__ import annotations

from ..jobs import Job, RunOptions
from ..registry import Registry
from .outcomes import JobOutcome
from .processes import launch as on_processes
from .serial import run_serial

__all__ = ["LAUNCHERS", "launch"]

LAUNCHERS = ("auto", "serial", "processes", "ray")


def launch(registry: Registry, jobs: list[Job], options: RunOptions) -> list[JobOutcome]:
    """Run ``jobs`` with the launcher ``options.launcher`` names; the outcomes in the jobs' order."""
    if options.launcher == "ray":
        from .ray_workers import launch as on_ray  # noqa: PLC0415 - ray is an optional dependency

        return on_ray(registry, jobs, options)
    if options.launcher in ("processes", "auto"):
        return on_processes(registry, jobs, options)
    return run_serial(registry, jobs, options)
