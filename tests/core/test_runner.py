"""The runner end to end on the toy plugin: run files, resume after SIGKILL, cache keys, errors."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from metabench.cache import cache_root
from metabench.errors import MetabenchError
from metabench.runner import RunOptions, run
from metabench.store import read_results, read_samples


def _run(registry, tmp_path, tasks="toy_cls", models=("majority",), **kw):
    return run(registry, tasks, list(models), RunOptions(output_dir=tmp_path / "runs", progress=False, **kw))


def test_majority_run_writes_results_and_samples(toy_registry, tmp_path):
    (outcome,) = _run(toy_registry, tmp_path)
    assert outcome.status == "ok", outcome.message
    results = read_results(outcome.run_dir)
    samples = read_samples(outcome.run_dir)
    assert results["task"]["name"] == "toy_cls" and len(results["task"]["config_hash"]) == 64
    assert results["model"]["adapter"] == "majority"
    assert results["seeds"] == [0]  # deterministic baseline: one seed although the task asks for 2
    assert any(p["name"] == "toy_plugin" for p in results["plugins"])
    assert set(results["data"]["files"]) == {"toy_cls:toy/cls_test.tsv", "toy_cls:toy/cls_train.tsv"}
    assert len(samples) == results["n_items"] == 40
    import toy_plugin

    train_labels = [line.split("\t")[2].strip() for line in (toy_plugin.DATA_DIR / "toy/cls_train.tsv").read_text().splitlines()[1:]]
    majority = max(set(train_labels), key=train_labels.count)
    gold = [s["gold"] for s in samples]
    assert all(s["prediction"] == majority for s in samples)
    assert results["metrics"]["aggregate"]["accuracy"]["mean"] == pytest.approx(gold.count(majority) / 40)
    assert "text" not in json.dumps(samples[0])  # ids, not dataset text


def test_seeds_aggregate_mean_std(toy_registry, tmp_path):
    (outcome,) = _run(toy_registry, tmp_path, models=("random",), seeds=[0, 1, 2])
    agg = outcome.record.raw["metrics"]["aggregate"]["accuracy"]
    per_seed = [m["accuracy"] for m in outcome.record.raw["metrics"]["per_seed"].values()]
    import statistics

    assert agg["n"] == 3
    assert agg["mean"] == pytest.approx(statistics.fmean(per_seed))
    assert agg["std"] == pytest.approx(statistics.stdev(per_seed))


def test_limit_and_group_and_cache_hits(toy_registry, tmp_path):
    first = _run(toy_registry, tmp_path, tasks="toy_all", limit=5)
    assert [o.task for o in first] == ["toy_tag", "toy_cls"]
    assert all(o.record.raw["n_items"] == 5 for o in first)
    again = _run(toy_registry, tmp_path, tasks="toy_all", limit=5)
    assert all(o.record.raw["timings"]["cached_items"] == 5 for o in again)


def test_other_model_or_edited_task_never_reuses_answers(toy_registry, tmp_path, monkeypatch):
    _run(toy_registry, tmp_path, models=("constant:label=literal",))
    (other,) = _run(toy_registry, tmp_path, models=("constant:label=metaphorical",))
    assert other.record.raw["timings"]["cached_items"] == 0
    assert all(s["prediction"] == "metaphorical" for s in read_samples(other.run_dir))
    # edit the task: a new config hash, so nothing cached applies when the edited task runs
    import dataclasses

    from metabench.cache import AnswerCache
    from metabench.config.index import TaskIndex
    from metabench.jobs import Job
    from metabench.models.spec import parse_model_spec
    from metabench.launch.execute import execute

    task = TaskIndex(toy_registry).load("toy_cls")
    edited = dataclasses.replace(task, config=task.config.model_copy(update={"primary_metric": "macro_f1"}))
    assert edited.hash != task.hash
    spec = parse_model_spec("constant:label=metaphorical")
    options = RunOptions(output_dir=tmp_path / "runs", progress=False)
    cache = AnswerCache(tmp_path / "cache" / "answers.sqlite")
    try:
        same = execute(toy_registry, Job(task, spec, options), cache)
        changed = execute(toy_registry, Job(edited, spec, options), cache)
    finally:
        cache.close()
    assert same.record.timings.cached_items == 40
    assert changed.record.timings.cached_items == 0 and changed.record.n_items == 40
    assert changed.record.task.config_hash == edited.hash


def test_bad_model_argument_fails_the_job_with_the_fix(toy_registry, tmp_path):
    (bad,) = _run(toy_registry, tmp_path, tasks="toy_tag", models=("constant:label=literal",))
    assert bad.status == "failed" and "not one of the task's labels" in bad.message
    assert "constant:label=O" in bad.message


def test_unwritable_output_dir(toy_registry, tmp_path):
    target = tmp_path / "ro"
    target.mkdir()
    target.chmod(0o500)
    if os.access(target, os.W_OK):  # root ignores permissions
        target.chmod(0o700)
        target = tmp_path / "file-not-dir"
        target.write_text("x")
    with pytest.raises(MetabenchError) as err:
        run(toy_registry, "toy_cls", ["majority"], RunOptions(output_dir=target / "runs", progress=False))
    said = ("is a file, so no folder can be made under it" if target.name == "file-not-dir"  # checked before planning
            else "cannot write")
    assert "--output-dir" in str(err.value) and said in str(err.value), str(err.value)


def _cached_keys(cache_dir: Path) -> int:
    db = cache_dir / "answers.sqlite"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]


@pytest.mark.slow
def test_sigkill_then_resume_recomputes_no_finished_item(toy_env, tmp_path):
    """The run kills itself (SIGKILL) on entering the batch after its 12th answer, a point no timing decides;
    the resumed run computes only the 28 items that had no committed answer."""
    log, mark = tmp_path / "answered.log", tmp_path / "killed"
    env = {**toy_env, "TOY_COUNT_LOG": str(log), "TOY_KILL_MARK": str(mark), "TOY_KILL_AFTER": "12"}
    cmd = [sys.executable, "-m", "metabench.cli", "--tasks", "toy_cls", "--model", "killing:batch_size=1",
           "--launcher", "serial", "-o", str(tmp_path / "runs"), "--no-progress"]
    killed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL and mark.exists(), killed.stderr
    committed = _cached_keys(Path(env["METABENCH_CACHE_DIR"]))
    assert committed == len(log.read_text().splitlines()) == 12  # each answer committed before the next batch
    assert not any((tmp_path / "runs").rglob("results.json"))

    log.write_text("")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)  # the mark stops a second kill
    assert done.returncode == 0, done.stderr
    assert len(log.read_text().splitlines()) == 40 - committed
    results = json.loads(next((tmp_path / "runs" / "toy_cls").rglob("results.json")).read_text())
    assert results["timings"]["cached_items"] == committed
    assert results["n_items"] == 40


def test_a_fully_cached_job_is_one_query_and_renders_only_the_probe_request(toy_registry, tmp_path, monkeypatch):
    """Without the job memo (as when the parsed items were cleared), the second run finds the seed's complete
    answer set in one `jobs` row: no per-item look-up, no request rendered (the kind declares its request
    type, so no item is probed either), and the same run files."""
    from metabench.cache import AnswerCache
    from metabench.kinds.classification import Classification

    (first,) = _run(toy_registry, tmp_path, models=("counting",))
    first_samples = (first.run_dir / "samples.jsonl").read_bytes()
    calls = {"get_many": 0, "request": 0, "get_job": 0}
    original_request, original_get_job = Classification.request, AnswerCache.get_job

    def counting_request(self, item):
        calls["request"] += 1
        return original_request(self, item)

    def counting_get_job(self, key):
        calls["get_job"] += 1
        return original_get_job(self, key)

    monkeypatch.setattr(Classification, "request", counting_request)
    monkeypatch.setattr(AnswerCache, "get_job", counting_get_job)
    monkeypatch.setattr(AnswerCache, "get_run", lambda self, key: None)
    monkeypatch.setattr(AnswerCache, "get_many", lambda self, keys: calls.__setitem__("get_many", calls["get_many"] + 1) or {})
    (again,) = _run(toy_registry, tmp_path, models=("counting",))
    assert calls == {"get_many": 0, "request": 0, "get_job": 1}  # one row for the one seed
    assert again.record.raw["timings"]["cached_items"] == 40
    assert (again.run_dir / "samples.jsonl").read_bytes() == first_samples
    assert again.record.raw["metrics"] == first.record.raw["metrics"]


def test_a_model_that_cannot_serve_a_task_is_skipped_before_its_data_is_loaded(toy_registry, tmp_path, monkeypatch):
    import dataclasses

    from metabench.launch import batch, execute

    from metabench.cache import AnswerCache
    from metabench.config.index import TaskIndex
    from metabench.jobs import Job
    from metabench.models.spec import parse_model_spec

    task = TaskIndex(toy_registry).load("toy_cls")
    untrained = dataclasses.replace(task, config=task.config.model_copy(
        update={"splits": task.config.splits.model_copy(update={"train": None})}))
    monkeypatch.setattr(execute, "prepare", lambda *a, **k: pytest.fail("a skipped job loaded its data"))
    options = RunOptions(output_dir=tmp_path / "runs", progress=False)
    skipped = batch.attempt(toy_registry, Job(untrained, parse_model_spec("majority"), options), AnswerCache(None))
    assert skipped.status == "skipped" and skipped.reason == "needs a training split"


def test_baseline_answers_skip_the_answer_cache(toy_registry, tmp_path):
    """A baseline answers faster than SQLite stores an answer: no per-item rows, no `jobs` rows for it."""
    _run(toy_registry, tmp_path, models=("majority", "random"), seeds=[0, 1])
    with sqlite3.connect(cache_root() / "answers.sqlite") as conn:
        counts = [conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in ("answers", "jobs", "runs")]
    assert counts == [0, 0, 2]  # only the two finished jobs, remembered whole


def _without_volatile(results: dict) -> dict:
    return {k: v for k, v in results.items() if k not in ("created", "timings")}


def test_a_remembered_job_loads_no_data_and_writes_the_same_run(toy_registry, tmp_path, monkeypatch):
    from metabench.launch import execute
    from metabench.timings import Phases

    (first,) = _run(toy_registry, tmp_path, models=("random",), seeds=[0, 1])
    monkeypatch.setattr(execute, "prepare", lambda *a, **k: pytest.fail("a remembered job loaded its data"))
    (again,) = run(toy_registry, "toy_cls", ["random"], RunOptions(output_dir=tmp_path / "again", seeds=[0, 1], progress=False))
    assert again.status == "ok", again.message
    assert (again.run_dir / "samples.jsonl").read_bytes() == (first.run_dir / "samples.jsonl").read_bytes()
    assert _without_volatile(read_results(again.run_dir)) == _without_volatile(read_results(first.run_dir))
    timings = again.record.raw["timings"]
    assert timings["cached_items"] == 80 and timings["load_s"] == 0 and timings["predict_s"] == 0
    assert sum(timings[p] for p in Phases().seconds) == pytest.approx(timings["total_s"], rel=0.05)


@pytest.mark.slow
def test_the_job_memo_misses_when_its_inputs_change(toy_registry, tmp_path, monkeypatch):
    """Another seed list, --limit or model is another job; with the parsed items cleared the job is computed."""
    from metabench import jobs
    from metabench.data import itemcache
    from metabench.launch import execute

    prepared = []
    real = execute.prepare
    monkeypatch.setattr(execute, "prepare", lambda *a, **k: prepared.append(a[1].name) or real(*a, **k))

    def computed(**kw) -> bool:
        """Whether the job was computed: its data prepared (counted), not taken whole from the memo."""
        model = kw.pop("model", "random")
        before = len(prepared)
        (outcome,) = run(toy_registry, "toy_cls", [model], RunOptions(output_dir=tmp_path / "o", progress=False,
                                                                      overwrite=True, **kw))
        assert outcome.status == "ok", outcome.message
        return len(prepared) == before + 1

    assert computed(seeds=[0]) and not computed(seeds=[0])
    assert computed(seeds=[1]) and computed(seeds=[0], limit=7) and computed(seeds=[0], model="random:strategy=prior")
    for entry in itemcache.cache_folder().glob("*.pkl"):
        entry.unlink()
    jobs._load_memo.cache_clear()  # as in a new process, whose slices are parsed (and stored) again
    assert computed(seeds=[0])  # no parsed items: no key; the job is computed (and remembered again)
    assert not computed(seeds=[0])


def test_a_remembered_job_still_fails_on_an_altered_data_file(toy_registry, tmp_path, monkeypatch):
    import shutil

    import toy_plugin

    mirror = tmp_path / "mirror"
    shutil.copytree(toy_plugin.DATA_DIR, mirror)
    monkeypatch.setenv("METABENCH_DATA_DIR", str(mirror))
    (first,) = _run(toy_registry, tmp_path, models=("majority",))
    assert first.status == "ok"
    test_file = mirror / "toy" / "cls_test.tsv"
    test_file.write_text(test_file.read_text().replace("\t", "\t ", 1))
    from metabench.data import resolve

    monkeypatch.setattr(resolve, "_verified", {})  # a new process: files are verified once per process
    (again,) = run(toy_registry, "toy_cls", ["majority"], RunOptions(output_dir=tmp_path / "again", progress=False))
    assert again.status == "failed" and "cls_test.tsv" in again.message and "sha256" in again.message


def test_plan_numbers_every_job_for_the_progress_counter(toy_registry, tmp_path):
    """`--tasks all` shows "job 3/4": each planned job knows its number and the run's job count."""
    from metabench.config.index import TaskIndex
    from metabench.runner import plan

    jobs = plan(TaskIndex(toy_registry), "toy_cls,toy_tag", ["majority", "lookup"],
                RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert [job.position for job in jobs] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert [(job.task.name, job.model.text) for job in jobs][:2] == [("toy_cls", "majority"), ("toy_cls", "lookup")]
