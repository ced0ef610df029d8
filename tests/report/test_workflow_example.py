"""docs/reporting.md's GitHub Actions workflow runs as written: its metabench commands, on the real tasks it names.

The workflow's own environment is used (TASKS, the tolerance in its gate command, its output paths); MODEL
is the only substitution, a baseline model instead of the checkpoint a real job downloads. The baseline it
gates on is the one committed in examples/ci-gate/baselines, which the page's baseline step remakes exactly;
the page's power figure is what `metabench power` prints for it, and fits the gate's tolerance.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mirror import REPO, mirror_dir

pytestmark = pytest.mark.mirror
DOC = REPO / "docs" / "reporting.md"
BASELINES = "examples/ci-gate/baselines"


def _section() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text[text.index("### GitHub Actions"):]


def _workflow() -> dict:
    block = re.search(r"```yaml\n(.*?)```", _section(), re.S)
    return yaml.safe_load(block[1])


def _baseline_step() -> str:
    """The shell block after "Making the baseline"."""
    section = _section()
    return re.search(r"```sh\n(.*?)```", section[section.index("**Making the baseline.**"):], re.S)[1]


def _metabench_steps(workflow: dict) -> list[tuple[str, str]]:
    """(step name, command) of every step whose `run:` calls metabench."""
    (job,) = workflow["jobs"].values()
    return [(step["name"], step["run"].strip()) for step in job["steps"]
            if step.get("run", "").lstrip().startswith("metabench ")]


def _tolerance(gate_command: str) -> float:
    return float(re.search(r"--tolerance (\S+)", gate_command)[1])


def test_the_workflow_is_valid_and_names_its_steps():
    workflow = _workflow()
    steps = dict(_metabench_steps(workflow))
    assert set(steps) == {"Evaluate the checkpoint", "Gate on the stored baseline"}
    assert "--junit gate.xml" in steps["Gate on the stored baseline"]
    assert f"--baseline {BASELINES}/" in steps["Gate on the stored baseline"]
    assert f"-o {BASELINES}" in _baseline_step()
    assert "git+https://github.com/OWNER" not in DOC.read_text(encoding="utf-8")  # no placeholder install


@pytest.fixture
def workflow_env(tmp_path):
    """The workflow job's environment with `metabench` on PATH, as `pip install` puts it there."""
    if mirror_dir() is None:
        pytest.skip("data mirror not found (set METABENCH_DATA_DIR)")
    (job,) = _workflow()["jobs"].values()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "metabench"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} -m metabench.cli \"$@\"\n")
    launcher.chmod(0o755)
    env = {**os.environ, **{k: str(v) for k, v in job["env"].items()}}
    env.update(METABENCH_DATA_DIR=str(mirror_dir()), PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
               PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]))
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        env.pop(name, None)
    return env


def _run(command: str, cwd: Path, env: dict, **extra) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-c", command], cwd=cwd, env={**env, **extra},
                          capture_output=True, text=True, timeout=300)


def test_the_baseline_step_remakes_the_committed_baseline(tmp_path, workflow_env):
    made = _run(_baseline_step(), tmp_path, workflow_env)
    assert made.returncode == 0, made.stdout + made.stderr
    committed = sorted(p.relative_to(REPO) for p in (REPO / BASELINES).rglob("*") if p.is_file())
    remade = sorted(p.relative_to(tmp_path) for p in (tmp_path / BASELINES).rglob("*") if p.is_file())
    assert remade == committed
    for path in committed:
        if path.name == "samples.jsonl.gz":
            assert gzip.decompress((tmp_path / path).read_bytes()) == gzip.decompress((REPO / path).read_bytes())
        else:
            ours, theirs = (json.loads((root / path).read_text()) for root in (tmp_path, REPO))
            same = ("metrics", "data", "samples_sha256")
            assert [ours[k] for k in same] == [theirs[k] for k in same]


def test_the_documented_power_fits_the_tolerance(workflow_env):
    gate_command = dict(_metabench_steps(_workflow()))["Gate on the stored baseline"]
    (task,) = _workflow()["jobs"]["gate"]["env"]["TASKS"].split(",")
    shown = subprocess.run([sys.executable, "-m", "metabench.cli", "power", task, "--baseline", BASELINES, "--json"],
                           cwd=REPO, env=workflow_env, capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    plan = json.loads(shown.stdout)
    independent = plan["rows"][0]
    assert independent["assumption"] == "per-item correlation 0"
    assert independent["mde"] <= _tolerance(gate_command)
    text = " ".join(_section().split())
    assert f"puts the example's at ±{independent['mde']:.4f}" in text
    assert f"over its {plan['n_items']} items" in text


@pytest.mark.slow
@pytest.mark.parametrize(("model", "status", "verdict"), [("lookup", 0, "gate: PASS"), ("majority", 1, "gate: FAIL")])
def test_the_workflow_gates_on_the_committed_baseline(tmp_path, workflow_env, model, status, verdict):
    shutil.copytree(REPO / BASELINES, tmp_path / BASELINES)
    steps = dict(_metabench_steps(_workflow()))
    actions = dict(GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(tmp_path / "step_summary.md"))
    done = _run(steps["Evaluate the checkpoint"], tmp_path, workflow_env, MODEL=model)
    assert done.returncode == 0, done.stdout + done.stderr
    gated = _run(steps["Gate on the stored baseline"], tmp_path, workflow_env, **actions)
    assert gated.returncode == status, gated.stdout + gated.stderr
    assert verdict in gated.stdout
    assert (tmp_path / "gate.xml").read_text().startswith("<?xml")
    summary = (tmp_path / "step_summary.md").read_text()
    assert "### metabench gate:" in summary and "| m4x_det_en_mono_vua20 |" in summary


@pytest.mark.slow
def test_the_gate_step_runs_locally_without_a_step_summary(tmp_path, workflow_env):
    """Outside Actions "$GITHUB_STEP_SUMMARY" expands to nothing: the gate's verdict stands, with a note."""
    shutil.copytree(REPO / BASELINES, tmp_path / BASELINES)
    steps = dict(_metabench_steps(_workflow()))
    done = _run(steps["Evaluate the checkpoint"], tmp_path, workflow_env, MODEL="lookup")
    assert done.returncode == 0, done.stdout + done.stderr
    gated = _run(steps["Gate on the stored baseline"], tmp_path, workflow_env)
    assert gated.returncode == 0, gated.stdout + gated.stderr
    assert "gate: PASS" in gated.stdout
    assert "--summary is empty" in gated.stderr and "::" not in gated.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "examples", "gate.xml", "runs"]
