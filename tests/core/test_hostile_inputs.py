"""The third hardening round (issue 23): the newer commands under hostile and broken input.

One section per class of the issue: nothing written or deleted outside the output folder, no unbounded read,
no hang on a dead address, a user's mistake is not "a bug in metabench", conflicting inputs are errors,
nonsense is refused, a plugin found twice loads once, an adapter of plugin API 1 still works. Each case runs
the CLI in-process (the `cli` fixture of the bad-input suite: no traceback allowed), asserts the message
names the input and the fix, and that nothing outside the output folder changed.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
import types
from pathlib import Path

import pytest
from cli_inprocess import cli, good_run, registry  # noqa: F401 - cli, registry: fixtures

from metabench import plugins
from metabench.errors import PluginAPIDeprecationWarning
from metabench.hookspecs import hookimpl


def _snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every file (its bytes) and symlink (its target) below ``folder``, to show that nothing there changed."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            out[str(path)] = os.readlink(path)
        elif path.is_file():
            out[str(path)] = path.read_bytes()
    return out


@pytest.fixture
def outside(tmp_path):
    """A folder outside every output folder, holding a file a hostile input might overwrite or delete."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "index.html").write_text("the user's own page")
    (folder / "site.css").write_text("the user's own style")
    (folder / "keep.html").write_text("must survive")
    return folder


# ---------------------------------------------------------------------- 1. nothing outside the output folder

def _runs(tmp_path: Path) -> Path:
    good_run(tmp_path / "runs" / "syn" / "a")
    good_run(tmp_path / "runs" / "syn" / "b", prediction="no")
    return tmp_path / "runs"


@pytest.mark.parametrize("link", ["assets", "tasks", "models"])
def test_leaderboard_refuses_a_symlinked_subfolder(cli, tmp_path, outside, link):
    runs, site = _runs(tmp_path), tmp_path / "site"
    site.mkdir()
    (site / link).symlink_to(outside, target_is_directory=True)
    before = _snapshot(outside)
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 2, out
    assert f"{site / link}" in out and f"outside the output folder {site}" in out and "remove the symlink" in out
    assert _snapshot(outside) == before


def test_leaderboard_deletes_nothing_outside_through_its_list_of_generated_files(cli, tmp_path, outside):
    runs, site = _runs(tmp_path), tmp_path / "site"
    assert cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")[0] == 0
    (site / "old").symlink_to(outside, target_is_directory=True)
    generated = json.loads((site / ".metabench-generated.json").read_text())
    hostile = ["old/keep.html", "tasks/../../outside/keep.html", "../outside/keep.html", "/etc/hostname"]
    (site / ".metabench-generated.json").write_text(json.dumps(generated + hostile))
    before = _snapshot(outside)
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 2 and f"{site / 'old'}" in out and "refusing to delete files in it" in out, out
    assert _snapshot(outside) == before


def test_leaderboard_refuses_to_replace_files_it_did_not_write(cli, tmp_path):
    runs, site = _runs(tmp_path), tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("the user's own page")
    (site / "notes.txt").write_text("unrelated, kept")
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 2 and "holds 1 file(s) metabench did not write" in out and "index.html" in out and "--force" in out
    assert (site / "index.html").read_text() == "the user's own page" and not (site / "leaderboard.json").exists()
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200", "--force")
    assert code == 0 and "<html" in (site / "index.html").read_text() and (site / "notes.txt").read_text() == "unrelated, kept"
    assert cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")[0] == 0  # now its own files


def test_leaderboard_refuses_a_generated_file_linked_out_of_the_folder(cli, tmp_path, outside):
    runs, site = _runs(tmp_path), tmp_path / "site"
    assert cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")[0] == 0
    (site / "index.html").unlink()
    (site / "index.html").symlink_to(outside / "index.html")
    before = _snapshot(outside)
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 2 and f"{site / 'index.html'}: leads to {outside / 'index.html'}, outside the output folder" in out, out
    assert _snapshot(outside) == before


def test_run_refuses_a_task_folder_linked_out_of_the_output_folder(cli, tmp_path, outside):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "toy_cls").symlink_to(outside, target_is_directory=True)
    before = _snapshot(outside)
    code, out = cli("--tasks", "toy_cls", "--model", "majority", "-o", tmp_path / "out", "--no-progress")
    assert code == 1 and f"{tmp_path / 'out' / 'toy_cls'}" in out and "outside the output folder" in out, out
    assert _snapshot(outside) == before


# ------------------------------------------------------------------------------ 2. no unbounded read

def _hostile_files(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"/dev/zero": Path("/dev/zero"), "fifo": fifo}


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_samples_that_are_a_device_or_a_pipe_are_refused_not_read(cli, tmp_path, kind):
    runs = _runs(tmp_path)
    target = _hostile_files(tmp_path)[kind]
    samples = runs / "syn" / "b" / "samples.jsonl"
    samples.unlink()
    samples.symlink_to(target)
    for command in (["compare", runs / "syn" / "a", runs / "syn" / "b"], ["leaderboard", "build", runs, "-o", tmp_path / "site"]):
        code, out = cli(*command)
        assert code == 2 and f"{samples}: not a regular file" in out and f"symlink to {target}" in out, out
    assert not (tmp_path / "site" / "leaderboard.json").exists()


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_a_phi_table_that_is_a_device_or_a_pipe_is_refused(cli, tmp_path, kind):
    runs = _runs(tmp_path)
    target = _hostile_files(tmp_path)[kind]
    code, out = cli("compare", runs / "syn" / "a", "--phi-table", target)
    assert code == 2 and f"{target}: not a regular file" in out, out


def test_a_results_file_over_the_limit_is_refused_naming_the_variable(cli, tmp_path, monkeypatch):
    runs = _runs(tmp_path)
    monkeypatch.setenv("METABENCH_MAX_INPUT_BYTES", "500")
    code, out = cli("compare", runs / "syn" / "a", runs / "syn" / "b")
    assert code == 2 and "results.json: larger than 500 bytes" in out and "METABENCH_MAX_INPUT_BYTES" in out, out


def test_a_task_file_that_is_a_pipe_is_refused_not_waited_on(cli, tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    os.mkfifo(folder / "pipe.yaml")
    code, out = cli("validate", folder / "pipe.yaml")
    assert code == 1 and f"{folder / 'pipe.yaml'}: not a regular file (a named pipe" in out, out


# --------------------------------------------------------------------------------------- 3. no hang

def test_a_dead_ray_address_fails_within_its_timeout(cli, tmp_path, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.setenv("METABENCH_RAY_CONNECT_TIMEOUT_S", "5")
    code, out = cli("--tasks", "toy_cls", "--model", "majority", "--launcher", "ray", "--ray-address", "127.0.0.1:1",
                    "-o", tmp_path / "out", "--no-progress")
    assert code == 2 and "cannot reach a Ray cluster (--ray-address) at 127.0.0.1:1" in out, out
    assert "ray start --head" in out and "METABENCH_RAY_CONNECT_TIMEOUT_S" in out
    assert not (tmp_path / "out" / "toy_cls").exists()


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.1:port", "127.0.0.1:99999", ":6379", "host name:1"])
def test_a_malformed_ray_address_is_a_usage_error_before_any_work(cli, tmp_path, address):
    code, out = cli("--tasks", "toy_cls", "--model", "majority", "--launcher", "ray", "--ray-address", address,
                    "-o", tmp_path / "out")
    assert code == 2 and f"--ray-address {address!r}: not an address of the form HOST:PORT" in out, out
    assert "127.0.0.1:6379" in out and not (tmp_path / "out").exists()


def test_a_dead_openai_compatible_server_fails_at_once(cli, tmp_path, monkeypatch):
    pytest.importorskip("lm_eval")
    monkeypatch.setenv("METABENCH_SERVER_CONNECT_TIMEOUT_S", "5")
    from metabench.models.openai_decoder import OpenAIDecoder

    adapter = OpenAIDecoder({"model": "m", "base_url": "http://127.0.0.1:1/v1"})
    with pytest.raises(Exception) as caught:
        adapter._load()
    assert "cannot reach the OpenAI-compatible server (http://127.0.0.1:1/v1/chat/completions) at 127.0.0.1:1" in str(caught.value)
    assert "METABENCH_SERVER_CONNECT_TIMEOUT_S" in str(caught.value)


# ------------------------------------------------------------------- 4. a user's mistake, not a bug

MODEL_SPECS = [
    ("duplicate-key", "constant:label=a,label=b", "argument 'label' is given twice ('a' and 'b')", "give 'label' once"),
    ("positional-and-key", "hf:minilm-l6,pretrained=other", "both give 'pretrained'", "give 'pretrained' once"),
    ("lone-surrogate", "constant:label=\udcff", "character 16 is not UTF-8 text", "rename the model folder"),
    ("non-utf8-folder", "hf:pretrained=/models/caf\udce9", "is not UTF-8 text", "ln -s OLD new_name"),
]


@pytest.mark.parametrize("name, spec, problem, fix", MODEL_SPECS, ids=[c[0] for c in MODEL_SPECS])
def test_model_spec_mistakes(cli, tmp_path, name, spec, problem, fix):
    code, out = cli("--tasks", "toy_cls", "--model", spec, "-o", tmp_path / "out", "--no-progress")
    assert code in (1, 2) and problem in out and fix in out and "internal error" not in out, out
    assert not list((tmp_path / "out").rglob("results.json")) if (tmp_path / "out").exists() else True


# --------------------------------------------------------------------------- 7. nonsense is refused

@pytest.mark.parametrize("workers", ["0", "-1", "100000"])
def test_workers_out_of_range(cli, tmp_path, workers):
    code, out = cli("--tasks", "toy_cls", "--model", "majority", "--launcher", "processes", "--workers", workers,
                    "-o", tmp_path / "out")
    assert code == 2 and f"--workers {workers}: must be between 1 and 1024" in out and "leave --workers out" in out


# ------------------------------------------------------------------------ 8. a plugin found twice

def _twice_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)

    def metabench_register_metrics(register):
        register("twice_metric", "metabench.metrics.classification:accuracy", description="registered once")

    module.metabench_register_metrics = hookimpl(metabench_register_metrics)
    return module


@pytest.mark.parametrize("how", ["installed-and-in-env", "stale-egg-info"])
def test_a_plugin_found_twice_loads_once_and_warns_once(cli, monkeypatch, how):
    module_name = "twice_plugin_mod"
    monkeypatch.setitem(sys.modules, module_name, _twice_module(module_name))
    ep = importlib.metadata.EntryPoint(name="twice", value=module_name, group="metabench")
    found = [ep] if how == "installed-and-in-env" else [ep, importlib.metadata.EntryPoint(
        name="twice", value=module_name, group="metabench")]
    real = importlib.metadata.entry_points
    monkeypatch.setattr(plugins.metadata, "entry_points",
                        lambda **kw: found if kw.get("group") == "metabench" else real(**kw))
    monkeypatch.setenv("METABENCH_PLUGIN_MODULES", f"toy_plugin,{module_name}" if how != "stale-egg-info" else "toy_plugin")
    monkeypatch.setattr(plugins, "default_registry", lambda: plugins.load())
    for command in (("plugins",), ("ls", "metrics")):
        code, out = cli(*command)
        assert code == 0 and "twice_metric" in out or command == ("plugins",), out
        assert out.count("is found twice") == 1 and "loaded once" in out and "registered twice" not in out, out
    code, out = cli("--strict", "ls", "metrics")
    assert code == 0 and out.count("twice_metric") == 1, out


# ------------------------------------------------------------------ 9. adapters of plugin API 1

def test_an_old_style_adapter_runs_with_a_deprecation_warning(cli, tmp_path, monkeypatch):
    from metabench.models.baselines import Majority

    class OldMajority(Majority):
        name = "old-majority"

        def __init__(self, args):  # plugin API 1: no registry=, settings=
            super().__init__(args)

    module = types.ModuleType("old_adapter_plugin")
    module.OldMajority = OldMajority
    module.metabench_register_models = hookimpl(lambda register: register("old-majority", "old_adapter_plugin:OldMajority"))
    monkeypatch.setitem(sys.modules, "old_adapter_plugin", module)
    monkeypatch.setenv("METABENCH_PLUGIN_MODULES", "toy_plugin,old_adapter_plugin")
    monkeypatch.setattr(plugins, "default_registry", lambda: plugins.load())
    with pytest.warns(PluginAPIDeprecationWarning, match="OldMajority takes no registry= and settings="):
        code, out = cli("--tasks", "toy_cls", "--model", "old-majority", "-o", tmp_path / "out", "--no-progress",
                        "--no-cache")
    assert code == 0, out
    assert (tmp_path / "out" / "toy_cls" / "old-majority" / "results.json").is_file()


# ------------------------------------------------------------------------------------------------- docs

def test_reliability_page_lists_every_limit_and_timeout_with_its_variable_and_default():
    from metabench import connections, hookspecs, limits

    page = (Path(__file__).parents[2] / "docs" / "reliability.md").read_text()
    for limit in limits.ALL + connections.ALL:
        row = next((line for line in page.splitlines() if f"`{limit.env}`" in line), "")
        shown = f"{limit.default:,.0f}" if limit.default >= 1000 else f"{limit.default:g}"
        assert row.startswith("|") and shown in row, (limit, row)
    plugins_page = (Path(__file__).parents[2] / "docs" / "plugins.md").read_text()
    assert f"at **version {hookspecs.HOOKSPEC_VERSION}**" in plugins_page
    assert f"| {hookspecs.HOOKSPEC_VERSION} |" in plugins_page
