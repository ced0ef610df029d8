"""The layer rules of docs/architecture.md, checked on the source: no import cycles (lazy imports inside
functions count too), kinds and adapters meet only in requests.py, and adapters get the registry passed in."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "metabench"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the metabench modules it imports anywhere in its body."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(_without_lazy_api(name, ast.parse(path.read_text(encoding="utf-8")))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                candidates = [target, *(f"{target}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            deps.update(c for c in candidates if c in modules and c != name)
        graph[name] = deps
    return graph


def _without_lazy_api(name: str, tree: ast.Module) -> ast.Module:
    """The package root's module ``__getattr__`` (PEP 562: ``metabench.evaluate`` loads ``metabench.api`` on
    first use) is left out: the root is initialised before any submodule can import it back, so the modules
    that read ``metabench.__version__`` form no cycle with the API. Every other lazy import counts."""
    if name == "metabench":
        tree.body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name == "__getattr__")]
    return tree


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


def test_adapters_never_reach_for_the_global_registry():
    graph = import_graph()
    assert sorted(m for m, deps in graph.items() if m.startswith("metabench.models") and "metabench.plugins" in deps) == []
    for path in (PACKAGE / "models").glob("*.py"):
        assert "default_registry" not in path.read_text(encoding="utf-8"), path.name
