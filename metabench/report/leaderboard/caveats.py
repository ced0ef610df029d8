"""What the board prints beside a number so that it is not read at face value (#35 items 3-5).

Every cell carries the run's marks (`trivial.assessment`: constant, ≈ chance with the best constant answer and its
value) and, made with them from one reading of the run's items in the task workers (`board._facts`), its own caveats
(`entry_caveats`). `annotate` adds what needs more than one run, once the tasks are ranked; every reporter writes it:

- per item set of a task, the best constant answer's value on its items (the same items and golds for every
  run of the set), and per k-fold group cell the mean of its folds' constant answers with the number of folds
  at chance (`trivial.pooled`, as docs/headline-runs.md prints it);
- per decoder run, the assessment's ``below_chance``: a two-answer task scored significantly below its best constant
  answer, a probable answer-format failure (``below_chance``), with the calibration miss of the test where it is
  a listed one; per fitted classifier, its ``collapsed_fit``: one answer for ≥ 99 % of the items at some of
  its seeds (at all of them the constant mark says it), read from its answers (``collapsed_fit``; not from F1, which answering "metaphor" everywhere maximises: NewsMet's
  MiniLM sits below that constant without having collapsed); a k-fold group cell names its collapsed folds (a
  baseline has no recipe and no answer format: ≈ chance says it);
- per run whose ≈ chance verdict is not a test on the primary metric, the verdict's note (the metric tested
  instead, or why no test was made) among the lines a reader reads with the number;
- per run and per group cell, `seed_stability`: unstable across seeds, constant-like seeds (the rule
  docs/headline-runs.md prints, applied to every run made with a recipe: not to baselines, nor to a run the
  constant mark already names);
- the parser a decoder's answers were read with where it is the lenient one (``parser: label``) on a paraphrase
  control, whose authors read answers with ``label_token``: its accuracy is not theirs;
- the protocol citation of the task as it is here, when the runs recorded an older wording of the same task
  (same config hash: the citation is metadata, outside the hash), with the recorded one named.
"""

from __future__ import annotations

from ...config.index import TaskIndex
from ...runs.stored import Run
from ..analyses import seed_stability
from ..trivial import COLLAPSE_RULE, FORMAT_RULE, Assessment, pooled
from .schema import (BoardTask, Caveats, Entry, Family, Group, GroupCaveats, ItemSetConstant, Marks, PooledConstant,
                     ProtocolSource, Stability, Trivial)

#: The lenient parser: on a paraphrase control (the metaphorLLM tasks, whose authors read answers with
#: ``label_token``: tasks/metaphor_llm_paraphrases/_decoder.yaml), a run read with it is labelled.
LENIENT = "label"
LENIENT_NOTE = ("scored with the lenient parser (parser: label, the first label word anywhere), not the authors' "
                "label_token: its accuracy is not comparable with theirs")

#: Each caveat's rule, as the board prints it (``caveat_rules``).
RULES = {"below chance": FORMAT_RULE, "collapsed fit": COLLAPSE_RULE,
         "unstable, constant-like": seed_stability.STABILITY_RULE, "lenient parser": LENIENT_NOTE}


def entry_caveats(run: Run, found: Assessment, marks: Marks, per_seed: list, family: str) -> Caveats:
    """One ranked run's caveats, from its assessment (``found``: the below-chance test is made only where the run is
    below its best constant answer, and only for a decoder; a classifier's collapse is read from its answers; a
    baseline below it is ≈ chance, its mark, having neither), its marks and its per-seed values on the task's
    metric; ``family`` is the task's overview family (a paraphrase control names a lenient parser)."""
    trivial = marks.trivial
    config = run.record.task.config
    parser = config.kind_args.parser if config.kind_args.has("parser") else LENIENT
    lenient = family == "paraphrase" and config.kind == "generation" and parser == LENIENT
    stability = _stability(per_seed, [run], judged=_judged(run, marks))
    notes = ([f"per seed {stability.per_seed_text}: {'; '.join(stability.marks)}"] if stability.marks else [])
    notes += [flag for flag in (found.below_chance, found.collapsed_fit) if flag]
    if trivial is not None and (trivial.tested_metric or (trivial.chance is None and trivial.note)):
        notes.append(f"≈ chance: {trivial.note}")  # the test made on another metric, or why none was made
    notes += [LENIENT_NOTE] if lenient else []
    return Caveats(below_chance=found.below_chance, collapsed_fit=found.collapsed_fit,
                   lenient_parser=LENIENT_NOTE if lenient else None, stability=stability, notes=notes)


def annotate(registry, tasks: list[BoardTask], groups: list[Group], families: list[Family],
             runs: list[Run]) -> dict[str, str]:
    """Add the caveats of the module docstring that need more than one run (in place): ``item_set.constant`` per
    item set, ``task.protocol_source``, ``group.caveats`` per group row and group cell; returns the rules
    (``caveat_rules``)."""
    by_path = {str(run.path): run for run in runs}
    current = TaskIndex(registry).tasks
    members: dict[tuple[str, str], tuple[Run, Entry]] = {}
    for task in tasks:
        for entry in task.entries:
            if entry.item_set == 0:
                members[(task.name, entry.model)] = (by_path[entry.run or ""], entry)
        for index, item_set in enumerate(task.item_sets):
            trivial = _trivial(next(e for e in task.entries if e.item_set == index))
            item_set.constant = (ItemSetConstant(value=trivial.baseline_value, answer=trivial.baseline)
                                 if trivial is not None and trivial.baseline_value is not None else None)
        task.protocol_source = _protocol_source(task, current)
    by_group: dict[tuple, GroupCaveats] = {}
    for row in groups:
        found = [pair for member in row.member_tasks if (pair := members.get((member, row.model or ""))) is not None]
        if len(found) < len(row.member_tasks):
            continue  # a member outside the main item set: nothing to pool
        summary = row.aggregate[row.primary_metric or ""]
        # a member with no trivial mark has no baseline: `pooled` then pools nothing
        constant = pooled([trivial.to_dict() if (trivial := _trivial(entry)) is not None else {}
                           for _, entry in found], summary.mean)
        row.caveats = GroupCaveats(
            constant=PooledConstant.model_validate(constant) if constant is not None else None,
            stability=_stability(list((summary.per_seed or {}).values()), [r for r, _ in found],
                                 judged=all(_judged(r, entry.marks) for r, entry in found)),
            below_chance=None, lenient_parser=None,  # per run: on the members' pages
            collapsed_fit=_collapsed_folds([(task, entry) for task, (_, entry) in zip(row.member_tasks, found)]))
        by_group[(row.group, row.model)] = row.caveats
    for family in families:
        for column in family.columns:
            for model, cell in column.cells.items() if column.type == "group" else ():
                cell.caveats = by_group.get((column.name, model))
    return dict(RULES)


def _collapsed_folds(members: list[tuple[str, Entry]]) -> str | None:
    """A group cell's collapsed fit: the member tasks (folds) whose run answered one label at a seed
    (`trivial.collapsed_fit`), each flag's text on the member's page; None where there is none."""
    folds = [task for task, entry in members if entry.caveats is not None and entry.caveats.collapsed_fit]
    if not folds:
        return None
    return (f"collapsed fit in {len(folds)} of {len(members)} folds ({', '.join(folds)}): one answer for ≥ 99 % of "
            "the items at a seed of each (the seeds and the answer on each fold's page)")


def _trivial(entry: Entry) -> Trivial | None:
    """The entry's run against the best constant answer, where it was marked."""
    return entry.marks.trivial if entry.marks is not None else None


def _judged(run: Run, marks: Marks | None) -> bool:
    """Whether the recipe rule applies: not to a baseline (no recipe: a majority answer is constant-like by
    design) nor to a run marked constant (that mark says more)."""
    return run.record.model.family != "baseline" and not (marks is not None and marks.constant)


def _stability(per_seed: list, runs: list[Run], judged: bool) -> Stability:
    """`seed_stability.assess` with its text: the per-seed values and, where the rule flags them (and applies:
    ``judged``), the marks."""
    verdict = (seed_stability.assess(per_seed, runs) if judged
               else {"per_seed": list(per_seed), "range": None, "unstable": False, "skewed": []})
    stability = Stability.model_validate(verdict)
    stability.marks, stability.per_seed_text = seed_stability.marks(verdict), seed_stability.per_seed_text(verdict)
    return stability


def _protocol_source(task: BoardTask, current: dict) -> ProtocolSource:
    """The protocol citation to print: the task's as it is here where its config hash is the runs' (the citation
    is metadata, outside the hash, so a corrected wording leaves the runs valid), with the recorded wording kept
    when it differs; the recorded one alone where the task is not here or has changed (``current``: the tasks
    here by name, `config.index.TaskIndex.tasks`)."""
    recorded = task.source or ""
    here = current.get(task.name)
    if here is None or here.hash != task.config_hash or (here.config.metadata.source or "") in ("", recorded):
        return ProtocolSource(text=recorded, recorded=None)
    return ProtocolSource(text=here.config.metadata.source, recorded=recorded)
