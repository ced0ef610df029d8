"""A paper family is a plugin that can be absent (issues 47, 59): metabench without it runs ``--help``, ``ls``,
``validate`` and a leaderboard build green, and the family's ``compare`` verb is a usage error, not an internal one.

A family ships as a distribution (plugins/metabench-<family>) and is made absent without uninstalling anything: the
CLI runs in a subprocess whose ``importlib.metadata`` hides the family's entry point and whose import system
refuses its package, as on a machine where it was never installed (so a core module importing it would fail
here too). The working tree is never touched."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
#: committed runs of a task no family owns, for the leaderboard build
RUNS = ("m4x_det_en_mono/majority", "m4x_det_en_mono/lookup")
#: family -> its compare analysis
FAMILIES = {"hard": "hardness", "artifacts": "artifacts"}
#: family shipped as a distribution -> (its entry point's name, its package)
DISTRIBUTIONS = {"hard": ("hard", "metabench_hard"), "artifacts": ("artifacts", "metabench_artifacts")}


#: run before the CLI: the distributions named in argv[1] ("entry point:package,...") are not installed
ABSENT = """
import importlib.abc, importlib.metadata as metadata, sys
hidden = dict(pair.split(":") for pair in sys.argv.pop(1).split(",") if pair)

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in hidden.values():
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NotInstalled())
found = metadata.entry_points
metadata.entry_points = lambda **select: metadata.EntryPoints(
    [ep for ep in found(**select) if not (ep.group == "metabench" and ep.name in hidden)])
from metabench.cli import main
sys.argv[0] = "metabench"
sys.exit(main())
"""


def test_the_distributions_are_the_families_plugins():
    assert {name for name in DISTRIBUTIONS if (REPO / "plugins" / f"metabench-{name}").is_dir()} == set(DISTRIBUTIONS)
    assert not any((REPO / "metabench" / name).exists() or (REPO / "tasks" / name).exists() for name in DISTRIBUTIONS)


@pytest.mark.slow  # a leaderboard build in a subprocess, per case (~10 s)
@pytest.mark.parametrize("absent", [("hard",), ("artifacts",), ("artifacts", "hard")], ids="+".join)
def test_metabench_without_the_paper_families_runs_every_other_command(absent, tmp_path):
    env = {key: value for key, value in os.environ.items()
           if key not in ("METABENCH_STRICT", "METABENCH_PLUGIN_MODULES", "METABENCH_DISABLE_PLUGINS")}
    command = [sys.executable, "-c", ABSENT, ",".join(":".join(DISTRIBUTIONS[family]) for family in absent)]

    def metabench(*args) -> tuple[int, str, str]:
        done = subprocess.run([*command, *map(str, args)], env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
        return done.returncode, done.stdout, done.stderr

    code, out, err = metabench("--help")  # no verb of the family (help reports no plugin)
    assert code == 0 and "\n    compare " in out and not any(f"\n    {family} " in out for family in absent)

    code, out, err = metabench("plugins")
    loaded = [line.split()[0] for line in out.splitlines()[2:] if line.split()[-1:] == ["ok"]]
    assert code == 0 and "metabench.kinds.plugin" in loaded
    assert not set(absent) & set(loaded) and not {f"metabench.{family}.plugin" for family in absent} & set(loaded), out

    code, out, err = metabench("ls")
    assert code == 0 and "tasks in" in out and not any(f"\n{family} " in out for family in absent)
    assert "quarantined" not in err, err  # not installed is not broken: nothing to warn about

    code, out, _ = metabench("validate", REPO / "tasks")  # the core suite too: a family adds its members (`extends: core`)
    assert code == 0 and " 0 invalid, " in out, out
    code, out, _ = metabench("ls", "groups")
    core = re.search(r"^core\s.*$", out, re.M)
    added = yaml.safe_load((REPO / "plugins" / "metabench-artifacts" / "metabench_artifacts" / "tasks" / "artifacts"
                            / "core_artifacts.yaml").read_text(encoding="utf-8"))["task"]
    assert code == 0 and core and all((m in core.group(0)) == ("artifacts" not in absent) for m in added), out

    runs = tmp_path / "runs"
    for run in RUNS:
        shutil.copytree(REPO / "leaderboard" / "runs" / run, runs / run)
    code, out, err = metabench("leaderboard", "build", runs, "-o", tmp_path / "board")
    assert code == 0, err
    assert "2 runs read, 2 ranked" in out and (tmp_path / "board" / "leaderboard.json").is_file()

    for family in absent:  # no such verb now: a run folder of that name
        code, _, err = metabench("compare", FAMILIES[family], runs)
        assert code == 2 and f"{FAMILIES[family]}: no such file or folder" in err

@pytest.mark.parametrize("name", ["hard", "metabench.hard.plugin", "metabench.artifacts.plugin"])
def test_a_moved_family_is_disabled_by_its_name_in_older_runs_too(name, monkeypatch, capsys):
    """Runs made while the family was built in record it as metabench.hard.plugin (plugins.RENAMED): a user who
    copies that name into METABENCH_DISABLE_PLUGINS disables the distribution, with no 'names no plugin' warning."""
    from metabench import plugins

    monkeypatch.setenv("METABENCH_DISABLE_PLUGINS", name)
    loaded = [record["name"] for record in plugins.load().plugins]
    assert plugins.RENAMED.get(name, name) not in loaded and "metabench.kinds.plugin" in loaded
    assert "no plugin" not in capsys.readouterr().err
