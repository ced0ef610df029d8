"""The headline table: the field's benchmarks as a newcomer looks for them, first on the board.

One row per model, one column per headline benchmark (the members of the ``headline`` group, declared once in
``tasks/headline.yaml``: a task, or a k-fold group standing for its folds), each cell the primary metric with
its 95 % interval and seeds (`intervals`: a t interval over seeds, else a percentile bootstrap over items; a
k-fold group: a t interval over its per-seed fold means). Only whole-split runs fill a cell: smoke runs
(``--limit``) are named under the table (``smoke``). The marks beside a cell (★, ▼, the degenerate
marks, the best constant answer) are the ones the overview gives the same task entry or group cell: the
reporters read them there, so the two tables never disagree. The published numbers of the same columns are rows
of their own, one per published system, never ranked and never starred, each cell with its protocol
(`published`: same, differs or unclear, and how).
"""

from __future__ import annotations

from ...config.index import TaskIndex
from ...runs.stored import Run
from ..intervals import interval, over_seeds
from ..published import Published

#: The group whose members are the headline columns (tasks/headline.yaml).
HEADLINE_GROUP = "headline"


def headline(registry, board: dict, runs: list[Run], published: list[Published]) -> dict | None:
    """The table's columns, our rows and the published rows; None where no ``headline`` group is declared."""
    declared = TaskIndex(registry).groups.get(HEADLINE_GROUP)
    if declared is None:
        return None
    tasks = {t["name"]: t for t in board["tasks"]}
    groups: dict[str, list[dict]] = {}
    for row in board["groups"]:
        groups.setdefault(row["group"], []).append(row)
    by_path = {str(run.path): run for run in runs}
    columns, cells = [], {}
    for name in declared.task:
        if name in tasks:
            columns.append(_task_column(tasks[name]))
            cells[name] = _task_cells(registry, tasks[name], by_path)
        elif name in groups:
            columns.append(_group_column(name, groups[name], tasks))
            cells[name] = _group_cells(groups[name], tasks)
        else:
            columns.append({"name": name, "type": "none", "slug": None, "metric": None, "higher_is_better": True,
                            "n_items": None, "members": None})
            cells[name] = {}
    # the models that cover most headline columns first (a row of one cell is a narrow experiment), then by name
    models = sorted((m["name"] for m in board["models"] if any(m["name"] in c for c in cells.values())),
                    key=lambda model: (-sum(model in c for c in cells.values()), model))
    return {
        "group": HEADLINE_GROUP,
        "columns": columns,
        "rows": [{"model": model, "cells": {name: c[model] for name, c in cells.items() if model in c}}
                 for model in models],
        "published": _published_rows(published, columns),
        "smoke": _smoke_runs(tasks, declared.task, cells),
    }


def _smoke_runs(tasks: dict, names, cells: dict) -> list[dict]:
    """The partial runs (``--limit``) of headline tasks whose model has no whole-split run there: named under the
    table, not in it, so no headline cell is a smoke test (they stay in the overview, marked ◐)."""
    out = []
    for name in names:
        if name not in tasks:
            continue
        metric = tasks[name]["primary_metric"]
        for entry in tasks[name]["entries"]:
            if entry["partial"] and entry["model"] not in cells.get(name, {}):
                out.append({"task": name, "model": entry["model"], "n_items": entry["n_items"],
                            "value": entry["metrics"][metric]["mean"]})
    return out


def _task_column(task: dict) -> dict:
    return {"name": task["name"], "type": "task", "slug": task["slug"], "metric": task["primary_metric"],
            "higher_is_better": task["higher_is_better"], "n_items": task["n_items"], "members": None}


def _group_column(name: str, rows: list[dict], tasks: dict) -> dict:
    first = rows[0]
    page = tasks.get(first["member_tasks"][0])
    return {"name": name, "type": "group", "slug": page["slug"] if page else None, "metric": first["primary_metric"],
            "higher_is_better": page["higher_is_better"] if page else True, "n_items": first["n_items"],
            "members": first["members"]}


def _task_cells(registry, task: dict, by_path: dict[str, Run]) -> dict:
    """Each model's whole-split entry: a smoke run (``--limit``) never fills a headline cell (`_smoke_runs`)."""
    metric = task["primary_metric"]
    out = {}
    for entry in sorted(task["entries"], key=lambda e: e["item_set"]):
        if entry["model"] in out or entry["partial"] or entry["metrics"][metric]["mean"] is None:
            continue
        low, high, method = interval(registry, by_path[entry["run"]], metric)
        out[entry["model"]] = {"value": entry["metrics"][metric]["mean"], "ci_low": low, "ci_high": high,
                               "ci_method": method, "seeds": len(entry["seeds"]),
                               "protocol_seeds": entry["protocol_seeds"], "n_items": entry["n_items"],
                               "partial": entry["partial"], "reproduction": _reproduction([entry])}
    return out


def _reproduction(entries: list[dict | None]) -> str | None:
    """A cell's reproduction (`schema.HeadlineCell.reproduction`): None where none of its runs was tried (a board
    built without ``--reproduce``), ``reproduced`` where every one was, else ``not_reproducible``."""
    found = [((e or {}).get("verified") or {}).get("reproduction") for e in entries]
    if all(f is None for f in found):
        return None
    return "reproduced" if all(f is not None and f["status"] == "reproduced" for f in found) else "not_reproducible"


def _group_cells(rows: list[dict], tasks: dict) -> dict:
    out = {}
    for row in rows:
        metric = row["primary_metric"]
        per_seed = [v for v in row["aggregate"][metric].get("per_seed", {}).values() if v is not None]
        low, high, method = (over_seeds(per_seed) if len(per_seed) >= 2 else
                             (None, None, "none: one seed (an interval over seeds needs two)"))
        first = next((e for e in tasks.get(row["member_tasks"][0], {}).get("entries", [])
                      if e["model"] == row["model"] and e["item_set"] == 0), None)
        members = [next((e for e in tasks.get(member, {}).get("entries", [])
                         if e["model"] == row["model"] and e["item_set"] == 0), None) for member in row["member_tasks"]]
        out[row["model"]] = {"value": row["aggregate"][metric]["mean"], "ci_low": low, "ci_high": high,
                             "ci_method": method, "seeds": len(per_seed),
                             "protocol_seeds": first["protocol_seeds"] if first else None,
                             "n_items": row["n_items"], "partial": False, "reproduction": _reproduction(members)}
    return out


def _published_rows(published: list[Published], columns: list[dict]) -> list[dict]:
    """One row per published system with a number on a headline column's metric; the best published number of
    each column is marked (the state of the art as published, whatever its protocol: the cell says which)."""
    metric = {c["name"]: c["metric"] for c in columns}
    rows: dict[str, dict] = {}
    for entry in published:
        if entry.task in metric and entry.metric == metric[entry.task]:
            row = rows.setdefault(entry.system, {"system": entry.system, "cells": {}})
            row["cells"].setdefault(entry.task, {"value": entry.fraction, "protocol": entry.protocol,
                                                 "differences": entry.differences, "citation": entry.citation,
                                                 "source": entry.source, "best": False, "note": None})
    for column in columns:
        found = [row["cells"][column["name"]] for row in rows.values() if column["name"] in row["cells"]]
        if found:
            pick = max if column["higher_is_better"] else min
            best = pick(cell["value"] for cell in found)
            for cell in found:
                cell["best"] = cell["value"] == best
    ordered = sorted(rows.values(), key=lambda row: row["system"].lower())
    notes = [row["cells"][c["name"]] for row in ordered for c in columns
             if c["name"] in row["cells"] and row["cells"][c["name"]]["differences"]]
    for number, cell in enumerate(notes, 1):  # the protocol differences, numbered in reading order
        cell["note"] = number
    for row in ordered:
        row["notes"] = any(cell.get("note") for cell in row["cells"].values())
    return ordered
