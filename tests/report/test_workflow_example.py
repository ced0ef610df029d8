"""docs/reporting.md's GitHub Actions workflow runs as written: its metabench commands, on the real tasks it names.

The workflow's own environment is used (TASKS, the tolerance in its gate command, its output paths); MODEL
is the only substitution, a baseline model instead of the checkpoint a real job downloads. The baseline
folder the workflow expects committed is made by the same evaluation command with another baseline model.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mirror import REPO, mirror_dir

pytestmark = pytest.mark.mirror
DOC = REPO / "docs" / "reporting.md"


def _workflow() -> dict:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### GitHub Actions"):]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    return yaml.safe_load(block[1])


def _metabench_steps(workflow: dict) -> list[tuple[str, str]]:
    """(step name, command) of every step whose `run:` calls metabench."""
    (job,) = workflow["jobs"].values()
    return [(step["name"], step["run"].strip()) for step in job["steps"]
            if step.get("run", "").lstrip().startswith("metabench ")]


def test_the_workflow_is_valid_and_names_its_steps():
    workflow = _workflow()
    steps = dict(_metabench_steps(workflow))
    assert set(steps) == {"Evaluate the checkpoint", "Gate on the stored baseline"}
    assert "--junit gate.xml" in steps["Gate on the stored baseline"]
    assert "git+https://github.com/OWNER" not in DOC.read_text(encoding="utf-8")  # no placeholder install


def test_the_workflow_commands_run_as_written(tmp_path):
    if mirror_dir() is None:
        pytest.skip("data mirror not found (set METABENCH_DATA_DIR)")
    workflow = _workflow()
    (job,) = workflow["jobs"].values()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "metabench"  # `metabench` on PATH, as `pip install` puts it there
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} -m metabench.cli \"$@\"\n")
    launcher.chmod(0o755)
    env = {**os.environ, **{k: str(v) for k, v in job["env"].items()}}
    env.update(METABENCH_DATA_DIR=str(mirror_dir()), PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
               PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]), GITHUB_ACTIONS="true",
               GITHUB_STEP_SUMMARY=str(tmp_path / "step_summary.md"))
    steps = dict(_metabench_steps(workflow))

    def run(command: str, **extra) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-e", "-c", command], cwd=tmp_path, env={**env, **extra},
                              capture_output=True, text=True, timeout=300)

    evaluate = steps["Evaluate the checkpoint"]
    made = run(evaluate.replace("runs/candidate", "baselines"), MODEL="majority")
    assert made.returncode == 0, made.stdout + made.stderr
    done = run(evaluate, MODEL="lookup")
    assert done.returncode == 0, done.stdout + done.stderr
    gated = run(steps["Gate on the stored baseline"])
    assert gated.returncode in (0, 1, 3), gated.stdout + gated.stderr  # a verdict, never unusable input (2)
    assert "gate: " in gated.stdout
    assert (tmp_path / "gate.xml").read_text().startswith("<?xml")
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert "### metabench gate:" in summary and "| moh_x_cv_fold0 |" in summary
