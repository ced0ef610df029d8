"""The leaderboard's content: computed once from the runs, then written by every reporter (md, json, html).

The board is a typed `schema.Board` (``leaderboard.json`` is exactly its JSON), so a third-party reporter
registered through ``metabench_register_reporters`` gets the same numbers as the built-in ones and never
needs to know how they were computed. It is assembled here as the JSON's dict by the builders (this module,
`caveats`, `headline`, `sections`) and validated once at the end: the builders are the board's writers, the
reporters its readers.

Per task, runs are split by the items they scored: the whole test split, or the first N items of a run
with ``--limit`` (a *partial* run). Models are ranked by the primary metric (mean over seeds) only against
runs over the same items, and every model is tested against the best one of its item set with the test
`compare` would choose; p-values are corrected within the task (the family a reader scans when asking "who
is tied with the best here?"). Only the task's main item set (the whole test split when any run covers it)
awards the ★, so a 50-item run never shares it with a full run; partial runs are marked and stay out of
the paper views.

Everything comes from the run files: datasets credited (with licences and citations), k-fold and paper
"average" groups, paper-view cells and task families (from the tags) are read from ``results.json``, so a
board builds where the plugin that made a run is not installed. Runs written before metabench recorded
these facts fall back to the registry for their datasets and to the task YAML for their paper-view cells.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields as fields_of
from pathlib import Path

from ...version import __version__
from ...config.index import TaskIndex
from ...errors import MetabenchError
from ...registry import Registry
from ...task_facts import datasets_used
from ..compare import CORRECTIONS, Options, adjust, compare_pair
from ..analyses.gaps import gap_pairs, subset_gap
from ..groups import group_rows
from ..analyses.metaphor_effects import control_rows, paired_rows
from ...config.paper_layouts import registered_views
from ..paper_views import Cells, fill
from ...runs.stored import Run, by_task
from ..published import Published, for_task, load_published
from ..trivial import RULE, assessment
from ..unread import rate_of
from ...runs.verified_metrics import VerifiedMetrics
from ...runs.verify import CHECKS, Verdict, verify_runs
from .caveats import annotate, entry_caveats
from .headline import headline
from .progress import Progress
from .run_facts import RunFacts
from .schema import (Board, BoardModel, BoardReproduction, BoardTask, Cell, Column, Comparison, ConstantSeed,
                     ControlsTable, Correction, DatasetCredit, Entry, Family, Gaps, GapRow, GapSeed, Group, ItemSet,
                     Marks, ModelResult, Number, OurValue, PairedTable, PaperTable, PublishedNumber, RunNote, Summary,
                     Trivial, Verified)
from .sections import BoardInputs, build_sections, overview_families
from .task_workers import run_chunks

SCHEMA_VERSION = 3

#: Task families of the overview, in display order, with the tags that place a task in them; the paper families
#: add theirs with their board sections (``family=``, `sections.overview_families`), shown after these. A task
#: joins the first paper family one of whose tags it carries (their tasks are tagged detection too), else the
#: first family in ``FAMILY_MATCH_ORDER`` (``newsmet_det`` is tagged newsmet and detection: NewsMet); a task with
#: none of these tags is "other".
FAMILIES = {
    "detection": ("Metaphor detection", ("detection",)),
    "nli": ("NLI", ("nli", "interpretation")),
    "paraphrase": ("Paraphrase", ("munch", "paraphrase", "metaphor_llm_paraphrases")),
    "newsmet": ("NewsMet", ("newsmet",)),
}
FAMILY_MATCH_ORDER = ("newsmet", "paraphrase", "nli", "detection")
OTHER = {"other": ("Other tasks", ())}


def family(tags, families: dict[str, tuple[str, tuple[str, ...]]]) -> str:
    """The overview family of a task with these tags, among ``families`` (built-in and registered)."""
    for key in [k for k in families if k not in FAMILIES] + list(FAMILY_MATCH_ORDER):
        if set(families[key][1]) & set(tags):
            return key
    return "other"


def slug(name: str) -> str:
    """A page file name for a task or model: lowercase ASCII, with a hash suffix when the name had to change."""
    base = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")[:60] or "x"
    return base if base == name else f"{base}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def _item_set(run: Run) -> tuple:
    """Which items a run scored, as far as run files tell: the whole test split, or the first N of it."""
    return (run.partial, run.record.n_items)


def latest_runs(runs: list[Run]) -> tuple[list[Run], list[RunNote]]:
    """One run per (task, model, item set): the newest by ``created``; the others are listed as ignored."""
    chosen: dict[tuple, Run] = {}
    for run in runs:
        key = (run.record.task.name, run.record.model.spec, _item_set(run))
        if key not in chosen or (run.record.created or "") > (chosen[key].record.created or ""):
            chosen[key] = run
    kept = list(chosen.values())
    ignored = [RunNote(run=str(r.path), reason=f"a newer run of task '{r.record.task.name}' with model '{r.record.model.spec}' on the same "
                                               "items is shown") for r in runs if all(r is not k for k in kept)]
    return kept, ignored


def _datasets(registry: Registry, run: Run) -> list[DatasetCredit]:
    """The datasets the run recorded; for older runs, the ones its recorded config names, from the registry."""
    if run.record.datasets is not None:
        return [DatasetCredit.model_validate(dataset.as_json()) for dataset in run.record.datasets]
    from ...config.schema import TaskConfig
    from ...config.validate import role_slices

    try:
        return [DatasetCredit.model_validate(d)
                for d in datasets_used(registry, role_slices(TaskConfig.model_validate(run.record.task.config.as_json())))]
    except ValueError:
        return [DatasetCredit(citation="", licence="", name=run.record.task.dataset, roles=["test"])]


def _bindings(registry: Registry, runs: list[Run]) -> list[tuple[str, dict]]:
    """(task, paper-view binding) of every run: as recorded, or for older runs from the task's YAML here."""
    out: list[tuple[str, dict]] = []
    older: list[str] = []
    for run in runs:
        if run.record.paper_view is None:
            older.append(run.record.task.name)
        else:
            out.extend((run.record.task.name, binding.as_json()) for binding in run.record.paper_view)
    if older:
        tasks = TaskIndex(registry).tasks
        out.extend((name, b.model_dump(mode="json")) for name in dict.fromkeys(older) if name in tasks
                   for b in tasks[name].config.metadata.paper_views())
    return out


def _budget_labels(runs: list[Run]) -> dict[str, str]:
    """Models whose runs trained under budget knobs, named with them: a paper view marks their numbers partial."""
    return {run.record.model.spec: f"{run.record.model.spec} (partial: budget {', '.join(f'{k}={v}' for k, v in run.record.budget.items())})"
            for run in runs if run.record.budget}


def _entry(run: Run, metric: str, item_set: int, facts: RunFacts) -> Entry:
    """A ranked run's entry, before its rank, ★, comparison and heat (`_ranked`, `_heat`)."""
    aggregate = run.record.metrics.aggregate
    names = [metric] + sorted(n for n in aggregate if n != metric)
    return Entry(
        model=run.record.model.spec, model_slug=slug(run.record.model.spec), run=str(run.path), seeds=run.record.seeds,
        protocol_seeds=run.record.protocol_seeds, n_items=run.record.n_items, partial=run.partial, item_set=item_set,
        metrics={n: Summary.model_validate(aggregate[n].as_json()) if n in aggregate else Summary(mean=None, n=0, std=None)
                 for n in names},
        per_seed={str(s): v for s, v in zip(run.record.seeds, run.record.per_seed(metric)) if v is not None},
        vs_best=None, verified=facts.verified, marks=facts.marks, caveats=facts.caveats)


def _item_sets(group: list[Run]) -> list[list[Run]]:
    """The task's runs split by item set: whole-split runs first, then partial runs, larger sets first."""
    sets: dict[tuple, list[Run]] = {}
    for run in group:
        sets.setdefault(_item_set(run), []).append(run)
    return [sets[key] for key in sorted(sets, key=lambda k: (k[0], -k[1]))]


@dataclass(frozen=True)
class _Ranking:
    """What ranking a task's runs reads: the task's metric, direction and family, and the board's settings."""

    registry: Registry
    metric: str
    higher: bool
    family: str
    correction: str
    alpha: float
    options: Options
    verdicts: dict[int, Verdict]


def _facts(ranking: _Ranking, run: Run) -> RunFacts:
    """The run's facts (`run_facts`), made once here: its verification, its marks and its caveats. A run that could
    not be checked against the data (`verify_data`), whose ``metric`` could not be rebuilt from its golds and
    predictions (*unchecked*) or, on a board built with ``--reproduce``, that was not reproduced here may not hold
    the ★: its number is only its own account."""
    verdict = ranking.verdicts.get(id(run))
    found = assessment(ranking.registry, run, ranking.options, ranking.alpha)
    unverified = verdict.unverified if verdict is not None else None
    unchecked = verdict.unchecked_note(ranking.metric) if verdict is not None else None
    tried = verdict is not None and verdict.reproduction is not None
    unproven = not_reproduced(run, ranking.verdicts)
    marks = Marks(constant=found.is_constant,
                  constant_seeds=[ConstantSeed.model_validate(seed) for seed in found.constant_seeds],
                  trivial=Trivial.model_validate(found.trivial),
                  eligible=found.eligible and unverified is None and unchecked is None and not unproven,
                  unverified=unverified, unchecked=unchecked)
    if tried:  # never tried (a board built without --reproduce): left out, read as None
        marks.reproduced = not unproven
    return RunFacts(run=str(run.path), verified=Verified.model_validate(verdict.summary()) if verdict else None,
                    marks=marks, caveats=entry_caveats(run, found, marks, run.record.per_seed(ranking.metric),
                                                       ranking.family))


def _ranked(ranking: _Ranking, runs: list[Run], item_set: int) -> list[Entry]:
    """Entries of one item set, ranked, each tested against the set's best run and carrying its facts (`_facts`:
    its marks against the task's best trivial baseline, `trivial`); the ★ goes to the best run that is neither
    constant nor ≈ chance. Runs whose number is only their own account (`_facts`) come after every checked run."""
    metric, facts = ranking.metric, {id(run): _facts(ranking, run) for run in runs}

    def sort_key(run: Run):
        mean, marks = run.record.mean(metric), facts[id(run)].marks
        return (marks.unverified is not None or marks.unchecked is not None, facts[id(run)].unproven, mean is None,
                -(mean or 0.0) if ranking.higher else (mean or 0.0), run.record.model.spec)

    ordered = sorted(runs, key=sort_key)
    entries = [_entry(run, metric, item_set, facts[id(run)]) for run in ordered]
    best = ordered[0]
    comparisons = []
    for run, entry in zip(ordered[1:], entries[1:]):
        try:
            comparison = compare_pair(ranking.registry, best, run, metric, ranking.options)
        except MetabenchError as exc:
            entry.vs_best = Comparison(error=exc.message)
            continue
        comparisons.append((entry, comparison))
    adjust([c for _, c in comparisons], ranking.correction)
    for entry, c in comparisons:
        entry.vs_best = Comparison(
            test=c.test, delta=c.delta, ci_low=c.ci_low, ci_high=c.ci_high, ci_method=c.ci_method, mde=c.mde,
            unit=c.unit, pvalue=c.pvalue, p_adjusted=c.p_adjusted, notes=c.notes,
            significant=c.p_adjusted is not None and c.p_adjusted <= ranking.alpha and c.drop > 0)
    _rank(entries, metric, [facts[id(run)].unproven for run in ordered])
    crowned = min((e.rank for e in entries if _marks(e).eligible and e.rank is not None), default=None)
    for entry in entries:
        entry.star = item_set == 0 and _marks(entry).eligible and entry.rank == crowned
    return entries


def _item_set_label(run: Run) -> str:
    """What a set of runs was scored on: "all N" only where the split's size is known (from the data, else the
    run's record) and the run scored all of it; a run older than that record, read without its data, says its
    count without claiming the whole split (#35)."""
    if run.partial:
        return f"first {run.record.n_items} test items (runs with --limit: {run.record.n_items} of {run.test_split_size or '?'})"
    if run.test_split_size == run.record.n_items:
        return f"all {run.record.n_items} test items"
    return f"{run.record.n_items} test items (the runs do not record the split's size)"


def ranked_by(registry: Registry, name: str, first: Run) -> tuple[str, bool]:
    """The metric a task is ranked by and its direction, from the task's definition, never from a run's say
    (`task.primary_metric` and `higher_is_better` sit outside the hashed config): the task's config as it is
    here, else (its plugin not installed) the run's hash-checked copy, which verification holds the recorded
    primary metric to (`verify._ranking_problem`); the direction the metric is registered with here, else the
    run's record, the only account there is of a metric no installed plugin defines."""
    task = TaskIndex(registry).tasks.get(name)
    metric = task.config.primary if task is not None else first.record.primary_metric
    registered = metric.split("/", 1)[0].split("[", 1)[0]  # per_class/x/f1, recall_at_k[k=5]: by registered name
    if registry.has("metric", registered):
        return metric, bool(registry.get("metric", registered).meta.get("higher_is_better", True))
    return metric, first.record.higher_is_better_for(metric)


def _task(work: _TaskWork, name: str, group: list[Run], verdicts: dict[int, Verdict]) -> BoardTask:
    first = group[0]
    metric, higher = ranked_by(work.registry, name, first)
    task = first.record.task
    ranking = _Ranking(work.registry, metric, higher, family(task.config.tag, work.families),
                       work.correction, work.alpha, work.options, verdicts)
    sets = _item_sets(group)
    entries = [e for index, runs in enumerate(sets) for e in _ranked(ranking, runs, index)]
    item_sets = [ItemSet(n_items=runs[0].record.n_items, partial=runs[0].partial, models=len(runs),
                         label=_item_set_label(runs[0])) for runs in sets]
    main = [e for e in entries if e.item_set == 0]
    return BoardTask(
        name=name, slug=slug(name), kind=task.kind, dataset=task.dataset, source=task.source,
        version=task.version, config_hash=task.config_hash, primary_metric=metric, higher_is_better=higher,
        n_items=main[0].n_items, partial=main[0].partial, item_sets=item_sets, best=main[0].model,
        family=ranking.family, datasets=_datasets(work.registry, first), entries=entries,
        published=_published(work.published, name, first, metric, main))


def _published(published: list[Published], name: str, run: Run, metric: str, main: list[Entry]) -> list[PublishedNumber]:
    """Published numbers for the task (and its k-fold groups), each beside the best main-set run of ours on
    the same metric: shown, never ranked (their items and predictions are not ours, so nothing is tested)."""
    rows = [PublishedNumber.model_validate(row) for row in for_task(published, name, [g.name for g in run.record.groups])]
    ours = next((e for e in main if _marks(e).eligible), main[0] if main else None)  # the ★ run, if any
    for row in rows:
        if ours is None or row.for_group or row.fraction is None:
            row.ours = None
            continue
        found = ours.metrics.get(row.metric or "")
        mine = found.mean if found is not None else None
        row.ours = None if mine is None else OurValue(model=ours.model, value=mine, delta=mine - row.fraction)
    return rows


def _marks(entry: Entry) -> Marks:
    """An entry's marks: `_entry` gives every entry it builds its marks (the schema allows a read one none)."""
    if entry.marks is None:
        raise AssertionError(f"board entry {entry.model} on {entry.run} was built without its marks")
    return entry.marks


def _seed_mean(values: list[Number | None]) -> Number | None:
    """The mean over a gap's seeds; None where a seed has no value."""
    present = [v for v in values if v is not None]
    return sum(present) / len(values) if len(present) == len(values) and values else None


def not_reproduced(run: Run, verdicts: dict[int, Verdict]) -> bool:
    """On a board built with ``--reproduce``: the run was not reproduced here (its model, checkpoint or data is
    not here). Its number is then only its own account: it is ranked below every reproduced run of its item set
    and never crowned, whatever it claims (a forgery relabelled as a model nobody has would otherwise win)."""
    from ...launch.reproduce import REPRODUCED

    verdict = verdicts.get(id(run))
    found = verdict.reproduction if verdict is not None else None
    return found is not None and found["status"] != REPRODUCED


def _rank(entries: list[Entry], metric: str, unproven: list[bool]) -> None:
    """Competition ranking (1, 2, 2, 4): equal means share a rank; an unverified or unchecked run never shares
    one with a checked run (it is ranked below them all), nor a run not reproduced (``unproven``, on a board
    built with ``--reproduce``) with a reproduced one."""
    previous, rank = object(), 0
    for position, (entry, claim) in enumerate(zip(entries, unproven), 1):
        key = (_marks(entry).unverified is not None or _marks(entry).unchecked is not None, claim,
               entry.metrics[metric].mean)
        if key != previous:
            rank, previous = position, key
        entry.rank = rank


def _models(tasks: list[BoardTask]) -> list[BoardModel]:
    models: dict[str, BoardModel] = {}
    for task in tasks:
        metric = task.primary_metric or ""
        for entry in task.entries:
            model = models.setdefault(entry.model, BoardModel(name=entry.model, slug=entry.model_slug, results=[]))
            result = ModelResult(
                task=task.name, task_slug=task.slug, metric=metric, value=entry.metrics[metric], rank=entry.rank,
                star=entry.star, n_models=sum(e.item_set == entry.item_set for e in task.entries),
                vs_best=entry.vs_best, n_items=entry.n_items, partial=entry.partial, marks=entry.marks,
                caveats=entry.caveats)
            rate = rate_of(entry.metrics)
            if rate is not None:  # absent where the run is not generated
                result.unread = rate
            model.results.append(result)
    return sorted(models.values(), key=lambda m: m.name)


def _families(tasks: list[BoardTask], groups: list[Group], families: dict) -> list[Family]:
    """The overview's sections: task families in display order (empty ones left out), each a list of columns.

    A column is a task, or an ``aggregate: mean`` group (k-fold folds, a paper's average row) that some model
    completed: its members then share one column holding the group mean, so ten TroFi folds read as TroFi.
    The members keep their own pages, and the heat-map shows them one by one.
    """
    by_name = {t.name: t for t in tasks}
    rows: dict[str, list[Group]] = {}
    for row in groups:
        rows.setdefault(row.group or "", []).append(row)
    member_of = {m: name for name, g in rows.items() for m in g[0].member_tasks if m in by_name}
    marks = {(t.name, e.model): e.marks for t in tasks for e in t.entries if e.item_set == 0}
    out = []
    for key, (title, _) in families.items():
        names = [t.name for t in tasks if t.family == key]
        columns, shown = [], set()
        for name in names:
            group = member_of.get(name)
            if group is None:
                columns.append(Column(type="task", name=name))
            elif group not in shown:
                shown.add(group)
                columns.append(_group_column(group, rows[group], bool(by_name[name].higher_is_better), marks))
        if names:
            out.append(Family(key=key, title=title, tasks=names, columns=columns))
    return out


def _group_column(name: str, rows: list[Group], higher: bool, marks: dict[tuple[str, str], Marks | None]) -> Column:
    """A group's overview column: each model's group mean, with heat and ★ among the models that completed it.

    A model's cell may hold the ★ only if none of its member runs is constant and fewer than half of them are
    ≈ chance: folds are small (MOH-X: 64 items), so one fold not beating the trivial baseline significantly
    says little, but a model at chance on most folds is at chance."""
    metric = rows[0].primary_metric or ""
    means = {r.model or "": r.aggregate[metric] for r in rows
             if metric in r.aggregate and r.aggregate[metric].mean is not None}
    value_of = {model: a.mean for model, a in means.items() if a.mean is not None}  # every one (means' filter)
    values = list(value_of.values())
    eligible = {model for model in means if _group_eligible([marks.get((t, model)) for t in rows[0].member_tasks])}
    ranked = [value_of[m] for m in eligible]
    best = (max(ranked) if higher else min(ranked)) if ranked else None
    low, high = (min(values), max(values)) if values else (0.0, 0.0)
    cells = {}
    for model, agg in means.items():
        share = 1.0 if high == low else (value_of[model] - low) / (high - low)
        heat = (share if higher else 1.0 - share) if len(values) > 1 else None
        cells[model] = Cell(value=agg, star=model in eligible and agg.mean == best, heat=heat,
                            eligible=model in eligible)
    return Column(type="group", name=name, metric=metric, members=rows[0].members, n_items=rows[0].n_items,
                  cells=cells)


def _group_ours(groups: list[Group], entry: Published) -> list[OurValue]:
    """Each model's complete group mean beside a published group-level number (e.g. MOH-X 10-fold F1)."""
    return [OurValue(model=g.model, value=found.mean, delta=found.mean - entry.fraction)
            for g in groups if g.group == entry.task
            and (found := g.aggregate.get(entry.metric)) is not None and found.mean is not None]


def _published_group(entry: Published, groups: list[Group]) -> PublishedNumber:
    """A published group-level number with each model's complete group mean beside it (`_group_ours`)."""
    number = PublishedNumber.model_validate(entry.as_dict())
    number.for_group, number.ours = True, _group_ours(groups, entry)
    return number


def _group_eligible(marks: list[Marks | None]) -> bool:
    found = [m for m in marks if m is not None]
    at_chance = sum(m.trivial is not None and m.trivial.chance is True for m in found)
    return (bool(found) and not any(m.constant or m.unverified or m.unchecked or m.reproduced is False
                                    for m in found)
            and at_chance * 2 < len(found))


def _heat(tasks: list[BoardTask]) -> None:
    """Give every main-item-set entry a 0..1 ``heat``: its place between the task's worst and best value
    (1 = best, whichever direction is better), so colours compare models within a task, never across tasks."""
    for task in tasks:
        metric = task.primary_metric or ""
        values = [mean for e in task.entries if e.item_set == 0 and (mean := e.metrics[metric].mean) is not None]
        low, high = (min(values), max(values)) if values else (0.0, 0.0)
        for entry in task.entries:
            mean = entry.metrics[metric].mean
            if entry.item_set != 0 or mean is None or len(values) < 2:
                entry.heat = None  # nothing to place it between
            elif high == low:
                entry.heat = 1.0
            else:
                share = (mean - low) / (high - low)
                entry.heat = share if task.higher_is_better else 1.0 - share


def _gaps(runs: list[Run], correction: str, alpha: float, confidence: float) -> tuple[list[GapRow], list[str]]:
    """Every subset gap (one row per seed) and, per model and task pair, the mean over seeds; the errors."""
    gaps, errors = [], []
    for reference, subset in gap_pairs(runs):
        try:
            gaps.extend(subset_gap(reference, subset, confidence=confidence))
        except MetabenchError as exc:
            errors.append(exc.message)
    adjust(gaps, correction)
    summary: dict[tuple, GapRow] = {}
    for gap in gaps:
        key = (gap.model, gap.reference_task, gap.subset_task)
        summary.setdefault(key, GapRow(model=gap.model, model_slug=slug(gap.model), reference_task=gap.reference_task,
                                       subset_task=gap.subset_task, seeds=[])).seeds.append(
            GapSeed.model_validate(gap.as_dict()))
    for row in summary.values():
        seeds = row.seeds
        row.accuracy_a = _seed_mean([s.accuracy_a for s in seeds])
        row.accuracy_b = _seed_mean([s.accuracy_b for s in seeds])
        row.gap = _seed_mean([s.gap for s in seeds])
        row.significant_seeds = sum(s.p_adjusted is not None and s.p_adjusted <= alpha for s in seeds)
    for row in summary.values():  # both subsets at 0 (or both at 1): a gap of nothing, listed after the others
        row.degenerate = row.accuracy_a == row.accuracy_b and row.accuracy_a in (0.0, 1.0)
    return sorted(summary.values(), key=lambda r: bool(r.degenerate)), errors


def _one_per_model(runs: list[Run]) -> list[Run]:
    """One run per (task, model) for the subset gaps: the whole-split run where there is one (the gap rows
    show each subset's item count, so a partial pair reads as such)."""
    chosen: dict[tuple[str, str], Run] = {}
    for run in sorted(runs, key=lambda r: (not r.partial, r.record.n_items)):
        chosen[(run.record.task.name, run.record.model.spec)] = run
    return list(chosen.values())


@dataclass(frozen=True)
class _TaskWork:
    """What every task's verification and ranking reads (`_check_and_rank`), shared with the worker processes."""

    registry: Registry
    groups: dict[str, list[Run]]  # task -> every run of it that was found, verified or not
    correction: str
    alpha: float
    options: Options
    published: list[Published]
    families: dict
    metrics: VerifiedMetrics
    reproduce: int | None = None  # K of --reproduce: the ranked runs' reproduction on K items
    reproduce_key: str | None = None  # the draw's key, made by `build_board` when none is given: one for all workers


def _check_and_rank(work: _TaskWork, names: Sequence[str]) -> tuple[list[tuple], dict[str, BoardTask], dict]:
    """One chunk of tasks (`task_workers`): every run verified, the newest verified ones ranked and tested, each
    ranked run's facts made once (`_facts`). Returns picklable data: each run's verdict fields (`Verdict` without
    the run) in the chunk's run order, the tasks' typed parts, and the check-4 verdicts added to the cache."""
    runs = [run for name in names for run in work.groups[name]]
    passed, _, verdicts = verify_runs(work.registry, runs, metrics=work.metrics)
    if work.reproduce:
        passed = _reproduced(work, work.reproduce, latest_runs(passed)[0], passed, verdicts)
    kept, _ = latest_runs(passed)
    tasks = {name: _task(work, name, group, verdicts) for name, group in by_task(kept).items()}
    fields = [tuple(getattr(verdicts[id(run)], f.name) for f in fields_of(Verdict)[1:]) for run in runs]
    return fields, tasks, work.metrics.added()


def _reproduced(work: _TaskWork, k: int, ranked: list[Run], passed: list[Run],
                verdicts: dict[int, Verdict]) -> list[Run]:
    """The runs that would be ranked, reproduced on K items (`launch.reproduce`): a failed reproduction is a
    rejection with its reason (the run leaves ``passed``), the others carry their mark in ``verified``."""
    from ...launch.reproduce import reproduce_runs

    for run_id, found in reproduce_runs(work.registry, ranked, k, key=work.reproduce_key).items():
        if found.failed:
            verdicts[run_id].problems.append(found.line)
        else:
            verdicts[run_id].reproduction = {"status": found.status, "mark": found.mark, "k": found.k,
                                             "rerun": len(found.items), "reason": found.reason}
    return [run for run in passed if verdicts[id(run)].ok]


def _reproduction(k: int | None, key: str | None) -> BoardReproduction:
    """The board's account of reproduction: tried or not, with K and the draw's key (redo it with
    ``--reproduce K --reproduce-key KEY``), and what it means for the ranking."""
    if not k:
        return BoardReproduction(
            tried=False, k=None, key=None,
            rule="never tried: this board was built without --reproduce, so no run's model was rerun; every number "
                 "is its run's own account, held to the checks of its files and its data (metabench verify-run "
                 "--reproduce K RUN reruns a run here)")
    return BoardReproduction(
        tried=True, k=k, key=key,
        rule=f"every run that would be ranked was rerun with its model here on {k} items drawn with this key (a "
             "baseline: on every item), made when the board was built; a run that failed reproduction is rejected, "
             "and a run not reproducible here (its model, checkpoint or data is not here) is ranked below every "
             "reproduced run of its items and never given the ★. Redo the same draw with "
             f"--reproduce {k} --reproduce-key {key}")


def _chunks(groups: dict[str, list[Run]]) -> list[list[str]]:
    """Tasks grouped by their dataset, so the tasks that load the same data verify in one process (the data
    is parsed once per process); in name order."""
    chunks: dict[str, list[str]] = {}
    for name in sorted(groups):
        dataset = groups[name][0].record.task.dataset
        chunks.setdefault(str(dataset), []).append(name)
    return list(chunks.values())


def _cost(groups: dict[str, list[Run]], names: list[str]) -> int:
    """A chunk's rough cost: the sample rows its runs hold (reading, verifying and resampling scale with it)."""
    return sum(run.record.n_items * len(run.record.seeds) for name in names for run in groups[name])


@dataclass(frozen=True)
class _Checked:
    """The first stage's result (`_check_all`): every run's verdict, the ranked runs, and the tasks ranked."""

    verdicts: dict[int, Verdict]
    runs: list[Run]  # ranked: verified, the newest per task, model and item set
    ignored: list[RunNote]
    rejected: list[Verdict]
    tasks: list[BoardTask]


def _check_all(state: _TaskWork, runs: list[Run], progress: Progress, jobs: int | None) -> _Checked:
    """Stage 1: every task verified, ranked and tested in the task workers, each ranked run's facts made there."""
    chunks = _chunks(state.groups)
    with progress.phase("verifying, ranking and testing tasks", len(state.groups), "task") as done:
        checked = run_chunks(_check_and_rank, state, chunks, [_cost(state.groups, c) for c in chunks], jobs, done)
    verdicts: dict[int, Verdict] = {}
    tasks_by_name: dict[str, BoardTask] = {}
    for chunk, (fields, tasks_found, entries) in zip(chunks, checked):
        chunk_runs = [run for name in chunk for run in state.groups[name]]
        for run, found in zip(chunk_runs, fields):
            verdicts[id(run)] = Verdict(run, *found)
            run.split_size = verdicts[id(run)].split_size  # as the worker's verification set it: `Run.partial`
        tasks_by_name.update(tasks_found)
        state.metrics.merge(entries)
    state.metrics.save()
    rejected = [verdicts[id(run)] for run in runs if not verdicts[id(run)].ok]
    ranked, ignored = latest_runs([run for run in runs if verdicts[id(run)].ok])
    tasks = [tasks_by_name[name] for name in sorted(tasks_by_name)]
    _heat(tasks)
    return _Checked(verdicts, ranked, ignored, rejected, tasks)


@dataclass(frozen=True)
class _Across:
    """The second stage's result (`_across_tasks`): what is computed across tasks from the ranked runs."""

    models: list[BoardModel]
    groups: list[Group]
    families: list[Family]
    gaps: Gaps
    paper_tables: list[PaperTable]
    one_per_model: list[Run]


def _across_tasks(registry: Registry, checked: _Checked, families: dict, correction: str, alpha: float,
                  options: Options, progress: Progress) -> _Across:
    """Stage 2: models' pages, group aggregates, the overview's families, the gaps and the papers' tables."""
    models = _models(checked.tasks)
    complete = [r for r in checked.runs if not r.partial]
    one_per_model = _one_per_model(checked.runs)
    aggregates = {(r.record.task.name, r.record.model.spec): {n: s.as_json() for n, s in r.record.metrics.aggregate.items()} for r in complete}
    views = registered_views(registry)
    cells = Cells.from_bindings(_bindings(registry, checked.runs), views)
    groups = [Group.model_validate(row) for row in group_rows([r.record for r in complete]) if not row["missing"]]
    with progress.phase("gaps, controls and paper tables", 1, "step") as done:
        rows, errors = _gaps(one_per_model, correction, alpha, options.confidence)
        gaps = Gaps(rows=rows, errors=errors,
                    paired=PairedTable.model_validate(paired_rows(one_per_model, correction, alpha, options.confidence,
                                                                  options.n_resamples, options.seed)),
                    controls=ControlsTable.model_validate(control_rows(registry, one_per_model, options.confidence)))
        done()
    tables = [PaperTable.model_validate(fill(view, cells, [m.name for m in models], aggregates,
                                             _budget_labels(complete)))
              for view in views.values() if view.filled_by is None]
    return _Across(models, groups, _families(checked.tasks, groups, families), gaps, tables, one_per_model)


def build_board(registry: Registry, runs: list[Run], *, title: str = "metabench leaderboard", correction: str = "holm",
                alpha: float = 0.05, options: Options = Options(), sources: Sequence[Path] = (),
                published: list[Published] | None = None, progress: Progress | None = None,
                jobs: int | None = None, reproduce: int | None = None, reproduce_key: str | None = None) -> Board:
    """Everything the reporters write (`schema.Board`), from the runs (one per task, model and item set; newer runs
    win) and the registered sections (`sections.py`; ``sources``, the paths the build was given, are where a section
    finds the files it reads beside the runs), built as typed parts in a chain of stages: the tasks checked, ranked
    and tested, each ranked run's facts made once (`_check_all`, in ``jobs`` processes, default one per CPU:
    `task_workers`, with the same result as one); what is computed across tasks (`_across_tasks`); the caveats that
    need both (`caveats.annotate`); the headline table (`headline`); the registered sections. ``progress`` shows
    the phases on stderr. ``reproduce``: K items of every run that would be ranked are rerun with its model where it
    is here (`_reproduced`), drawn with ``reproduce_key`` or a key made now (`launch.reproduce.new_key`), which the
    board records (``reproduction``) so that anyone can redo the draw."""
    progress = progress or Progress.off()
    if reproduce:
        from ...launch.reproduce import key_text, new_key

        reproduce_key = new_key() if reproduce_key is None else key_text(reproduce_key)
    published = load_published() if published is None else published
    families = {**FAMILIES, **overview_families(registry), **OTHER}
    TaskIndex(registry)  # built (or read from its cache) once here, not by each worker
    state = _TaskWork(registry, by_task(runs), correction, alpha, options, published, families,
                      VerifiedMetrics(registry), reproduce, reproduce_key)
    checked = _check_all(state, runs, progress, jobs)
    across = _across_tasks(registry, checked, families, correction, alpha, options, progress)
    ranked = checked.runs
    caveats = annotate(registry, checked.tasks, across.groups, across.families, ranked)
    board = Board(
        schema_version=SCHEMA_VERSION, title=title,
        latest_run=max((r.record.created for r in ranked if r.record.created is not None), default=None), metabench=__version__,
        correction=Correction(method=correction, name=CORRECTIONS[correction][0]), alpha=alpha,
        confidence=options.confidence, n_runs=len(ranked), n_partial_runs=sum(r.partial for r in ranked),
        ignored_runs=checked.ignored,
        rejected_runs=[RunNote(task=v.run.record.task.name, model=v.run.record.model.spec, run=str(v.run.path), reasons=v.problems)
                       for v in checked.rejected],
        unverified_runs=[RunNote(task=r.record.task.name, model=r.record.model.spec, run=str(r.path), reason=checked.verdicts[id(r)].unverified)
                         for r in ranked if checked.verdicts[id(r)].unverified],
        verification=CHECKS, reproduction=_reproduction(reproduce, reproduce_key), marks_rule=RULE,
        published_groups=[_published_group(e, across.groups) for e in published
                          if any(g.group == e.task for g in across.groups)],
        families=across.families, tasks=checked.tasks, models=across.models, groups=across.groups, gaps=across.gaps,
        paper_tables=across.paper_tables, caveat_rules=caveats,
        headline=headline(registry, checked.tasks, across.groups, [m.name for m in across.models], ranked, published))
    inputs = BoardInputs(registry, ranked, across.one_per_model, tuple(sources), correction, alpha, options,
                         facts={entry.run or "": RunFacts.of(entry) for task in checked.tasks for entry in task.entries})
    with progress.phase("registered sections", len(registry.names("board_section")), "section") as done:
        found = build_sections(inputs, set(Board.model_fields), done)
    board.paper_tables += found.paper_tables
    board.section_views = found.views
    for name, data in found.data.items():
        setattr(board, name, data)  # a section's data under its name: the board's extra parts (`Board.section`)
    return board
