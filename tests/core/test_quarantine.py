"""Two broken plugins installed at once: everything else works, both problems are named, --strict fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BROKEN = Path(__file__).parent.parent / "fixtures" / "broken_plugins"
#: The real data mirror (the root conftest sets METABENCH_DATA_DIR when one exists), read before fixtures
#: point the variable at the toy data.
MIRROR = os.environ.get("METABENCH_DATA_DIR")
MIRROR = MIRROR if MIRROR and (Path(MIRROR) / "meta4xnli").is_dir() else None


@pytest.fixture
def broken_env(toy_env, tmp_path):
    env = dict(toy_env)
    env["PYTHONPATH"] = os.pathsep.join([str(BROKEN), env["PYTHONPATH"]])
    env["METABENCH_PLUGIN_MODULES"] = "toy_plugin,typo_hook_plugin,bad_task_plugin"
    env.pop("METABENCH_STRICT", None)
    return env


def _metabench(env, *args):
    done = subprocess.run([sys.executable, "-m", "metabench.cli", *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def _names_both(text: str) -> None:
    assert "typo_hook_plugin.py:6: 'metabench_register_taks' is not a metabench hook" in text
    assert "did you mean 'metabench_register_tasks'" in text and "METABENCH_DISABLE_PLUGINS=typo_hook_plugin" in text
    assert "bad.yaml:6: unknown key 'metric' (did you mean 'metrics'?)" in text
    assert "METABENCH_DISABLE_PLUGINS=bad_task_plugin" in text


@pytest.mark.slow
def test_two_broken_plugins_are_quarantined_and_everything_else_works(broken_env, tmp_path):
    code, out, err = _metabench(broken_env, "ls", "tasks")
    assert code == 0 and "toy_cls" in out and "plugin_good_cls" in out and "plugin_bad_cls" not in out
    _names_both(err)

    code, out, err = _metabench(broken_env, "--tasks", "toy_cls,plugin_good_cls", "--model", "majority",
                                "-o", tmp_path / "runs", "--no-progress")
    assert code == 0 and (tmp_path / "runs" / "toy_cls" / "majority" / "results.json").is_file()
    assert (tmp_path / "runs" / "plugin_good_cls" / "majority" / "results.json").is_file()

    if MIRROR is not None:  # a built-in task on the real data, the broken plugins still installed
        code, out, err = _metabench(dict(broken_env, METABENCH_DATA_DIR=MIRROR), "--tasks", "m4x_det_en_mono",
                                    "--model", "majority", "--limit", "5", "-o", tmp_path / "builtin", "--no-progress")
        assert code == 0 and (tmp_path / "builtin" / "m4x_det_en_mono" / "majority@limit=5" / "results.json").is_file()
        _names_both(err)

    code, out, err = _metabench(broken_env, "plugins")
    assert code == 0 and "2 problem(s)" in out
    _names_both(out)
    assert "quarantined:" in out
    (bad_task,) = [line for line in out.splitlines() if line.startswith("bad_task_plugin ")]
    assert bad_task.rstrip().endswith("loaded, 1 problem(s) below: part of it is quarantined")  # not "ok"

    code, out, err = _metabench(broken_env, "--tasks", "plugin_bad_cls", "--model", "majority", "-o", tmp_path / "x")
    assert code == 2 and "task 'plugin_bad_cls' is quarantined: " in err and "bad.yaml:6" in err
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").rglob("results.json"))


@pytest.mark.slow
def test_strict_mode_turns_the_warnings_into_errors(broken_env, tmp_path):
    code, _, err = _metabench(broken_env, "--strict", "ls", "tasks")
    assert code == 2 and "typo_hook_plugin.py:6" in err and "strict mode" in err
    code, out, _ = _metabench(broken_env, "plugins", "--strict")
    assert code == 2
    _names_both(out)  # plugins still runs and shows every problem before failing
    strict_env = dict(broken_env, METABENCH_PLUGIN_MODULES="toy_plugin,bad_task_plugin", METABENCH_STRICT="1")
    code, _, err = _metabench(strict_env, "--tasks", "toy_cls", "--model", "majority", "-o", tmp_path / "runs")
    assert code == 2 and "bad.yaml:6: unknown key 'metric'" in err
    code, out, _ = _metabench(strict_env, "validate", BROKEN / "bad_task_plugin" / "tasks")
    assert code == 1 and "FAIL" in out and "ok    " in out
