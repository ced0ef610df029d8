"""The static HTML site: an overview, a page per task and per model, the metaphor gaps and the paper tables.

Every template is rendered with Jinja2 autoescaping, because model names, task names and citations come from
run files: a model called ``<script>alert(1)</script>`` must show as text. Plots come from `svg`, which
escapes its own labels, and are the only markup passed through unescaped. The CSS and JS are this package's
own files, copied beside the pages: the site opens from disk, with no server and nothing fetched elsewhere.
"""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, FunctionLoader, StrictUndefined, pass_context
from markupsafe import Markup, escape

from ..compare import format_ci, format_p
from ..unread import LEGEND, rate_of, unread
from . import numbers, svg
from .schema import Board, BoardTask, Comparison, Entry, GapRow, Part, SectionView
from .sections import view_template

#: Task columns per overview table: more would not fit a laptop screen, so a large family gets several tables.
PER_TABLE = 8

HERE = Path(__file__).parent


def _wbr(text) -> Markup:
    """A task name that may wrap after each underscore (long names in narrow overview columns)."""
    return Markup("_<wbr>").join(escape(part) for part in str(text).split("_"))


#: Where a model name may wrap: after its separators (``hf:``, ``,``, ``=``, ``/``, ``@``, a space), never inside a part.
_NAME_BREAKS = re.compile(r"(?<=[:,=/@\s])")


def _model_name(text) -> Markup:
    """A model name that wraps only after a separator: each part unbreakable (``white-space: nowrap``), a
    ``<wbr>`` between parts, so a narrow column shows ``hf:`` / ``minilm-l6,threads=1`` and never ``hf:minil|m-l6``."""
    parts = [part for part in _NAME_BREAKS.split(str(text)) if part]
    return Markup('<span class="name">') + Markup("<wbr>").join(
        Markup('<span class="nw">{}</span>').format(part) for part in parts) + Markup("</span>")


def _unread(rate) -> Markup:
    """A generated run's format-failure rate beside its number (`report.unread`); nothing for another run.
    Given a rate, or a run's metrics (metric -> summary), whose ``format_failure_rate`` it reads."""
    if rate is not None and not isinstance(rate, (int, float)):
        rate = rate_of(rate)
    if rate is None:
        return Markup("")
    return Markup('<small class="unread" title="{}"> · {}</small>').format(LEGEND, unread(rate))


class _BoardEnvironment(Environment):
    """Jinja reads ``x["key"]`` and the filters' ``attribute=`` as an item first: on a part of the typed board
    that would be the deprecated dict form (`schema.Part`), so a board part answers by attribute."""

    def getitem(self, obj, argument):
        if isinstance(obj, Part) and isinstance(argument, str):
            return self.getattr(obj, argument)
        return super().getitem(obj, argument)

    def getattr(self, obj, attribute):
        if isinstance(obj, Part):  # a part this board lacks is undefined, not looked up as a dict key
            try:
                return getattr(obj, attribute)
            except AttributeError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


def _environment() -> Environment:
    # a registered section's template is named "package:path" (its html=, `sections.view_template`)
    loader = ChoiceLoader([FileSystemLoader(HERE / "templates"), FunctionLoader(view_template)])
    env = _BoardEnvironment(loader=loader, autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(num=numbers.number, signed=numbers.signed, pm=numbers.mean_std, pval=format_p, ci=format_ci,
                       sortval=numbers.sort_value, wbr=_wbr, model_name=_model_name, unread=_unread)
    env.globals["section_view"] = _section_view
    return env


@pass_context
def _section_view(context, name: str, view: SectionView, **variables) -> Markup:
    """A registered section's ``html=`` template, rendered with what the ``{% include %}`` it replaces gave it:
    the page's context, ``name`` and ``view`` (the loop's) and ``variables`` (``section``, ``page``, ``task``).
    Where it raises (a key its data lacks, under StrictUndefined) the page shows a note in its place and a
    warning names the template: a plugin's bug costs its own view, not the site, which is written after every
    run was verified and ranked."""
    template = view.html
    try:
        return Markup(context.environment.get_template(template).render(
            {**context.get_all(), "name": name, "view": view, **variables}))
    except Exception as exc:  # noqa: BLE001 - a plugin's template, whatever it raises
        problem = f"leaderboard section '{name}': its HTML view {template} failed ({type(exc).__name__}: {exc})"
        warnings.warn(f"{problem}; fix that template, or disable its plugin", RuntimeWarning, stacklevel=2)
        return Markup('<p class="note">{}: left out here (its data is in leaderboard.json).</p>\n').format(problem)


def _seed_plot(task: BoardTask) -> Markup:
    metric = task.primary_metric or ""  # a built task names its primary metric
    series = [
        {"label": e.model, "values": [v for v in e.per_seed.values() if v is not None],
         "mean": e.metrics[metric].mean, "std": e.metrics[metric].std or 0.0}
        for e in task.entries if e.metrics[metric].mean is not None
    ]
    return Markup(svg.seed_strip(series, axis_label=metric, title=f"{metric} per seed on {task.name}"))


def _forest_plot(task: BoardTask) -> Markup:
    """The task's forest plot (`svg.forest`): each main-item-set model's Δ to the best with the interval of the
    paired test the models table prints, the best constant answer and the published numbers on the same metric
    (a k-fold group's published number is not a fold's, so it is left out here)."""
    metric = task.primary_metric or ""
    main = [(e, mean) for e in task.entries if e.item_set == 0 and (mean := e.metrics[metric].mean) is not None]
    if not main:
        return Markup("")
    best, best_value = main[0]
    rows = []
    for entry, value in main:
        versus = entry.vs_best or Comparison()
        tip = f"{entry.model}: {metric} {value:.4f}"
        if entry is best:
            tip += " (the best: Δ 0)"
        elif versus.ci_low is not None:
            tip += f", Δ {versus.delta:+.4f} [{versus.ci_low:+.4f}, {versus.ci_high:+.4f}] ({versus.test})"
        else:
            tip += f", Δ {value - best_value:+.4f}, no interval" + (f": {versus.error}" if versus.error else "")
        with_ci = entry is not best and versus.ci_low is not None
        rows.append({"label": entry.model, "delta": versus.delta if with_ci else value - best_value,
                     "low": versus.ci_low if with_ci else None, "high": versus.ci_high if with_ci else None,
                     "tip": tip})
    constant = task.item_sets[0].constant.value if task.item_sets[0].constant is not None else None
    published = [{"label": p.system, "delta": p.fraction - best_value,
                  "tip": f"{p.system}: {p.fraction:.4f}, published, protocol {p.protocol}"
                         + (f" ({p.differences})" if p.differences else "")}
                 for p in task.published if p.metric == metric and not p.for_group and p.fraction is not None]
    return Markup(svg.forest(rows, published, constant=None if constant is None else constant - best_value,
                             axis_label=f"Δ {metric} to the best ({best.model}, {best_value:.4f})",
                             title=f"Δ {metric} to the best on {task.name}, with 95 % intervals"))


def _heatmap(board: Board, cells: dict[tuple[str, str], Entry]) -> Markup:
    models = [m.name for m in board.models]
    by_name = {t.name: t for t in board.tasks}
    families = []
    for fam in board.families:
        tasks = []
        for name in fam.tasks:
            metric = by_name[name].primary_metric or ""
            values = {}
            for model in models:
                entry = cells.get((model, name))
                if entry is not None:
                    mean = entry.metrics[metric].mean
                    where = f"first {entry.n_items} items, partial" if entry.partial else f"{entry.n_items} items"
                    values[model] = (entry.heat, f"{model} on {name}: {metric} {numbers.number(mean)} ({where})")
            tasks.append((name, values))
        families.append((fam.title or "", tasks))  # a built family has its title
    return Markup(svg.heatmap(models, families, title="primary metric per task and model"))


def _gap_pairs(board: Board, slugs: dict[str, str | None]) -> list[dict]:
    pairs: dict[tuple[str, str], list[GapRow]] = {}
    for row in board.gaps.rows if board.gaps else []:
        if row.reference_task is not None and row.subset_task is not None:  # a built gap row names both tasks
            pairs.setdefault((row.reference_task, row.subset_task), []).append(row)
    return [
        {
            "reference": reference, "subset": subset, "reference_slug": slugs[reference], "subset_slug": slugs[subset],
            "rows": rows,
            "plot": Markup(svg.dumbbell(
                [{"label": r.model, "a": r.accuracy_a, "b": r.accuracy_b} for r in rows],
                name_a=reference, name_b=subset, axis_label="accuracy",
                title=f"accuracy on {reference} and on {subset} per model",
            )),
        }
        for (reference, subset), rows in sorted(pairs.items(), key=lambda pair: not _some_gap(pair[1]))
    ]


def _some_gap(rows: list[GapRow]) -> bool:
    """Whether some model scores differently on the pair's two subsets: the gaps page's stated order puts these
    pairs first (a stable sort), before pairs where every model ties (0.5 against 0.5: nothing to read)."""
    return any(row.accuracy_a != row.accuracy_b for row in rows)


def write(board: Board, out_dir: Path) -> list[Path]:
    """Write the site into ``out_dir``; returns the files written."""
    env = _environment()
    written = []

    def render(template: str, target: str, **context) -> None:
        path = out_dir / target
        path.parent.mkdir(parents=True, exist_ok=True)
        root = "../" * target.count("/")
        path.write_text(env.get_template(template).render(board=board, root=root, **context), encoding="utf-8")
        written.append(path)

    assets = out_dir / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    for name in ("site.css", "site.js"):
        shutil.copyfile(HERE / "static" / name, assets / name)
        written.append(assets / name)

    cells = {(e.model, t.name): e for t in board.tasks
             for e in sorted(t.entries, key=lambda e: -(e.item_set or 0))}  # the main item set's entry wins
    by_name = {t.name: t for t in board.tasks}
    env.filters["task_of"] = by_name.__getitem__
    model_columns = {m.name: [r.task for r in m.results] for m in board.models}
    for fam in board.families:
        for col in fam.columns:
            if col.type == "group":
                for member in col.cells:
                    model_columns[member].append(col.name)
    group_cells = {col.name: col.cells for fam in board.families for col in fam.columns if col.type == "group"}
    group_unread = {(g.group, g.model): rate_of(g.aggregate) for g in board.groups}
    render("index.html", "index.html", cells=cells, per_table=PER_TABLE, model_columns=model_columns,
           heatmap=_heatmap(board, cells), group_cells=group_cells, group_unread=group_unread,
           model_slugs={m.name: m.slug for m in board.models})
    for task in board.tasks:
        others = [m for m in list(task.entries[0].metrics)[1:] if "/" not in m]  # breakdowns stay in the JSON
        render("task.html", f"tasks/{task.slug}.html", task=task, other_metrics=others, plot=_seed_plot(task),
               forest=_forest_plot(task))
    for model in board.models:
        render("model.html", f"models/{model.slug}.html", model=model)
    render("gaps.html", "gaps.html", pairs=_gap_pairs(board, {t.name: t.slug for t in board.tasks}))
    render("papers.html", "papers.html")
    return written
