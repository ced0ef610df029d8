"""The example plugin, used as a third party would: its dataset is read through the manifest that
`metabench data manifest` wrote, and `metabench compare` runs a paired test on its own metric
(balanced accuracy, which declares its per-item decomposition)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "metabench-example-plugin"
PACKAGE = PLUGIN / "metabench_example_plugin"


@pytest.fixture
def env(tmp_path) -> dict:
    """The plugin's package alone on the path (no egg-info a build may have left next to it)."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / PACKAGE.name)
    out = dict(os.environ)
    out.update({
        "PYTHONPATH": os.pathsep.join([str(site), out.get("PYTHONPATH", "")]),
        "METABENCH_PLUGIN_MODULES": "metabench_example_plugin.plugin",
        "METABENCH_DISABLE_PLUGINS": "example",  # an installed copy would register the same names twice
        "METABENCH_CACHE_DIR": str(tmp_path / "cache"),
    })
    return out


def _metabench(*args, env, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metabench.cli", *map(str, args)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_shipped_manifest_is_what_the_public_tool_writes(env):
    done = _metabench("data", "manifest", PACKAGE / "data", "--family", "example_sentences", "--check", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 files, up to date" in done.stdout


@pytest.mark.slow
def test_a_changed_data_file_is_refused_by_its_manifest(env, tmp_path):
    data = Path(env["PYTHONPATH"].split(os.pathsep)[0]) / PACKAGE.name / "data" / "sentences.tsv"
    data.write_text(data.read_text(encoding="utf-8").replace("grasped", "held"), encoding="utf-8")
    done = _metabench("--tasks", "example_cue_words", "--model", "majority", "-o", tmp_path / "runs", "--no-progress", env=env)
    assert done.returncode == 1 and "sentences.tsv" in done.stderr and "sha256" in done.stderr


@pytest.mark.slow
def test_compare_runs_a_paired_test_on_the_plugins_metric(env, tmp_path):
    from sklearn.metrics import balanced_accuracy_score

    runs = tmp_path / "runs"
    done = _metabench("--tasks", "example_cue_words", "--model", "cue-words", "--model", "majority", "-o", runs,
                      "--no-progress", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    samples = [json.loads(line) for line in (runs / "example_cue_words" / "cue-words" / "samples.jsonl").open()]
    assert all(len([k for k in s["scores"] if k.startswith("balanced_accuracy#")]) == 4 for s in samples)
    results = json.loads((runs / "example_cue_words" / "cue-words" / "results.json").read_text())
    reference = balanced_accuracy_score([s["gold"] for s in samples], [s["prediction"] for s in samples])
    assert results["metrics"]["aggregate"]["balanced_accuracy"]["mean"] == pytest.approx(reference)

    done = _metabench("compare", runs / "example_cue_words" / "majority", runs / "example_cue_words" / "cue-words",
                      "--metric", "balanced_accuracy", "--resamples", "2000", "--json", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (comparison,) = json.loads(done.stdout)["comparisons"]
    assert comparison["metric"] == "balanced_accuracy" and comparison["test"] == "bootstrap"
    assert comparison["pvalue"] is not None and comparison["ci_low"] <= comparison["delta"] <= comparison["ci_high"]
    assert comparison["n_items"] == len(samples) and not any("no paired test" in n for n in comparison["notes"])

    done = _metabench("gate", "--baseline", runs / "example_cue_words" / "majority", "--candidate",
                      runs / "example_cue_words" / "cue-words", "--metric", "balanced_accuracy", "--resamples", "2000",
                      "--json", env=env)
    (gated,) = json.loads(done.stdout)["comparisons"]
    assert gated["test"] == "bootstrap" and gated["pvalue"] == pytest.approx(comparison["pvalue"])


@pytest.mark.slow
def test_the_plugins_dataset_verifies_where_its_runs_read_it(env):
    """`data ls` and `data verify` find a `root=` dataset in its package, as runs do, and check its counts."""
    listed = _metabench("data", "ls", env=env)
    (row,) = [line for line in listed.stdout.splitlines() if line.startswith("example_sentences")]
    assert "folder 1/1" in row and "missing" not in row
    done = _metabench("data", "verify", "example_sentences", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    summary, *checks = [line.split() for line in done.stdout.splitlines() if line.startswith("example_sentences")]
    assert summary[1:] == ["1/1", "ok", "folder", "2/2", "ok", "ok"]
    assert [c[1:] for c in checks] == [["items", "train", "12", "12", "ok"], ["items", "test", "12", "12", "ok"]]


def test_a_wrong_count_in_the_plugins_spec_fails_verify(env):
    plugin = Path(env["PYTHONPATH"].split(os.pathsep)[0]) / PACKAGE.name / "plugin.py"
    plugin.write_text(plugin.read_text(encoding="utf-8").replace('"test": 12', '"test": 13'), encoding="utf-8")
    done = _metabench("data", "verify", "example_sentences", env=env)
    assert done.returncode == 1 and "verification FAILED" in done.stdout
    (check,) = [line for line in done.stdout.splitlines() if "items test" in line]
    assert "13" in check and "12" in check and "FAIL" in check


@pytest.mark.slow
def test_the_plugin_adds_a_cli_verb_through_the_commands_hook(env):
    done = _metabench("cue-words", "She grasped the idea", "She held the cup", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["metaphorical\tgrasped\tShe grasped the idea", "literal\t-\tShe held the cup"]
    done = _metabench("cue-words", "She held the cup", "--words", "held+", env=env)
    assert done.returncode == 2 and "an empty cue word" in done.stderr and "Traceback" not in done.stderr
    assert "cue-words" in _metabench("--help", env=env).stdout
    without = _metabench("--help", env={**env, "METABENCH_PLUGIN_MODULES": ""}).stdout
    assert "cue-words" not in without and "hard" in without  # a built-in family's verbs come the same way


@pytest.mark.slow
def test_validating_the_plugins_tasks_without_it_names_the_file_and_the_missing_plugin(env):
    """Without the plugin loaded its dataset is unknown: the error names the task file and line, and the hint says a
    plugin's names need the plugin loaded (not only "see the list")."""
    without = {**env, "METABENCH_PLUGIN_MODULES": ""}
    task = Path(env["PYTHONPATH"].split(os.pathsep)[0]) / PACKAGE.name / "tasks" / "example_cue_words.yaml"
    done = _metabench("validate", task, env=without)
    assert done.returncode == 1
    line = next(n for n, text in enumerate(task.read_text().splitlines(), 1) if text.startswith("dataset:"))
    assert f"FAIL  {task}:{line}: unknown dataset 'example_sentences'" in done.stdout
    assert "needs that plugin loaded" in done.stdout and "METABENCH_PLUGIN_MODULES" in done.stdout
    assert _metabench("validate", task, env=env).returncode == 0


@pytest.mark.slow
def test_the_plugins_board_section_is_on_the_leaderboard(env, tmp_path):
    """The plugin's own section (board.py, registered with metabench_register_board_sections): its data in
    leaderboard.json, its table in leaderboard.md and on the site's paper-tables page, its own view on the task's
    page."""
    runs, site = tmp_path / "runs", tmp_path / "site"
    done = _metabench("--tasks", "example_cue_words", "--model", "cue-words", "--model", "majority", "-o", runs,
                      "--no-progress", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _metabench("leaderboard", "build", runs, "-o", site, "--resamples", "200", "--no-progress", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    rows = {row["model"]: row for row in board["cue_words"]["rows"]}
    samples = [json.loads(line) for line in (runs / "example_cue_words" / "cue-words" / "samples.jsonl").open()]
    assert set(rows) == {"cue-words", "majority"} and rows["cue-words"]["n_items"] == len(samples)
    assert rows["cue-words"]["accuracy"] == pytest.approx(sum(s["prediction"] == s["gold"] for s in samples) / len(samples))
    assert "### metabench example plugin, Cue words: the cue-words rule" in (site / "leaderboard.md").read_text(encoding="utf-8")
    assert 'id="example_cue_words"' in (site / "papers.html").read_text(encoding="utf-8")
    page = (site / "tasks" / "example_cue_words.html").read_text(encoding="utf-8")  # the section's own html= view
    assert 'id="cue-words"' in page and f"{rows['cue-words']['balanced_accuracy']:.3f}" in page
    assert board["section_views"]["cue_words"] == {"html": "metabench_example_plugin:templates/cue_words.html"}
