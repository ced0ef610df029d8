"""The job builder: a job is plain data (it pickles, for a launcher on another process), a task's slices are
resolved once per load, and computing a job is apart from writing it."""

from __future__ import annotations

import pickle

from metabench import jobs
from metabench.cache import AnswerCache
from metabench.config.index import TaskIndex
from metabench.jobs import Job, RunOptions, prepare
from metabench.models.spec import parse_model_spec
from metabench.runner import execute, write


def test_a_job_pickles_and_runs_the_same_after(toy_registry, tmp_path):
    task = TaskIndex(toy_registry).load("toy_cls")
    job = Job(task, parse_model_spec("random"), RunOptions(output_dir=tmp_path / "runs", progress=False, seeds=[0, 1]))
    copy = pickle.loads(pickle.dumps(job))
    assert copy.task.hash == task.hash and copy.model == job.model and copy.options == job.options
    cache = AnswerCache(None)
    first, second = execute(toy_registry, job, cache), execute(toy_registry, copy, cache)
    assert first.results["metrics"]["per_seed"] == second.results["metrics"]["per_seed"]
    assert first.samples == second.samples  # samples.jsonl's bytes
    assert not first.run_dir.exists()  # computing writes no run folder...
    write(first)
    assert (first.run_dir / "results.json").is_file()  # ...writing does


def test_slices_are_resolved_once_per_load(toy_registry, monkeypatch):
    calls = []
    real = jobs.resolve_split
    monkeypatch.setattr(jobs, "resolve_split", lambda config, value: calls.append(value) or real(config, value))
    task = TaskIndex(toy_registry).load("toy_cls")
    data = prepare(toy_registry, task, limit=5)
    hashes = {data.data_hash(), data.data_hash(("train", "validation"), with_limit=False)}
    assert len(calls) == 2 and len(hashes) == 2  # test + train resolved while loading, not again for hashing
    assert len(data.test.items) == 5 and data.data_hash() != prepare(toy_registry, task, limit=6).data_hash()


def test_run_returns_its_task_index(toy_registry, tmp_path):
    from metabench.runner import run

    report = run(toy_registry, "toy_all", ["majority"], RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert [o.task for o in report] == ["toy_tag", "toy_cls"]
    assert set(report.index.select("toy_all")) == {"toy_tag", "toy_cls"} and "toy_all" in report.index.groups
