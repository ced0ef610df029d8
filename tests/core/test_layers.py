"""The layer rules of docs/architecture.md, checked on the source: every module sits on one floor of the
architecture page's floor table and imports only from its own floor or lower ones; no import cycle between
modules or between the table's packages (lazy imports inside functions count too); kinds and adapters meet only
in requests.py; adapters get the registry passed in."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "metabench"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: Path):
    """(line, candidate module names) of every import statement in a module, relative ones made absolute."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, [target, *(f"{target}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            yield node.lineno, [alias.name for alias in node.names]


def import_graph() -> dict[str, set[str]]:
    """Module -> the metabench modules it imports anywhere in its body. ``from . import limits`` imports the
    module ``metabench.limits``; it names the package only as where the module lives (the package is initialised
    by then), so it counts as an import of the package itself only for a name that is no module of it."""
    modules = _modules()

    def targets(candidates: list[str]) -> set[str]:
        target, names = candidates[0], candidates[1:]
        found = {c for c in names if c in modules}
        if (len(found) < len(names) or not names) and target in modules:
            found.add(target)
        return found

    return {name: {c for _, candidates in _imports(name, path) for c in targets(candidates) if c != name}
            for name, path in modules.items()}


def dangling_imports() -> list[str]:
    """Imports of a metabench module that does not exist (a module moved, an import left behind)."""
    modules = _modules()
    return [f"{name}:{line} imports {candidates[0]}" for name, path in modules.items()
            for line, candidates in _imports(name, path)
            if candidates[0].split(".")[0] == "metabench" and not any(c in modules for c in candidates)]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in sorted(graph[node]):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize(("layer", "forbidden"), [("metabench.models", "metabench.kinds"),
                                                  ("metabench.kinds", "metabench.models")])
def test_kinds_and_adapters_meet_only_in_requests(layer, forbidden):
    graph = import_graph()
    crossing = sorted((m, d) for m, deps in graph.items() if m.startswith(layer) for d in deps if d.startswith(forbidden))
    assert crossing == []


@pytest.mark.slow
def test_adapters_never_reach_for_the_global_registry():
    graph = import_graph()
    assert sorted(m for m, deps in graph.items() if m.startswith("metabench.models") and "metabench.plugins" in deps) == []
    for path in (PACKAGE / "models").glob("*.py"):
        assert "default_registry" not in path.read_text(encoding="utf-8"), path.name


#: what the floor table writes for any paper family (`<family>/report/`): the table names none, so a tree with a
#: family deleted (issue 47) or a new one added needs no edit of the table
FAMILY = "<family>"


def families(table: dict[str, int]) -> set[str]:
    """The paper families: packages of metabench with a plugin.py that no row of the table names."""
    return {path.parent.name for path in PACKAGE.glob("*/plugin.py") if f"{path.parent.name}/" not in table}


def floor_table(text: str) -> dict[str, int]:
    """Package or module (``kinds/``, ``runner.py``) -> its floor, from the rows of the page's floor table
    (``| 2 | `kinds/`, `models/` | ... |``)."""
    out = {}
    for line in text.splitlines():
        row = re.match(r"\|\s*(\d+)\s*\|([^|]*)\|", line)
        if row:
            for entry in re.findall(r"`([^`]+)`", row.group(2)):
                out[entry] = int(row.group(1))
    return out


def home(module: str, table: dict[str, int], family: set[str] | None = None) -> str | None:
    """The floor-table entry a module belongs to: the deepest folder or file the table names on its path (a
    family's ``hard/report/`` sits on its own floor, the rest of ``hard/`` on the family's), else none. A module
    of a family (``families``) is placed by the ``<family>`` rows."""
    parts = module.split(".")[1:]
    if not parts:
        return "__init__.py" if "__init__.py" in table else None
    if parts[0] in (families(table) if family is None else family):
        parts = [FAMILY, *parts[1:]]
    for depth in range(len(parts), 0, -1):
        path = "/".join(parts[:depth])
        for entry in (f"{path}/", f"{path}.py"):
            if entry in table:
                return entry
    return None


def upward_imports(graph: dict[str, set[str]], table: dict[str, int]) -> list[str]:
    return sorted(f"{m} (floor {table[home(m, table)]}) imports {d} (floor {table[home(d, table)]})"
                  for m, deps in graph.items() for d in deps if table[home(d, table)] > table[home(m, table)])


def package_graph(graph: dict[str, set[str]], table: dict[str, int]) -> dict[str, set[str]]:
    """The module graph folded onto the floor table's entries."""
    out: dict[str, set[str]] = {entry: set() for entry in table}
    for module, deps in graph.items():
        out[home(module, table)].update(home(d, table) for d in deps if home(d, table) != home(module, table))
    return out


FLOORS = floor_table(ARCHITECTURE.read_text(encoding="utf-8"))


def test_the_floor_table_is_read():
    assert floor_table("| 3 | `artifacts/`, `hard/` | families |\n| x | `no.py` |") == {"artifacts/": 3, "hard/": 3}
    assert FLOORS["cli.py"] > FLOORS["runner.py"] > FLOORS["launch/"] > FLOORS["jobs.py"] > FLOORS["kinds/"] > FLOORS["config/"]


def test_every_module_has_a_floor_and_every_entry_exists():
    graph = import_graph()
    assert sorted(m for m in graph if home(m, FLOORS) is None) == []
    assert sorted(e for e in FLOORS if FAMILY not in e and not (PACKAGE / e).exists()) == []


def test_the_table_places_any_family_and_names_none():
    assert {"artifacts", "hard"} <= families(FLOORS) and not any(f"{name}/" in FLOORS for name in families(FLOORS))
    table = {"report/": 6, "<family>/": 3, "<family>/report/": 6, "<family>/commands.py": 7}
    assert [home(m, table, {"newfam"}) for m in ("metabench.newfam.plugin", "metabench.newfam.report.board",
                                                 "metabench.newfam.commands", "metabench.report.board",
                                                 "metabench.stray.module")] == [
        "<family>/", "<family>/report/", "<family>/commands.py", "report/", None]


def test_a_subfolder_the_table_names_has_its_own_floor():
    table = {"hard/": 3, "hard/report/": 6, "hard/commands.py": 7}
    assert [home(m, table) for m in ("metabench.hard.gap", "metabench.hard.report", "metabench.hard.report.docs",
                                     "metabench.hard.commands")] == ["hard/", "hard/report/", "hard/report/", "hard/commands.py"]
    assert upward_imports({"metabench.hard.gap": {"metabench.hard.report.docs"}, "metabench.hard.report.docs": set()},
                          table) == ["metabench.hard.gap (floor 3) imports metabench.hard.report.docs (floor 6)"]


def test_the_upward_import_finder_finds_one():
    table = {"kinds/": 2, "report/": 5}
    assert upward_imports({"metabench.kinds.x": {"metabench.report.y"}, "metabench.report.y": set()}, table) == [
        "metabench.kinds.x (floor 2) imports metabench.report.y (floor 5)"]


def test_imports_point_down_the_floors():
    assert upward_imports(import_graph(), FLOORS) == []


@pytest.mark.slow
def test_no_import_cycle_between_packages():
    assert cycles(package_graph(import_graph(), FLOORS)) == []


def test_every_import_of_metabench_names_a_module_that_exists():
    assert dangling_imports() == []
