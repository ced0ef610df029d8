"""`--launcher processes` (and `auto`, which picks it for runs of baselines): the same run folders as the
serial launcher, and a worker process killed mid-job costs only its batch in flight."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metabench import plugins
from metabench.launch import processes as process_launcher
from metabench.runner import RunOptions, run
from launcher_runs import ok_runs

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture
def toy_env(tmp_path, monkeypatch):
    """The toy plugin loaded, its data, the kill/count files (workers are forked: they inherit all of it)."""
    import toy_plugin

    monkeypatch.setenv("METABENCH_PLUGIN_MODULES", "toy_plugin")
    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("TOY_COUNT_LOG", str(tmp_path / "count.log"))
    monkeypatch.setenv("TOY_KILL_MARK", str(tmp_path / "kill.mark"))
    return tmp_path


@pytest.fixture
def pools(monkeypatch) -> list[str]:
    """The start method of every worker pool a run opened: a run that fell back to serial writes the same
    files, so a test of the launcher also checks that workers ran."""
    opened = []
    real = process_launcher.ProcessPoolExecutor

    def recording(*args, **kwargs):
        opened.append(kwargs["mp_context"].get_start_method())
        return real(*args, **kwargs)

    monkeypatch.setattr(process_launcher, "ProcessPoolExecutor", recording)
    return opened


def _run(root: Path, name: str, models, launcher: str, **kw):
    """One run with its own answer cache; the cache variable is restored afterwards (no test inherits it)."""
    options = RunOptions(output_dir=root / name, progress=False, launcher=launcher, **kw)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("METABENCH_CACHE_DIR", str(root / f"{name}-cache"))
        return run(plugins.load(), "toy_all", list(models), options)


@pytest.mark.slow
def test_a_process_run_equals_the_serial_run(toy_env, pools):
    models = ["majority", "random", "constant:label=x", "lookup"]
    serial = _run(toy_env, "serial", models, "serial", seeds=[0, 1])
    parallel = _run(toy_env, "processes", models, "processes", seeds=[0, 1], workers=2)
    assert pools == ["fork"]
    assert [(o.task, o.model, o.status, o.message) for o in parallel] == \
        [(o.task, o.model, o.status, o.message) for o in serial]
    assert any(o.status == "ok" for o in parallel) and any(o.status != "ok" for o in parallel)
    runs = ok_runs(parallel)
    assert runs and runs == ok_runs(serial)
    assert all(o.run_dir.is_relative_to(toy_env / "processes") for o in parallel if o.status == "ok")


def test_a_worker_killed_mid_job_is_replaced_and_committed_answers_are_not_recomputed(toy_env):
    log, mark = Path(os.environ["TOY_COUNT_LOG"]), Path(os.environ["TOY_KILL_MARK"])
    outcomes = _run(toy_env, "killed", ["killing:batch_size=4"], "processes", workers=2)
    assert mark.exists(), "the worker was not killed: the test did not test anything"
    assert int(mark.read_text()) != os.getpid()  # it was a worker, not this process
    assert all(o.status == "ok" for o in outcomes), [o.message for o in outcomes]
    answered = log.read_text().splitlines()
    n_items = sum(o.record.raw["n_items"] for o in outcomes)
    # A broken pool stops its other worker too: only the 4 items of that worker's batch in flight (answered,
    # not yet committed) may be answered again; nothing committed before the kill is (>= 8 items were).
    assert n_items <= len(answered) <= n_items + 4
    log.unlink()
    serial = _run(toy_env, "killed-serial", ["killing:batch_size=4"], "serial")
    assert ok_runs(outcomes) == ok_runs(serial)


def test_a_batch_whose_worker_always_dies_fails_alone_with_a_clear_message(toy_env, monkeypatch):
    monkeypatch.setattr(process_launcher, "MAX_RETRIES", 1)
    monkeypatch.setenv("TOY_KILL_ALWAYS", "1")
    outcomes = _run(toy_env, "doomed", ["killing:batch_size=4"], "processes", workers=2)
    assert outcomes and all(o.status == "failed" for o in outcomes)
    assert "worker process died 2 times" in outcomes[0].message and "--launcher serial" in outcomes[0].hint


def test_auto_runs_baselines_on_processes_and_models_here(toy_env, monkeypatch):
    registry = plugins.load()
    from metabench.config.index import TaskIndex
    from metabench.runner import plan

    index = TaskIndex(registry)
    monkeypatch.setattr(process_launcher, "available_cpus", lambda: 2)
    baselines = plan(index, "toy_all", ["majority", "lookup"], RunOptions())
    assert process_launcher.auto_workers(registry, baselines) == 2
    monkeypatch.setattr(process_launcher, "available_cpus", lambda: 1)
    assert process_launcher.auto_workers(registry, baselines) == 1
    monkeypatch.setattr(process_launcher, "available_cpus", lambda: 2)
    with_a_model = plan(index, "toy_all", ["majority", "hf:minilm-l6"], RunOptions())
    assert process_launcher.auto_workers(registry, with_a_model) == 1


@pytest.mark.slow
def test_auto_writes_what_serial_writes(toy_env, monkeypatch, pools):
    monkeypatch.setattr(process_launcher, "available_cpus", lambda: 2)
    auto = _run(toy_env, "auto", ["majority", "lookup"], "auto")
    assert pools == ["fork"]
    serial = _run(toy_env, "auto-serial", ["majority", "lookup"], "serial")
    assert ok_runs(auto) and ok_runs(auto) == ok_runs(serial)


@pytest.mark.slow
def test_spawned_workers_load_the_plugins_again_and_write_the_same(toy_env, monkeypatch, pools):
    """Where fork is missing (macOS, Windows) workers are spawned: fresh interpreters that load the plugins
    (the toy plugin through METABENCH_PLUGIN_MODULES and PYTHONPATH) and get the jobs pickled."""
    monkeypatch.setattr(process_launcher.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), str(TESTS.parent), os.environ.get("PYTHONPATH", "")]))
    spawned = _run(toy_env, "spawned", ["majority", "lookup"], "processes", workers=2)
    assert pools == ["spawn"]
    serial = _run(toy_env, "spawned-serial", ["majority", "lookup"], "serial")
    assert ok_runs(spawned) and ok_runs(spawned) == ok_runs(serial)
