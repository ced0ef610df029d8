"""Board sections and docs blocks come from the registry (``metabench_register_board_sections`` and
``metabench_register_docs_blocks``): the paper families contribute theirs like a third party, and a section
that breaks is left off the board, quarantined with its plugin's name, while the rest is built."""

from __future__ import annotations

import sys
import types

import pytest

from metabench import plugins
from metabench.errors import PluginAPIDeprecationWarning, PluginError
from metabench.hookspecs import hookimpl


def _plugin(name: str, **hooks) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook, fn in hooks.items():
        setattr(module, hook, hookimpl(fn))
    return module


def _section_plugin(name: str, section: str, build, **meta) -> types.ModuleType:
    """A plugin whose one board section is ``build`` (a module attribute, reached by a lazy target)."""
    module = _plugin(name, metabench_register_board_sections=lambda register: register(section, f"{name}:build", **meta))
    module.build = build
    return module


def _board(registry, toy_runs):
    from metabench.report.compare import Options
    from metabench.report.leaderboard.board import build_board
    from metabench.runs.stored import find_runs

    return build_board(registry, find_runs([toy_runs]), options=Options(n_resamples=50), published=[])


def test_the_families_register_their_sections_and_blocks_through_the_hooks():
    registry = plugins.load()
    assert {(e.name, e.plugin) for e in registry.entries("board_section")} >= {
        ("gameability", "artifacts"), ("hardness", "hard")}
    blocks = {e.name: e.plugin for e in registry.entries("docs_block")}
    assert blocks["hard-gap"] == "hard" and blocks["boisson-views"] == "artifacts"
    assert blocks["headline"] == "metabench.report.plugin"
    assert registry.get("board_section", "hardness").meta["reads"] == "hard_phi.json"


@pytest.mark.slow
@pytest.mark.parametrize(("build", "message"), [
    (lambda inputs: 1 / 0, "leaderboard section 'broken' raised ZeroDivisionError"),
    (lambda inputs: {"rows": []}, "leaderboard section 'broken' (from plugin 'broken_board') returned a dict, not a BoardSection"),
])
def test_a_broken_section_is_quarantined_with_its_plugin_and_the_board_is_built(toy_runs, monkeypatch, capsys,
                                                                                build, message):
    module = _section_plugin("broken_board", "broken", build)
    monkeypatch.setitem(sys.modules, "broken_board", module)
    registry = plugins.load(extra_plugins=(module,))
    board = _board(registry, toy_runs)
    assert "broken" not in board.sections() and board.tasks and "gameability" in board.sections()
    (problem,) = [p for p in registry.problems if p.plugin == "broken_board"]
    assert message in problem.message and "METABENCH_DISABLE_PLUGINS=broken_board" in problem.fix
    assert "warning: quarantined plugin 'broken_board'" in capsys.readouterr().err

    strict = plugins.load(extra_plugins=(module,), strict=True)
    with pytest.raises(PluginError, match="broken_board"):
        _board(strict, toy_runs)


def test_a_section_may_not_replace_the_boards_own_keys(toy_runs, monkeypatch):
    from metabench.report.leaderboard.sections import BoardSection

    module = _section_plugin("greedy_board", "tasks", lambda inputs: BoardSection([]))
    monkeypatch.setitem(sys.modules, "greedy_board", module)
    registry = plugins.load(extra_plugins=(module,))
    board = _board(registry, toy_runs)
    assert board.tasks and any("takes a name the board already has" in p.message for p in registry.problems)


@pytest.mark.slow
def test_a_section_adds_its_data_and_paper_tables(toy_runs, monkeypatch):
    from metabench.report.leaderboard import markdown
    from metabench.report.leaderboard.sections import BoardSection

    def build(inputs):
        rows = sorted({r.record.model.spec for r in inputs.runs})
        return BoardSection({"models": rows}, [{
            "key": "counted", "paper": "a plugin", "number": "Models", "title": "the models it saw", "header": ["model"],
            "rows": [{"labels": [], "model": m, "source": "metabench", "cells": []} for m in rows], "tasks": [],
            "missing_tasks": [], "notes": []}])

    module = _section_plugin("counting_board", "counted", build)
    monkeypatch.setitem(sys.modules, "counting_board", module)
    board = _board(plugins.load(extra_plugins=(module,)), toy_runs)
    assert board.section("counted") == {"models": ["lookup", "majority", "random", "random:strategy=prior"]}
    assert board.paper_tables[-1].key == "counted"
    assert "### a plugin, Models: the models it saw" in markdown.render(board)


def test_a_docs_block_of_a_plugin_is_found_and_rendered(tmp_path, monkeypatch):
    from metabench.report.docs.blocks import DocsContext, regenerate

    module = _plugin("docs_plugin", metabench_register_docs_blocks=lambda register: register("runs-dir", "docs_plugin:table"))
    module.table = lambda context, prefix="": [f"{prefix}{context.runs_dir.name}"]
    monkeypatch.setitem(sys.modules, "docs_plugin", module)
    registry = plugins.load(extra_plugins=(module,))
    page = "<!-- generated: runs-dir prefix=in: (metabench report docs) -->\nold\n<!-- end generated -->\n"
    out = regenerate(tmp_path / "page.md", page, DocsContext(tmp_path / "runs", registry))
    assert out == page.replace("old", "in:runs")


def test_a_section_gives_its_tasks_a_family_of_the_overview(toy_runs, monkeypatch):
    """A task tagged with the family's tag joins it before the built-in groups (toy_tag is tagged detection too)."""
    from metabench.report.leaderboard.sections import BoardSection

    module = _section_plugin("toy_family", "toys", lambda inputs: BoardSection(None), family=("toys", "Toy tasks", ("toy",)))
    monkeypatch.setitem(sys.modules, "toy_family", module)
    board = _board(plugins.load(extra_plugins=(module,)), toy_runs)
    assert board.task("toy_tag").family == "toys"
    assert [f.key for f in board.families][-1] == "toys" and board.families[-1].title == "Toy tasks"

    bad = _section_plugin("bad_family", "bad", lambda inputs: BoardSection(None), family="toys")
    monkeypatch.setitem(sys.modules, "bad_family", bad)
    registry = plugins.load(extra_plugins=(bad,))
    assert "toys" not in {f.key for f in _board(registry, toy_runs).families}
    assert any(p.plugin == "bad_family" and "family='toys'" in p.message for p in registry.problems)


def test_a_sections_own_views_render_on_the_site_and_in_markdown(toy_runs, monkeypatch, tmp_path):
    """A third party's section shows its own Markdown and HTML (``markdown=``, ``html=``) where the built-in
    reporters place registered sections: after the gaps in leaderboard.md, on the gaps and task pages."""
    from metabench.report.leaderboard import markdown, site
    from metabench.report.leaderboard.sections import BoardSection

    package = tmp_path / "viewing_board"
    (package / "templates").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "templates" / "seen.html").write_text(
        '<p class="seen">{{ name }} {{ page }}{% if page == "task" %} {{ task.name }}{% endif %}: '
        '{{ section.models | length }}</p>\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    module = _section_plugin("viewing_board_plugin", "seen", lambda inputs: BoardSection({"models": ["a", "b"]}),
                             html="viewing_board:templates/seen.html", markdown="viewing_board_plugin:lines")
    # written for the untyped board (board[name]): still shown, with a deprecation warning
    module.lines = lambda board, name: [f"## seen: {len(board[name]['models'])} models", ""]
    monkeypatch.setitem(sys.modules, "viewing_board_plugin", module)
    board = _board(plugins.load(extra_plugins=(module,)), toy_runs)
    assert board.section_views["seen"].to_dict() == {"html": "viewing_board:templates/seen.html",
                                                     "markdown": "viewing_board_plugin:lines"}
    with pytest.warns(PluginAPIDeprecationWarning, match=r"Board\['seen'\]"):
        assert "## seen: 2 models" in markdown.render(board)
    site.write(board, tmp_path / "site")
    assert '<p class="seen">seen gaps: 2</p>' in (tmp_path / "site" / "gaps.html").read_text(encoding="utf-8")
    assert '<p class="seen">seen task toy_tag: 2</p>' in (tmp_path / "site" / "tasks" / "toy_tag.html").read_text(encoding="utf-8")


def test_a_view_that_does_not_resolve_leaves_the_sections_views_off_with_its_plugin_named(toy_runs, monkeypatch):
    from metabench.report.leaderboard.sections import BoardSection

    module = _section_plugin("lost_view", "lost", lambda inputs: BoardSection({"kept": True}),
                             html="no_such_package_here:templates/x.html")
    monkeypatch.setitem(sys.modules, "lost_view", module)
    registry = plugins.load(extra_plugins=(module,))
    board = _board(registry, toy_runs)
    assert board.section("lost") == {"kept": True} and "lost" not in board.section_views
    assert any(p.plugin == "lost_view" and "does not resolve" in p.message for p in registry.problems)


@pytest.mark.slow
@pytest.mark.parametrize("body", [lambda board, name: 1 / 0, lambda board, name: "one string, not lines"])
def test_a_markdown_view_that_fails_costs_its_own_lines_not_the_build(toy_runs, monkeypatch, body):
    """leaderboard.md is written after every run was verified and ranked: a section's view that raises (or
    returns something other than lines) leaves a note and a warning naming the function, and the rest."""
    from metabench.report.leaderboard import markdown
    from metabench.report.leaderboard.sections import BoardSection

    module = _section_plugin("failing_view", "fails", lambda inputs: BoardSection({"kept": True}),
                             markdown="failing_view:lines")
    module.lines = body
    monkeypatch.setitem(sys.modules, "failing_view", module)
    board = _board(plugins.load(extra_plugins=(module,)), toy_runs)
    with pytest.warns(RuntimeWarning, match=r"section 'fails': its Markdown view failing_view:lines failed"):
        text = markdown.render(board)
    assert "its tables are left out here" in text and "## Paper tables" in text


def test_an_html_view_that_fails_costs_its_own_box_not_the_site(toy_runs, monkeypatch, tmp_path):
    """A section template that raises while the site is rendered (here a key its data lacks, which the site's
    StrictUndefined refuses) leaves a note where it would be, on the gaps and task pages, with a warning naming
    the template; every page is still written."""
    from metabench.report.leaderboard import site
    from metabench.report.leaderboard.sections import BoardSection

    package = tmp_path / "failing_board"
    (package / "templates").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "templates" / "x.html").write_text("<p>{{ section.no_such_key }}</p>\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = _section_plugin("failing_html", "boxed", lambda inputs: BoardSection({"kept": True}),
                             html="failing_board:templates/x.html")
    monkeypatch.setitem(sys.modules, "failing_html", module)
    board = _board(plugins.load(extra_plugins=(module,)), toy_runs)
    with pytest.warns(RuntimeWarning, match=r"section 'boxed': its HTML view failing_board:templates/x.html failed"):
        written = site.write(board, tmp_path / "site")
    assert len(written) > 3
    for page in ("gaps.html", "tasks/toy_tag.html"):
        text = (tmp_path / "site" / page).read_text(encoding="utf-8")
        assert "its HTML view failing_board:templates/x.html failed (UndefinedError" in text and "no_such_key" in text


def test_a_section_typed_by_its_plugin_reaches_its_views_as_its_model(toy_runs, monkeypatch, tmp_path):
    """Section data a plugin types (a pydantic model) is that model in its views and its JSON in leaderboard.json."""
    from pydantic import BaseModel

    from metabench.report.leaderboard import jsonfile, markdown
    from metabench.report.leaderboard.sections import BoardSection

    class Seen(BaseModel):
        models: list[str]

    module = _section_plugin("typed_board_plugin", "seen", lambda inputs: BoardSection(Seen(models=["a", "b"])),
                             markdown="typed_board_plugin:lines")
    module.lines = lambda board, name: [f"## seen: {', '.join(board.section(name).models)}", ""]
    monkeypatch.setitem(sys.modules, "typed_board_plugin", module)
    board = _board(plugins.load(extra_plugins=(module,)), toy_runs)
    assert isinstance(board.section("seen"), Seen)
    assert "## seen: a, b" in markdown.render(board)
    (written,) = jsonfile.write(board, tmp_path)
    import json

    assert json.loads(written.read_text())["seen"] == {"models": ["a", "b"]}
