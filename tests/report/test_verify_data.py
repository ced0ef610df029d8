"""Verification against the data (#35 item 1): a run whose files agree with each other can still be forged
whole; its golds, ids, config hash and data files are checked against the data its task names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from metabench import hookimpl
from metabench.config.loader import dumped_config_hash
from metabench.runs.stored import find_runs, load_run
from metabench.runs.verify import verify_run, verify_runs
from metabench.runs.verify_data import DataVerifier
from metabench.store import read_samples

from forgery import forge_consistently

#: A second classification task on the toy data, its test split being the training file: a run of toy_cls
#: relabelled as this task has the same kind, labels and data files, and other items.
OTHER_TASK = """include: {base}
task: toy_cls_train
kind: classification
dataset: toy_cls
splits: {{train: train, test: train}}
labels: {{names: [literal, metaphorical], positive: metaphorical}}
metrics:
  - accuracy
  - {{name: f1, args: {{positive: metaphorical}}}}
  - macro_f1
"""


class _OtherTask:
    """A plugin registering the folder holding toy_cls_train."""

    __name__ = "toy_other_task"

    def __init__(self, folder: Path):
        self.folder = folder

    @hookimpl
    def metabench_register_tasks(self, register):
        register(str(self.folder))


@pytest.fixture
def registry(tmp_path_factory):
    """The report tests' registry plus toy_cls_train (the toy data is in the session's data cache:
    conftest's ``_run_toy``)."""
    import toy_plugin

    from metabench import plugins
    from metabench.report import plugin as report_plugin
    from metabench.stats import plugin as stats_plugin

    folder = tmp_path_factory.mktemp("other-task")
    (folder / "toy_cls_train.yaml").write_text(OTHER_TASK.format(base=toy_plugin.TASK_DIR / "_toy_base.yaml"))
    extras = [m for m in (stats_plugin, report_plugin) if m.__name__ not in plugins.BUILTIN_PLUGINS]
    return plugins.load(extra_plugins=(toy_plugin, *extras, _OtherTask(folder)))


@pytest.fixture
def board_cli(cli, registry, monkeypatch):
    """conftest's ``cli``, on ``registry``."""
    from metabench import plugins

    monkeypatch.setattr(plugins, "default_registry", lambda: registry)
    return cli


@pytest.fixture
def runs(toy_runs, registry, tmp_path) -> Path:
    """The toy runs of toy_cls, and honest runs of toy_cls_train (majority and random)."""
    import toy_plugin

    from metabench.runner import RunOptions, run

    folder = tmp_path / "runs"
    shutil.copytree(toy_runs / "toy_cls", folder / "toy_cls")
    options = RunOptions(output_dir=folder, progress=False, use_cache=False, data_dir=toy_plugin.DATA_DIR)
    outcomes = run(registry, "toy_cls_train", ["majority", "random"], options)
    assert all(o.status == "ok" for o in outcomes), [o.message for o in outcomes]
    return folder


def _board(folder: Path) -> dict:
    return json.loads((folder / "leaderboard.json").read_text())


def _board_of(board_cli, runs: Path, out: Path) -> dict:
    code, _, err = board_cli("leaderboard", "build", runs, "-o", out, "--resamples", "200")
    assert code == 0, err
    return _board(out)


def _ranks(board: dict, task: str) -> dict[str, tuple]:
    entries = next(t for t in board["tasks"] if t["name"] == task)["entries"]
    return {e["model"]: (e["rank"], e["star"], (e["vs_best"] or {}).get("error")) for e in entries}


def test_every_honest_run_agrees_with_the_data(registry, runs):
    kept, rejected, verdicts = verify_runs(registry, find_runs([runs]))
    assert not rejected and len(kept) == 6
    assert all(v.unverified is None for v in verdicts.values())
    assert all(v.summary()["data"] == "checked against the data the task names" for v in verdicts.values())


def _clean_ranks(board_cli, runs: Path, tmp_path: Path, task: str, leave_out: Path) -> dict[str, tuple]:
    """The task's ranks built from the runs without ``leave_out``: what the honest runs must keep."""
    clean = tmp_path / "clean-runs"
    shutil.copytree(runs, clean, ignore=lambda folder, names: names if Path(folder) == leave_out else [])
    return _ranks(_board_of(board_cli, clean, tmp_path / "clean"), task)


def test_rewritten_golds_with_every_digest_recomputed_are_rejected(registry, board_cli, runs, tmp_path):
    """Golds set to the random model's first-seed answers: it tops the task, every file consistent; only the
    data tells."""
    target = runs / "toy_cls" / "random"
    clean = _clean_ranks(board_cli, runs, tmp_path, "toy_cls", target)
    forge_consistently(registry, target, golds={r["id"]: r["prediction"] for r in read_samples(target) if r["seed"] == 0})
    assert verify_run(registry, load_run(target)).ok  # the run's own files cannot tell
    code, _, err = board_cli("leaderboard", "build", runs, "-o", tmp_path / "site", "--resamples", "200")
    assert code == 1 and ("rejected run toy_cls/random: the golds in samples.jsonl are not the ones the data gives "
                          "for task 'toy_cls'") in err
    board = _board(tmp_path / "site")
    assert [(r["run"], r["model"]) for r in board["rejected_runs"]] == [("toy_cls/random", "random")]
    assert _ranks(board, "toy_cls") == clean


def test_a_run_relabelled_as_another_task_is_rejected(registry, board_cli, runs, tmp_path):
    """toy_cls's lookup run renamed toy_cls_train (same kind and labels), its config hash and digests made to
    match: its items are not that task's test items."""
    clean = _ranks(_board_of(board_cli, runs, tmp_path / "clean"), "toy_cls_train")
    relabelled = runs / "toy_cls_train" / "lookup"
    shutil.copytree(runs / "toy_cls" / "lookup", relabelled)
    honest = json.loads((runs / "toy_cls_train" / "majority" / "results.json").read_text())["data"]
    forge_consistently(registry, relabelled, task="toy_cls_train", data=honest)
    assert verify_run(registry, load_run(relabelled)).ok
    code, _, err = board_cli("leaderboard", "build", runs, "-o", tmp_path / "site", "--resamples", "200")
    assert code == 1 and "rejected run toy_cls_train/lookup: " in err
    assert "the item ids in samples.jsonl are not the test items of task 'toy_cls_train' in the data" in err
    board = _board(tmp_path / "site")
    assert [r["run"] for r in board["rejected_runs"]] == ["toy_cls_train/lookup"]
    assert _ranks(board, "toy_cls_train") == clean  # ranked as before, none "not comparable"


def test_a_stale_config_hash_and_other_data_files_are_rejected(registry, runs):
    target = runs / "toy_cls" / "majority"
    results = json.loads((target / "results.json").read_text())
    results["task"]["config"]["metadata"]["version"] = 0  # another version of the task, consistently recorded
    results["task"]["config_hash"] = dumped_config_hash(results["task"]["config"])
    results["data"]["files"] = {"toy_cls:toy/cls_test.tsv": "1" * 64}
    (target / "results.json").write_text(json.dumps(results))
    _, rejected, _ = verify_runs(registry, [load_run(target)])
    problems = " ".join(rejected[0].problems)
    assert "task config hash is not the one task 'toy_cls' has here" in problems
    assert "data files are not the ones task 'toy_cls' reads here (toy_cls:toy/cls_test.tsv, toy_cls:toy/cls_train.tsv;" in problems
    assert "metabench --tasks toy_cls --model 'majority'" in problems


def test_the_data_is_loaded_once_per_task_and_limit(registry, runs, monkeypatch):
    loads = []
    real = DataVerifier._compute
    monkeypatch.setattr(DataVerifier, "_compute", lambda self, task, limit: loads.append((task, limit)) or real(self, task, limit))
    verify_runs(registry, find_runs([runs]))
    assert sorted(loads) == [("toy_cls", None), ("toy_cls_train", None)]


def test_without_the_data_runs_are_unverified_never_crowned(registry, board_cli, runs, tmp_path, monkeypatch):
    """No mirror and nothing in the cache: nothing is rejected, every run is marked unverified and none takes
    the ★."""
    for variable, folder in (("METABENCH_DATA_DIR", "empty-mirror"), ("METABENCH_CACHE_DIR", "empty-cache")):
        (tmp_path / folder).mkdir()
        monkeypatch.setenv(variable, str(tmp_path / folder))
    code, out, err = board_cli("leaderboard", "build", runs / "toy_cls", "-o", tmp_path / "site", "--resamples", "200")
    assert code == 0, err
    assert "4 ranked (4 of them unverified), 0 rejected" in out and "not checked against the data" in err
    board = _board(tmp_path / "site")
    entries = next(t for t in board["tasks"] if t["name"] == "toy_cls")["entries"]
    assert all(e["marks"]["unverified"].startswith("not checked against the data: ") for e in entries)
    assert not any(e["star"] for e in entries)
    assert {r["model"] for r in board["unverified_runs"]} == {"majority", "lookup", "random", "random:strategy=prior"}
    assert "Unverified runs" in (tmp_path / "site" / "leaderboard.md").read_text()
    assert "unverified" in (tmp_path / "site" / "tasks" / "toy_cls.html").read_text()


def test_an_unverified_run_ranks_below_every_verified_run(registry, board_cli, runs, tmp_path, monkeypatch):
    """The best toy_cls run (lookup) cannot be checked: it comes after the verified runs, without the ★."""
    real = DataVerifier.problems

    def problems(self, record, ids, golds):
        if record.model.spec == "lookup":
            return "not checked against the data: (test) its data is not here"
        return real(self, record, ids, golds)

    monkeypatch.setattr(DataVerifier, "problems", problems)
    code, _, err = board_cli("leaderboard", "build", runs / "toy_cls", "-o", tmp_path / "site", "--resamples", "200")
    assert code == 0, err
    entries = next(t for t in _board(tmp_path / "site")["tasks"] if t["name"] == "toy_cls")["entries"]
    assert entries[-1]["model"] == "lookup" and not entries[-1]["star"]
    assert all(e["rank"] < entries[-1]["rank"] for e in entries[:-1])
    assert entries[-1]["metrics"]["accuracy"]["mean"] >= max(e["metrics"]["accuracy"]["mean"] for e in entries[:-1])


def test_the_rerun_a_rejected_partial_run_is_told_keeps_its_limit(registry, runs):
    """A stale --limit run is told to rerun with the same --limit: without it the rerun scores another item set."""
    target = runs / "toy_cls" / "majority"
    results = json.loads((target / "results.json").read_text())
    results["task"]["config_hash"] = "0" * 64
    results["limit"] = 2
    (target / "results.json").write_text(json.dumps(results))
    _, rejected, _ = verify_runs(registry, [load_run(target)])
    assert "(metabench --tasks toy_cls --model 'majority' --limit 2), or drop it" in " ".join(rejected[0].problems)
