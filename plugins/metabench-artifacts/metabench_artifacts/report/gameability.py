"""Gameability: can a model that sees incomplete information match one that sees the whole item?

For every *cell* — a task declaring ``views`` (``<task>@<view>``), or a k-fold group of such tasks
(``<group>@<view>`` with ``aggregate: mean``) — and every model, the cell's value per view is the mean over
folds of macro-F1 (Boisson et al.'s Table 3), and the relative gap is (view − default) / default. The best
incomplete view (``pme_only`` or ``masked``) is compared with ``default`` by a paired bootstrap on macro-F1
over the same test items (the folds' test items pooled; first seed). The cell is flagged **gameable** by
the paper's own wording: the incomplete view is "competitive" when it loses less than ``loss`` (5 %) of
default's macro-F1, relatively (construction_artifacts.md §4, C1/C3/C5). Two stricter or looser readings
are computed beside it and named in every row, so a reader sees which rule fired: *not significantly
worse* (two-sided bootstrap p ≥ ``alpha``, or better) and *≥ ``ratio`` (90 %) of default*. Model-free
baselines are not flagged. Only folds run in every compared view count; a cell with fewer folds than its
group says so (``folds``).
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from metabench.plugin_api import VIEWS

INCOMPLETE = tuple(v for v in VIEWS if v != "default")
#: the flag's rule (the paper's "competitive") first, then the alternatives shown beside it
RULES = ("loses < 5 %", "not significantly worse", "≥ 90 % of default")


def cells(index) -> dict[str, dict[str, list[str]]]:
    """cell -> view -> member task names, from a TaskIndex (view groups with aggregate: mean, else tasks)."""
    out: dict[str, dict[str, list[str]]] = defaultdict(dict)
    grouped: set[str] = set()
    for name, group in index.groups.items():
        base, sep, view = name.rpartition("@")
        if sep and view in VIEWS and group.aggregate == "mean":
            members = index.select(name)
            out[base][view] = members
            grouped.update(members)
    for name in index.tasks:
        base, sep, view = name.rpartition("@")
        if sep and view in VIEWS and name not in grouped:
            out[base][view] = [name]
    return dict(out)


def _macro_f1(records) -> float:
    """macro-F1 over two classes of (gold is positive, prediction is positive) rows (numpy, vectorised)."""
    gold, pred = records[:, 0], records[:, 1]
    scores = []
    for g, p in ((gold, pred), (1 - gold, 1 - pred)):
        tp = float((g * p).sum())
        denominator = float(g.sum() + p.sum())
        scores.append(2 * tp / denominator if denominator else 0.0)
    return sum(scores) / 2


def _records(runs: list, positive: str):
    """{(task, id): (gold positive, prediction positive)} of the first seed of each run."""
    out = {}
    for run in runs:
        seed = run.record.seeds[0]
        for s in run.samples:
            if s["seed"] == seed:
                out[(run.record.task.name.rpartition("@")[0], s["id"])] = (int(s["gold"] == positive), int(s["prediction"] == positive))
    return out


def assess(index, runs: list, *, alpha: float = 0.05, ratio: float = 0.9, loss: float = 0.05, n_resamples: int = 2000,
           seed: int = 0, unassessed: list[str] | None = None) -> list[dict]:
    """One row per (cell, model) that has default and at least one incomplete view. A (cell, model) with runs
    that still gives no row (a view missing, folds that do not match) is explained in ``unassessed``."""
    import numpy as np  # noqa: PLC0415

    from metabench.plugin_api import paired_bootstrap  # noqa: PLC0415

    by_key = {(r.record.task.name, r.record.model.spec): r for r in runs}
    # model-free baselines are the floor the table reads models against, not candidates for the flag
    models = sorted({r.record.model.spec for r in runs if r.record.model.family != "baseline"})
    rows = []
    for cell, views in sorted(cells(index).items()):
        if "default" not in views:
            continue
        for model in models:
            folds = {v: {t.rpartition("@")[0] for t in members if (t, model) in by_key} for v, members in views.items()}
            present = [v for v in INCOMPLETE if v in views and folds.get(v)]
            ran = sorted(v for v in views if folds.get(v))
            if not folds.get("default") or not present:
                if ran and unassessed is not None:
                    unassessed.append(f"{cell} with {model}: runs of {', '.join(ran)} only; the verdict needs default "
                                      f"and {' or '.join(v for v in INCOMPLETE if v in views)}")
                continue
            common = set.intersection(*(folds[v] for v in ("default", *present)))
            if not common:
                if unassessed is not None:
                    unassessed.append(f"{cell} with {model}: no fold was run in every view ("
                                      + "; ".join(f"{v}: {', '.join(sorted(folds[v]))}" for v in ("default", *present)) + ")")
                continue
            picked = {v: [by_key[(f"{f}@{v}", model)] for f in sorted(common)] for v in ("default", *present)}
            values = {v: statistics.fmean(r.record.mean("macro_f1") for r in picked[v]) for v in picked}
            best = max(present, key=lambda v: values[v])
            positive = picked["default"][0].record.task.config.labels.positive or "metaphor"
            a, b = _records(picked["default"], positive), _records(picked[best], positive)
            keys = sorted(a.keys() & b.keys())
            test = paired_bootstrap(np.array([a[k] for k in keys]), np.array([b[k] for k in keys]), _macro_f1,
                                    n_resamples=n_resamples, seed=seed)
            worse = test.pvalue < alpha and test.delta < 0
            share = values[best] / values["default"] if values["default"] else float("nan")
            rules = dict(zip(RULES, (share - 1 > -loss, not worse, share >= ratio)))
            rows.append({
                "cell": cell, "model": model, "folds": f"{len(common)}/{len(views['default'])}",
                "values": values,
                "relative": {v: (values[v] - values["default"]) / values["default"] for v in present},
                "best_view": best, "share_of_default": share,
                "bootstrap": {"delta": test.delta, "ci_low": test.ci_low, "ci_high": test.ci_high,
                              "pvalue": test.pvalue, "n_items": test.n_items},
                "gameable": rules[RULES[0]], "rules": rules,
                "why": "; ".join(name for name, fired in rules.items() if fired) or "no rule fired",
            })
    return rows


def format_rows(rows: list[dict]) -> str:
    """A text table for `metabench compare artifacts`."""
    if not rows:
        return "gameability: no runs of tasks with views (default plus pme_only or masked) for one model"
    header = ["cell", "model", "folds", "default", "pme_only", "masked", "best", "Δ (95% CI)", "p", "gameable (< 5 % loss)",
              "rules that fired"]
    lines = []
    for r in rows:
        v, rel, b = r["values"], r["relative"], r["bootstrap"]
        cell = lambda view: "—" if view not in v else f"{100 * v[view]:.2f}" + (f" ({100 * rel[view]:+.1f}%)" if view in rel else "")  # noqa: E731
        lines.append([r["cell"], r["model"], r["folds"], cell("default"), cell("pme_only"), cell("masked"), r["best_view"],
                      f"{100 * b['delta']:+.2f} [{100 * b['ci_low']:+.2f}, {100 * b['ci_high']:+.2f}]", f"{b['pvalue']:.3g}",
                      "YES" if r["gameable"] else "no", r["why"]])
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines)]
    fmt = lambda row: "  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, lines)])
