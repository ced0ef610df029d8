"""The metrics plugin: registrations resolve, targets are lazy, and no reference library leaks in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pluggy

from metabench import hookspecs
from metabench.metrics import plugin
from metabench.registry import Entry

EXPECTED = {
    "accuracy", "precision", "recall", "f1", "macro_f1", "per_class",
    "span_precision", "span_recall", "span_f1", "token_precision", "token_recall", "token_f1", "inv_f1", "oov_f1",
    "mrr", "recall_at_k", "accuracy_at_1",
}  # fmt: skip


def _registrations() -> dict[str, tuple[str, dict]]:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(plugin, name="metabench.metrics.plugin")
    found: dict[str, tuple[str, dict]] = {}

    def register(name, target, *, description="", **meta):
        assert name not in found, f"{name} registered twice"
        found[name] = (target, {"description": description, **meta})

    pm.hook.metabench_register_metrics(register=register)
    return found


def test_every_metric_is_registered_and_resolves_to_a_function():
    found = _registrations()
    assert set(found) == EXPECTED
    for name, (target, meta) in found.items():
        assert isinstance(target, str) and ":" in target
        assert meta["description"]
        assert meta.get("higher_is_better", True) is True
        fn = Entry("metric", name, target, "metabench.metrics.plugin", "test").load()
        assert callable(fn) and fn.__doc__


def test_plugin_import_is_light_and_metrics_do_not_need_the_references():
    code = (
        "import sys\n"
        "import metabench.metrics.plugin\n"
        "assert 'numpy' not in sys.modules, 'plugin imported numpy'\n"
        "import metabench.metrics.classification, metabench.metrics.tagging, metabench.metrics.ranking\n"
        "bad = [m for m in ('sklearn', 'seqeval') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])
