"""docs/artifacts.md's results tables, generated from the committed Boisson runs (`metabench report docs`).

A cell is a view group (``boisson_trofi_random``: five folds × three views) or a single task with views
(``boisson_vua18_bo_random``). A value is the mean over the folds that were run; a row built from fewer folds
than the cell has, from a ``--limit`` run or from a reduced training budget (``max_train``, ``epochs`` in the
model) says PARTIAL and why, wherever its number appears.
"""

from __future__ import annotations

import statistics

from .. import paper_numbers as paper
from metabench.plugin_api import REDUCED, docs_table as markdown, docs_names as names

VIEW_LABELS = {"default": "Def", "pme_only": "PME", "masked": "Masked"}


def _cells(context) -> dict[str, dict[str, list[str]]]:
    from .gameability import cells  # noqa: PLC0415

    return context.memo("cells", lambda: cells(context.index))


def _by_key(context) -> dict:
    return context.memo("by_key", lambda: {(r.record.task.name, r.record.model.spec): r for r in context.runs})


def view_runs(context, cell: str, view: str, model: str) -> tuple[list, int]:
    """(the model's runs of the cell's folds in this view, the number of folds the cell has)."""
    members = _cells(context).get(cell, {}).get(view, [])
    by_key = _by_key(context)
    return [by_key[(t, model)] for t in members if (t, model) in by_key], len(members)


def mean(runs: list, metric: str) -> float | None:
    values = [r.record.mean(metric) for r in runs if r.record.aggregate(metric) is not None]
    return statistics.fmean(values) if values else None


def partial(model: str, runs: list, ran: int, folds: int) -> str:
    """'' for a full-protocol value, else 'PARTIAL: why' (folds, --limit, a reduced training budget)."""
    if not runs:
        return "not run"
    why = []
    if ran < folds:
        why.append(f"{ran}/{folds} folds")
    if any(r.partial for r in runs):
        why.append("--limit " + ",".join(sorted({str(r.record.limit) for r in runs if r.partial})))
    if any(key in model for key in REDUCED):
        why.append("reduced training")
    return "PARTIAL: " + ", ".join(why) if why else ""


def pct(value: float | None, default: float | None = None) -> str:
    if value is None:
        return "—"
    out = f"{100 * value:.2f}"
    return out + (f" ({100 * (value - default) / default:+.1f}%)" if default else "")


def paper_cells(context, cell: str) -> str:
    """The paper's BERT-base Def / PME / Masked (gaps relative to Def) for the row the cell is bound to."""
    from .tables import NUMBERS  # noqa: PLC0415
    from ..paper_layouts import VIEW_BY_KEY  # noqa: PLC0415

    bound = context.memo("bound", lambda: _bound(context))
    values = {}
    for (table, row, column), bound_cell in bound.items():
        numbers = NUMBERS[table].get(row[0])
        if bound_cell == cell and table in ("boisson_table_2", "boisson_table_3") and numbers:
            values[column.split()[-1]] = numbers[VIEW_BY_KEY[table].columns.index(column)]
    if "Def" not in values:
        return "—"
    return " / ".join([f"{values['Def']:.2f}", *(f"{values[v]:.2f} ({100 * (values[v] - values['Def']) / values['Def']:+.1f}%)"
                                                   for v in ("PME", "Masked") if v in values)])


def views_table(context, model: str, cells: str) -> list[str]:
    """Fold-mean macro-F1 per view of one model, gaps relative to Def, beside the paper's BERT-base."""
    rows = []
    for cell in names(cells):
        found = {v: view_runs(context, cell, v, model) for v in VIEW_LABELS}
        default = mean(found["default"][0], "macro_f1")
        every = [r for runs, _ in found.values() for r in runs]
        folds = max(n for _, n in found.values())
        ran = max(len(runs) for runs, _ in found.values())
        rows.append([cell, f"{ran}/{folds}", pct(default),
                     *(pct(mean(found[v][0], "macro_f1"), default) for v in ("pme_only", "masked")),
                     paper_cells(context, cell), partial(model, every, ran, folds) or "full"])
    return markdown(["cell", "folds", "Def", "PME", "Masked", f"paper {paper.MODEL.split(' (')[0]} (Def / PME / Masked)",
                     "status"], rows)


def baselines_table(context, cells: str, models: str = "majority;lookup;lookup:key=expression") -> list[str]:
    """The model-free baselines' fold-mean macro-F1 per view: what a score must be read against."""
    rows = []
    for cell in names(cells):
        for model in names(models):
            found = {v: view_runs(context, cell, v, model) for v in VIEW_LABELS}
            if not any(runs for runs, _ in found.values()):
                continue
            folds = max(n for _, n in found.values())
            every = [r for runs, _ in found.values() for r in runs]
            ran = max(len(runs) for runs, _ in found.values())
            rows.append([cell, model, *(pct(mean(found[v][0], "macro_f1")) for v in VIEW_LABELS),
                         partial(model, every, ran, folds) or "full"])
    return markdown(["cell", "baseline", "Def", "PME", "Masked", "status"], rows)


def samples_table(context, model: str, cells: str) -> list[str]:
    """The sampling comparison (matched vs random literal partners): a model's Def and PME-only macro-F1, the
    expression lookup and majority on the PME-only view, and that view's collision ceiling (accuracy)."""
    rows = []
    for cell in names(cells):
        default, folds = view_runs(context, cell, "default", model)
        pme, _ = view_runs(context, cell, "pme_only", model)
        lookup, _ = view_runs(context, cell, "pme_only", "lookup:key=expression")
        majority, _ = view_runs(context, cell, "pme_only", "majority")
        d, p = mean(default, "macro_f1"), mean(pme, "macro_f1")
        n_items = sorted({r.record.n_items for r in pme + default})
        rows.append([cell, pct(d), pct(p), f"{100 * (p - d) / d:+.1f} %" if d and p is not None else "—",
                     pct(mean(lookup, "macro_f1")),
                     f"{pct(mean(majority, 'macro_f1'))} ({pct(mean(majority, 'accuracy'))})",
                     pct(mean(pme or majority, "collision_ceiling")), ", ".join(map(str, n_items)),
                     partial(model, default + pme, len(default), folds) or "full"])
    return markdown(["cell", "Def", "PME only", "PME gap", "lookup:key=expression", "majority (acc.)",
                     "PME collision ceiling (acc.)", "test items", "status"], rows)


def _assessed(context) -> list[dict]:
    from .gameability import assess  # noqa: PLC0415

    return context.memo("gameability", lambda: assess(context.index, context.runs))


def gameability_table(context, cells: str = "") -> list[str]:
    """`compare artifacts` for the committed runs (paired bootstrap, 2,000 resamples, seed 0)."""
    wanted = names(cells)
    rows = []
    for r in _assessed(context):
        if wanted and r["cell"] not in wanted:
            continue
        b = r["bootstrap"]
        runs = [run for view in r["values"] for run in view_runs(context, r["cell"], view, r["model"])[0]]
        ran, folds = map(int, r["folds"].split("/"))
        rows.append([r["cell"], r["model"], r["folds"], r["best_view"], f"{100 * r['share_of_default']:.1f}%",
                     f"{100 * b['delta']:+.2f} [{100 * b['ci_low']:+.2f}, {100 * b['ci_high']:+.2f}]", f"{b['pvalue']:.3g}",
                     "yes" if r["gameable"] else "no", r["why"], partial(r["model"], runs, ran, folds) or "full"])
    return markdown(["cell", "model", "folds", "best view", "best / Def", "Δ macro-F1 (95% CI)", "p",
                     "gameable (< 5 % loss)", "rules that fired", "status"], rows)


def majority_table(context, cells: str) -> list[str]:
    """The paper's Maj (the dataset's majority share: the pooled test folds) beside the mean of each test
    fold's own majority share (an oracle: it picks the better class per fold) and the majority baseline, which
    answers the training folds' majority class."""
    from .tables import NUMBERS, dataset_majority  # noqa: PLC0415

    rows = []
    for cell in names(cells):
        runs, folds = view_runs(context, cell, "default", "majority")
        table = "boisson_table_5" if "_lexical" in cell else "boisson_table_4"
        row = next((row for (t, row, _), c in context.memo("bound", lambda: _bound(context)).items()
                    if c == cell and t == table), None)
        paper_maj = NUMBERS[table].get(row[0]) if row else None
        maj = dataset_majority(runs, folds)
        rows.append([cell, f"{len(runs)}/{folds}", f"{sum(r.record.n_items for r in runs):,}", pct(maj[0] if maj else None),
                     pct(mean(runs, "majority_accuracy")), pct(mean(runs, "accuracy")),
                     f"{paper_maj[0]:.1f}" if paper_maj else "—", partial("majority", runs, len(runs), folds) or "full"])
    return markdown(["cell", "folds", "test items (all folds)", "Maj (dataset: pooled test folds)",
                     "fold majority share, mean (oracle)", "majority baseline accuracy", "paper Maj", "status"], rows)


def _bound(context):
    from .tables import bound_cells  # noqa: PLC0415

    return bound_cells(context.index)


def paper_f1_table(context) -> list[str]:
    """The paper's Table 4/5 cells whose F1 does not follow from their own P and R (computed, not listed)."""
    from .. import paper_numbers as printed  # noqa: PLC0415

    rows = []
    for number, table in (("Table 4", printed.TABLE_4), ("Table 5", printed.TABLE_5)):
        for dataset, values in table.items():
            for position in printed.inconsistent_f1(values):
                view = position - 10
                p, r = values[4 + view], values[7 + view]
                rows.append([number, dataset, ("Def", "PME", "Masked")[view], f"{p:.1f}", f"{r:.1f}",
                             f"{values[position]:.1f}{printed.F1_MARK}", f"{2 * p * r / (p + r):.1f}"])
    return markdown(["table", "dataset", "view", "P", "R", "F1 as printed", "harmonic mean of P and R"], rows)
