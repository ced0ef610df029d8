"""Installation paths: a non-editable install finds the built-in tasks; a third-party plugin installs and runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # pip installs

REPO = Path(__file__).resolve().parents[2]


def _pip_target(source: Path, target: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_non_editable_install_ships_builtin_tasks(tmp_path):
    _pip_target(REPO, tmp_path / "site")
    shipped = tmp_path / "site" / "metabench" / "builtin_tasks"
    repo_tasks = sorted(p.relative_to(REPO / "tasks") for p in (REPO / "tasks").rglob("*.yaml"))
    assert sorted(p.relative_to(shipped) for p in shipped.rglob("*.yaml")) == repo_tasks
    code = "import metabench.tasks_plugin as t; print(t.builtin_task_dir())"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()) == shipped


def test_example_plugin_installs_and_its_task_runs(tmp_path):
    """Built from a copy: setuptools builds in the source folder, whose `build/` and `*.egg-info` would stay in
    the repository (and later make metabench warn that the plugin is found twice)."""
    shipped, source = REPO / "plugins" / "metabench-example-plugin", tmp_path / "metabench-example-plugin"
    before = sorted(shipped.iterdir())
    shutil.copytree(shipped, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp_path / "site"
    _pip_target(source, site)
    assert sorted(shipped.iterdir()) == before
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]), "METABENCH_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("METABENCH_PLUGIN_MODULES", None)
    listed = subprocess.run([sys.executable, "-m", "metabench.cli", "plugins"], capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "example" in listed.stdout and "datasets, metrics, models, tasks" in listed.stdout
    out = subprocess.run(
        [sys.executable, "-m", "metabench.cli", "--tasks", "example_cue_words", "--model", "cue-words", "--model", "majority",
         "-o", str(tmp_path / "runs"), "--no-progress"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    results = json.loads((tmp_path / "runs" / "example_cue_words" / "cue-words" / "results.json").read_text())
    assert results["task"]["plugin"] == "example"
    # 12 test sentences, half metaphorical: the cue words catch grasp/flood/sharp/heavy in both readings (8
    # "metaphorical", 4 right) and miss "eating"/"flies" (4 "literal", 2 right): 6 of 12, recall 4/6 and 2/6
    assert results["n_items"] == 12
    aggregate = results["metrics"]["aggregate"]
    assert aggregate["accuracy"]["mean"] == 0.5 and aggregate["balanced_accuracy"]["mean"] == 0.5
    assert set(results["data"]["files"]) == {"example_sentences:sentences.tsv"}  # read through the shipped manifest
    assert any(p["name"] == "example" and p["version"] == "0.1.0" for p in results["plugins"])


@pytest.mark.parametrize("family", ["hard", "artifacts"])
def test_a_paper_family_installs_as_a_distribution_with_its_tasks(family, tmp_path):
    """plugins/metabench-<family> built as a wheel would be (from a copy, as above): its task YAML (and the hardness
    section's template) travel with the package, and its entry point names the plugin module."""
    shipped, source = REPO / "plugins" / f"metabench-{family}", tmp_path / f"metabench-{family}"
    shutil.copytree(shipped, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp_path / "site"
    _pip_target(source, site)
    package, installed = shipped / f"metabench_{family}", site / f"metabench_{family}"
    assert sorted(p.relative_to(installed) for p in installed.rglob("*.yaml")) == sorted(
        p.relative_to(package) for p in package.rglob("*.yaml"))
    assert family != "hard" or (installed / "report" / "templates" / "hardness.html").is_file()
    points = next(site.glob(f"metabench_{family}-*.dist-info")) / "entry_points.txt"
    assert f"[metabench]\n{family} = metabench_{family}.plugin" in points.read_text(encoding="utf-8")
