"""What the board prints beside a number so that it is not read at face value (#35 items 3-5).

Every cell already carries the run's marks (`trivial.assess`: constant, ≈ chance with the best constant answer
and its value). This adds, computed once here and written by every reporter:

- per item set of a task, the best constant answer's value on its items (the same items and golds for every
  run of the set), and per k-fold group cell the mean of its folds' constant answers with the number of folds
  at chance (`trivial.pooled`, as docs/headline-runs.md prints it);
- per decoder run, ``trivial.below_chance``: a two-answer task scored significantly below its best constant
  answer, a probable answer-format failure (``below_chance``), with the calibration miss of the test where it is
  a listed one; per fitted classifier, ``trivial.collapsed_fit``: one answer for ≥ 99 % of the items at some of
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
from ..compare import Options
from ..trivial import COLLAPSE_RULE, FORMAT_RULE, below_chance, collapsed_fit, pooled

#: The lenient parser: on a paraphrase control (the metaphorLLM tasks, whose authors read answers with
#: ``label_token``: tasks/metaphor_llm_paraphrases/_decoder.yaml), a run read with it is labelled.
LENIENT = "label"
LENIENT_NOTE = ("scored with the lenient parser (parser: label, the first label word anywhere), not the authors' "
                "label_token: its accuracy is not comparable with theirs")


def annotate(registry, board: dict, runs: list[Run], options: Options, alpha: float) -> None:
    """Add the caveats of the module docstring to ``board`` (in place): ``entry["caveats"]`` per run (and on its
    model's page), ``item_set["constant"]`` per item set, ``group["caveats"]`` per group row and group cell,
    ``task["protocol_source"]``, and the rules as ``board["caveat_rules"]``."""
    board["caveat_rules"] = {"below chance": FORMAT_RULE, "collapsed fit": COLLAPSE_RULE,
                             "unstable, constant-like": seed_stability.STABILITY_RULE,
                             "lenient parser": LENIENT_NOTE}
    by_path = {str(run.path): run for run in runs}
    current = TaskIndex(registry).tasks
    members: dict[tuple[str, str], tuple[Run, dict]] = {}
    for task in board["tasks"]:
        for entry in task["entries"]:
            run = by_path[entry["run"]]
            entry["caveats"] = _entry_caveats(registry, run, entry, task, options, alpha)
            if entry["item_set"] == 0:
                members[(task["name"], entry["model"])] = (run, entry)
        for index, item_set in enumerate(task["item_sets"]):
            first = next(e for e in task["entries"] if e["item_set"] == index)
            trivial = first["marks"]["trivial"]
            item_set["constant"] = ({"value": trivial["baseline_value"], "answer": trivial["baseline"]}
                                    if trivial.get("baseline_value") is not None else None)
        task["protocol_source"] = _protocol_source(task, current)
    by_entry = {(t["name"], e["model"], e["n_items"], e["partial"]): e["caveats"]
                for t in board["tasks"] for e in t["entries"]}
    for model in board["models"]:
        for result in model["results"]:
            result["caveats"] = by_entry[(result["task"], model["name"], result["n_items"], result["partial"])]
    by_group = {}
    for row in board["groups"]:
        found = [members.get((member, row["model"])) for member in row["member_tasks"]]
        if any(f is None for f in found):
            continue  # a member outside the main item set: nothing to pool
        metric = row["primary_metric"]
        row["caveats"] = {
            "constant": pooled([entry["marks"]["trivial"] for _, entry in found], row["aggregate"][metric]["mean"]),
            "stability": _stability(list(row["aggregate"][metric].get("per_seed", {}).values()), [r for r, _ in found],
                                    judged=all(_judged(r, entry) for r, entry in found)),
            "below_chance": None, "lenient_parser": None,  # per run: on the members' pages
            "collapsed_fit": _collapsed_folds([(task, entry) for task, (_, entry) in zip(row["member_tasks"], found)]),
        }
        by_group[(row["group"], row["model"])] = row["caveats"]
    for family in board["families"]:
        for column in family["columns"]:
            for model, cell in column.get("cells", {}).items() if column["type"] == "group" else ():
                cell["caveats"] = by_group.get((column["name"], model))


def _entry_caveats(registry, run: Run, entry: dict, task: dict, options: Options, alpha: float) -> dict:
    trivial = entry["marks"]["trivial"]
    mean = entry["metrics"][task["primary_metric"]]["mean"]
    baseline = trivial.get("baseline_value")
    below = None
    # a decoder significantly below its constant answer reads its answers wrongly (significantly below needs
    # below, so the test is made only there); a classifier's collapse is read from its answers (`collapsed_fit`);
    # a baseline below it is ≈ chance (its mark), having neither
    family = run.record.model.family
    decoder = family == "decoder"
    if decoder and None not in (baseline, mean) and (mean < baseline if task["higher_is_better"] else mean > baseline):
        below = below_chance(registry, run, options, alpha)
    collapsed = None if decoder else collapsed_fit(run)
    config = run.record.task.config
    lenient = (task["family"] == "paraphrase" and config.get("kind") == "generation"
               and (config.get("kind_args") or {}).get("parser", LENIENT) == LENIENT)
    stability = _stability(list(entry["per_seed"].values()), [run], judged=_judged(run, entry))
    notes = ([f"per seed {stability['per_seed_text']}: {'; '.join(stability['marks'])}"] if stability["marks"] else [])
    notes += [flag for flag in (below, collapsed) if flag]
    if trivial.get("tested_metric") or (trivial.get("chance") is None and trivial.get("note")):
        notes.append(f"≈ chance: {trivial['note']}")  # the test made on another metric, or why none was made
    notes += [LENIENT_NOTE] if lenient else []
    return {"below_chance": below, "collapsed_fit": collapsed,
            "lenient_parser": LENIENT_NOTE if lenient else None, "stability": stability, "notes": notes}


def _collapsed_folds(members: list[tuple[str, dict]]) -> str | None:
    """A group cell's collapsed fit: the member tasks (folds) whose run answered one label at a seed
    (`trivial.collapsed_fit`), each flag's text on the member's page; None where there is none."""
    folds = [task for task, entry in members if entry["caveats"]["collapsed_fit"]]
    if not folds:
        return None
    return (f"collapsed fit in {len(folds)} of {len(members)} folds ({', '.join(folds)}): one answer for ≥ 99 % of "
            "the items at a seed of each (the seeds and the answer on each fold's page)")


def _judged(run: Run, entry: dict) -> bool:
    """Whether the recipe rule applies: not to a baseline (no recipe: a majority answer is constant-like by
    design) nor to a run marked constant (that mark says more)."""
    return run.record.model.family != "baseline" and not entry["marks"]["constant"]


def _stability(per_seed: list, runs: list[Run], judged: bool) -> dict:
    """`seed_stability.assess` with its text: the per-seed values and, where the rule flags them (and applies:
    ``judged``), the marks."""
    verdict = (seed_stability.assess(per_seed, runs) if judged
               else {"per_seed": list(per_seed), "range": None, "unstable": False, "skewed": []})
    return {**verdict, "marks": seed_stability.marks(verdict), "per_seed_text": seed_stability.per_seed_text(verdict)}


def _protocol_source(task: dict, current: dict) -> dict:
    """The protocol citation to print: the task's as it is here where its config hash is the runs' (the citation
    is metadata, outside the hash, so a corrected wording leaves the runs valid), with the recorded wording kept
    when it differs; the recorded one alone where the task is not here or has changed (``current``: the tasks
    here by name, `config.index.TaskIndex.tasks`)."""
    recorded = task["source"] or ""
    here = current.get(task["name"])
    if here is None or here.hash != task["config_hash"] or (here.config.metadata.source or "") in ("", recorded):
        return {"text": recorded, "recorded": None}
    return {"text": here.config.metadata.source, "recorded": recorded}
