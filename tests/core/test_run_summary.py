"""`--tasks all` with a baseline: jobs the model cannot serve are skips with a reason, the run ends with one
count line, and the exit status is 0 unless a job failed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # `--tasks all` in subprocesses


@pytest.fixture
def skips_env(toy_env):
    # the built-in tasks and the two families (plugins of their own) are left out: `all` means the fixture tasks
    return {**toy_env, "METABENCH_PLUGIN_MODULES": "toy_plugin,skips_plugin", "METABENCH_DISABLE_PLUGINS": "metabench.tasks_plugin,hard,artifacts"}


def _run(env, *args):
    return subprocess.run([sys.executable, "-m", "metabench.cli", "--tasks", "all", "--no-progress", *args],
                          capture_output=True, text=True, env=env, timeout=180)


def test_all_tasks_with_majority_skips_what_it_cannot_serve_and_exits_0(skips_env, tmp_path):
    out = _run(skips_env, "--model", "majority", "-o", str(tmp_path))
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    # ok: toy_cls, toy_tag, toy_tag_decoder (a tagging task for fine-tuned decoders; majority serves any tagging
    # task), toy_choice, toy_bench (a classification benchmark decoders also answer)
    assert last == ("5 ok · 4 skipped (reasons: 1 cannot answer GenerateRequest, 1 cannot answer RankRequest, "
                    "1 dataset not built yet, 1 needs a training split) · 0 failed"), last
    assert "skipped: toy_unbuilt: not built yet; hint: build it once: metabench toy build" in out.stderr
    assert "skipped: model 'majority' learns from the training split, and task 'toy_choice_notrain' has none" in out.stderr
    assert "Traceback" not in out.stderr and "failed" not in out.stderr
    assert not (tmp_path / "toy_choice_notrain").exists()


def test_random_serves_the_task_without_training_split(skips_env, tmp_path):
    out = _run(skips_env, "--model", "random", "-o", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("6 ok · 3 skipped (reasons: 1 cannot answer GenerateRequest, "
                                       "1 cannot answer RankRequest, 1 dataset not built yet) · 0 failed")
    results = json.loads(next((tmp_path / "toy_choice_notrain").rglob("results.json")).read_text())
    assert results["n_items"] > 0 and results["model"]["spec"] == "random"


def test_a_failed_job_makes_the_exit_status_1(skips_env, tmp_path):
    # label=literal is no tag of toy_tag or toy_tag_decoder, and choice tasks need index=N: those jobs fail (a bad
    # argument is not a skip); toy_cls and toy_bench run
    out = _run(skips_env, "--model", "constant:label=literal", "-o", str(tmp_path))
    assert out.returncode == 1
    assert "failed: toy_tag with constant:label=literal" in out.stderr
    assert "failed: toy_tag_decoder with constant:label=literal" in out.stderr
    assert out.stdout.strip().splitlines()[-1] == ("2 ok · 3 skipped (reasons: 1 cannot answer GenerateRequest, "
                                                   "1 cannot answer RankRequest, 1 dataset not built yet) · 4 failed")
