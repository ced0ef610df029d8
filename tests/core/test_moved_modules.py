"""Modules moved by the architecture refactor (issue 37) that a plugin may have imported still resolve their names
at the old path, with a PluginAPIDeprecationWarning naming the new one (docs/plugins.md, change log)."""

from __future__ import annotations

import pytest

from metabench.errors import PluginAPIDeprecationWarning


@pytest.mark.parametrize("name", ["Run", "find_runs", "load_run", "one_per_task_and_model", "by_task"])
def test_the_run_readers_resolve_at_their_old_path_with_a_warning(name):
    from metabench.report import runs as old
    from metabench.runs import stored

    with pytest.warns(PluginAPIDeprecationWarning, match=f"metabench.runs.stored.{name}"):
        assert getattr(old, name) is getattr(stored, name)


def test_a_name_the_old_module_never_had_is_an_attribute_error():
    from metabench.report import runs as old

    with pytest.raises(AttributeError):
        old.no_such_name  # noqa: B018


def test_the_gate_replay_resolves_at_its_old_path_with_a_warning():
    """report/gate_replay.py moved into the gate's package (issue 47 item 5)."""
    from metabench.report import gate_replay as old
    from metabench.report.gate import replay

    with pytest.warns(DeprecationWarning, match="metabench.report.gate.replay.SCENARIOS"):
        assert old.SCENARIOS is replay.SCENARIOS
    with pytest.raises(AttributeError):
        old.no_such_name  # noqa: B018


@pytest.mark.parametrize("name", ["DocsContext", "markdown", "names", "REDUCED", "regenerate", "find_blocks"])
def test_the_docs_block_helpers_resolve_at_their_old_path_with_a_warning(name):
    """report/docs_blocks.py moved into the docs generators' package (issue 47 item 5); plugins' docs blocks use it."""
    from metabench.report import docs_blocks as old
    from metabench.report.docs import blocks

    with pytest.warns(PluginAPIDeprecationWarning, match=f"metabench.report.docs.blocks.{name}"):
        assert getattr(old, name) is getattr(blocks, name)
    with pytest.raises(AttributeError):
        old.no_such_name  # noqa: B018
