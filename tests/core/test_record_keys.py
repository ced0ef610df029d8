"""The typed run record is the object that flows (issue 47 items 1 and 3), checked on the source as the layer test
checks the floors: outside the record module and the store, no module of metabench indexes a run record by a
field name (``record["metrics"]``, ``run.results["task"]["name"]``, ``results.get("limit")``); it reads the
:class:`metabench.run_record.RunRecord`'s typed fields and derived answers instead. ``Run.results`` and
``JobOutcome.results`` (the JSON, deprecated) are read nowhere inside metabench.

What counts as a run record on the source (a scanner cannot see types, so it goes by how records are named):
``<anything>.results`` (the deprecated ``Run.results`` / ``JobOutcome.results``), ``<record>.raw`` (the JSON a
``RunRecord`` was read from), ``read_results(...)``, ``json.loads(...)`` / ``decode_record(...)`` (a results.json
decoded by hand), and any variable named ``results`` or ``record`` or assigned one of those. A read is a subscript
with a string constant, or ``.get("...")``, whose key is one of ``RunRecord``'s field names (taken from the model
here, so a field added there is held too), and every further key read below it (``["task"]["name"]``).

The board (``leaderboard.json``, issue 47 item 2) is not a run record: its own dicts are not held here, but the
board modules' reads of run records are.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from string_keys import key_read as _key  # tests/ is on sys.path (conftest)

from metabench.run_record import RunRecord

PACKAGE = Path(__file__).resolve().parents[2] / "metabench"

#: Modules that may index a run record by key: the record's own definition (its validators and docs walk the
#: JSON) and the store (it writes and reads the files).
EXEMPT = {
    "metabench/run_record.py": "the record's definition: it reads the JSON it validates",
    "metabench/store.py": "the store reads and writes the files: the schema version before a record is read as "
                          "one, a samples file's row bound from a dict a caller passed, and the run a write would "
                          "replace read as JSON on purpose (a damaged one must not stop a write)",
}

#: Reads left, each with why it stays. A read not listed fails the test; a listed one no longer found fails it too
#: (the list only shrinks). Key: (module, the expression as ``ast.unparse`` writes it).
ALLOWED: dict[tuple[str, str], str] = {}

RECORD_NAMES = {"results", "record"}
RECORD_CALLS = {"read_results", "loads", "decode_record"}
FIELDS = frozenset(RunRecord.model_fields)


def _is_record(node: ast.AST, tainted: set[str]) -> bool:
    if isinstance(node, ast.Attribute):
        if node.attr == "results" and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            return True
        if node.attr == "raw" and (_is_record(node.value, tainted) or
                                   (isinstance(node.value, ast.Attribute) and node.value.attr == "record")):
            return True
        return False
    if isinstance(node, ast.Name):
        return node.id in RECORD_NAMES or node.id in tainted
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        return name in RECORD_CALLS
    return False


def _reads_record(node: ast.AST, tainted: set[str]) -> bool:
    found = _key(node)
    if found is None:
        return False
    value, key = found
    return (key in FIELDS and _is_record(value, tainted)) or _reads_record(value, tainted)


def string_key_reads(source: str) -> list[tuple[int, str]]:
    """(line, expression) of every read of a run record by a field name in ``source`` (the outermost expression
    of a chain once: ``results["task"]["name"]`` is one read)."""
    tree = ast.parse(source)
    tainted = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and _is_record(node.value, set())
               for target in node.targets if isinstance(target, ast.Name)}
    inner: set[int] = set()
    found = []
    for node in ast.walk(tree):
        if _reads_record(node, tainted) and id(node) not in inner:
            found.append((node.lineno, ast.unparse(node)))
            value = node
            while (step := _key(value)) is not None:  # the chain's inner reads are this one read
                value = step[0]
                inner.add(id(value))
    return sorted(found)


def scan(root: Path, exempt=EXEMPT) -> dict[tuple[str, str], list[int]]:
    """(module, expression) -> lines, for every read under ``root`` (a ``metabench`` folder) outside ``exempt``."""
    out: dict[tuple[str, str], list[int]] = {}
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root.parent).as_posix()
        if module in exempt:
            continue
        for line, text in string_key_reads(path.read_text(encoding="utf-8")):
            out.setdefault((module, text), []).append(line)
    return out


def violations(root: Path, allowed=ALLOWED, exempt=EXEMPT) -> list[str]:
    found = scan(root, exempt)
    return [f"{module}:{lines[0]}: {text} indexes a run record by a field name: read the RunRecord's typed field "
            f"(Run.record, JobOutcome.record) or its derived answers instead"
            for (module, text), lines in found.items() if (module, text) not in allowed]


def test_no_module_indexes_a_run_record_by_a_field_name():
    assert violations(PACKAGE) == []


def test_every_allowed_read_is_still_there_and_says_why():
    """The allow-list only shrinks: an entry whose read is gone is removed with it."""
    found = scan(PACKAGE)
    assert [key for key in ALLOWED if key not in found] == []
    assert all(len(reason) > 40 for reason in ALLOWED.values())


def test_the_deprecated_json_of_a_run_is_read_nowhere_inside_metabench():
    """``Run.results`` and ``JobOutcome.results`` (the JSON; deprecated) are not read by any module of metabench:
    every reader takes the record (``self.results`` of the API's own result types is another attribute, and so are
    the uses listed in ``OTHER_RESULTS``)."""
    uses = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr == "results"
                    and not (isinstance(node.value, ast.Name) and node.value.id == "self")
                    and (module, ast.unparse(node)) not in OTHER_RESULTS):
                uses.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    assert uses == []


#: ``.results`` attributes that are not a run's deprecated JSON, each with what it is.
OTHER_RESULTS = {
    ("metabench/report/leaderboard/site.py", "m.results"): "BoardModel.results: a model's rows on the typed board",
}


PLANTED = [
    ('def rows(record):\n    return record["metrics"]["aggregate"]\n', 'record["metrics"]["aggregate"]'),
    ('def name(run):\n    return run.results["task"]["name"]\n', 'run.results["task"]["name"]'),
    ('def limit(outcome):\n    r = outcome.results\n    return r.get("limit")\n', "r.get('limit')"),
    ('import json\n\ndef digest(path):\n    return json.loads(path.read_text())["samples_sha256"]\n',
     "json.loads(path.read_text())['samples_sha256']"),
    ('def raw(run):\n    return run.record.raw["n_items"]\n', "run.record.raw['n_items']"),
]


@pytest.mark.parametrize(("source", "expression"), PLANTED, ids=["record", "run.results", "tainted", "json", "raw"])
def test_a_planted_read_in_a_report_module_fails_the_scan(tmp_path, source, expression):
    """A report module that indexes a run record by a field name is found, named with its line."""
    package = tmp_path / "metabench"
    (package / "report").mkdir(parents=True)
    (package / "report" / "clean.py").write_text(
        "def value(run, metric):\n    return run.record.mean(metric), run.record.task.name, run.record.limit_label\n",
        encoding="utf-8")
    assert violations(package, allowed={}) == []
    (package / "report" / "planted.py").write_text(source, encoding="utf-8")
    [found] = violations(package, allowed={})
    assert found.startswith("metabench/report/planted.py:") and "indexes a run record by a field name" in found
    assert ast.dump(ast.parse(found.split(": ", 1)[1].split(" indexes")[0])) == ast.dump(ast.parse(expression))


def test_keys_that_are_no_record_field_and_typed_reads_are_not_reads():
    assert string_key_reads('def f(record, results):\n    return record["rows"], results.get("settings")\n') == []
    assert string_key_reads('def f(run):\n    return run.record.task.config["metrics"]\n') == []
    assert string_key_reads('def f(entry):\n    return entry["metrics"]\n') == []  # not named as a record
    assert string_key_reads('def f(self):\n    return self.results["task"]\n') == []  # the API's own attribute
