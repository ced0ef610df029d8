"""The job builder: a job is plain data (it pickles, for a launcher on another process), a task's slices are
resolved once per load, and computing a job is apart from writing it."""

from __future__ import annotations

import pickle

from metabench import jobs
from metabench.cache import AnswerCache
from metabench.config.index import TaskIndex
from metabench.jobs import Job, RunOptions, prepare
from metabench.models.spec import parse_model_spec
from metabench.launch.execute import execute
from metabench.launch.outcomes import written


def test_a_job_pickles_and_runs_the_same_after(toy_registry, tmp_path):
    task = TaskIndex(toy_registry).load("toy_cls")
    job = Job(task, parse_model_spec("random"), RunOptions(output_dir=tmp_path / "runs", progress=False, seeds=[0, 1]))
    copy = pickle.loads(pickle.dumps(job))
    assert copy.task.hash == task.hash and copy.model == job.model and copy.options == job.options
    cache = AnswerCache(None)
    first, second = execute(toy_registry, job, cache), execute(toy_registry, copy, cache)
    assert first.record.metrics.per_seed == second.record.metrics.per_seed
    assert first.samples == second.samples  # samples.jsonl's bytes
    assert not first.run_dir.exists()  # computing writes no run folder...
    assert written(first).status == "ok"
    assert (first.run_dir / "results.json").is_file()  # ...writing does


def test_slices_are_resolved_once_per_load(toy_registry, monkeypatch, tmp_path):
    """Loading, hashing, the job memo, job groups and the run's task facts all read the loaded task's slices."""
    from metabench import job_memo
    from metabench.config import validate
    from metabench.launch.job_groups import data_key
    from metabench.task_facts import task_facts

    task = TaskIndex(toy_registry).load("toy_cls")  # validation checks every slice; what follows reads them
    calls = []
    real = validate.resolve_split
    monkeypatch.setattr(validate, "resolve_split", lambda config, value: calls.append(value) or real(config, value))
    data = prepare(toy_registry, task, limit=5)
    hashes = {data.data_hash(), data.data_hash(("train", "validation"), with_limit=False)}
    job = Job(task, parse_model_spec("random"), RunOptions(output_dir=tmp_path))
    job_memo.key(toy_registry, job, "fingerprint", "baseline", [0])
    assert data_key(job) == '["toy_cls"]'
    assert [d["roles"] for d in task_facts(toy_registry, task)["datasets"]] == [["test", "train"]]
    assert len(calls) == 2 and len(hashes) == 2  # test + train resolved once, not again by any reader
    assert len(data.test.items) == 5 and data.data_hash() != prepare(toy_registry, task, limit=6).data_hash()


def test_run_returns_its_task_index(toy_registry, tmp_path):
    from metabench.runner import run

    report = run(toy_registry, "toy_all", ["majority"], RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert [o.task for o in report] == ["toy_tag", "toy_cls"]
    assert set(report.index.select("toy_all")) == {"toy_tag", "toy_cls"} and "toy_all" in report.index.groups


def test_a_whole_slice_shares_its_id_hash_and_golds_across_jobs_and_a_limit_does_not(toy_registry):
    from metabench.jobs import ids_sha256
    from metabench.kinds.classification import Classification

    task = TaskIndex(toy_registry).load("toy_cls")
    first, second = prepare(toy_registry, task), prepare(toy_registry, task)
    train_a, train_b = first.splits["train"], second.splits["train"]
    assert train_a.items is not train_b.items and train_a._slice() is train_b._slice() is not None
    assert train_a.golds(first.kind) == [first.kind.gold(i) for i in train_a.items]
    assert train_b._slice().golds  # read once, kept by the slice for the next job
    assert train_a.ids_sha256() == ids_sha256(train_a.items)

    limited = prepare(toy_registry, task, limit=3)
    assert limited.test._slice() is None  # cut by --limit: its own hash and golds, not the slice's
    assert limited.test.ids_sha256() == ids_sha256(limited.test.items) != first.test.ids_sha256()
    assert limited.test.golds(limited.kind) == [limited.kind.gold(i) for i in limited.test.items]

    class Shouting(Classification):  # a plugin's subclass that reads golds its own way
        def gold(self, item):
            return super().gold(item).upper()

    shouting = Shouting(task.config, first.kind.metric_fns)
    assert shouting.gold_key() is None
    assert train_a.golds(shouting) == [g.upper() for g in train_a.golds(first.kind)]
