"""The run store: folder names that keep answer sets apart, one-unit writes under a kill, concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import stat

import pytest

from metabench.errors import MetabenchError, RunFileError
from metabench.runs.stored import find_runs, load_run
from metabench.runner import RunOptions, run
from metabench.store import (RESULTS, SAMPLES, SAMPLES_GZ, SealedRun, read_results, read_samples, run_folders, run_name,
                             write, write_run)

#: The store's file-system calls: a kill can fall between any two of them.
_OPS = ("mkdir", "open", "write", "fsync", "close", "rename", "replace", "unlink", "rmdir")


def _run(tag: str, n: int = 5) -> tuple[dict, list[dict]]:
    """A minimal run whose every file says which run it belongs to."""
    samples = [{"id": f"i{i}", "seed": 0, "gold": "a", "prediction": tag, "scores": {"correct": 0.0}} for i in range(n)]
    results = {"schema_version": 1, "tag": tag, "task": {"name": "t", "primary_metric": "accuracy"},
               "model": {"spec": "m"}, "seeds": [0], "n_items": n, "metrics": {"per_seed": {}, "aggregate": {}}}
    return results, samples


def _which(run_dir) -> str:
    """The tag of the complete run the readers see; fails if the two files do not belong together."""
    (found,) = [r for r in find_runs([run_dir.parent]) if r.path.name.lstrip(".").startswith(run_dir.name)]
    assert found.path == load_run(run_dir).path
    tags = {row["prediction"] for row in found.samples} | {found.record.raw["tag"]}
    assert len(tags) == 1, f"a mixed run: {tags}"
    return tags.pop()


def _killed_at(step: int, run_dir, results, samples, overwrite: bool) -> bool:
    """Write in a forked child that dies (os._exit, no clean-up) at its ``step``-th file operation."""
    pid = os.fork()
    if pid == 0:
        count = [0]
        for name in _OPS:
            original = getattr(os, name)

            def counted(*args, _original=original, **kwargs):
                count[0] += 1
                if count[0] == step:
                    os._exit(9)
                return _original(*args, **kwargs)

            setattr(os, name, counted)
        try:
            write_run(run_dir, results, samples, overwrite=overwrite)
        except BaseException:
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, 9), f"the writer failed instead of being killed (exit {code})"
    return code == 9


@pytest.mark.slow
@pytest.mark.parametrize("previous", [True, False], ids=["replacing a run", "first run"])
def test_a_kill_between_any_two_file_operations_leaves_one_complete_run(tmp_path, previous):
    steps = 0
    while True:
        steps += 1
        run_dir = tmp_path / str(steps) / "t" / "m"
        if previous:
            write_run(run_dir, *_run("old"))
        killed = _killed_at(steps, run_dir, *_run("new"), overwrite=True)
        if previous:
            assert _which(run_dir) in ("old", "new")
        elif killed:
            assert not run_folders(run_dir.parent) or _which(run_dir) == "new"
        write_run(run_dir, *_run("next"), overwrite=True)  # the next writer repairs whatever was left
        assert _which(run_dir) == "next"
        assert sorted(p.name for p in run_dir.parent.iterdir()) == ["m"]
        if not killed:
            break
    assert steps > 15, "the fault injection did not reach the store's operations"


def _writer(barrier, run_dir, tag, overwrite, queue):
    barrier.wait()
    try:
        write_run(run_dir, *_run(tag, n=200), overwrite=overwrite)
        queue.put((tag, "ok"))
    except MetabenchError as exc:
        queue.put((tag, exc.message))


@pytest.mark.slow
@pytest.mark.parametrize("overwrite", [False, True])
def test_two_concurrent_runs_into_one_folder_never_mix(tmp_path, overwrite):
    context = multiprocessing.get_context("fork")
    for attempt in range(20):
        run_dir = tmp_path / str(attempt) / "t" / "m"
        barrier, queue = context.Barrier(2), context.Queue()
        writers = [context.Process(target=_writer, args=(barrier, run_dir, tag, overwrite, queue)) for tag in "AB"]
        for w in writers:
            w.start()
        for w in writers:
            w.join(30)
            assert w.exitcode == 0
        outcomes = dict(queue.get(timeout=5) for _ in writers)
        winner = _which(run_dir)
        assert outcomes[winner] == "ok"
        if overwrite:
            assert set(outcomes.values()) == {"ok"}
        else:
            (loser,) = set("AB") - {winner}
            assert "already holds a finished run" in outcomes[loser] and "refusing to replace it" in outcomes[loser]


def test_run_names_keep_answer_sets_apart():
    assert run_name("lookup", [0], [0], None) == "lookup"
    assert run_name("lookup", [0], [0], 50) == "lookup@limit=50"
    assert run_name("hf_minilm-l6", [0, 1], [0, 1, 2, 3, 4], None) == "hf_minilm-l6@seeds=0,1"
    assert run_name("random", [0, 1, 2, 3], [0, 1], 7) == "random@seeds=0-3@limit=7"


@pytest.mark.slow
def test_a_limited_run_never_replaces_the_full_run(toy_registry, tmp_path):
    options = dict(output_dir=tmp_path / "runs", progress=False)
    (full,) = run(toy_registry, "toy_cls", ["lookup"], RunOptions(**options))
    before = {name: (full.run_dir / name).read_bytes() for name in (RESULTS, SAMPLES)}
    (short,) = run(toy_registry, "toy_cls", ["lookup"], RunOptions(limit=5, **options))
    (seeds,) = run(toy_registry, "toy_cls", ["random"], RunOptions(seeds=[0, 1, 2], **options))
    assert short.run_dir.name == "lookup@limit=5" and seeds.run_dir.name == "random@seeds=0-2"
    assert {name: (full.run_dir / name).read_bytes() for name in before} == before
    assert read_results(short.run_dir)["n_items"] == 5 and read_results(full.run_dir)["n_items"] == 40
    # a limit at least as large as the split is the full run: same folder, same answers, so it may replace it
    (whole,) = run(toy_registry, "toy_cls", ["lookup"], RunOptions(limit=1000, **options))
    assert whole.status == "ok" and whole.run_dir == full.run_dir


def test_a_finished_run_with_other_answers_is_replaced_only_with_overwrite(toy_registry, tmp_path):
    options = dict(output_dir=tmp_path / "runs", progress=False)
    (first,) = run(toy_registry, "toy_cls", ["constant:label=literal"], RunOptions(**options))
    samples = read_samples(first.run_dir)
    rows = [dict(r, prediction="metaphorical") for r in samples]
    write_run(first.run_dir, read_results(first.run_dir), rows, overwrite=True)  # as if the adapter had changed
    (again,) = run(toy_registry, "toy_cls", ["constant:label=literal"], RunOptions(**options))
    assert again.status == "failed" and "refusing to replace it" in again.message and "--overwrite" in again.message
    assert read_samples(first.run_dir) == rows
    (forced,) = run(toy_registry, "toy_cls", ["constant:label=literal"], RunOptions(overwrite=True, **options))
    assert forced.status == "ok" and read_samples(first.run_dir) == samples


def test_a_file_where_the_run_folder_goes_fails_before_any_work(toy_registry, tmp_path):
    (tmp_path / "runs" / "toy_cls").mkdir(parents=True)
    (tmp_path / "runs" / "toy_cls" / "majority").write_text("mine\n")
    (outcome,) = run(toy_registry, "toy_cls", ["majority"], RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert outcome.status == "failed" and "exists and is not a folder" in outcome.message
    assert outcome.record is None and (tmp_path / "runs" / "toy_cls" / "majority").read_text() == "mine\n"


def test_readers_refuse_files_of_different_runs(tmp_path):
    a, b = tmp_path / "t" / "a", tmp_path / "t" / "b"
    write_run(a, *_run("A"))
    write_run(b, *_run("B"))
    shutil.copy(b / SAMPLES, a / SAMPLES)
    with pytest.raises(RunFileError, match="samples.jsonl: does not match the 'samples_sha256'"):
        read_samples(a)


def test_a_gzipped_samples_file_reads_as_the_text_its_digest_was_recorded_for(tmp_path, monkeypatch):
    import gzip

    run_dir = tmp_path / "t" / "a"
    write_run(run_dir, *_run("A"))
    rows = read_samples(run_dir)
    (run_dir / SAMPLES_GZ).write_bytes(gzip.compress((run_dir / SAMPLES).read_bytes(), mtime=0))
    (run_dir / SAMPLES).unlink()
    assert read_samples(run_dir) == rows
    (run_dir / SAMPLES_GZ).write_bytes(gzip.compress(b'{"id": "forged"}\n'))  # other text: its digest differs
    with pytest.raises(RunFileError, match="samples.jsonl.gz: does not match the 'samples_sha256'"):
        read_samples(run_dir)
    (run_dir / SAMPLES_GZ).write_bytes(b"not gzip")
    with pytest.raises(RunFileError, match="samples.jsonl.gz: not a readable gzip file"):
        read_samples(run_dir)
    monkeypatch.setenv("METABENCH_MAX_INPUT_BYTES", "1000")  # a small file that inflates past the limit
    (run_dir / SAMPLES_GZ).write_bytes(gzip.compress(b" " * 5000))
    with pytest.raises(RunFileError, match="decompresses to more than 1,000 bytes"):
        read_samples(run_dir)


def test_run_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_run(tmp_path / "t" / "m", *_run("A"))
    finally:
        os.umask(old)
    for name in (RESULTS, SAMPLES):
        assert stat.S_IMODE((tmp_path / "t" / "m" / name).stat().st_mode) == 0o644
    assert json.loads((tmp_path / "t" / "m" / RESULTS).read_text())["samples_sha256"]


def test_unflushed_writes_flush_only_when_they_replace_a_run(tmp_path, monkeypatch):
    """`metabench run` writes new run folders without fsync (one sync at the end); a run that replaces a
    complete run is still flushed before the swap, so not even an OS crash can lose the old one."""
    fsyncs = []
    original = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: fsyncs.append(fd) or original(fd))
    run_dir = tmp_path / "t" / "m"
    write_run(run_dir, *_run("A"), durable=False)
    assert fsyncs == [] and _which(run_dir) == "A"
    write_run(run_dir, *_run("B"), overwrite=True, durable=False)
    assert len(fsyncs) == 4 and _which(run_dir) == "B"  # both files, the staging folder, the task folder
    fsyncs.clear()
    write_run(tmp_path / "t2" / "m", *_run("C"))  # the default: every run flushed
    assert len(fsyncs) == 4


@pytest.mark.parametrize("accelerated", [True, False])
def test_sample_lines_are_json_dumps_lines_byte_for_byte(accelerated, monkeypatch):
    """samples.jsonl keeps ``json.dumps(row, ensure_ascii=False, sort_keys=True, allow_nan=False)`` per line:
    the shared C encoder must not change a byte (floats, non-ASCII, escapes, nesting, key order), nor the
    fallback where Python has no C accelerator."""
    from metabench import store
    from metabench.store import samples_text

    if not accelerated:
        monkeypatch.setattr(store, "_ENCODE_LINE", None)

    rows = [
        {"seed": 0, "id": "a.1", "gold": "métaphore", "prediction": "literal", "scores": {"correct": 0.0}},
        {"id": "ü\u2028\"\\\n\t\x00", "seed": 3, "gold": ("B-METAPHOR", "O"), "prediction": ["O", "O"],
         "scores": {"z": 1e16, "a": 0.1, "m": -0.0, "b": 1e-7, "c": 2.5e-320, "d": 123456789012345678901234567890}},
        {"id": "x", "seed": 1, "gold": None, "prediction": True, "scores": {"x": [1, 2.0, False, {"b": {}, "a": []}]}},
    ]
    expected = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n" for r in rows)
    assert samples_text(rows) == expected
    assert samples_text([]) == ""
    with pytest.raises(ValueError):
        samples_text([{"id": "nan", "scores": {"x": float("nan")}}])
    assert samples_text(rows[:1]) == expected.splitlines(keepends=True)[0]  # nothing left over from the error



@pytest.mark.parametrize("timed", [False, True], ids=["untimed", "timed"])
def test_a_nan_metric_is_refused_and_the_previous_run_stays_whole(tmp_path, timed):
    """results.json is encoded once, after samples.jsonl when the write is timed (``started``): a NaN found
    then removes the half-written folder and leaves the run that was there."""
    import time

    run_dir = tmp_path / "runs" / "t" / "m"
    write_run(run_dir, *_run("old"))
    results, samples = _run("new")
    results["metrics"]["aggregate"] = {"accuracy": {"mean": float("nan"), "std": 0.0, "n": 1}}
    results["timings"] = {}
    with pytest.raises(MetabenchError, match="NaN or infinite"):
        write_run(run_dir, results, samples, overwrite=True, started=time.perf_counter() if timed else None)
    assert _which(run_dir) == "old"
    assert sorted(p.name for p in run_dir.parent.iterdir()) == ["m"], "a staging folder was left behind"


def test_a_sealed_run_is_written_as_sealed_and_its_digest_still_checked(toy_registry, tmp_path):
    """A parallel launcher's workers seal each record (checked, digest added, results.json encoded); the driver
    writes those bytes as they are, but still refuses a record whose digest is not its samples' (a launcher bug
    must not leave a run the readers would refuse)."""
    from metabench.launch.batch import compute_batch
    from metabench.launch.outcomes import JobOutcome, JobResult, collect
    from metabench.runner import plan
    from metabench.cache import AnswerCache
    from metabench.config.index import TaskIndex

    jobs = plan(TaskIndex(toy_registry), "toy_cls", ["majority"], RunOptions(output_dir=tmp_path / "runs", progress=False))
    (payload,) = compute_batch(toy_registry, jobs, AnswerCache(None))
    sealed = payload["sealed"]
    assert isinstance(sealed, SealedRun) and json.loads(sealed.body) == payload["record"].as_json()
    outcomes = [None]
    collect(outcomes, jobs, [0], [payload])
    assert outcomes[0].status == "ok" and (outcomes[0].run_dir / RESULTS).read_bytes() == sealed.body
    assert load_run(outcomes[0].run_dir).record.raw == outcomes[0].record.as_json()

    forged = SealedRun(sealed.record, sealed.body, sealed.samples + b"\n")
    with pytest.raises(MetabenchError, match="sealed record's samples_sha256 is not the samples' digest"):
        write(tmp_path / "other" / "run", forged)
    assert not (tmp_path / "other" / "run").exists()
    from metabench.run_record import RunRecord

    undeclared = RunRecord.read({**payload["record"].as_json(), "undeclared_field": 1})  # read: kept; written: refused
    refused = JobResult(jobs[0], undeclared, payload["samples"], tmp_path / "x").seal()
    assert isinstance(refused, JobOutcome) and refused.status == "failed" and "undeclared_field" in refused.message
