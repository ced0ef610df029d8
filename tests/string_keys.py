"""What the source scanners of tests/core/test_record_keys.py and test_board_keys.py count as a read by key, and as
a read of a whole record or board part (its fields by name, without naming one)."""

from __future__ import annotations

import ast
from pathlib import Path

#: ``value.METHOD("key", ...)`` reads ``value``'s field ``key`` (a dict's get, pop, setdefault; the item protocol).
_KEY_METHODS = {"get", "pop", "setdefault", "__getitem__"}
#: ``value.METHOD()`` hands over every field by name (a dict's views; a pydantic model's dumps).
_WHOLE_METHODS = {"items", "keys", "values", "__iter__"}
#: ``FUNCTION(value)`` does the same.
_WHOLE_FUNCTIONS = {"dict", "vars"}


def _text(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def key_read(node: ast.AST) -> tuple[ast.AST, str] | None:
    """(the indexed value, the string key) of ``value["key"]``, ``value.get("key", ...)`` (and ``pop``,
    ``setdefault``, ``__getitem__``) or ``getattr(value, "key"[, default])``; None otherwise."""
    if isinstance(node, ast.Subscript):
        key = _text(node.slice)
        return None if key is None else (node.value, key)
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _KEY_METHODS:
        key = _text(node.args[0])
        return None if key is None else (func.value, key)
    if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
        key = _text(node.args[1])
        return None if key is None else (node.args[0], key)
    return None


def whole_read(node: ast.AST) -> ast.AST | None:
    """The value whose every field ``node`` reads by name: ``dict(value)``, ``vars(value)``, ``value.items()``
    (``keys``, ``values``), ``value.__dict__``, ``{**value}``; None otherwise."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _WHOLE_METHODS and not node.args:
            return func.value
        if isinstance(func, ast.Name) and func.id in _WHOLE_FUNCTIONS and len(node.args) == 1 and not node.keywords:
            return node.args[0]
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return node.value
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values):
            if key is None:  # {**value}
                return value
    return None


def bound_names(tree: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """(target, value) of every binding in ``tree`` whose value a scanner can follow: assignments (tuples paired
    element by element), annotated assignments, the walrus, ``with ... as``, and loops and comprehensions (the
    target bound to the iterated value)."""
    pairs: list[tuple[ast.AST, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and \
                        len(target.elts) == len(node.value.elts):
                    pairs += list(zip(target.elts, node.value.elts))
                else:
                    pairs.append((target, node.value))
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            pairs.append((node.target, node.value))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            pairs.append((node.optional_vars, node.context_expr))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            pairs.append((node.target, node.iter))
    return pairs


def scopes(tree: ast.Module) -> list[ast.AST]:
    """The module's outermost functions (each with its nested ones; a class's methods each on their own), and its
    other statements: a name is a record's or the board's only within the function that binds it."""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    found: list[ast.AST] = []
    rest: list[ast.stmt] = []
    for statement in tree.body:
        if isinstance(statement, functions):
            found.append(statement)
        elif isinstance(statement, ast.ClassDef):
            found += [s for s in statement.body if isinstance(s, functions)]
            rest += [s for s in statement.body if not isinstance(s, functions)]
        else:
            rest.append(statement)
    return found + [ast.Module(body=rest, type_ignores=[])]


def plant(report: Path, sources: list[str]) -> None:
    """Write each of ``sources`` as a module of ``report`` (a package's report folder: planted_00.py, ...), for a
    scanner's test to find."""
    report.mkdir(parents=True, exist_ok=True)
    for number, source in enumerate(sources):
        (report / f"planted_{number:02d}.py").write_text(source, encoding="utf-8")
