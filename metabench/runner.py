"""Planning a run: a ``--tasks`` selection × the ``--model`` values → jobs, checked before anything runs, then
handed to the launch layer.

A job is one (task, model) (:class:`metabench.jobs.Job`: plain, picklable data). How a job is computed
(cache, fit, predict, score), where (this process, worker processes, Ray) and how its run folder is written is
:mod:`metabench.launch`'s alone: this module plans, checks and hands over.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from .config.index import TaskIndex
from .connections import split_host_port
from .errors import MetabenchError, UnsupportedError
from .option_values import whole_number
from .jobs import Job, RunOptions
from .launch import LAUNCHERS
from .launch import launch as launch_jobs
from .launch.execute import preflight
from .launch.outcomes import JobOutcome
from .models.spec import check_model_spec, parse_model_spec
from .registry import Registry
from .store import check_writable


class RunReport(list):
    """The outcomes of a run (a list of :class:`JobOutcome`), with the task index the run selected from, so
    callers (the CLI's group means) need not read every task file again."""

    def __init__(self, outcomes: list[JobOutcome], index: TaskIndex):
        super().__init__(outcomes)
        self.index = index


def plan(index: TaskIndex, selection: str, models: list[str], options: RunOptions) -> list[Job]:
    """The jobs for a --tasks selection and the --model values, validated before anything runs."""
    specs = [parse_model_spec(m) for m in models]
    for spec in specs:
        check_model_spec(spec, index.registry)
    pairs = [(name, spec) for name in index.select(selection) for spec in specs]
    return [Job(index.load(name, defer_data=True), spec, options, (number, len(pairs)))
            for number, (name, spec) in enumerate(pairs, 1)]


def warn_superseded(jobs: list[Job]) -> None:
    """One warning per deprecated task a user selected (a run or its dry run; not a report planning the suite):
    the benchmark whose protocol asks its prompt now, where a decoder's runs pair with every other model's
    (metabench.answering)."""
    for task in {job.task.name: job.task for job in jobs}.values():
        successor = task.config.metadata.superseded_by
        if successor:
            logging.getLogger("metabench").warning(
                "task '%s' is deprecated: its prompt is now a protocol of '%s' (metabench --tasks %s --model "
                "hf-decoder:NAME; answer=generated for the generated one), whose runs pair with every model's; "
                "'%s' keeps working until 0.2", task.name, successor, successor, task.name)


#: More draws per item than this is a typo (``--repeat 1000``): each draw is a full pass over the test items.
MAX_REPEAT = 100
#: More worker processes than this is a typo (``--workers 10000``), not a machine: each one loads the plugins.
MAX_WORKERS = 1024


def check_options(options: RunOptions) -> None:
    """Bad parameters are one clear error before any work (``--limit -1`` once scored all but one item)."""
    if options.limit is not None:
        whole_number(options.limit, "--limit", hint="leave --limit out to evaluate the whole test split")
    for option, value in (("--no-cache", options.use_cache), ("--overwrite", options.overwrite)):
        if not isinstance(value, bool):
            raise MetabenchError(f"{option}: expected true or false, got {value!r}")
    if not isinstance(options.progress, bool) and options.progress not in ("bars", "lines"):
        raise MetabenchError(f"--no-progress: expected true or false, got {options.progress!r}",
                             hint="progress is true (bars on a terminal, lines in a log), false, 'bars' or 'lines'")
    if not isinstance(options.launcher, str) or options.launcher not in LAUNCHERS:
        raise MetabenchError(f"unknown launcher {options.launcher!r}", hint=f"launchers: {', '.join(LAUNCHERS)}")
    if options.ray_address and options.launcher != "ray":
        raise MetabenchError("--ray-address only applies to --launcher ray", hint="add --launcher ray, or leave it out")
    if options.workers is not None and options.launcher not in ("processes", "ray"):
        raise MetabenchError("--workers only applies to --launcher processes or ray",
                             hint="add --launcher processes (this machine's cores) or ray, or leave it out")
    whole_number(options.repeat, "--repeat", 1, MAX_REPEAT,
                 hint="e.g. --repeat 5 (five draws per item of a sampled decoder, the majority scored); leave it "
                 "out for one draw")
    if options.workers is not None:
        whole_number(options.workers, "--workers", 1, MAX_WORKERS,
                     hint="leave --workers out to use every CPU, or give a count, e.g. --workers 2")
    if options.ray_address is not None and not isinstance(options.ray_address, str):
        raise MetabenchError(f"--ray-address {options.ray_address!r}: expected HOST:PORT text", hint="e.g. 127.0.0.1:6379")
    if options.ray_address and options.ray_address != "auto":
        split_host_port(options.ray_address, option="--ray-address", example="127.0.0.1:6379 (or ray://HOST:10001)")
    check_output_folder(options.output_dir)


def check_output_folder(folder: Path) -> None:
    """``--output-dir`` is a folder or can be made one, checked without writing (a dry run writes nothing): a
    file there, or a file on the way to it (``-o results.txt/runs``), is refused naming it. Whether the folder
    can be written is for the run itself (:func:`metabench.store.check_writable`)."""
    for path in (folder, *folder.parents):
        if not os.path.lexists(path):
            continue
        if path.is_dir():
            return
        what = ("a symlink to nothing" if path.is_symlink() and not path.exists() else
                "a file" if path.is_file() else "a device, pipe or socket")
        if path == folder:
            raise MetabenchError(f"--output-dir {folder}: this is {what}, not a folder",
                                 hint="choose a folder, e.g. --output-dir ./runs")
        raise MetabenchError(f"--output-dir {folder}: {path} is {what}, so no folder can be made under it",
                             hint="choose a folder, e.g. --output-dir ./runs")


def check_repeatable(registry: Registry, jobs: list[Job]) -> None:
    """``--repeat`` N > 1 on a job whose answers cannot differ between draws raises (usage, exit 2); a job its
    model cannot serve at all stays a skip, reported when it runs."""
    for job in jobs:
        try:
            preflight(registry, job)
        except UnsupportedError:
            continue


def run(registry: Registry, selection: str, models: list[str], options: RunOptions) -> RunReport:
    """Plan the jobs, then run them with the launcher ``options.launcher`` names (:func:`metabench.launch.launch`);
    every launcher writes the same run folders."""
    check_options(options)
    index = TaskIndex(registry)
    jobs = plan(index, selection, models, options)
    warn_superseded(jobs)
    if options.repeat > 1:  # a job that cannot repeat is bad usage, refused before any job runs
        check_repeatable(registry, jobs)
    check_writable(options.output_dir)
    return RunReport(launch_jobs(registry, jobs, options), index)
