"""The leaderboard's registered sections: what a family adds to the board, through the hook a third party uses.

The board (``board.py``) computes what every task shares: rankings, tests, groups, gaps, paper views. A paper
family's own results (the hard family's breakdown by phi, Boisson et al.'s tables and gameability flag, a
plugin's) come from the sections registered with ``metabench_register_board_sections``, so the board names no
family. Each section is built once per board from `BoardInputs` and returns a `BoardSection`; one that fails,
or whose data leaderboard.json cannot hold (a NaN, an infinity, a set), is quarantined like any broken plugin
(left off with a warning naming its plugin, an error under --strict). A section may register only an ``html=``
or only a ``markdown=`` view; each reporter shows the views it has.
"""

from __future__ import annotations

import importlib
import importlib.resources
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from ...errors import PluginError
from ...registry import Entry, Problem, Registry
from ...runs.stored import Run
from ..compare import Options
from .run_facts import RunFacts
from .schema import Board, PaperTable, SectionView


@dataclass(frozen=True)
class BoardInputs:
    """What a section may read: the same runs and settings the board ranks with."""

    registry: Registry
    #: the ranked runs: verified, the newest per task, model and item set
    runs: list[Run]
    #: one run per task and model, the whole-split run where there is one (for paired analyses across tasks)
    one_per_model: list[Run]
    #: the files and folders the build was given (a section finds the files it ``reads`` there)
    sources: tuple[Path, ...]
    correction: str
    alpha: float
    options: Options
    #: each ranked run's facts (verification, marks, caveats), keyed by its folder as the board names it (``run``):
    #: made once where the run was ranked, so a section reads them rather than testing the run again
    facts: dict[str, RunFacts] = field(default_factory=dict)


@dataclass(frozen=True)
class BoardSection:
    """A section's share of the board: ``data`` under the section's name, ``paper_tables`` in the paper-view
    layout (``report.paper_views.fill``), which every built-in reporter shows after the registered views.
    ``data`` typed by the plugin (a pydantic model) reaches its views as that model (``board.section(name)``);
    leaderboard.json holds its JSON, and a board read back from the file holds the JSON."""

    data: Any
    #: each a `schema.PaperTable`, or a dict of the same layout (JSON; checked and read into one by the build)
    paper_tables: list[PaperTable | dict] = field(default_factory=list)


@dataclass(frozen=True)
class Sections:
    """Every registered section's share of the board (`build_sections`)."""

    #: each section's data, keyed by its name (the board's extra parts, `schema.Board.section`)
    data: dict[str, Any]
    #: their paper tables, in section-name order
    paper_tables: list[PaperTable]
    #: the views of the sections that registered any (the board's ``section_views``)
    views: dict[str, SectionView]


def source_files(registry: Registry) -> set[str]:
    """The file names sections read beside the runs (``reads=``): a path holding only these is no runs folder."""
    return {str(e.meta["reads"]) for e in registry.entries("board_section") if e.meta.get("reads")}


def overview_families(registry: Registry) -> dict[str, tuple[str, tuple[str, ...]]]:
    """The overview's task families the sections declare (``family=(KEY, TITLE, TAGS)``), in section-name order:
    KEY -> (TITLE, the tags that place a task in it). A malformed declaration is quarantined like a broken section."""
    out = {}
    for entry in registry.entries("board_section"):
        declared = entry.meta.get("family")
        if declared is None:
            continue
        if (isinstance(declared, (tuple, list)) and len(declared) == 3 and all(isinstance(v, str) for v in declared[:2])
                and isinstance(declared[2], (tuple, list)) and all(isinstance(t, str) for t in declared[2])):
            out[declared[0]] = (declared[1], tuple(declared[2]))
        else:
            _quarantine(registry, entry, f"leaderboard section '{entry.name}' declares family={declared!r}",
                        'declare family=("key", "Title", ("tag", ...)): the tags place a task in the overview\'s family')
    return out


def build_sections(inputs: BoardInputs, taken: set[str], done: Callable[[], None] = lambda: None) -> Sections:
    """Every registered section's data, paper tables and views, in name order; ``taken`` are the board's own
    keys, which no section may replace; ``done`` is called after each section (progress). A section registered
    with ``html=`` or ``markdown=`` has its views listed (`_views_or_quarantined`), the board's ``section_views``."""
    data: dict[str, Any] = {}
    tables: list[PaperTable] = []
    views: dict[str, SectionView] = {}
    for entry in inputs.registry.entries("board_section"):
        section = _built_or_quarantined(entry, inputs, taken)
        done()
        if section is not None:
            data[entry.name] = section.data
            tables.extend(table if isinstance(table, PaperTable) else PaperTable.model_validate(table)
                          for table in section.paper_tables)
            found = _views_or_quarantined(entry, inputs.registry)
            if found is not None:
                views[entry.name] = found
    return Sections(data, tables, views)


def _views_or_quarantined(entry: Entry, registry: Registry) -> SectionView | None:
    """The section's views as registered: ``html="package:path/to/template.html"`` (a Jinja template the site
    includes on the gaps page and on every task page, with ``section``, ``page`` and, on a task page, ``task``)
    and ``markdown="module:function"`` (``function(board, name) -> list[str]``, lines leaderboard.md shows after
    the gaps). Each is checked to resolve now; one that does not leaves the section's views off (its data stays)."""
    views = {kind: entry.meta.get(kind) for kind in ("html", "markdown")}
    try:
        if views["html"] is not None:
            view_template_text(views["html"])
        if views["markdown"] is not None:
            view_function(views["markdown"])
    except (ValueError, OSError, ImportError, AttributeError) as exc:
        _quarantine(registry, entry, f"leaderboard section '{entry.name}' has a view that does not resolve ({exc})",
                    'register html="package:templates/file.html" (a file in an importable package) and '
                    'markdown="module:function"')
        return None
    found = {kind: value for kind, value in views.items() if value is not None}
    return SectionView(**found) if found else None


def _split(spec: object, kind: str) -> tuple[str, str]:
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise ValueError(f"{kind}={spec!r} is not 'package:{'path' if kind == 'html' else 'function'}'")
    module, name = spec.split(":")
    return module, name


def view_template_text(spec: str) -> str:
    """The text of a section's ``html=`` template, ``"package:relative/path.html"``, read from the package."""
    package, path = _split(spec, "html")
    return (importlib.resources.files(package) / path).read_text(encoding="utf-8")


def view_template(name: str) -> str | None:
    """Jinja's loader for section templates (`site`): a name with a ``:`` is a section's ``html=``."""
    return view_template_text(name) if ":" in name else None


def view_function(spec: str) -> Callable[[Board, str], list[str]]:
    """A section's ``markdown=`` renderer, ``"module:function"``."""
    module, name = _split(spec, "markdown")
    function = getattr(importlib.import_module(module), name)
    if not callable(function):
        raise ValueError(f"markdown={spec!r} is not callable")
    return function


def _built_or_quarantined(entry: Entry, inputs: BoardInputs, taken: set[str]) -> BoardSection | None:
    try:
        return _build(entry, inputs, taken)
    except PluginError as exc:
        _quarantine(inputs.registry, entry, exc.message, exc.hint or "fix the section")
    except Exception as exc:  # noqa: BLE001 - a plugin's bug leaves its section off, not the board
        _quarantine(inputs.registry, entry, f"leaderboard section '{entry.name}' raised {type(exc).__name__}: {exc}",
                    "fix the section's build function")
    return None


def _build(entry: Entry, inputs: BoardInputs, taken: set[str]) -> BoardSection:
    if entry.name in taken:
        raise PluginError(f"leaderboard section '{entry.name}' (from plugin '{entry.plugin}') takes a name the board "
                          "already has", hint=f"register it under another name (the board's own: {', '.join(sorted(taken))})")
    section = inputs.registry.resolve("board_section", entry.name)(inputs)
    if not isinstance(section, BoardSection):
        raise PluginError(f"leaderboard section '{entry.name}' (from plugin '{entry.plugin}') returned a "
                          f"{type(section).__name__}, not a BoardSection",
                          hint="return metabench.report.leaderboard.sections.BoardSection(data, paper_tables=[...])")
    try:  # checked here, as leaderboard.json writes it: a NaN found there would fail the whole build
        data = section.data.model_dump(mode="json") if isinstance(section.data, BaseModel) else section.data
        tables = ([t.to_dict() if isinstance(t, PaperTable) else t for t in section.paper_tables]
                  if isinstance(section.paper_tables, list) else section.paper_tables)
        json.dumps([data, tables], allow_nan=False)
    except (TypeError, ValueError, RecursionError, PydanticSerializationError) as exc:
        raise PluginError(f"leaderboard section '{entry.name}' (from plugin '{entry.plugin}') returned data "
                          f"leaderboard.json cannot hold ({type(exc).__name__}: {exc})",
                          hint="return a pydantic model of your section, or plain JSON values: finite numbers (None "
                          "for a missing one), strings, lists and dicts with string keys") from None
    _check_paper_tables(entry, tables)
    return section


def _check_paper_tables(entry: Entry, tables: object) -> None:
    """``paper_tables`` in the layout every reporter reads (`schema.PaperTable`): strings where a page prints
    text, a row's labels, model and cells as wide as the header. A table of another shape would fail the
    reporters after the section was accepted, so it is the section's error here, and the section is quarantined."""
    def refuse(where: str, what: str) -> PluginError:
        return PluginError(f"leaderboard section '{entry.name}' (from plugin '{entry.plugin}') returned paper_tables"
                           f"{where}: {what}",
                           hint="return tables as report.paper_views.fill builds them: paper, number and title "
                                "strings, a header of strings, rows of labels (strings), model (a string) and cells, "
                                "len(labels) + 1 + len(cells) == len(header)")

    if not isinstance(tables, list):
        raise refuse("", f"a {type(tables).__name__}, not a list")
    for i, table in enumerate(tables):
        if not isinstance(table, dict):
            raise refuse(f"[{i}]", f"a {type(table).__name__}, not a dict")
        for key in ("paper", "number", "title"):
            if not isinstance(table.get(key), str):
                raise refuse(f"[{i}].{key}", f"{type(table.get(key)).__name__}, not a string")
        if table.get("key") is not None and not isinstance(table["key"], str):
            raise refuse(f"[{i}].key", "not a string")
        for key in ("header", "tasks", "missing_tasks", "notes"):
            value = table.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise refuse(f"[{i}].{key}", "not a list of strings")
        rows = table.get("rows", [])
        if not isinstance(rows, list):
            raise refuse(f"[{i}].rows", "not a list")
        for j, row in enumerate(rows):
            if not isinstance(row, dict):
                raise refuse(f"[{i}].rows[{j}]", f"a {type(row).__name__}, not a dict")
            labels, cells = row.get("labels", []), row.get("cells", [])
            if not isinstance(labels, list) or not all(isinstance(v, str) for v in labels):
                raise refuse(f"[{i}].rows[{j}].labels", "not a list of strings")
            if (not isinstance(row.get("model"), str) or not isinstance(row.get("source", ""), (str, type(None)))
                    or not isinstance(cells, list) or not all(isinstance(c, str) for c in cells)):
                raise refuse(f"[{i}].rows[{j}]", "model and source must be strings and cells a list of strings")
            if len(labels) + 1 + len(cells) != len(table["header"]):
                raise refuse(f"[{i}].rows[{j}]", f"{len(labels)} label(s) + model + {len(cells)} cell(s) for a "
                                                 f"header of {len(table['header'])}")
        try:
            PaperTable.model_validate(table)
        except ValidationError as exc:
            raise refuse(f"[{i}]", str(exc.errors()[0]["msg"])) from None


def _quarantine(registry: Registry, entry: Entry, message: str, fix: str) -> None:
    """The section is left off the board; the warning (or, under --strict, the error) names its plugin."""
    registry.quarantine(Problem(entry.plugin, f"leaderboard section '{entry.name}' ({entry.target})", message,
                                f"{fix}, or disable the plugin with METABENCH_DISABLE_PLUGINS={entry.plugin}"))
