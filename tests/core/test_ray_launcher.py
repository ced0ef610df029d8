"""`--launcher ray`: the same run folders as the serial launcher, and a worker killed mid-job costs only its
batch in flight. One local Ray (2 CPUs) for the whole module: starting Ray takes seconds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from launcher_runs import ok_runs
from lazy import lazy
from needs import needs

from metabench import plugins, ray_start
from metabench.launch import ray_workers as ray_launcher
from metabench.runner import RunOptions, run

pytestmark = [pytest.mark.slow, needs("ray")]  # a local Ray
ray = lazy("ray")

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ray_env(tmp_path_factory):
    """Workers inherit these: the toy plugin importable and loaded, its data, the kill/count files."""
    import toy_plugin

    root = tmp_path_factory.mktemp("ray")
    saved = dict(os.environ)
    os.environ.update({
        "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent), saved.get("PYTHONPATH", "")]),
        "METABENCH_PLUGIN_MODULES": "toy_plugin",
        "METABENCH_DATA_DIR": str(toy_plugin.DATA_DIR),
        "METABENCH_CACHE_DIR": str(root / "worker-cache"),
        "TOY_COUNT_LOG": str(root / "count.log"),
        "TOY_KILL_MARK": str(root / "killed"),
    })
    ray_start.start(None, 2)
    yield root
    ray.shutdown()
    os.environ.clear()
    os.environ.update(saved)


def _run(root: Path, name: str, models, launcher: str, **kw):
    os.environ["METABENCH_CACHE_DIR"] = str(root / f"{name}-cache")  # the driver's answer cache for this run
    registry = plugins.load()
    options = RunOptions(output_dir=root / name, progress=False, launcher=launcher, **kw)
    return run(registry, "toy_all", list(models), options)


def test_ray_run_equals_the_serial_run(ray_env):
    serial = _run(ray_env, "serial", ["majority", "random", "constant:label=x"], "serial", seeds=[0, 1])
    on_ray = _run(ray_env, "ray", ["majority", "random", "constant:label=x"], "ray", seeds=[0, 1])
    assert [(o.task, o.model, o.status) for o in on_ray] == [(o.task, o.model, o.status) for o in serial]
    assert any(o.status == "ok" for o in on_ray) and any(o.status != "ok" for o in on_ray)
    assert [o.message for o in on_ray] == [o.message for o in serial]
    runs = ok_runs(on_ray)
    assert runs and runs == ok_runs(serial)


def test_a_worker_killed_mid_job_is_retried_and_finished_batches_are_not_recomputed(ray_env):
    log, mark = Path(os.environ["TOY_COUNT_LOG"]), Path(os.environ["TOY_KILL_MARK"])
    log.unlink(missing_ok=True)
    mark.unlink(missing_ok=True)
    outcomes = _run(ray_env, "killed", ["killing:batch_size=4"], "ray")
    assert mark.exists(), "the worker was not killed: the test did not test anything"
    assert all(o.status == "ok" for o in outcomes), [o.message for o in outcomes]
    answered = log.read_text().splitlines()
    n_items = sum(o.record.raw["n_items"] for o in outcomes)
    assert len(answered) == n_items  # every item answered once: nothing committed before the kill was redone
    log.unlink()
    serial = _run(ray_env, "killed-serial", ["killing:batch_size=4"], "serial")
    assert [o.status for o in serial] == ["ok"] * len(serial)
    assert ok_runs(outcomes) == ok_runs(serial)


def test_the_local_ray_listens_on_loopback_only(ray_env):
    import psutil  # ray ships it

    listening = set()
    for child in psutil.Process().children(recursive=True):
        try:
            listening |= {c.laddr.ip for c in child.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN}
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    assert listening, "found no Ray service listening: the check checked nothing"
    assert listening <= {"127.0.0.1", "::ffff:127.0.0.1"}, listening


def test_ray_jobs_ask_for_a_gpu_only_for_models_and_only_when_there_are_gpus():
    from metabench.launch.ray_workers import resources

    assert resources("decoder", gpus=True) == {"num_cpus": 1, "num_gpus": 1}
    assert resources("encoder", gpus=True) == {"num_cpus": 1, "num_gpus": 1}
    assert resources("baseline", gpus=True) == {"num_cpus": 1, "num_gpus": 0}
    assert resources("decoder", gpus=False) == {"num_cpus": 1, "num_gpus": 0}


def test_on_a_cluster_the_answers_go_through_the_driver_side_store(ray_env):
    """``local=False`` (what ``--ray-address`` gives): no worker opens the cache; the AnswerStore actor does,
    and the run still equals the serial one."""
    import sqlite3

    from metabench.config.index import TaskIndex
    from metabench.runner import plan

    cache = ray_env / "store-cache"
    os.environ["METABENCH_CACHE_DIR"] = str(cache)
    registry = plugins.load()
    options = RunOptions(output_dir=ray_env / "store", progress=False, launcher="ray")
    jobs = plan(TaskIndex(registry), "toy_all", ["majority", "counting"], options)
    outcomes = ray_launcher.run_jobs(registry, jobs, True, 2, local=False)
    with sqlite3.connect(cache / "answers.sqlite") as db:  # `counting` caches per item, like a model
        assert db.execute("SELECT count(*) FROM answers").fetchone()[0] > 0
    serial = _run(ray_env, "store-serial", ["majority", "counting"], "serial")
    assert ok_runs(outcomes) and ok_runs(outcomes) == ok_runs(serial)
