"""Plugin loading: built-ins and extras through one manager, env switches, broken plugins reported."""

from __future__ import annotations

import types

import pytest

from metabench import hookimpl as exported_hookimpl  # noqa: F401 - the public import path must exist
from metabench import plugins
from metabench.errors import PluginError
from metabench.hookspecs import hookimpl


def _plugin(name: str, **hooks) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook, fn in hooks.items():
        setattr(module, hook, hookimpl(fn))
    return module


def test_builtins_register_through_the_same_manager():
    registry = plugins.load()
    names = [p["name"] for p in registry.plugins]
    assert "metabench.models.plugin" in names and "metabench.kinds.plugin" in names
    assert {"majority", "random", "constant", "lookup"} <= set(registry.names("model"))
    entry = registry.get("model", "majority")
    assert entry.plugin == "metabench.models.plugin" and isinstance(entry.target, str)


def test_misspelt_hook_quarantines_the_plugin_naming_the_closest_hook(capsys):
    def metabench_register_taks(register):
        pass

    def metabench_register_models(register):
        register("typo_model", "metabench.models.baselines:Majority")

    module = _plugin("typo_plugin", metabench_register_taks=metabench_register_taks,
                     metabench_register_models=metabench_register_models)
    registry = plugins.load(extra_plugins=(module,))
    assert "typo_model" not in registry.names("model") and "majority" in registry.names("model")
    err = capsys.readouterr().err
    assert err.count("warning: quarantined plugin 'typo_plugin'") == 1
    assert "did you mean 'metabench_register_tasks'" in err and "METABENCH_DISABLE_PLUGINS=typo_plugin" in err
    assert f"{__file__}:" in err  # file:line of the misspelt hook
    with pytest.raises(PluginError, match="(?s)not a metabench hook .* strict mode"):
        plugins.load(extra_plugins=(module,), strict=True)


def test_plugin_that_raises_is_reported_and_skipped(capsys):
    def metabench_register_models(register):
        raise RuntimeError("boom")

    registry = plugins.load(extra_plugins=(_plugin("broken_plugin", metabench_register_models=metabench_register_models),))
    record = next(p for p in registry.plugins if p["name"] == "broken_plugin")
    assert "RuntimeError: boom" in record["status"]
    err = capsys.readouterr().err
    assert "broken_plugin" in err and "METABENCH_DISABLE_PLUGINS=broken_plugin" in err
    assert "majority" in registry.names("model")  # the others still load


def test_name_clash_names_both_plugins():
    def metabench_register_models(register):
        register("majority", "elsewhere:Thing")

    clash = _plugin("clash_plugin", metabench_register_models=metabench_register_models)
    registry = plugins.load(extra_plugins=(clash,))
    assert registry.get("model", "majority").plugin == "metabench.models.plugin"
    (problem,) = registry.problems
    assert problem.plugin == "clash_plugin" and "metabench.models.plugin" in problem.message
    with pytest.raises(PluginError) as err:
        plugins.load(extra_plugins=(clash,), strict=True)
    assert "metabench.models.plugin" in str(err.value) and "clash_plugin" in str(err.value)


def test_lazy_target_import_error_names_plugin():
    def metabench_register_models(register):
        register("ghost", "no_such_module_xyz:Adapter")

    registry = plugins.load(extra_plugins=(_plugin("ghost_plugin", metabench_register_models=metabench_register_models),))
    with pytest.raises(PluginError) as err:
        registry.resolve("model", "ghost")
    assert "ghost_plugin" in str(err.value) and "no_such_module_xyz" in str(err.value)


def test_disable_and_module_env(monkeypatch):
    monkeypatch.setenv("METABENCH_DISABLE_PLUGINS", "metabench.models.plugin")
    assert "majority" not in plugins.load().names("model")
    monkeypatch.delenv("METABENCH_DISABLE_PLUGINS")
    monkeypatch.setenv("METABENCH_PLUGIN_MODULES", "toy_plugin")
    assert "counting" in plugins.load().names("model")


def test_a_builtin_family_that_cannot_be_imported_is_quarantined_like_any_plugin(monkeypatch, capsys):
    """A paper family deleted from the tree (issue 47) costs its own registrations, named once; not the tool."""
    monkeypatch.setattr(plugins, "BUILTIN_PLUGINS", (*plugins.BUILTIN_PLUGINS, "metabench.gone_family.plugin"))
    registry = plugins.load()
    err = capsys.readouterr().err
    assert err.count("metabench.gone_family.plugin") == 3 and err.count("warning") == 1  # plugin, problem, fix
    assert "this built-in plugin is missing from the installation (no metabench/gone_family/)" in err and "METABENCH_DISABLE_PLUGINS=metabench.gone_family.plugin" in err
    assert "majority" in registry.names("model") and "hard" in registry.names("command")
    with pytest.raises(PluginError, match="gone_family"):
        plugins.load(strict=True)
    monkeypatch.setenv("METABENCH_DISABLE_PLUGINS", "metabench.gone_family.plugin")  # dropped knowingly: silent
    plugins.load()
    assert capsys.readouterr().err == ""


def test_allow_list_filters_entry_points(monkeypatch):
    monkeypatch.setenv("METABENCH_LOAD_PLUGINS", "")
    registry = plugins.load()
    assert all(p["name"].startswith("metabench.") for p in registry.plugins)
