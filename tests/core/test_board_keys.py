"""The typed board is what reporters read (issue 47 items 2 and 3), checked on the source as test_record_keys checks
the run record: outside the board's definition (schema.py), no module of metabench, the builders included (nor the
example plugin, the model third parties copy) indexes the board or a part of it by a field name (``board["tasks"]``,
``entry.get("vs_best")``, ``task["entries"][0]["model"]``); it reads attributes (`schema.Board`). Jinja templates
are held by rendering the committed board's site with the dict form an error (`test_board_schema`, slow tier).

What counts as the board on the source (a scanner cannot see types, so it goes by names and annotations): a name
``board``, a parameter annotated with one of the schema's classes, and any name assigned from, or looping over,
one of those (``for task in board.tasks``, ``entry = task.entries[0]``). A read is a subscript with a string
constant, or ``.get("...")``, whose key is a field of one of the schema's classes. Parts keyed by data (``metrics``,
``cells``, ``per_seed``...) are dicts on purpose: a variable key there is no field read.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from string_keys import bound_names, plant, scopes, whole_read, key_read as _key  # tests/ is on sys.path (conftest)

from metabench.report.leaderboard import schema

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "metabench"
EXAMPLE = ROOT / "plugins" / "metabench-example-plugin" / "metabench_example_plugin"

#: The board's definition is the one module that answers a key: its deprecated dict form. The builders (board.py,
#: caveats.py, headline.py, sections.py, task_workers.py) construct the typed parts, so they are scanned like any
#: reader.
BUILDERS = {
    "metabench/report/leaderboard/schema.py": "the board's definition: its deprecated dict form answers keys",
}

PARTS = {cls.__name__ for cls in vars(schema).values() if isinstance(cls, type) and issubclass(cls, schema.Part)}
_CLASSES = [cls for cls in vars(schema).values() if isinstance(cls, type) and issubclass(cls, schema.Part)]
FIELDS = frozenset(name for cls in _CLASSES for name in cls.model_fields)
#: Fields that hold plain JSON in every part that has them (``gaps.paired``, a gap row's ``seeds``): what is read
#: through them is a dict on purpose, so names taken from them are not the board.
PLAIN = frozenset(name for name in FIELDS
                  if not any(schema._models_in(cls.model_fields[name].annotation)
                             for cls in _CLASSES if name in cls.model_fields))


def _through_plain(node: ast.AST) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(node, ast.Attribute) and node.attr in PLAIN:
            return True
        node = node.func if isinstance(node, ast.Call) else node.value
    return False


def _annotated_as_part(annotation: ast.AST | None) -> bool:
    return annotation is not None and any(isinstance(n, ast.Name) and n.id in PARTS or
                                          isinstance(n, ast.Constant) and isinstance(n.value, str) and
                                          any(part in n.value for part in PARTS)
                                          for n in ast.walk(annotation))


def _root(node: ast.AST) -> ast.AST:
    """The name a chain of attributes, subscripts and calls starts from (``board`` in ``board.tasks[0].entries``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call, ast.NamedExpr)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _tainted(tree: ast.AST) -> set[str]:
    names = {"board"}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and _annotated_as_part(node.annotation):
            names.add(node.arg)
    pairs = bound_names(tree)
    changed = True
    while changed:  # assignments (unpacked too), walruses, with-targets and loops over board parts, to a fixed point
        changed = False
        for target, value in pairs:
            root = _root(value)
            if isinstance(root, ast.Name) and root.id in names and not _through_plain(value):
                for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                    if name not in names:
                        names.add(name)
                        changed = True
    return names


def board_key_reads(source: str) -> list[tuple[int, str]]:
    """(line, expression) of every read of a board part by a field name in ``source``."""
    return sorted(read for scope in scopes(ast.parse(source)) for read in _reads(scope))


def _reads(tree: ast.AST) -> list[tuple[int, str]]:
    names = _tainted(tree)
    found = []
    for node in ast.walk(tree):
        whole = whole_read(node)
        if whole is not None and isinstance(whole, ast.Name) and whole.id in names:  # dict(entry), entry.items()
            found.append((node.lineno, ast.unparse(node)))
            continue
        step = _key(node)
        if step is None:
            continue
        value, key = step
        root = _root(value)
        if (key in FIELDS and isinstance(root, ast.Name) and root.id in names and not _through_plain(value)
                and _key(value) is None):
            found.append((node.lineno, ast.unparse(node)))
    return found


def violations(roots: list[Path], exempt=BUILDERS, top: Path = ROOT) -> list[str]:
    """Every read under ``roots``, named by its path below ``top`` (the repository)."""
    out = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            module = path.relative_to(top).as_posix()
            if module in exempt:
                continue
            for line, text in board_key_reads(path.read_text(encoding="utf-8")):
                out.append(f"{module}:{line}: {text} reads the board by a field name: read the attribute "
                           "(docs/leaderboard-format.md)")
    return out


def test_no_reader_indexes_the_board_by_a_field_name():
    assert violations([PACKAGE, EXAMPLE]) == []


#: (id, a reporter's source, the read the scan must name): the shapes a reviewer writes.
PLANTED = [
    ("board", 'def write(board, out_dir):\n    return board["tasks"]\n', 'board["tasks"]'),
    ("loop", 'def rows(board):\n    for task in board.tasks:\n        yield task["entries"]\n', "task['entries']"),
    ("annotated", 'def mark(entry: "Entry"):\n    return entry.get("vs_best")\n', "entry.get('vs_best')"),
    ("assigned", 'def first(board):\n    e = board.tasks[0].entries[0]\n    return e["model"]\n', "e['model']"),
    ("getattr", 'def tasks(board):\n    return getattr(board, "tasks")\n', "getattr(board, 'tasks')"),
    ("getattr-default", 'def best(entry: Entry):\n    return getattr(entry, "vs_best", None)\n',
     "getattr(entry, 'vs_best', None)"),
    ("dict()", 'def fields(board):\n    return [dict(t) for t in board.tasks]\n', "dict(t)"),
    ("vars()", 'def fields(task: BoardTask):\n    return vars(task)\n', "vars(task)"),
    ("items()", 'def row(board):\n    return [{k: v for k, v in e.items()} for t in board.tasks for e in t.entries]\n',
     "e.items()"),
    ("**", 'def edited(board):\n    return [{**t, "name": "x"} for t in board.tasks]\n', "{**t, 'name': 'x'}"),
    ("unpacked", 'def pair(board):\n    a, b = board.tasks[0], board.tasks[1]\n    return a["name"]\n', "a['name']"),
    ("walrus", 'def name(board):\n    return (t := board.tasks[0])["name"]\n', "(t := board.tasks[0])['name']"),
    ("__getitem__", 'def n(board):\n    return board.__getitem__("n_runs")\n', "board.__getitem__('n_runs')"),
    ("pop", 'def marks(board):\n    return [e.pop("marks") for t in board.tasks for e in t.entries]\n', "e.pop('marks')"),
    ("to_dict", 'def tasks(board):\n    return board.to_dict()["tasks"]\n', "board.to_dict()['tasks']"),
]


@pytest.mark.parametrize(("source", "expression"), [p[1:] for p in PLANTED], ids=[p[0] for p in PLANTED])
def test_a_planted_read_in_a_reporter_fails_the_scan(tmp_path, source, expression):
    package = tmp_path / "metabench" / "report"
    package.mkdir(parents=True)
    (package / "clean.py").write_text(
        "def cells(board):\n    return {(e.model, t.name): e.metrics['f1'] for t in board.tasks for e in t.entries}\n",
        encoding="utf-8")
    assert violations([tmp_path / "metabench"], top=tmp_path) == []
    (package / "planted.py").write_text(source, encoding="utf-8")
    [found] = violations([tmp_path / "metabench"], top=tmp_path)
    assert found.startswith("metabench/report/planted.py:") and "reads the board by a field name" in found
    assert ast.dump(ast.parse(found.split(": ", 1)[1].split(" reads")[0])) == ast.dump(ast.parse(expression))


def test_every_planted_shape_is_caught_at_once(tmp_path):
    """All the plants in one package: each is named, none hides another (the count is printed: caught/planted)."""
    plant(tmp_path / "metabench" / "report", [source for _, source, _ in PLANTED])
    found = {line.split(":", 1)[0] for line in violations([tmp_path / "metabench"], top=tmp_path)}
    print(f"board scanner: caught {len(found)} of {len(PLANTED)} planted read shapes")
    assert len(found) == len(PLANTED)


def test_data_keyed_parts_and_other_dicts_are_not_reads():
    # metrics are keyed by data: entry.metrics["f1"] names a metric, not a field
    assert board_key_reads('def f(board):\n    return board.tasks[0].entries[0].metrics["f1"].mean\n') == []
    assert board_key_reads('def f(row):\n    return row["model"]\n') == []  # not the board by name or annotation
    # a control row's mean_overlap is keyed by data (the side: metaphor, literal), a map of numbers
    assert board_key_reads('def f(board):\n    return [r.mean_overlap["metaphor"] for r in board.gaps.controls.rows]\n') == []
    # the paired table is typed (schema.PairedTable): reading it by key is a read
    assert board_key_reads('def f(board):\n    return board.gaps.paired["rows"]\n') != []
    assert "mean_overlap" in PLAIN and "paired" not in PLAIN and "tasks" not in PLAIN and "cells" not in PLAIN
