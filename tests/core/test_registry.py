"""Typed registry categories and name clashes that name the plugins involved."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from metabench import plugins
from metabench.errors import ConfigError, PluginError
from metabench.hookspecs import hookimpl


class BrokenModels:
    """A plugin object (its class name is its plugin name) registering one adapter that is not one."""

    @hookimpl
    def metabench_register_models(self, register):
        register("not-an-adapter", "collections:OrderedDict")
        register("fine", "metabench.models.baselines:Majority")


class BrokenParts:
    @hookimpl
    def metabench_register_kinds(self, register):
        register("odd", "metabench.models.base:Adapter")

    @hookimpl
    def metabench_register_metrics(self, register):
        register("pi", "math:pi")


class OtherTasks:
    def __init__(self, folder):
        self.folder = folder

    @hookimpl
    def metabench_register_tasks(self, register):
        register(str(self.folder))


def test_a_model_that_is_not_an_adapter_is_refused_with_the_plugin_named():
    registry = plugins.load(extra_plugins=(BrokenModels(),))
    assert registry.resolve("model", "fine").__name__ == "Majority"
    with pytest.raises(PluginError, match=r"model 'not-an-adapter' \(from plugin 'BrokenModels'\) is the class "
                                          r"collections.OrderedDict, which is not a subclass of metabench.models.base.Adapter"):
        registry.resolve("model", "not-an-adapter")


def test_kinds_subclass_kind_and_metrics_are_callable():
    registry = plugins.load(extra_plugins=(BrokenParts(),))
    with pytest.raises(PluginError, match="not a subclass of metabench.kinds.base.Kind"):
        registry.resolve("kind", "odd")
    with pytest.raises(PluginError, match=r"metric 'pi' \(from plugin 'BrokenParts'\) is a float .*not callable"):
        registry.resolve("metric", "pi")
    assert callable(registry.resolve("metric", "accuracy"))


@pytest.mark.slow
def test_a_task_name_in_two_plugins_names_both_plugins(tmp_path):
    from metabench.config.index import TaskIndex

    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "clash.yaml").write_text(
        "task: vua20_seq\nkind: tagging\ndataset: vua\nsplits: {test: test}\n"
        "labels: {positive: METAPHOR}\nmetrics: [span_f1]\n"
    )
    registry = plugins.load(extra_plugins=(OtherTasks(folder),))
    index = TaskIndex(registry)  # the second file is quarantined; the first registrant keeps the name
    assert index.tasks["vua20_seq"].plugin == "metabench.tasks_plugin"
    problem = index.quarantined["vua20_seq"]
    assert problem.plugin == "OtherTasks" and problem in registry.problems
    assert "task name 'vua20_seq' is registered by plugin 'metabench.tasks_plugin'" in problem.message
    assert "and by plugin 'OtherTasks'" in problem.message and str(folder / "clash.yaml") in problem.message
    registry.strict = True  # --strict: the clash is an error, naming both plugins
    with pytest.raises(ConfigError, match=r"registered by plugin 'metabench.tasks_plugin' .* and by plugin 'OtherTasks'"):
        TaskIndex(registry)


def test_an_adapter_of_plugin_api_1_still_builds_with_a_deprecation_warning():
    """Adapters written as ``__init__(self, args)`` before adapters received registry= and settings=."""
    from metabench.errors import PluginAPIDeprecationWarning
    from metabench.models.base import Adapter, AdapterSettings
    from metabench.models.spec import build_adapter, parse_model_spec

    class OldStyle(Adapter):
        name = "old-style"
        allowed_args = ("k",)

        def __init__(self, args):
            super().__init__(args)

    class Plugin:
        @hookimpl
        def metabench_register_models(self, register):
            register("old-style", OldStyle)

    registry = plugins.load(extra_plugins=(Plugin(),))
    with pytest.warns(PluginAPIDeprecationWarning, match=r"--model old-style:k=1: adapter class .*OldStyle takes no "
                      r"registry= and settings= arguments \(plugin API 1\).*docs/plugins.md"):
        adapter = build_adapter(parse_model_spec("old-style:k=1"), registry, AdapterSettings(use_cache=False, progress=False))
    assert isinstance(adapter, OldStyle) and adapter.args == {"k": "1"} and adapter.registry is registry
    with warnings.catch_warnings(record=True) as shown:  # as the command line shows them: once per location
        warnings.simplefilter("default")
        for _ in range(2):  # a plan builds it, then its job
            build_adapter(parse_model_spec("old-style:k=2"), registry, AdapterSettings(use_cache=False, progress=False))
    (warning,) = [w for w in shown if issubclass(w.category, PluginAPIDeprecationWarning)]
    assert warning.filename == __file__  # where the class is written, not metabench's own file
    assert "class OldStyle" in Path(__file__).read_text().splitlines()[warning.lineno - 1]
    assert (adapter.use_cache, adapter.progress) == (False, False)
    assert build_adapter(parse_model_spec("majority"), registry).registry is registry
