"""--no-progress silences every progress bar of a run, the libraries' own included (transformers' weight loading);
without a terminal on stderr that is the default, so a log holds no cursor codes."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.slow
@pytest.mark.heavy
def test_no_progress_hides_transformers_loading_bars(toy_env, tiny_gpt2, tmp_path):
    env = {**toy_env, "METABENCH_PLUGIN_MODULES": "toy_plugin,skips_plugin"}
    for switch in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS"):  # bars on unless --no-progress says otherwise
        env.pop(switch, None)

    def run(*flags):
        return subprocess.run([sys.executable, "-m", "metabench.cli", "--tasks", "toy_choice", "--model",
                               f"hf-decoder:{tiny_gpt2}", "--limit", "2", "--no-cache", "-o", str(tmp_path), *flags],
                              capture_output=True, text=True, env=env, timeout=300)

    shown = run("--progress")  # stderr is a pipe here, where bars are hidden unless asked for
    assert shown.returncode == 0 and "Loading weights" in shown.stderr  # the bar this test is about exists
    piped = run()
    assert piped.returncode == 0, piped.stderr
    assert "Loading weights" not in piped.stderr and "\x1b[" not in piped.stderr and "\r" not in piped.stderr
    quiet = run("--no-progress")
    assert quiet.returncode == 0, quiet.stderr
    assert "Loading weights" not in quiet.stderr and "it/s]" not in quiet.stderr, quiet.stderr
