"""``leaderboard.md``: the leaderboard as Markdown, for reading in a repository browser or a pull request.

Text from run files is escaped with Markdown's own backslash escapes, not HTML entities: renderers pass raw
HTML through (so ``<`` must not open a tag) and a ``|`` would break a table, while an entity such as
``&#x27;`` would show up literally wherever the file is read as plain text.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

from ..calibration_misses import PREFIX
from ..compare import format_ci, format_mde, format_p
from ..paper_views import MISSING
from ..unread import LEGEND, beside, rate_of
from .numbers import mean_std, signed
from .schema import (Board, BoardTask, Caveats, Cell, Comparison, Entry, Gaps, GroupCaveats, HeadlineCell,
                     HeadlineColumn, ProtocolSource, PublishedCell, PublishedNumber, SmokeRun)
from .sections import view_function
from .site_files import MARK

#: Tasks per overview table: a family with more tasks gets several tables, so none is wider than a page.
COLUMNS_PER_TABLE = 8
_SPECIAL = re.compile(r"([\\`*\[\]<>&|])")


def escape(text) -> str:
    return _SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def table(headers: list, rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(escape(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines.extend("| " + " | ".join(escape(c) for c in row) + " |" for row in rows)
    return lines + [""]


def _mark(entry: Entry) -> str:
    if entry.partial:
        mark = f" ◐ n={entry.n_items}"
    elif entry.star:
        mark = " ★"
    else:
        mark = " ▼" if entry.vs_best is not None and entry.vs_best.significant else ""
    marks = entry.marks
    if marks is not None:
        mark += " (unverified)" if marks.unverified else ""
        mark += " (unchecked)" if marks.unchecked else ""
        if marks.constant:
            mark += " (constant)"
        elif marks.trivial is not None and marks.trivial.chance:
            tested = marks.trivial.tested_metric
            mark += f" (≈ chance on {tested})" if tested else " (≈ chance)"
    reproduction = entry.verified.reproduction if entry.verified is not None else None
    if reproduction is not None:
        mark += f" ({reproduction.mark})"
    return mark + _caveat_marks(entry.caveats)


def _caveat_marks(caveats: Caveats | GroupCaveats | None) -> str:
    """The caveats of `caveats.py` (an entry's or a group cell's) as short marks (their text: the task's "Read with
    care" list)."""
    if caveats is None:
        return ""
    stability = caveats.stability
    unstable, skewed = (stability.unstable, stability.skewed) if stability is not None else (None, None)
    found = [name for name, on in (("below chance", caveats.below_chance), ("collapsed fit", caveats.collapsed_fit),
                                   ("unstable", unstable), ("constant-like", skewed),
                                   ("lenient parser", caveats.lenient_parser))
             if on]
    return "".join(f" ({name})" for name in found)


def _constant(entry: Entry) -> str:
    """The best constant answer's value beside a run's number (its ≈ chance baseline on the same items)."""
    trivial = entry.marks.trivial if entry.marks is not None else None
    value = trivial.baseline_value if trivial is not None else None
    return "" if value is None else f" [const {value:.4f}]"


def _group_constant(caveats: GroupCaveats | None) -> str:
    """A k-fold group's constant answer beside its mean: the folds' mean and the folds at chance."""
    constant = caveats.constant if caveats is not None else None
    if not constant:
        return ""
    near = f", ≈ chance in {constant.near} of {constant.folds} folds" if constant.near else ""
    return f" [const {constant.value:.4f}{near}]"


def _calibration(vs_best: Comparison | None) -> list[str]:
    """The comparison's notes that its procedure misses a calibration target on this task's shape (marked †)."""
    return [n for n in vs_best.notes if n.startswith(PREFIX)] if vs_best is not None else []


def _seeds(entry: Entry) -> str:
    """The seed count, and the protocol's when the run has fewer (partial on seeds)."""
    protocol = entry.protocol_seeds or 0
    return f"{len(entry.seeds)}" + (f" of {protocol} (partial)" if protocol > len(entry.seeds) else "")


def _cell(entry: Entry | None, metric: str) -> str:
    if entry is None:
        return MISSING
    mean = entry.metrics[metric].mean
    return (MISSING if mean is None else beside(f"{mean:.4f}", rate_of(entry.metrics))) + _mark(entry) + _constant(entry)


def _overview(board: Board) -> list[str]:
    tasks = {t.name: t for t in board.tasks}
    aggregates = {(g.group, g.model): g.aggregate for g in board.groups}
    cells: dict[tuple[str, str], str] = {}
    for task in board.tasks:
        for entry in sorted(task.entries, key=lambda e: -(e.item_set or 0)):  # the main item set wins
            cells[(entry.model, task.name)] = _cell(entry, task.primary_metric or "")
    headers: dict[str, str] = {}
    for fam in board.families:
        for col in fam.columns:
            name = col.name
            if name is None:  # a built column names its task or group
                continue
            if col.type == "task":
                task = tasks[name]
                headers[name] = f"{task.name} ({task.primary_metric}, n={task.n_items})"
            else:
                headers[name] = f"{name} (mean of {col.members}, {col.metric}, n={col.n_items})"
                for model, g in col.cells.items():
                    rate = rate_of(aggregates.get((name, model)))
                    mean = g.value.mean if g.value is not None else None
                    cells[(model, name)] = ((MISSING if mean is None else beside(f"{mean:.4f}", rate))
                                            + _group_marks(g) + _group_constant(g.caveats))
    out = []
    for fam in board.families:
        out += [f"### {escape(fam.title)}", ""]
        for start in range(0, len(fam.columns), COLUMNS_PER_TABLE):
            chunk = [c.name for c in fam.columns[start:start + COLUMNS_PER_TABLE] if c.name is not None]
            models = [m.name for m in board.models if any((m.name, c) in cells for c in chunk)]
            rows = [[m] + [cells.get((m, c), MISSING) for c in chunk] for m in models]
            out += table(["model"] + [headers[c] for c in chunk], rows)
    return out


def _group_marks(g: Cell) -> str:
    """A k-fold group cell's marks: ★, (≈) where it cannot hold one, its caveats."""
    return ((" ★" if g.star else "") + ("" if g.star or g.eligible is not False else " (≈)")
            + _caveat_marks(g.caveats))


def _headline(board: Board) -> list[str]:
    """The headline table (`headline.py`): our rows with each cell's interval and seeds, the marks the overview
    gives the same entry or group cell, then the published rows, never ranked, with their protocol notes."""
    h = board.headline
    if h is None:
        return []
    entries = {(e.model, t.name): e for t in board.tasks
               for e in sorted(t.entries, key=lambda e: -(e.item_set or 0))}  # the main item set wins
    groups = {c.name: c.cells for fam in board.families for c in fam.columns if c.type == "group"}

    def ours(model: str | None, column: HeadlineColumn, c: HeadlineCell) -> str:
        if column.type == "task":
            entry = entries[(model or "", column.name or "")]  # a headline row and column are named
            marks, constant = _mark(entry), _constant(entry)
        else:
            g = groups[column.name][model or ""]
            marks = _group_marks(g) + _GROUP_REPRODUCTION.get(c.reproduction or "", "")
            constant = _group_constant(g.caveats)
        interval = "no interval" if c.ci_low is None else f"[{c.ci_low:.4f}, {c.ci_high:.4f}]"
        more = c.seeds is not None and (c.protocol_seeds or 0) > c.seeds
        seeds = f"{c.seeds}" + (f" of {c.protocol_seeds}" if more else "")
        value = beside(f"{c.value:.4f}", c.unread)
        return f"{value}{marks} {interval}, {seeds} seed{'s' if seeds != '1' else ''}{constant}"

    def published(c: PublishedCell) -> str:
        return (f"{c.value:.4f}" + (" SOTA" if c.best else "") + f" (protocol {c.protocol}"
                + (f", {c.answering}" if c.answering else "") + (f"; {'; '.join(c.caveats)}" if c.caveats else "")
                + (f" [{c.note}]" if c.note else "") + ")")

    headers = ["model"] + [f"{c.name} ({c.metric or 'no runs'}"
                           + (f", mean of {c.members} folds" if c.type == "group" else "")
                           + (f", n={c.n_items})" if c.n_items else ")") for c in h.columns]
    rows: list[list] = [[row.label or row.model] + [ours(row.model, col, row.cells[col.name]) if col.name in row.cells
                           else MISSING for col in h.columns] for row in h.rows]
    rows += [[f"published: {p.system}"] + [published(p.cells[col.name]) if col.name in p.cells
                                           else MISSING for col in h.columns] for p in h.published]
    notes = [f"[{c.note}] {p.system} on {name}, protocol {c.protocol}: {c.differences} "
             f"({c.citation}; {c.source})" for p in h.published for name, c in p.cells.items() if c.note]
    return (["## Headline benchmarks", "",
             f"The field's headline benchmarks (the `{h.group}` group, tasks/headline.yaml) at their papers' "
             "protocols: the primary metric (mean over seeds; a k-fold group: its folds' mean), its 95 % interval (t "
             "over seeds, or a percentile bootstrap over items for one seed), the seeds run, the marks of the overview "
             "below and [const x], the best constant answer on the same items. Rows marked published: are the cited "
             "papers' numbers on their own items and predictions, never ranked; SOTA marks the best published number "
             "of a column, whatever its protocol. " + escape(_reproduction_line(board)), ""]
            + table(headers, rows) + [escape(n) for n in sorted(notes, key=lambda n: int(n[1:n.index("]")]))]
            + ([""] if notes else []) + [line for n in h.notes for line in (escape(n), "")] + _smoke(h.smoke))


#: A k-fold group's headline cell: reproduced only where every member run was (`headline._reproduction`).
_GROUP_REPRODUCTION = {"reproduced": " (reproduced)", "not_reproducible": " (not reproducible here)"}


def _reproduction_line(board: Board) -> str:
    """Whether the numbers were reproduced: the board's rule, with K and the draw's key (`board._reproduction`)."""
    found = board.reproduction
    if found is None:  # a board written before reproduction was recorded
        return "Reproduction: not recorded by this board."
    return f"Reproduction: {found.rule}" + (f" (key {found.key})." if found.tried else ".")


def _smoke(runs: list[SmokeRun]) -> list[str]:
    """The headline tasks' smoke runs, named under the table and never in it (the overview marks them ◐)."""
    if not runs:
        return []
    named = "; ".join(f"{r.label or r.model} on {r.task} ({r.n_items} items, "
                      f"{MISSING if r.value is None else beside(f'{r.value:.4f}', r.unread)})" for r in runs)
    return [escape(f"Smoke runs (--limit: part of a test split), not in the table: {named}. They are in the overview "
                   "below, marked ◐."), ""]


def _published(rows: list[PublishedNumber]) -> list[str]:
    def ours(row: PublishedNumber) -> str:
        found = row.ours if isinstance(row.ours, list) else [row.ours] if row.ours else []
        return "; ".join(f"{o.value:.4f} ({signed(o.delta)}, {o.model})" for o in found) or MISSING

    return table(["system", "value", "metric as published", "protocol", "ours (Δ)", "citation"],
                  [[f"{r.system}" + (f" (for {r.task})" if r.for_group else ""),
                    f"{r.fraction:.4f}" + (f" ({'; '.join(r.caveats)})" if r.caveats else ""),
                    r.definition, f"{r.protocol}" + (f", {r.answering}" if r.answering else "")
                    + (f": {r.differences}" if r.differences else ""), ours(r),
                    f"{r.citation}; {r.source}"] for r in rows])


def _group_stability(caveats: GroupCaveats | None) -> str:
    stability = caveats.stability if caveats is not None else None
    if stability is None:
        return MISSING
    return f"{stability.per_seed_text}" + (": " + "; ".join(stability.marks) if stability.marks else "")


def _task_facts(task: BoardTask) -> list[str]:
    """The protocol citation (the task's as it is here, `caveats._protocol_source`) and the best constant answer."""
    source = task.protocol_source or ProtocolSource(text=task.source, recorded=None)
    out = [f"Protocol source: {escape(source.text or MISSING)}"
           + (f" (the runs recorded an earlier wording, same config hash: {escape(source.recorded)})"
              if source.recorded else "")]
    constants = [f"{s.constant.value:.4f} ({escape(s.constant.answer)}"
                 + (f", {escape(s.label)})" if len(task.item_sets) > 1 else ")")
                 for s in task.item_sets if s.constant]
    if constants:
        out.append(f"Best constant answer on the same items and golds: {'; '.join(constants)}.")
    return out + [""]


def _datasets(task: BoardTask) -> list[str]:
    lines = []
    for d in task.datasets:
        lines.append(f"- {escape(d.name)} ({escape(', '.join(d.roles))}): licence {escape(d.licence or 'not stated')}"
                     + (f"; cite: {escape(d.citation)}" if d.citation else ""))
    return lines + [""]


def render(board: Board) -> str:
    correction = board.correction.name if board.correction is not None else None
    out = [f"# {escape(board.title)}", "", *_headline(board)]
    out += [
        f"{board.n_runs} runs ({board.n_partial_runs} partial), the latest from {board.latest_run}; "
        f"metabench {board.metabench}. ★ best model of the task on its whole test split (ties share it); ▼ "
        f"significantly worse than the best of the same items ({correction}-adjusted p ≤ {board.alpha} within the "
        "task; paired test on the shared items); ◐ n=N: a partial run (--limit) over the first N test items, ranked "
        "only against runs over the same items and left out of the paper tables. Values: mean over seeds.", "",
        f"Degenerate runs (α = {board.alpha}): {board.marks_rule}", "",
        f"Verification: {board.verification}", "",
        escape(_reproduction_line(board)), "",
        *(f"{name.capitalize()}: {rule}" for name, rule in board.caveat_rules.items()),
        *([""] if board.caveat_rules else []),
        "Beside a value, [const x] is the best constant answer's score on the same items (a k-fold group: its folds' "
        "mean, and the folds where the model is ≈ chance).", "",
        *([escape(LEGEND) + ".", ""] if any(rate_of(e.metrics) is not None for t in board.tasks for e in t.entries)
          else []),
        "## Overview", "",
    ]
    out += _overview(board)
    if board.groups:
        out += ["## Group means", "", "Unweighted mean of the member tasks per seed (k-fold cross-validation, the "
                "papers' average rows), then mean ± std over seeds; complete runs only.", ""]
        out += table(["group", "model", "metric", "value", "members", "items", "best constant answer, same items",
                       "per seed; degenerate under the recipe?"],
                      [[g.group, g.model, g.primary_metric, mean_std(g.aggregate.get(g.primary_metric or "")),
                        g.members, g.n_items, _group_constant(g.caveats).strip(" []") or MISSING,
                        _group_stability(g.caveats)] for g in board.groups])

    for task in board.tasks:
        sets = "; ".join(f"{s.label}: {s.models} model(s)" for s in task.item_sets)
        out += [f"## {escape(task.name)}", "",
                f"Primary metric {escape(task.primary_metric)}; {escape(sets)}. Datasets:", ""]
        out += _datasets(task)
        out += _task_facts(task)
        rows = []
        for e in task.entries:
            v = e.vs_best or Comparison()
            rows.append([
                e.rank, e.model + _mark(e), mean_std(e.metrics[task.primary_metric or ""]), e.n_items,
                _seeds(e), f"not comparable: {v.error}" if v.error is not None else signed(v.delta),
                format_ci(v.ci_low, v.ci_high), format_mde(v.mde), v.test or MISSING,
                format_p(v.p_adjusted) + (" †" if _calibration(v) else ""),
            ])
        out += table(["rank", "model", task.primary_metric, "n", "seeds", "Δ vs best", "CI", "MDE", "test",
                       f"p ({correction})"], rows)
        notes = dict.fromkeys(n for e in task.entries for n in _calibration(e.vs_best))
        out += [f"† {escape(n)}" for n in notes] + ([""] if notes else [])
        careful = [(e.model, e.caveats.notes) for e in task.entries if e.caveats is not None and e.caveats.notes]
        if careful:
            out += ["Read with care:", ""] + [f"- {escape(model)}: {escape('; '.join(notes))}"
                                              for model, notes in careful] + [""]
        if task.published:
            out += ["Published, not re-run here (never ranked with the runs above):", ""]
            out += _published(task.published)

    if board.published_groups:
        out += ["## Published results for groups", "", "Published, not re-run here (never ranked):", ""]
        out += _published(board.published_groups)

    out += ["## Rejected runs", ""]
    if board.rejected_runs:
        out += ["Not ranked anywhere: these runs failed verification (paths relative to the runs folder).", ""]
        out += table(["run", "task", "model", "why"],
                      [[r.run, r.task, r.model, "; ".join(r.reasons or [])] for r in board.rejected_runs])
    else:
        out += ["None: every run passed verification.", ""]
    if board.unverified_runs:
        out += ["## Unverified runs", "", "Not checked against the data their task names (it is not available where "
                "this board was built): ranked below every verified run, never given the ★.", ""]
        out += table(["run", "task", "model", "why"],
                      [[r.run, r.task, r.model, r.reason] for r in board.unverified_runs])

    gaps = board.gaps or Gaps()
    if gaps.rows:
        out += ["## Metaphor gaps", "",
                f"Accuracy on B minus accuracy on A, independent items: Fisher's exact test per seed, {correction}-adjusted.", ""]
        rows = [[r.model, r.reference_task, r.subset_task, f"{r.accuracy_a:.4f}", f"{r.accuracy_b:.4f}",
                 signed(r.gap), ", ".join(format_p(seed.p_adjusted) for seed in r.seeds),
                 f"{r.significant_seeds} of {len(r.seeds)}"] for r in gaps.rows]
        out += table(["model", "A", "B", "accuracy A", "accuracy B", "gap", "p Fisher adj (per seed)", "significant seeds"], rows)

    paired = gaps.paired.rows if gaps.paired is not None else []
    controlled = gaps.controls.rows if gaps.controls is not None else []
    if paired:
        out += ["## Paired metaphor effects", "",
                f"PAIRED: the same items with the metaphor (original) and as a literal paraphrase; effect = original − "
                f"paraphrase over the shared ids; McNemar (one seed) or paired t (seeds), {correction}-adjusted.", ""]
        rows = [[f"{pair.model}" + (" (partial run)" if pair.partial else ""), pair.original_task,
                 pair.paraphrase_task, pair.n_items, f"{pair.accuracy_original:.4f}",
                 f"{pair.accuracy_paraphrase:.4f}", signed(pair.effect),
                 format_ci(pair.ci_low, pair.ci_high), pair.test, format_p(pair.p_adjusted)] for pair in paired]
        out += table(["model", "original", "paraphrase", "shared items", "acc original", "acc paraphrase", "effect",
                       "CI", "test", "p adj"], rows)
    if controlled:
        out += ["## Surface controls", "",
                "Does the metaphor effect survive once premise–hypothesis overlap and length are controlled? "
                "(logistic regression of correctness on metaphor + overlap + length)", ""]
        rows = [[f"{control.model}" + (" (partial run)" if control.partial else ""), control.metaphor_task,
                 control.literal_task, control.design, control.regression.n if control.regression else None,
                 escape(control.regression.verdict if control.regression else ""),
                 escape(control.regression_gold.verdict if control.regression_gold else "")]
                for control in controlled]
        out += table(["model", "metaphor side", "literal side", "design", "n", "survives?", "with gold label too"], rows)

    for name, view in sorted(board.section_views.items()):  # registered sections' own tables (e.g. hardness)
        if view.markdown is not None:
            out += _section_lines(board, name, view.markdown)
    out += ["## Paper tables", "", "Rows marked paper: are the papers' printed numbers for their own models; metabench "
            "rows use complete runs only (the papers print whole test splits).", ""]
    for t in board.paper_tables:
        out += [f"### {escape(t.paper)}, {t.number}: {escape(t.title)}", ""]
        printed = [[*r.labels, ("paper: " if r.source == "paper" else "") + f"{r.model}", *r.cells] for r in t.rows]
        out += table(t.header, printed)
        out += [f"Note: {escape(n)}" for n in t.notes] + ([""] if t.notes else [])
        if t.missing_tasks:
            out += [f"Only partial runs so far for: {escape(', '.join(t.missing_tasks))}.", ""]
    return "\n".join(out)


def write(board: Board, out_dir: Path) -> list[Path]:
    path = out_dir / "leaderboard.md"
    # the generator mark (a comment no renderer shows): a later build replaces only files carrying it (site_files)
    path.write_text(f"<!-- {MARK} -->\n" + render(board), encoding="utf-8")
    return [path]


def _section_lines(board: Board, name: str, spec: str) -> list[str]:
    """A registered section's Markdown view, or, where it raises, a line saying so: a plugin's bug costs its
    own tables in leaderboard.md (they are still in leaderboard.json and on the site), not the whole build,
    and the warning names the function to fix."""
    try:
        lines = view_function(spec)(board, name)
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            raise TypeError(f"returned {type(lines).__name__}, not a list of lines (str)")
        return lines
    except Exception as exc:  # noqa: BLE001 - a plugin's view, whatever it raises
        problem = f"leaderboard section '{name}': its Markdown view {spec} failed ({type(exc).__name__}: {exc})"
        warnings.warn(f"{problem}; fix that function, or disable its plugin", RuntimeWarning, stacklevel=2)
        return [f"*{escape(problem)}: its tables are left out here (they are in leaderboard.json).*", ""]
