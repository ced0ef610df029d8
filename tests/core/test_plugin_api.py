"""The plugin API (metabench.plugin_api, issue 59): its ``__all__`` is the contract, every name resolves, the names
type checkers read are the names that resolve at run time, and importing it imports none of what they name (every
``metabench --help`` imports each plugin's plugin.py, which imports ``hookimpl`` from it)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import metabench.plugin_api as api

SOURCE = Path(api.__file__)


def _type_checking_names() -> dict[str, str]:
    """API name -> ``module:attribute`` from the imports under ``if TYPE_CHECKING:``."""
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    out = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1, ast.unparse(node)
        for alias in node.names:
            module = f"metabench.{node.module}" if node.module else "metabench"
            if node.module and (Path(SOURCE.parent, *node.module.split("."), alias.name + ".py")).is_file():
                where = f"{module}.{alias.name}"  # a module itself
            elif not node.module:
                where = f"metabench.{alias.name}"
            else:
                where = f"{module}:{alias.name}"
            out[alias.asname or alias.name] = where
    return out


def test_the_names_type_checkers_read_are_the_names_that_resolve():
    assert _type_checking_names() == api._WHERE


def test_every_name_of_the_api_resolves_and_nothing_else_does():
    assert api.__all__ == sorted(api._WHERE) and len(api.__all__) == len(set(api.__all__))
    missing = [name for name in api.__all__ if getattr(api, name, None) is None]
    assert missing == []
    try:
        api.find_run
    except AttributeError as exc:
        assert "plugin API is its __all__" in str(exc)
    else:
        raise AssertionError("a name outside __all__ resolved")


def test_importing_the_api_imports_none_of_its_names():
    code = ("import sys, metabench.plugin_api as api; "
            "print(sorted(m for m in sys.modules if m.startswith(('metabench.report', 'metabench.runs', "
            "'metabench.models', 'metabench.commands', 'torch', 'pydantic'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
