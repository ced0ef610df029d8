"""The command line: start-up stays light, errors are one clear line, the default command is `run`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from metabench.cli import main


def _metabench(*args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "metabench.cli", *args], capture_output=True, text=True, env=env, timeout=timeout)


def test_ls_tasks_imports_no_torch_or_transformers(toy_env):
    code = (
        "import sys; from metabench.cli import main; main(['ls', 'tasks']); "
        "print('HEAVY=' + ','.join(m for m in ('torch', 'transformers', 'lm_eval', 'pandas', 'datasets', 'scipy', 'sklearn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=toy_env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "toy_cls" in out.stdout
    assert out.stdout.strip().endswith("HEAVY="), out.stdout


def test_help_teaches_examples():
    out = _metabench("--help")
    assert out.returncode == 0 and "metabench --tasks" in out.stdout and "METABENCH_DATA_DIR" in out.stdout


def test_default_command_is_run_and_prints_table(toy_env, tmp_path):
    out = _metabench("--tasks", "toy_cls", "--model", "majority", "-o", str(tmp_path), "--no-progress", env=toy_env)
    assert out.returncode == 0, out.stderr
    assert "toy_cls" in out.stdout and "accuracy" in out.stdout
    results = json.loads((tmp_path / "toy_cls" / "majority" / "results.json").read_text())
    assert results["schema_version"] == 1


def test_unknown_task_and_model_are_one_line_errors(toy_env, capsys):
    out = _metabench("--tasks", "toy_clz", "--model", "majority", env=toy_env)
    assert out.returncode == 2 and "did you mean 'toy_cls'" in out.stderr and "Traceback" not in out.stderr
    out = _metabench("--tasks", "toy_cls", "--model", "majorty", env=toy_env)
    assert out.returncode == 2 and "unknown model 'majorty' (did you mean 'majority'?)" in out.stderr


def test_validate_command(tmp_path, toy_env):
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: x\nkind: tagging\ndataset: toy_tagging\nsplits: {test: test}\nmetrics: [span_f]\n")
    out = _metabench("validate", str(bad), env=toy_env)
    assert out.returncode == 1 and f"{bad}:5" in out.stdout and "did you mean 'span_f1'" in out.stdout


def test_plugins_command_lists_hooks(toy_env):
    out = _metabench("plugins", env=toy_env)
    assert out.returncode == 0
    assert "toy_plugin" in out.stdout and "datasets, models, tasks" in out.stdout


def test_seeds_argument_errors(capsys):
    assert main(["run", "--tasks", "x", "--model", "majority", "--seeds", "a,b"]) == 2
    assert "--seeds 'a,b': expected a count" in capsys.readouterr().err
    assert main(["run", "--tasks", "x", "--model", "majority", "--seeds", "0"]) == 2  # a count of zero seeds
    err = capsys.readouterr().err
    assert "--seeds 0: a seed count must be between 1 and" in err and "--seeds 0," in err  # not the unknown task


def test_ls_models_says_which_models_need_a_training_split(toy_env):
    out = _metabench("ls", "models", env=toy_env)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line for line in out.stdout.splitlines()[2:]}
    assert "required" in rows["majority"] and "required" in rows["lookup"] and "required" in rows["hf-encoder"]
    assert "not used" in rows["random"] and "not used" in rows["constant"]
    assert "Generate" in rows["hf-decoder"] and "Generate" not in rows["majority"]


@pytest.mark.parametrize("command, needles", [
    (("compare",), ("exit status: 0 compared", "2 bad usage", "never exits 1")),
    (("leaderboard", "build"), ("exit status: 0 site written", "1 site written without", "2 bad usage")),
    (("hard",), ("exit status: 0 done", "2 bad usage")),
    (("hard", "gap"), ("exit status: 0 done", "metabench hard mine")),
    (("explore",), ("exit status: 0 page written", "2 bad usage")),
    (("merge-seeds",), ("exit status: 0 merged", "2 a part refused", "verify-run")),
])
def test_report_help_pages_state_their_exit_status(command, needles):
    out = _metabench(*command, "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())  # argparse may wrap; the epilog is kept as written
    for needle in needles:
        assert needle in text, (command, needle)


def test_help_documents_exit_status_and_environment():
    out = _metabench("run", "--help")
    for text in ("0  nothing failed", "1  some job failed", "2  bad usage", "METABENCH_ALLOW_DOWNLOAD",
                 "METABENCH_PLUGIN_MODULES", "METABENCH_DATA_URL"):
        assert text in out.stdout, text
