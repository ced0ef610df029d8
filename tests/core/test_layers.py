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
            target = _absolute(node, package)
            yield node.lineno, [target, *(f"{target}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            yield node.lineno, [alias.name for alias in node.names]


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` reads from, a relative one made absolute against ``package``."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


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
    """Imports from a lower floor to a higher one. The plugin API (floor 7: its names come from every floor) is
    exempt as a target: only plugin code may import it (``boundary_violations``), and it resolves its names on
    first use, so importing it imports nothing above the importer."""
    return sorted(f"{m} (floor {table[home(m, table)]}) imports {d} (floor {table[home(d, table)]})"
                  for m, deps in graph.items() for d in deps
                  if d != "metabench.plugin_api" and table[home(d, table)] > table[home(m, table)])


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
    assert not any(f"{name}/" in FLOORS for name in families(FLOORS))  # today none: both families are plugins/ now
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


# The plugin API's boundary (issue 59): a plugin, the paper families included, imports metabench only through
# metabench.plugin_api, and no core module imports a family by any route (an import statement of any floor, up or
# down, a relative import, importlib.import_module or __import__ with a literal name or an f-string's literal head).

API = "metabench.plugin_api"
PLUGINS = PACKAGE.parent / "plugins"


def plugin_packages() -> dict[str, Path]:
    """Top-level package -> folder, for each distribution under plugins/ (their tests are not plugin code)."""
    return {init.parent.name: init.parent for init in sorted(PLUGINS.glob("*/*/__init__.py"))
            if init.parent.name != "tests"}


def plugin_code() -> dict[str, str]:
    """Module name -> source of every module of a family inside metabench/ and of every plugin package."""
    roots = {f"metabench.{name}": PACKAGE / name for name in families(FLOORS)} | plugin_packages()
    out = {}
    for package, folder in roots.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            out[".".join((package, *parts)) + ("" if path.name != "__init__.py" else ".__init__")] = path.read_text(
                encoding="utf-8")
    return out


def _literal_head(node: ast.expr) -> str | None:
    """The literal text a module name given to import_module/__import__ starts with (an f-string's first part)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    return None


def import_routes(module: str, source: str):
    """(line, target, names) of every way a module's source imports another: ``import a.b`` (names empty),
    ``from a import b, c`` (relative ones made absolute; ``module`` ending in ``.__init__`` is a package), and
    ``importlib.import_module("a.b")``, ``import_module(f"a.{x}")``, ``__import__("a")`` with a literal head."""
    package = module.removesuffix(".__init__") if module.endswith(".__init__") else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, _absolute(node, package), tuple(alias.name for alias in node.names)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            head = _literal_head(node.args[0]) if called in ("import_module", "__import__") else None
            if head is not None:
                yield node.lineno, head, ()


def _within(name: str, packages: set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def boundary_violations(sources: dict[str, str], family_packages: set[str]) -> list[str]:
    """What breaks the plugin API's boundary in ``sources`` (module -> source): a module of a family package
    importing metabench other than through the API, or a core module (any other ``metabench`` module) importing a
    family package or the API itself (the API is for plugins; core code imports where a name lives)."""
    found = []
    for module, source in sources.items():
        own = next((p for p in family_packages if _within(module, {p})), None)
        for line, target, names in import_routes(module, source):
            where = f"{module.removesuffix('.__init__')}:{line}"
            candidates = [target] + [f"{target}.{n}" for n in names]
            if own is not None:
                if _within(target, {own}) or not _within(target, {"metabench"}) or target == API:
                    continue
                if target == "metabench" and names and all(n == "plugin_api" for n in names):
                    continue
                found.append(f"{where} imports {target}{' (' + ', '.join(names) + ')' if names else ''}, "
                             f"not the plugin API ({API})")
            else:
                family = [c for c in candidates if _within(c, family_packages)]
                if family:
                    found.append(f"{where} (core) imports the family module {family[0]}")
                elif any(c == API for c in candidates):
                    found.append(f"{where} (core) imports {API}, which is for plugins")
    return found


def _core_sources() -> dict[str, str]:
    family = {f"metabench.{name}" for name in families(FLOORS)}
    return {module + (".__init__" if path.name == "__init__.py" else ""): path.read_text(encoding="utf-8")
            for module, path in _modules().items() if not _within(module, family)}


def _family_packages() -> set[str]:
    return {f"metabench.{name}" for name in families(FLOORS)} | set(plugin_packages())


#: planted sources: (module, source, caught?) — one per route, and the forms that must pass
PLANTS = [
    # a core module importing a family, every route, up or down the floors
    ("metabench.cli", "import metabench.hard.gap\n", True),
    ("metabench.runner", "from metabench.hard import gap\n", True),
    ("metabench.report.paper_views", "def f():\n    from ..artifacts.paper_layouts import BOISSON\n", True),
    ("metabench.kinds.views", "from ..hard import gap\n", True),  # floor 2 -> 3: up
    ("metabench.commands.data", "import importlib\nimportlib.import_module('metabench.hard.gap')\n", True),
    ("metabench.commands.data", "from importlib import import_module\nimport_module(f'metabench.artifacts.{x}')\n", True),
    ("metabench.commands.data", "__import__('metabench.hard')\n", True),
    ("metabench.report.board", "import metabench_hard.report\n", True),
    ("metabench.report.board", "from metabench_artifacts import tables\n", True),
    ("metabench.report.board", "from metabench.plugin_api import Run\n", True),
    # a family's or plugin's module importing metabench other than through the API
    ("metabench_hard.gap", "from metabench.runs.stored import Run\n", True),
    ("metabench_hard.gap", "import metabench.data.items\n", True),
    ("metabench_hard.gap", "from metabench import data\n", True),
    ("metabench_hard.gap", "from metabench import hookimpl\n", True),
    ("metabench_hard.gap", "from metabench import plugin_api, runs\n", True),
    ("metabench_hard.gap", "import importlib\nimportlib.import_module('metabench.report.board')\n", True),
    ("metabench_hard.gap", "import importlib\nimportlib.import_module(f'metabench.data.datasets.{name}')\n", True),
    ("metabench_hard.gap", "def f():\n    __import__('metabench.models.base')\n", True),
    ("metabench.hard.gap", "from ..runs import stored\n", True),  # a family still inside metabench/
    ("metabench.hard.report.board", "from ...report.leaderboard.sections import BoardSection\n", True),
    ("metabench_example.plugin", "from metabench.hookspecs import hookimpl\n", True),
    # what passes: the API by every spelling, the family's own modules, other libraries
    ("metabench_hard.gap", "from metabench.plugin_api import Run, hookimpl\n", False),
    ("metabench_hard.gap", "import metabench.plugin_api as api\n", False),
    ("metabench_hard.gap", "from metabench import plugin_api\n", False),
    ("metabench_hard.report.board", "from ..gap import breakdown\nimport numpy\n", False),
    ("metabench.hard.report.board", "from ..gap import breakdown\n", False),
    ("metabench_hard.gap", "import importlib\nimportlib.import_module('metabench_hard.report')\n", False),
    ("metabench.report.board", "from ..plugins import default_registry\nimport importlib\n"
                               "importlib.import_module(name)\n", False),
]
PLANT_FAMILIES = {"metabench.hard", "metabench.artifacts", "metabench_hard", "metabench_artifacts", "metabench_example"}


def test_the_boundary_check_catches_every_planted_route():
    caught = [bool(boundary_violations({module: source}, PLANT_FAMILIES)) for module, source, _ in PLANTS]
    planted = [expected for _, _, expected in PLANTS]
    print(f"plugin API boundary: caught {sum(c and p for c, p in zip(caught, planted))} of {sum(planted)} planted "
          f"imports; flagged {sum(c and not p for c, p in zip(caught, planted))} of {planted.count(False)} allowed ones")
    assert [(m, s) for (m, s, expected), c in zip(PLANTS, caught) if c != expected] == []


def test_plugins_and_families_import_metabench_only_through_the_plugin_api():
    assert plugin_packages(), "no plugin package found under plugins/"
    assert boundary_violations(plugin_code(), _family_packages()) == []


def test_no_core_module_imports_a_family_or_the_plugin_api():
    assert boundary_violations(_core_sources(), _family_packages()) == []
