"""What the source scanners of tests/core/test_record_keys.py and test_board_keys.py count as a read by key."""

from __future__ import annotations

import ast


def key_read(node: ast.AST) -> tuple[ast.AST, str] | None:
    """(the indexed value, the string key) of ``value["key"]`` or ``value.get("key", ...)``; None otherwise."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.value, node.slice.value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.func.value, node.args[0].value
    return None
