"""The typed run record is the object that flows (issue 47 items 1 and 3), checked on the source as the layer test
checks the floors: outside the record module and the store, no module of metabench indexes a run record by a
field name (``record["metrics"]``, ``run.results["task"]["name"]``, ``results.get("limit")``); it reads the
:class:`metabench.run_record.RunRecord`'s typed fields and derived answers instead. ``Run.results`` and
``JobOutcome.results`` (the JSON) are gone (tests/core/test_deprecations.py).

What counts as a run record on the source (a scanner cannot see types, so it goes by how records are named):
``<anything>.results`` (the removed ``Run.results`` / ``JobOutcome.results``), ``<anything>.record``,
``<record>.raw`` (the JSON a ``RunRecord`` was read from), ``read_results(...)``, ``json.loads(...)`` /
``decode_record(...)`` (a results.json decoded by hand), a parameter annotated ``RunRecord``, and, within one
function, any name bound to one of those (assigned, unpacked, walrus, ``with``) or looping over a collection of
them. A read is a subscript with a string constant, ``.get("...")`` (``pop``, ``setdefault``, ``__getitem__``) or
``getattr(x, "...")``, whose key is one of ``RunRecord``'s field names (taken from the model here, so a field added
there is held too), and every further key read below it (``["task"]["name"]``); reading a whole record by its
fields' names (``dict(record)``, ``vars(record)``, ``record.items()``, ``{**record.raw}``) counts too. The planted
shapes below are each caught (issue 59 item 2: the scan before caught 3 of 14 such shapes).

The board (``leaderboard.json``, issue 47 item 2) is not a run record: its own dicts are not held here, but the
board modules' reads of run records are.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from string_keys import bound_names, plant, scopes, whole_read, key_read as _key  # tests/ is on sys.path (conftest)

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
ALLOWED: dict[tuple[str, str], str] = {
    ("metabench/models/hf_encoder.py", "{**record, 'final_validation': scores[search.metric]}"):
        "a fine-tuned checkpoint's record (the plain dict of its training facts that model.info keeps), not a run's",
}

RECORD_NAMES = {"results", "record"}
RECORD_CALLS = {"read_results", "loads", "decode_record"}
FIELDS = frozenset(RunRecord.model_fields)


def _is_record(node: ast.AST, tainted: set[str], calls: bool = True) -> bool:
    """Whether ``node`` is a run record (or its JSON) by how it is named or made; ``calls``: a JSON file decoded by
    hand (``json.loads(...)``) counts too."""
    if isinstance(node, ast.Attribute):
        if node.attr == "results" and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            return True
        if node.attr == "record":  # Run.record, JobOutcome.record, a TaskResult's
            return True
        if node.attr == "raw" and (_is_record(node.value, tainted, calls) or
                                   (isinstance(node.value, ast.Attribute) and node.value.attr == "record")):
            return True
        return False
    if isinstance(node, ast.Name):
        return node.id in RECORD_NAMES or node.id in tainted
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        return calls and name in RECORD_CALLS
    if isinstance(node, ast.Subscript) and _key(node) is None:  # records[0]: one of a list of records
        return _is_record(node.value, tainted, calls)
    if isinstance(node, ast.NamedExpr):
        return _is_record(node.value, tainted, calls)
    return False


def _record_annotation(annotation: ast.AST | None) -> str | None:
    """"one" for a parameter annotated ``RunRecord`` (or ``RunRecord | None``), "many" for a collection of them
    (``list[RunRecord]``), None otherwise."""
    if annotation is None or not any(isinstance(n, ast.Name) and n.id == "RunRecord" or
                                     isinstance(n, ast.Constant) and isinstance(n.value, str) and "RunRecord" in n.value
                                     for n in ast.walk(annotation)):
        return None
    text = ast.unparse(annotation).strip("'\"")
    return "many" if "[" in text else "one"


def _tainted(tree: ast.AST, calls: bool = True) -> set[str]:
    """Names that hold a record: parameters annotated ``RunRecord``, and any name bound to a record or to an item
    of a collection of records (assigned, unpacked, walrus, ``with``, a loop's or comprehension's target), to a
    fixed point."""
    args = [n for n in ast.walk(tree) if isinstance(n, ast.arg)]
    names = {n.arg for n in args if _record_annotation(n.annotation) == "one"}
    collections = {n.arg for n in args if _record_annotation(n.annotation) == "many"}
    pairs = [(t, v) for t, v in bound_names(tree) if isinstance(t, ast.Name)]
    loops = {id(t) for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension))
             for t in [n.target]}
    changed = True
    while changed:
        changed = False
        for target, value in pairs:
            name = target.id
            if id(target) in loops:  # a loop's target holds a record when it runs over a collection of them
                holds = isinstance(value, ast.Name) and value.id in collections
            else:
                holds = _is_record(value, names, calls)
            if holds:
                if name not in names:
                    names.add(name)
                    changed = True
            elif (isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)) and
                  _is_record(value.elt, names, calls) or
                  isinstance(value, ast.List) and any(_is_record(e, names, calls) for e in value.elts)):
                if name not in collections:
                    collections.add(name)
                    changed = True
    return names


def _reads_record(node: ast.AST, tainted: set[str]) -> bool:
    found = _key(node)
    if found is None:
        return False
    value, key = found
    return (key in FIELDS and _is_record(value, tainted)) or _reads_record(value, tainted)


def string_key_reads(source: str) -> list[tuple[int, str]]:
    """(line, expression) of every read of a run record by a field name in ``source`` (the outermost expression
    of a chain once: ``results["task"]["name"]`` is one read), and of every read of a whole record by its fields'
    names (``dict(record)``, ``record.items()``, ``{**record}``), each function on its own."""
    return sorted(read for scope in scopes(ast.parse(source)) for read in _reads(scope))


def _reads(tree: ast.AST) -> list[tuple[int, str]]:
    tainted, named = _tainted(tree), _tainted(tree, calls=False)
    inner: set[int] = set()
    found = []
    for node in ast.walk(tree):
        whole = whole_read(node)
        if whole is not None and _is_record(whole, named, calls=False):
            found.append((node.lineno, ast.unparse(node)))
        elif _reads_record(node, tainted) and id(node) not in inner:
            found.append((node.lineno, ast.unparse(node)))
            value = node
            while (step := _key(value)) is not None:  # the chain's inner reads are this one read
                value = step[0]
                inner.add(id(value))
    return found


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


#: (id, a report module's source, the read the scan must name): the shapes a reviewer writes.
PLANTED = [
    ("record", 'def rows(record):\n    return record["metrics"]["aggregate"]\n', 'record["metrics"]["aggregate"]'),
    ("run.results", 'def name(run):\n    return run.results["task"]["name"]\n', 'run.results["task"]["name"]'),
    ("tainted", 'def limit(outcome):\n    r = outcome.results\n    return r.get("limit")\n', "r.get('limit')"),
    ("json", 'import json\n\ndef digest(path):\n    return json.loads(path.read_text())["samples_sha256"]\n',
     "json.loads(path.read_text())['samples_sha256']"),
    ("raw", 'def raw(run):\n    return run.record.raw["n_items"]\n', "run.record.raw['n_items']"),
    ("run.record", 'def seeds(run):\n    return run.record["seeds"]\n', "run.record['seeds']"),
    ("alias", 'def task(run):\n    r = run.record\n    return r["task"]\n', "r['task']"),
    ("getattr", 'def n(run):\n    return getattr(run.record, "n_items")\n', "getattr(run.record, 'n_items')"),
    ("getattr-default", 'def limit(record):\n    return getattr(record, "limit", None)\n',
     "getattr(record, 'limit', None)"),
    ("dict()", 'def seeds(run):\n    return dict(run.record)\n', "dict(run.record)"),
    ("vars()", 'def fields(outcome):\n    return vars(outcome.record)\n', "vars(outcome.record)"),
    ("items()", 'def rows(run):\n    return {k: v for k, v in run.record.items() if k != "raw"}\n',
     "run.record.items()"),
    ("**", 'def edited(run):\n    return {**run.record.raw, "limit": 5}\n', "{**run.record.raw, 'limit': 5}"),
    ("unpacked", 'def same(first, second):\n    a, b = first.record, second.record\n    return a["seeds"]\n',
     "a['seeds']"),
    ("walrus", 'def limited(run):\n    return (r := run.record)["limit"]\n', "(r := run.record)['limit']"),
    ("loop", 'def sizes(outcomes):\n    records = [o.record for o in outcomes]\n    for r in records:\n'
             '        yield r["n_items"]\n', "r['n_items']"),
    ("annotated", 'def task(rec: RunRecord):\n    return rec.get("task")\n', "rec.get('task')"),
    ("list-annotated", 'def tasks(recs: list[RunRecord]):\n    return [r["task"] for r in recs]\n', "r['task']"),
    ("__getitem__", 'def task(run):\n    return run.record.__getitem__("task")\n', "run.record.__getitem__('task')"),
    ("pop", 'def timings(outcome):\n    return outcome.record.pop("timings")\n', "outcome.record.pop('timings')"),
]
@pytest.mark.parametrize(("source", "expression"), [p[1:] for p in PLANTED], ids=[p[0] for p in PLANTED])
def test_a_planted_read_in_a_report_module_fails_the_scan(tmp_path, source, expression):
    """A report module that indexes a run record by a field name, or reads a whole record by its fields' names, is
    found, named with its line."""
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


def test_every_planted_shape_is_caught_at_once(tmp_path):
    """All the plants in one package: each is named, none hides another (the count is printed: caught/planted)."""
    plant(tmp_path / "metabench" / "report", [source for _, source, _ in PLANTED])
    found = {line.split(":", 1)[0] for line in violations(tmp_path / "metabench", allowed={})}
    print(f"record scanner: caught {len(found)} of {len(PLANTED)} planted read shapes")
    assert len(found) == len(PLANTED)


def test_keys_that_are_no_record_field_and_typed_reads_are_not_reads():
    assert string_key_reads('def f(record, results):\n    return record["rows"], results.get("settings")\n') == []
    assert string_key_reads('def f(run):\n    return run.record.task.config["metrics"]\n') == []
    assert string_key_reads('def f(entry):\n    return entry["metrics"]\n') == []  # not named as a record
    assert string_key_reads('def f(self):\n    return self.results["task"]\n') == []  # the API's own attribute
