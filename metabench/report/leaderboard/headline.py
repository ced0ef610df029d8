"""The headline table: the field's benchmarks as a newcomer looks for them, first on the board.

One row per model, one column per headline benchmark (the members of the ``headline`` group, declared once in
``tasks/headline.yaml``: a task, or a k-fold group standing for its folds), each cell the primary metric with
its 95 % interval and seeds (`intervals`: a t interval over seeds, else a percentile bootstrap over items; a
k-fold group: a t interval over its per-seed fold means). Only whole-split runs fill a cell: smoke runs
(``--limit``) are named under the table (``smoke``). The marks beside a cell (★, ▼, the degenerate
marks, the best constant answer) are the ones the overview gives the same task entry or group cell: the
reporters read them there, so the two tables never disagree. A decoder has a row per way it answered (its
recorded ``answering``, `answering_label`): "SmolLM2-135M-Instruct · zero-shot scored" and "· 5-shot scored" are
two results, never one row mixing them; a generated cell carries its format-failure rate (``unread``), printed
beside the number. The published numbers of the same columns are rows of their own, one per published system,
never ranked and never starred, each cell with its protocol (`published`: same, differs or unclear, and how) and,
for a decoder, how it answered and the caveats of its number (a sample, another metric, no interval).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...config.index import TaskIndex
from ...runs.stored import Run
from ..intervals import interval, over_seeds
from ..answering_label import model_name, row_label, way
from ..published import Published
from ..unread import run_rate
from .schema import (BoardTask, Entry, Group, Headline, HeadlineCell, HeadlineColumn, HeadlinePublished, HeadlineRow,
                     PublishedCell, SmokeRun)

#: The group whose members are the headline columns (tasks/headline.yaml).
HEADLINE_GROUP = "headline"


@dataclass
class _Cell:
    """A headline cell with the run it reads (a group's: its first member's), for its row's label and notes."""

    cell: HeadlineCell
    run: str | None


@dataclass
class _Row:
    """A headline row being assembled, with the runs of its cells."""

    row: HeadlineRow
    runs: list[str | None] = field(default_factory=list)


def headline(registry, tasks: list[BoardTask], groups: list[Group], models: list[str], runs: list[Run],
             published: list[Published]) -> Headline | None:
    """The table's columns, our rows (``models``: the board's) and the published rows; None where no ``headline``
    group is declared."""
    index = TaskIndex(registry)
    declared = index.groups.get(HEADLINE_GROUP)
    if declared is None:
        return None
    by_name = {t.name: t for t in tasks}
    by_group: dict[str, list[Group]] = {}
    for row in groups:
        by_group.setdefault(row.group or "", []).append(row)
    by_path = {str(run.path): run for run in runs}
    columns, cells = [], {}
    for name in declared.task:
        if name in by_name:
            columns.append(_task_column(by_name[name]))
            cells[name] = _task_cells(registry, by_name[name], by_path)
        elif name in by_group:
            columns.append(_group_column(name, by_group[name], by_name))
            cells[name] = _group_cells(by_group[name], by_name, by_path)
        else:
            columns.append(HeadlineColumn(name=name, type="none", slug=None, metric=None, higher_is_better=True,
                                          n_items=None, members=None))
            cells[name] = {}
    rows = _rows(registry, set(models), cells, by_path)
    return Headline(group=HEADLINE_GROUP, columns=columns, rows=[found.row for found in rows],
                    published=_published_rows(published, columns, index.groups),
                    smoke=_smoke_runs(registry, by_name, declared.task, cells, by_path),
                    notes=_decoder_notes(registry, rows, by_path))


def _rows(registry, known: set[str], cells: dict[str, dict[str, _Cell]], by_path: dict[str, Run]) -> list[_Row]:
    """One row per model and way of answering (an encoder: one row, ``answering`` None): the models that cover
    most headline columns first (a row of one cell is a narrow experiment), then by name and way."""
    found: dict[tuple[str, str | None], _Row] = {}
    for name, by_model in cells.items():
        for model, cell in by_model.items():
            row = found.setdefault((model, cell.cell.answering), _Row(HeadlineRow(
                model=model, label=None, answering=cell.cell.answering, cells={})))
            row.row.cells[name] = cell.cell
            row.runs.append(cell.run)
    rows = [row for (model, _), row in found.items() if model in known]
    for row in rows:
        known_runs = [by_path[path] for path in row.runs if path in by_path]
        row.row.label = row_label(registry, known_runs[0].record) if known_runs else row.row.model
    return sorted(rows, key=lambda r: (-len(r.row.cells), r.row.model or "", r.row.answering or ""))


def _decoder_notes(registry, rows: list[_Row], by_path: dict[str, Run]) -> list[str]:
    """The notes under the table about its decoder rows: what their labels mean, and that a small model's row is
    a floor (the size as its adapter recorded it), not where decoders stand."""
    decoders = [row for row in rows if row.row.answering is not None]
    if not decoders:
        return []
    notes = ["A decoder's row names how it answered: scored (the log-likelihood of each answer's words), generated "
             "(greedy text read by a strict parser; N % unread beside a number is the share of answers no parser "
             "read, counted wrong) or fine-tuned (a tagger trained on the task); zero-shot or k-shot (k demonstrations "
             "from the training split, drawn per seed). Each way is a row of its own."]
    sizes: dict[str, int] = {}
    for row in decoders:
        for path in filter(None, row.runs):
            record = by_path[path].record
            params = record.model.info.num_parameters
            if isinstance(params, int) and params < 1_000_000_000:
                sizes.setdefault(model_name(registry, record), params)
    for name, params in sorted(sizes.items()):
        notes.append(f"{name} has {params / 1e6:.0f}M parameters: a {params / 1e6:.0f}M model is a floor for what a "
                     "decoder does on these benchmarks, not the state of the art (the published LLM rows beside it are "
                     "far larger models, on their own items and protocols).")
    return notes


def _smoke_runs(registry, tasks: dict[str, BoardTask], names, cells: dict, by_path: dict[str, Run]) -> list[SmokeRun]:
    """The partial runs (``--limit``) of headline tasks whose model has no whole-split run there: named under the
    table, not in it, so no headline cell is a smoke test (they stay in the overview, marked ◐)."""
    out = []
    for name in names:
        if name not in tasks:
            continue
        metric = tasks[name].primary_metric or ""
        for entry in tasks[name].entries:
            if entry.partial and entry.model not in cells.get(name, {}):
                run = by_path[entry.run or ""]
                out.append(SmokeRun(task=name, model=entry.model, n_items=entry.n_items,
                                    value=entry.metrics[metric].mean, label=row_label(registry, run.record),
                                    unread=run_rate(run)))
    return out


def _task_column(task: BoardTask) -> HeadlineColumn:
    return HeadlineColumn(name=task.name, type="task", slug=task.slug, metric=task.primary_metric,
                          higher_is_better=task.higher_is_better, n_items=task.n_items, members=None)


def _group_column(name: str, rows: list[Group], tasks: dict[str, BoardTask]) -> HeadlineColumn:
    first = rows[0]
    page = tasks.get(first.member_tasks[0])
    return HeadlineColumn(name=name, type="group", slug=page.slug if page else None, metric=first.primary_metric,
                          higher_is_better=page.higher_is_better if page else True, n_items=first.n_items,
                          members=first.members)


def _task_cells(registry, task: BoardTask, by_path: dict[str, Run]) -> dict[str, _Cell]:
    """Each model's whole-split entry: a smoke run (``--limit``) never fills a headline cell (`_smoke_runs`)."""
    metric = task.primary_metric or ""
    out: dict[str, _Cell] = {}
    for entry in sorted(task.entries, key=lambda e: e.item_set or 0):
        if entry.model in out or entry.partial or entry.metrics[metric].mean is None:
            continue
        run = by_path[entry.run or ""]
        low, high, method = interval(registry, run, metric)
        out[entry.model] = _Cell(HeadlineCell(
            value=entry.metrics[metric].mean, ci_low=low, ci_high=high, ci_method=method, seeds=len(entry.seeds),
            protocol_seeds=entry.protocol_seeds, n_items=entry.n_items, partial=entry.partial,
            reproduction=_reproduction([entry]), answering=way(run.record), unread=run_rate(run)), entry.run)
    return out


def _reproduction(entries: list[Entry | None]) -> str | None:
    """A cell's reproduction (`schema.HeadlineCell.reproduction`): None where none of its runs was tried (a board
    built without ``--reproduce``), ``reproduced`` where every one was, else ``not_reproducible``."""
    found = [e.verified.reproduction if e is not None and e.verified is not None else None for e in entries]
    if all(f is None for f in found):
        return None
    return "reproduced" if all(f is not None and f.status == "reproduced" for f in found) else "not_reproducible"


def _group_cells(rows: list[Group], tasks: dict[str, BoardTask], by_path: dict[str, Run]) -> dict[str, _Cell]:
    out = {}
    for row in rows:
        summary = row.aggregate[row.primary_metric or ""]
        per_seed = [v for v in (summary.per_seed or {}).values() if v is not None]
        low, high, method = (over_seeds(per_seed) if len(per_seed) >= 2 else
                             (None, None, "none: one seed (an interval over seeds needs two)"))
        members = [_main_entry(tasks.get(member), row.model) for member in row.member_tasks]
        runs = [by_path[e.run or ""] for e in members if e is not None]
        ways = {way(run.record) for run in runs}
        rates = [rate for rate in map(run_rate, runs) if rate is not None]
        out[row.model or ""] = _Cell(HeadlineCell(
            value=summary.mean, ci_low=low, ci_high=high, ci_method=method, seeds=len(per_seed),
            protocol_seeds=members[0].protocol_seeds if members and members[0] else None,
            n_items=row.n_items, partial=False, reproduction=_reproduction(members),
            # the folds answered one way (a model spec fixes it); else the group reads as mixed
            answering=ways.pop() if len(ways) == 1 else "mixed ways",
            unread=sum(rates) / len(rates) if rates else None), str(runs[0].path) if runs else None)
    return out


def _main_entry(task: BoardTask | None, model: str | None) -> Entry | None:
    """The model's entry on the task's main item set, if it has one."""
    return next((e for e in task.entries if e.model == model and e.item_set == 0), None) if task else None


def _published_rows(published: list[Published], columns: list[HeadlineColumn], groups: dict) -> list[HeadlinePublished]:
    """One row per published system with a number on a headline column's metric (or, for a task column, on a
    group the task is a member of: MUNCH's mean over its three prompts beside its first prompt, said beside the
    number); the best published number of each column is marked (the state of the art as published, whatever its
    protocol: the cell says which), among the numbers on the column's own items (not a sample or another pool).
    A decoder's cell says how it answered and carries its caveats (`Published.caveats`)."""
    # every built column is named (the schema allows a read one not to be)
    metric = {c.name: c.metric for c in columns if c.name is not None}
    within = {c.name: [g for g, config in groups.items() if c.type == "task" and c.name in config.task]
              for c in columns if c.name is not None}
    rows: dict[str, HeadlinePublished] = {}
    own_items: dict[int, bool] = {}  # id of a cell -> on the column's own items (not a sample or another pool)
    for entry in published:
        for name in [entry.task] if entry.task in metric else [n for n, gs in within.items() if entry.task in gs]:
            if entry.metric != metric[name]:
                continue
            caveats = ([f"for {entry.task}, the mean of its {len(groups[entry.task].task)} members"]
                       if entry.task != name else []) + entry.caveats
            row = rows.setdefault(entry.system, HeadlinePublished(system=entry.system, cells={}))
            if name not in row.cells:
                row.cells[name] = PublishedCell(value=entry.fraction, protocol=entry.protocol,
                                                differences=entry.differences, citation=entry.citation,
                                                source=entry.source, best=False, note=None,
                                                answering=entry.answering, caveats=caveats)
                own_items[id(row.cells[name])] = not entry.sample
    for column in columns:
        key = column.name
        if key is None:
            continue
        ranked = [row.cells[key] for row in rows.values() if key in row.cells and own_items[id(row.cells[key])]]
        values = [cell.value for cell in ranked if cell.value is not None]  # a published cell has its number
        if values:
            pick = max if column.higher_is_better else min
            best = pick(values)
            for cell in ranked:
                cell.best = cell.value == best
    ordered = sorted(rows.values(), key=lambda row: (row.system or "").lower())
    notes = [row.cells[c.name] for row in ordered for c in columns
             if c.name in row.cells and row.cells[c.name].differences]
    for number, cell in enumerate(notes, 1):  # the protocol differences, numbered in reading order
        cell.note = number
    for row in ordered:
        row.notes = any(cell.note for cell in row.cells.values())
    return ordered
