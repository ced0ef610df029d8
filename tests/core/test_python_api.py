"""The Python API (metabench.evaluate / metabench.compare), the run configs, and the CLI calling both."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import metabench
from metabench.api import Evaluation, MetricValue, TaskResult
from metabench.cli import main
from metabench.config.run_config import read_run_config
from metabench.errors import ConfigError, MetabenchError
from metabench.store import read_results, read_samples

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "plugins" / "metabench-example-plugin" / "metabench_example_plugin"


def test_import_metabench_loads_neither_the_api_nor_torch():
    code = ("import sys, metabench; assert callable(metabench.hookimpl); "
            "print(sorted(m for m in ('metabench.api', 'metabench.runner', 'torch') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_evaluate_returns_typed_results_from_the_run_folders(toy_registry, tmp_path):
    output = str(tmp_path / "runs")  # a str, which runner.run once refused
    evaluation = metabench.evaluate("toy_cls", ["random", "majority"], seeds=3, output_dir=output, launcher="serial",
                                    progress=False, registry=toy_registry)
    assert isinstance(evaluation, Evaluation) and len(evaluation) == 2 and not evaluation.failed
    rand = evaluation.get("toy_cls", "random")
    assert isinstance(rand, TaskResult) and rand.ok and rand.seeds == [0, 1, 2]
    assert rand.run_dir.parent.parent == Path(output)
    stored = read_results(rand.run_dir)
    values = [stored["metrics"]["per_seed"][str(seed)]["accuracy"] for seed in (0, 1, 2)]
    assert [rand.per_seed[seed]["accuracy"] for seed in (0, 1, 2)] == values
    assert isinstance(rand.metrics["accuracy"], MetricValue) and rand.metrics["accuracy"].n == 3
    assert rand.metrics["accuracy"].mean == pytest.approx(np.mean(values))
    assert rand.metrics["accuracy"].std == pytest.approx(np.std(values, ddof=1))
    samples = read_samples(rand.run_dir)
    seed0 = [s for s in samples if s["seed"] == 0]
    assert rand.per_seed[0]["accuracy"] == pytest.approx(np.mean([s["gold"] == s["prediction"] for s in seed0]))
    assert rand.primary_metric == stored["task"]["primary_metric"] and rand.score is rand.metrics[rand.primary_metric]
    majority = evaluation.get("toy_cls", "majority")
    assert majority.seeds == [0] and not majority.partial  # deterministic: one seed; the whole test split
    assert evaluation.run_dirs == [rand.run_dir, majority.run_dir]
    with pytest.raises(MetabenchError, match=r"no job \(toy_cls, lookup\).*"):
        evaluation.get("toy_cls", "lookup")


def test_evaluate_reports_skips_and_partial_runs_without_raising(toy_registry, tmp_path):
    evaluation = metabench.evaluate(["toy_tag", "toy_cls"], "constant:label=O", limit=5, output_dir=tmp_path,
                                    launcher="serial", progress=False, registry=toy_registry)
    tagged = evaluation.get("toy_tag", "constant:label=O")
    assert tagged.ok and tagged.partial and tagged.n_items == 5
    statuses = {r.task: r.status for r in evaluation}
    assert statuses["toy_tag"] == "ok" and set(statuses) == {"toy_tag", "toy_cls"}


@pytest.mark.parametrize("kwargs, needle", [
    ({"seeds": 0}, "seeds 0: a seed count must be between 1 and"),
    ({"seeds": [1, 1]}, "seeds 1,1: seed(s) [1] listed twice"),
    ({"seeds": [0, -2]}, "seed -2 is out of range"),
    ({"seeds": "3"}, "expected a count (5) or a list"),
    ({"limit": 0}, "--limit 0: must be 1 or more"),
    ({"launcher": "threads"}, "unknown launcher 'threads'"),
    ({"models": []}, "models: expected a name or a list of names"),
    ({"models": "constant:lable=O"}, "model 'constant' takes no argument 'lable' (did you mean 'label'?)"),
])
def test_evaluate_refuses_bad_usage_before_any_job(toy_registry, tmp_path, kwargs, needle):
    call = {"tasks": "toy_cls", "models": "majority", "output_dir": tmp_path / "runs", "launcher": "serial",
            "progress": False, "registry": toy_registry, **kwargs}
    with pytest.raises(MetabenchError) as caught:
        metabench.evaluate(**call)
    assert needle in caught.value.message
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_compare_matches_the_command_line(toy_registry, tmp_path, monkeypatch, capsys):
    evaluation = metabench.evaluate("toy_cls", ["majority", "lookup", "random"], output_dir=tmp_path / "runs",
                                    launcher="serial", progress=False, registry=toy_registry)
    report = metabench.compare(evaluation, baseline="majority", resamples=500, registry=toy_registry)
    assert [(c.baseline, c.candidate) for c in report.comparisons] == [("majority", "lookup"), ("majority", "random")]
    for comparison in report.comparisons:
        result = evaluation.get("toy_cls", comparison.candidate)
        assert comparison.candidate_value == pytest.approx(result.score.mean)
        assert comparison.delta == pytest.approx(result.score.mean - evaluation.get("toy_cls", "majority").score.mean)
    by_path = metabench.compare([str(p) for p in evaluation.run_dirs], baseline="majority", resamples=500,
                                registry=toy_registry)
    assert by_path.as_dict() == report.as_dict()

    monkeypatch.setattr("metabench.commands.compare._registry", lambda: toy_registry)
    assert main(["compare", str(tmp_path / "runs"), "--baseline", "majority", "--resamples", "500", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(report.as_dict()))
    with pytest.raises(MetabenchError, match="--confidence 1.5: must lie strictly between 0 and 1"):
        metabench.compare(evaluation, confidence=1.5, registry=toy_registry)
    with pytest.raises(MetabenchError, match="unknown correction 'bonferroni'"):
        metabench.compare(evaluation, correction="bonferroni", registry=toy_registry)


def test_the_command_line_run_calls_evaluate(toy_registry, tmp_path, monkeypatch, capsys):
    import metabench.api

    calls = []
    real = metabench.api.evaluate

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, registry=toy_registry, **kwargs)

    monkeypatch.setattr(metabench.api, "evaluate", spy)
    assert main(["run", "--tasks", "toy_cls", "--model", "majority", "-o", str(tmp_path / "runs"),
                 "--launcher", "serial", "--no-progress", "--seeds", "0,"]) == 0
    assert calls == [{"tasks": "toy_cls", "models": ["majority"], "seeds": [0], "output_dir": tmp_path / "runs",
                      "launcher": "serial", "progress": False}]
    assert "1 ok · 0 skipped · 0 failed" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------ run configs


def _config(tmp_path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_run_config_runs_and_flags_override_it(toy_registry, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("metabench.plugins.default_registry", lambda: toy_registry)
    monkeypatch.chdir(tmp_path)
    config = _config(tmp_path, "tasks: [toy_cls]\nmodels: [majority, random]\nseeds: [0, 1]\nlimit: 10\n"
                               "launcher: serial\noutput: from-config\nprogress: false\n")
    assert read_run_config(config) == {"tasks": ["toy_cls"], "models": ["majority", "random"], "seeds": [0, 1],
                                       "limit": 10, "launcher": "serial", "output_dir": "from-config", "progress": False}
    assert main(["run", "--config", str(config), "--limit", "7", "--model", "lookup"]) == 0
    out = capsys.readouterr().out
    assert "1 ok · 0 skipped · 0 failed" in out  # --model replaced the file's two models
    (folder,) = (tmp_path / "from-config" / "toy_cls").iterdir()
    assert folder.name == "lookup@limit=7" and read_results(folder)["n_items"] == 7


@pytest.mark.parametrize("text, needles", [
    ("tasks: toy_cls\nmodel: majority\n", (":2: unknown key 'model' (did you mean 'models'?)",)),
    ("tasks: toy_cls\nmodels: majority\nlimit: 0\n", (":3: limit: Input should be greater than or equal to 1",)),
    ("tasks: toy_cls\nmodels: majority\nlauncher: thread\n", (":3: launcher:",)),
    ("tasks: toy_cls\nmodels: majority\nseeds: [1, 1]\n", (":3: seeds", "listed twice")),
    ("- toy_cls\n", (":1: a run config must be a mapping",)),
    ("tasks: [toy_cls\n", ("invalid YAML",)),
])
def test_a_bad_run_config_names_file_and_line(tmp_path, capsys, text, needles):
    config = _config(tmp_path, text)
    assert main(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert str(config) in err and "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    with pytest.raises(ConfigError):
        read_run_config(config)


def test_a_run_without_tasks_or_models_says_what_is_missing(tmp_path, capsys):
    assert main(["run", "--model", "majority"]) == 2
    assert "--tasks required (or a --config file setting them)" in capsys.readouterr().err
    config = _config(tmp_path, "tasks: toy_cls\n")
    assert main(["run", "--config", str(config)]) == 2
    assert f"--model required or in {config}" in capsys.readouterr().err
    assert main(["run", "--config", str(config), "--model", "nomodel"]) == 2  # the flag completes the file
    assert "unknown model 'nomodel'" in capsys.readouterr().err


def test_the_example_run_config_is_valid():
    settings = read_run_config(REPO / "examples" / "run.yaml")
    assert settings["limit"] and settings["output_dir"] and settings["tasks"] and settings["models"]


def test_the_example_run_config_runs_on_the_mirror(tmp_path, capsys):
    """`metabench run --config examples/run.yaml` as the docs show it (a smaller --limit and a scratch -o)."""
    from mirror import mirror_dir

    if mirror_dir() is None:
        pytest.skip("the data mirror is not on this machine")
    settings = read_run_config(REPO / "examples" / "run.yaml")
    assert main(["run", "--config", str(REPO / "examples" / "run.yaml"), "--limit", "20", "-o", str(tmp_path)]) == 0
    assert f"{len(settings['tasks']) * len(settings['models'])} ok · 0 skipped · 0 failed" in capsys.readouterr().out
    for task in settings["tasks"]:
        for model in settings["models"]:
            assert read_results(tmp_path / task / f"{model}@limit=20")["n_items"] == 20


# ------------------------------------------------------------------------------------------ docs/python-api.md


@pytest.mark.slow
def test_the_python_api_page_example_runs(tmp_path):
    """The page's shell lines and Python block, run as written from a clone's root, print what the run folders hold.

    The clone is a copy of the plugin's folder beside the venv running the tests, so the example writes its
    runs (and Python its bytecode) into the temporary folder, not the repository.
    """
    page = (REPO / "docs" / "python-api.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    (shell,) = re.findall(r"```sh\n(.*?)```", page, flags=re.S)
    venv = Path(sys.prefix)
    if not (venv / "bin" / "activate").is_file():
        pytest.skip("the tests do not run in a venv (the page's commands activate .venv)")
    shutil.copytree(PACKAGE.parent, tmp_path / "plugins" / PACKAGE.parent.name,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    (tmp_path / ".venv").symlink_to(venv)
    (tmp_path / "api_example.py").write_text(code, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH="", METABENCH_DISABLE_PLUGINS="example",  # not an installed copy
               METABENCH_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("METABENCH_PLUGIN_MODULES", None)
    without = subprocess.run(["bash", "-e", "-c", shell.replace("export ", ": ")], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300)
    assert without.returncode == 1 and "unknown model 'cue-words'" in without.stderr  # what the page warns of
    done = subprocess.run(["bash", "-e", "-c", shell], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    runs = tmp_path / "runs" / "api-example" / "example_cue_words"
    cue, majority = read_results(runs / "cue-words"), read_results(runs / "majority")
    assert lines[0].startswith("example_cue_words majority ok") and lines[1].startswith("example_cue_words cue-words ok")
    assert f"per seed: {cue['metrics']['per_seed']['0']['balanced_accuracy']} partial: False" in lines
    delta = cue["metrics"]["aggregate"]["accuracy"]["mean"] - majority["metrics"]["aggregate"]["accuracy"]["mean"]
    assert any(line.startswith(f"accuracy: cue-words vs majority delta={delta:+.3f} mcnemar") for line in lines), lines
