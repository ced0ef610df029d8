"""The board (``leaderboard.json``), typed: every part a reporter reads, its type and what it means.

:class:`Board` is what `build_board` returns and what every reporter receives (markdown, json, html and the
reporters plugins register through ``metabench_register_reporters``): a reporter reads ``task.entries[0].vs_best
.delta``, not ``board["tasks"][0]["entries"][0]["vs_best"]["delta"]``, and a renamed part fails where it is read,
not as a ``KeyError`` in a template. ``docs/leaderboard-format.md`` is generated from these models
(:func:`format_markdown`, ``metabench schema leaderboard``), and a test fails when the page is stale.

Why pydantic models that allow extra keys: a board written by a later metabench of the same schema version still
reads (a part this version does not know is kept, not refused), and a section a plugin registers keeps its data
under its own name (``board.section("hardness")``), typed by the plugin when it returns a model. Why the keys are
written in the order the fields are declared (then any part this version does not know): ``leaderboard.json`` is
committed and diffed, and the builders construct these models, so the order is the schema's, never a builder's; a
board read from a file and written again is byte-identical.

The part keyed by data values (a model's name, a seed, a metric) stay dicts of typed parts
(``entry.metrics["f1"].mean``, ``column.cells["hf:minilm-l6"].star``): their keys are data, not fields.
"""

from __future__ import annotations

import typing
import warnings
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_serializer

from ...errors import PluginAPIDeprecationWarning

_ABSENT = object()
#: A JSON number as it was computed: an int stays an int (1, not 1.0) so the file is byte-identical.
Number = Union[int, float]


def part(description: str, default: Any = None) -> Any:
    """A documented part; ``default`` when a board (or an older one) leaves it out."""
    if isinstance(default, type):
        return Field(default_factory=default, description=description)
    return Field(default, description=description)


class Part(BaseModel):
    """A part of the board: attributes for reading; written with its fields in declaration order, then any part a
    later metabench added (kept as read), so the builders' models and a board read back write the same bytes."""

    model_config = ConfigDict(extra="allow")

    @model_serializer(mode="wrap")
    def _in_order(self, handler):
        out = handler(self)
        present = self._present()  # a default never set is not written
        declared = [k for k in type(self).model_fields if k in present]
        return {k: out[k] for k in declared + [k for k in out if k in present and k not in declared] if k in out}

    def to_dict(self) -> dict:
        """The JSON-ready dict of this part (what ``leaderboard.json`` holds)."""
        return self.model_dump(mode="json")

    # The dict form a section view written for the untyped board uses (``board["tasks"]``, ``entry.get("marks")``,
    # ``"caveats" in entry``): still answered, with a PluginAPIDeprecationWarning, until metabench 0.2.
    def _key(self, key: str) -> str:
        read = f".{key}" if key.endswith("()") else f"[{key!r}]"
        fix = "read its fields as attributes" if key.endswith("()") else f"read the attribute .{key}"
        warnings.warn(f"reading the leaderboard's board as a dict ({type(self).__name__}{read}) is deprecated: "
                      f"{fix} (docs/leaderboard-format.md)", PluginAPIDeprecationWarning, stacklevel=3)
        return key

    def __getitem__(self, key: str) -> Any:
        value = getattr(self, self._key(key), _ABSENT)
        if value is _ABSENT or key not in self._present():
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        self._key(key)
        return getattr(self, key) if key in self._present() else default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._key(key) in self._present()

    def keys(self):
        self._key("keys()")
        return [k for k in self.to_dict()]

    def items(self):
        self._key("items()")
        return [(k, getattr(self, k)) for k in self.to_dict()]

    def _present(self) -> set[str]:
        return self.model_fields_set | set(self.__pydantic_extra__ or ())


# ------------------------------------------------------------------------------------------------ numbers

class Summary(Part):
    """A metric over seeds (or folds): mean, sample standard deviation, count, and each seed's value."""

    mean: Number | None = part("mean over seeds")
    n: int | None = part("how many seeds the mean is over")
    std: Number | None = part("sample standard deviation over seeds (0 for one seed)")
    per_seed: dict[str, Number] | None = part("each seed's value, keyed by the seed")


class GroupSummary(Part):
    """A metric over a group's members (k folds, a paper's average): their mean, and per seed the members' mean."""

    mean: Number | None = part("mean over the members")
    std: Number | None = part("sample standard deviation over the members")
    n: int | None = part("how many members the mean is over")
    per_seed: dict[str, Number | None] | None = part("each seed's mean over the members, keyed by the seed")


class Comparison(Part):
    """A model against the best one of its item set, with the test `compare` would choose."""

    test: str | None = part("the test's name (McNemar, paired bootstrap, paired t over seeds, ...)")
    delta: Number | None = part("this model minus the best, on the primary metric")
    ci_low: Number | None = part("lower end of the confidence interval of delta")
    ci_high: Number | None = part("upper end of the confidence interval of delta")
    ci_method: str | None = part("how the interval was computed")
    mde: Number | None = part("minimum detectable effect at 80 % power, where the test has one")
    unit: str | None = part("the unit the test resamples or pairs (items, clusters, seeds)")
    pvalue: Number | None = part("the test's p-value")
    p_adjusted: Number | None = part("p-value corrected within the task (the board's correction)")
    notes: list[str] = part("caveats of the test (few units, a calibration miss, ...)", list)
    significant: bool | None = part("p_adjusted below the board's alpha")
    error: str | None = part("why the comparison could not be made (the runs could not be paired)")


# ------------------------------------------------------------------------------------------------ marks

class Skewed(Part):
    """A seed whose answers lean on one answer far more than the gold does."""

    seed: int | None = part("the seed")
    answer: str | None = part("the answer it leans on")
    share: Number | None = part("share of its predictions that are that answer")
    gold_share: Number | None = part("share of golds that are that answer")


class Stability(Part):
    """How the run's seeds agree: their values, their range, seeds with a skewed answer distribution."""

    per_seed: list[Number | None] = part("per-seed values", list)
    range: Number | None = part("max minus min over seeds")
    unstable: bool | None = part("the range exceeds the task's stability rule")
    skewed: list[Skewed] = part("seeds that answer one answer far more than the gold does", list)
    marks: list[str] = part("the marks this puts beside the value", list)
    per_seed_text: str | None = part("the per-seed values as printed")


class PooledConstant(Part):
    """The best constant answer of a group's members (`trivial.pooled`): the folds' mean value, named once each."""

    value: Number | None = part("the members' best constant answers, their mean value")
    answers: list[str] = part("the constant answers, each named once", list)
    near: int | None = part("members whose run is ≈ chance")
    folds: int | None = part("members")
    not_above: bool | None = part("the group's mean is not above the constant answers' mean")


class Caveats(Part):
    """Why a value should be read with care; each is None when it does not apply."""

    below_chance: str | None = part("significantly below the best constant answer: the reason, as printed")
    collapsed_fit: str | None = part("a fitted classifier answering one label for ≥ 99 % of the items at some of "
                                     "its seeds, not all (a collapsed fit, read from its answers): the seeds and the "
                                     "answer, as printed")
    lenient_parser: str | None = part("answers were read by the lenient parser")
    stability: Stability | None = part("seed agreement")
    notes: list[str] = part("every caveat as one line (these go into the Hub export's notes)", list)
    constant: PooledConstant | None = part("a group's caveats only (`GroupCaveats`); never set on a run's")


class GroupCaveats(Part):
    """A group row's or group cell's caveats: the members' pooled constant answer, the seeds' agreement over the
    members, the members' collapsed fits; a run's own caveats are on its member's page (`Caveats`)."""

    constant: PooledConstant | None = part("the best constant answer of the members, pooled")
    stability: Stability | None = part("seed agreement of the members' per-seed means")
    below_chance: str | None = part("always None: a member's flag is on its page")
    lenient_parser: str | None = part("always None: a member's flag is on its page")
    collapsed_fit: str | None = part("the members (folds) whose run collapsed onto one answer at a seed, as printed")
    notes: list[str] = part("never set on a group: its members' notes are on their pages", list)


class Trivial(Part):
    """The run against its task's best constant answer (the trivial predictor)."""

    baseline: str | None = part("the best constant answer")
    baseline_value: Number | None = part("its value on the primary metric")
    test: str | None = part("the test of the run against it")
    pvalue: Number | None = part("that test's p-value")
    chance: bool | None = part("not significantly above it (≈ chance)")
    tested_metric: str | None = part("the metric the test was made on where it is not the primary metric (which "
                                     "cannot tell a constant answer from a perfect model on these items); the mark "
                                     "names it")
    tested_baseline_value: Number | None = part("the best constant answer's value on ``tested_metric``")
    note: str | None = part("the mark as printed")
    calibration: list[str] = part("calibration misses of that test on this task's shape", list)


class ConstantSeed(Part):
    """A seed's most frequent answer and its share (a constant predictor answers one thing)."""

    seed: int | None = part("the seed")
    answer: JsonValue = part("its most frequent answer (an answer as the run recorded it: a label, a list...)")
    share: Number | None = part("share of predictions that are that answer")
    constant: bool | None = part("every prediction is that answer")


class Marks(Part):
    """The marks beside a value on every page: constant, trivial, eligibility, verification."""

    constant: bool | None = part("every seed answers one thing")
    constant_seeds: list[ConstantSeed] = part("each seed's most frequent answer", list)
    trivial: Trivial | None = part("the run against the best constant answer")
    eligible: bool | None = part("may be ranked first (★): whole split, verified, not constant")
    unverified: str | None = part("why the run could not be verified against the data, if it could not")
    unchecked: str | None = part("metrics that could not be rebuilt from golds and predictions, if any")
    reproduced: bool | None = part("on a board built with ``--reproduce``: rerun here with the same answers (False: "
                                   "not reproducible here, ranked below every reproduced run and never ★); None: "
                                   "never tried")


class Reproduced(Part):
    """A run's reproduction on the board (a failed one is a rejection, listed under ``rejected_runs``)."""

    status: str | None = part("``reproduced`` or ``not_reproducible``")
    mark: str | None = part("as printed: reproduced on K items, not reproducible here")
    k: int | None = part("the items asked for")
    rerun: int | None = part("the items rerun (all of a baseline's; none where the model is not here)")
    reason: str | None = part("what was rerun and compared, or why the model is not here")


class BoardReproduction(Part):
    """Whether the runs were rerun with their models (``--reproduce K``) and the key made at build time to draw with."""

    tried: bool | None = part("the board was built with ``--reproduce K``")
    k: int | None = part("items rerun per run (a baseline: every item)")
    key: str | None = part("the draw's key: ``--reproduce K --reproduce-key KEY`` redoes the same draw")
    rule: str | None = part("what reproduction means for the ranking, as printed")


class Verified(Part):
    """What verification rebuilt from the run's golds and predictions."""

    checked: list[str] = part("metrics rebuilt and equal to the recorded ones", list)
    unchecked: list[str] = part("metrics that could not be rebuilt", list)
    data: str | None = part("the data check's verdict")
    reproduction: Reproduced | None = part("with ``leaderboard build --reproduce K``: K items rerun with its model")


# ------------------------------------------------------------------------------------------------ tasks

class Entry(Part):
    """One model's run on one task and item set, ranked."""

    model: str = part("the model spec (``hf:minilm-l6``, ``baseline:majority``)")
    model_slug: str | None = part("its page's file name")
    run: str | None = part("the run folder")
    seeds: list[int] = part("the seeds run", list)
    protocol_seeds: int | None = part("the seeds (or folds) the task's protocol names")
    n_items: int | None = part("test items scored")
    partial: bool | None = part("scored fewer items than the test split holds (``--limit``)")
    item_set: int | None = part("index of its item set in the task's ``item_sets``")
    metrics: dict[str, Summary] = part("every metric over seeds, keyed by name", dict)
    per_seed: dict[str, Number] = part("the primary metric per seed", dict)
    vs_best: Comparison | None = part("against the best model of its item set (None for the best)")
    verified: Verified | None = part("what verification rebuilt")
    marks: Marks | None = part("the marks beside its value")
    rank: int | None = part("rank within its item set (1 is best)")
    star: bool | None = part("best on the task's main item set and eligible (★)")
    heat: Number | None = part("position between the task's worst and best value, for the overview's colour")
    caveats: Caveats | None = part("why its value should be read with care")


class ItemSetConstant(Part):
    """The best constant answer on an item set's items (the ≈ chance baseline of every run of the set)."""

    value: Number | None = part("its value on the primary metric")
    answer: str | None = part("the answer (``majority \"literal\"``, ``no span``)")


class ItemSet(Part):
    """Runs over the same items: the whole split, or the first N items (``--limit``)."""

    n_items: int | None = part("items in the set")
    partial: bool | None = part("fewer than the whole test split")
    models: int | None = part("models ranked on it")
    label: str | None = part("how pages name it")
    constant: ItemSetConstant | None = part("the best constant answer on these items: value and answer")


class DatasetCredit(Part):
    """A dataset a task reads, credited on its page."""

    citation: str | None = part("how to cite it")
    licence: str | None = part("its licence")
    name: str | None = part("the dataset")
    roles: list[str] = part("what the task uses it for (test, train, ...)", list)


class OurValue(Part):
    """One of our models' values beside a published number (shown, never ranked)."""

    model: str | None = part("our model")
    value: Number | None = part("its value on the published metric")
    delta: Number | None = part("ours minus the published value")


class PublishedNumber(Part):
    """A number a paper published for a task (``published_results.yaml``), never ranked."""

    task: str | None = part("the task (or group) it is for")
    system: str | None = part("the paper's system")
    value: Number | None = part("the published value")
    scale: str | None = part("the scale it was published on")
    metric: str | None = part("the metric")
    definition: str | None = part("how the paper defines it")
    protocol: str | None = part("the paper's protocol")
    differences: str | None = part("how our protocol differs")
    citation: str | None = part("the paper")
    source: str | None = part("where in the paper")
    answering: str | None = part("how a published decoder answered; None: an encoder's number")
    sample: str | None = part("how the paper's items differ from the test split (a sample, another pool)")
    other_metric: str | None = part("how the paper's metric differs from the task's")
    interval: str | None = part("the spread the paper gives, as printed (empty: none)")
    fraction: Number | None = part("the value on the 0-1 scale")
    caveats: list[str] = part("the caveats printed beside the number", list)
    for_group: bool | None = part("published for a group of tasks (a k-fold mean, an average)")
    ours: OurValue | list[OurValue] | None = part("our models' values beside it: the ★ run's (a task; None: none "
                                                  "on its metric) or each model's complete group mean (a group)")


class ProtocolSource(Part):
    """Where the task's protocol comes from."""

    text: str | None = part("the protocol's source as the task page prints it")
    recorded: str | None = part("as the runs recorded it, where they differ")


class BoardTask(Part):
    """One task: its facts and its ranked entries."""

    name: str = part("the task")
    slug: str | None = part("its page's file name")
    kind: str | None = part("the task kind (tagging, classification, choice, generation)")
    dataset: str | None = part("its dataset")
    source: str | None = part("where its data comes from")
    version: int | None = part("the task's version")
    config_hash: str | None = part("hash of its config")
    primary_metric: str | None = part("the metric it is ranked by")
    higher_is_better: bool | None = part("whether higher is better")
    n_items: int | None = part("items of the main item set")
    partial: bool | None = part("the main item set is partial (no run covers the whole split)")
    item_sets: list[ItemSet] = part("item sets, the main one first", list)
    best: str | None = part("the best model on the main item set")
    family: str | None = part("the overview family it belongs to")
    datasets: list[DatasetCredit] = part("datasets credited", list)
    entries: list[Entry] = part("every ranked run", list)
    published: list[PublishedNumber] = part("published numbers for the task", list)
    protocol_source: ProtocolSource | None = part("where the protocol comes from")


# ------------------------------------------------------------------------------------------------ models

class ModelResult(Part):
    """A model's result on one task, for its page."""

    task: str | None = part("the task")
    task_slug: str | None = part("the task's page")
    metric: str | None = part("the primary metric")
    value: Summary | None = part("its value over seeds")
    rank: int | None = part("its rank on the task")
    star: bool | None = part("★ on the task")
    n_models: int | None = part("models ranked on the task")
    vs_best: Comparison | None = part("against the task's best")
    n_items: int | None = part("items scored")
    partial: bool | None = part("a partial run")
    marks: Marks | None = part("the marks beside its value")
    unread: Number | None = part("a generated run's format-failure rate, printed beside its value (absent: not "
                                 "generated)")
    caveats: Caveats | None = part("its caveats")


class BoardModel(Part):
    """A model and its results on every task."""

    name: str = part("the model spec")
    slug: str | None = part("its page's file name")
    results: list[ModelResult] = part("its results, one per task", list)


# ------------------------------------------------------------------------------------------------ overview

class Cell(Part):
    """One model's value in an overview column."""

    value: GroupSummary | None = part("the group's value over its members")
    star: bool | None = part("★ in the column")
    heat: Number | None = part("colour position")
    eligible: bool | None = part("may take the ★")
    caveats: GroupCaveats | None = part("its caveats")


class Column(Part):
    """An overview column: a task or a group of tasks."""

    type: str | None = part("``task`` or ``group``")
    name: str | None = part("the task or group")
    metric: str | None = part("its metric")
    members: int | None = part("member tasks (a group)")
    n_items: int | None = part("items")
    cells: dict[str, Cell] = part("each model's cell, keyed by the model", dict)


class Family(Part):
    """A family of tasks on the overview (detection, NLI, a paper family's own)."""

    key: str | None = part("the family's key")
    title: str | None = part("its title")
    tasks: list[str] = part("its tasks", list)
    columns: list[Column] = part("its columns", list)


class Group(Part):
    """A model's aggregate over a group of tasks (k folds, a paper's average)."""

    group: str | None = part("the group")
    model: str | None = part("the model")
    members: int | None = part("member tasks")
    missing: list[str] = part("member tasks without a run (a group with any is left off)", list)
    member_tasks: list[str] = part("the member tasks", list)
    primary_metric: str | None = part("the metric")
    aggregate: dict[str, GroupSummary] = part("each metric over the members, keyed by name", dict)
    n_items: int | None = part("items over the members")
    member_values: dict[str, Number] = part("each member's value", dict)
    caveats: GroupCaveats | None = part("its caveats")


class HeadlineColumn(Part):
    """A headline benchmark (declared once, in ``tasks/headline.yaml``)."""

    name: str | None = part("the task or group")
    type: str | None = part("``task`` or ``group``")
    slug: str | None = part("its page")
    metric: str | None = part("its metric")
    higher_is_better: bool | None = part("whether higher is better")
    n_items: int | None = part("items")
    members: int | None = part("member tasks (a group)")


class HeadlineCell(Part):
    """A model's value on a headline benchmark: the paper's protocol, its interval and seeds."""

    value: Number | None = part("the primary metric (mean over seeds, or over a group's members)")
    ci_low: Number | None = part("lower end of its 95 % interval")
    ci_high: Number | None = part("upper end of its 95 % interval")
    ci_method: str | None = part("how the interval was computed")
    seeds: int | None = part("seeds (or folds) run")
    protocol_seeds: int | None = part("seeds (or folds) the protocol names")
    n_items: int | None = part("items scored")
    partial: bool | None = part("a partial run")
    reproduction: str | None = part("``reproduced``, ``not_reproducible`` (here), or None: never tried (a board "
                                    "built without ``--reproduce``); a group: ``reproduced`` only if every member is")
    answering: str | None = part("how a decoder answered (``zero-shot scored``, ``5-shot generated``, ``fine-tuned``, "
                                 "and ``lenient parse`` after a dot where a lenient parser read it); None: not a decoder")
    unread: Number | None = part("a generated run's format-failure rate (answers no parser read; a group: its "
                                 "folds' mean), printed beside the value; None: not generated")


class PublishedCell(Part):
    """A published number on a headline benchmark."""

    value: Number | None = part("the published value (0-1 scale)")
    protocol: str | None = part("the paper's protocol")
    differences: str | None = part("how ours differs")
    citation: str | None = part("the paper")
    source: str | None = part("where in the paper")
    best: bool | None = part("the best published number on the benchmark")
    note: int | None = part("the footnote number of its protocol differences")
    answering: str | None = part("how a published decoder answered (``zero-shot generated``, ``fine-tuned``...); "
                                 "None: an encoder's number")
    caveats: list[str] = part("what to read beside the number: a sample of the test set, another metric, no "
                              "interval (`published.Published.caveats`)", list)


class HeadlineRow(Part):
    """A model's row of the headline table; ``cells`` keyed by the column's name."""

    model: str | None = part("the model")
    label: str | None = part("the row's label: the model, and for a decoder the way it answered "
                             "(``SmolLM2-135M-Instruct · zero-shot scored``)")
    answering: str | None = part("the way every cell of the row answered (a decoder's row per way); None: not a "
                                 "decoder")
    cells: dict[str, HeadlineCell] = part("value, interval, seeds and marks per headline column", dict)


class HeadlinePublished(Part):
    """A published system's row of the headline table (never ranked)."""

    system: str | None = part("the system")
    cells: dict[str, PublishedCell] = part("published value per headline column", dict)
    notes: bool | None = part("whether the row carries numbered notes (protocol differences)")


class SmokeRun(Part):
    """A partial run (``--limit``) of a headline task whose model has no whole-split run there."""

    task: str | None = part("the task")
    model: str | None = part("the model")
    n_items: int | None = part("items it scored")
    value: Number | None = part("its primary metric on those items")
    label: str | None = part("the model as the table's rows name it (a decoder: with the way it answered)")
    unread: Number | None = part("a generated run's format-failure rate; None: not generated")


class Headline(Part):
    """The front page's first table: one row per model, one column per headline benchmark."""

    group: str | None = part("the group of headline tasks")
    columns: list[HeadlineColumn] = part("the headline benchmarks", list)
    rows: list[HeadlineRow] = part("our models: whole-split runs only", list)
    published: list[HeadlinePublished] = part("published state of the art and the papers' baselines", list)
    smoke: list[SmokeRun] = part("smoke runs of headline tasks, named under the table, never in it", list)
    notes: list[str] = part("notes under the table on its decoder rows (what their labels mean; a small model "
                            "is a floor, not the state of the art)", list)


class PaperRow(Part):
    """A row of a paper's table: its labels, whose numbers (ours or the paper's) and the cells as printed."""

    labels: list[str] = part("the row's labels", list)
    model: str | None = part("our model (rows of ours)")
    source: str | None = part("``metabench`` (ours) or the paper")
    cells: list[str] = part("the cells as printed", list)


class PaperTable(Part):
    """A table of a paper, filled with our runs where they exist."""

    key: str | None = part("the view's key")
    paper: str | None = part("the paper")
    number: str | None = part("its table number")
    title: str | None = part("its title")
    header: list[str] = part("column headers", list)
    rows: list[PaperRow] = part("rows: ours and the paper's", list)
    tasks: list[str] = part("tasks it reads", list)
    missing_tasks: list[str] = part("tasks without runs", list)
    cells_without_runs: int | None = part("cells left empty")
    cells: int | None = part("cells in all")
    notes: list[str] = part("notes", list)


class GapSeed(Part):
    """A subset gap at one seed (`report.analyses.gaps.SubsetGap`): a two-proportion z test of the accuracies."""

    model: str | None = part("the model")
    reference_task: str | None = part("the task")
    subset_task: str | None = part("its metaphor subset")
    seed: int | None = part("the seed")
    correct_a: int | None = part("items right on the task")
    n_a: int | None = part("items of the task")
    correct_b: int | None = part("items right on the subset")
    n_b: int | None = part("items of the subset")
    accuracy_a: Number | None = part("accuracy on the task")
    accuracy_b: Number | None = part("accuracy on the subset")
    gap: Number | None = part("subset minus task")
    ci_low: Number | None = part("lower end of the gap's interval")
    ci_high: Number | None = part("upper end of the gap's interval")
    z: Number | None = part("the z statistic")
    p_z: Number | None = part("the z test's p-value")
    pvalue: Number | None = part("the p-value the correction reads")
    p_adjusted: Number | None = part("corrected within the board's family of gaps")


class GapRow(Part):
    """A model's accuracy on a task and on its metaphor subset (`report.analyses.gaps`)."""

    model: str | None = part("the model")
    model_slug: str | None = part("its page")
    reference_task: str | None = part("the task")
    subset_task: str | None = part("its metaphor subset")
    seeds: list[GapSeed] = part("per seed: counts, accuracies, the gap, its interval and test", list)
    accuracy_a: Number | None = part("accuracy on the task (mean over seeds)")
    accuracy_b: Number | None = part("accuracy on the subset")
    gap: Number | None = part("subset minus task")
    significant_seeds: int | None = part("seeds whose gap is significant")
    degenerate: bool | None = part("a constant predictor on either side")


class Discordant(Part):
    """The items one side got right and the other wrong (the McNemar pairs)."""

    literal_right_metaphor_wrong: int | None = part("right on the literal paraphrase, wrong on the metaphor")
    metaphor_right_literal_wrong: int | None = part("right on the metaphor, wrong on the literal paraphrase")


class PairedRow(Part):
    """A model's accuracy on original (metaphorical) items against their literal paraphrases, paired by item
    (`report.analyses.paired_variants.PairedEffect`)."""

    model: str | None = part("the model")
    original_task: str | None = part("the task of the original items")
    paraphrase_task: str | None = part("the task of their paraphrases")
    n_items: int | None = part("items paired")
    only_original: int | None = part("original items without a paraphrase")
    only_paraphrase: int | None = part("paraphrases without an original item")
    seeds: list[int] = part("the seeds paired", list)
    accuracy_original: Number | None = part("accuracy on the originals")
    accuracy_paraphrase: Number | None = part("accuracy on the paraphrases")
    effect: Number | None = part("originals minus paraphrases")
    ci_low: Number | None = part("lower end of the effect's interval")
    ci_high: Number | None = part("upper end of the effect's interval")
    test: str | None = part("the paired test")
    statistic: Number | None = part("its statistic")
    pvalue: Number | None = part("its p-value")
    discordant: Discordant | None = part("the discordant pairs")
    p_adjusted: Number | None = part("corrected within the board's family of paired effects")
    notes: list[str] = part("caveats of the test", list)
    partial: bool | None = part("either run is partial (``--limit``)")
    generator: str | None = part("the model that wrote the paraphrases")
    significant: bool | None = part("p_adjusted at or below the board's alpha")


class LayoutCell(Part):
    """One generator's paraphrases in the paper's layout."""

    accuracy: Number | None = part("accuracy on the paraphrases")
    effect: Number | None = part("originals minus paraphrases")
    n_items: int | None = part("items paired")
    significant: bool | None = part("the effect is significant")


class LayoutRow(Part):
    """A row of the paper's layout: a set, a prompt type and a model, with each generator's paraphrases."""

    original_task: str | None = part("the task of the original items")
    model: str | None = part("the model")
    prompt: str | None = part("the way it was prompted (or the encoder's training)")
    original: Number | None = part("accuracy on the originals")
    paraphrases: dict[str, LayoutCell] = part("each generator's paraphrases, keyed by the generator", dict)
    partial: bool | None = part("a partial run among them")


class PairedTable(Part):
    """The paired metaphor effects (`report.analyses.metaphor_effects.paired_rows`)."""

    rows: list[PairedRow] = part("one per model and original/paraphrase pair", list)
    errors: list[str] = part("pairs that could not be analysed, and why", list)
    layout: list[LayoutRow] = part("the rows in the paper's layout", list)


class Coefficient(Part):
    """A regression coefficient with its interval (a logit: its odds ratio)."""

    name: str | None = part("the covariate")
    coef: Number | None = part("its coefficient")
    ci_low: Number | None = part("lower end of its interval")
    ci_high: Number | None = part("upper end of its interval")
    pvalue: Number | None = part("its p-value")
    odds_ratio: Number | None = part("exp(coef)")


class Regression(Part):
    """A logistic regression of correctness on the surface features (`report.analyses.controls`)."""

    n: int | None = part("observations")
    clusters: int | None = part("clusters of the robust covariance (items), where it has them")
    coefficients: list[Coefficient] = part("the coefficients", list)
    confidence: Number | None = part("the intervals' confidence level")
    note: str | None = part("why it could not be estimated, where it could not")
    covariance: str | None = part("the covariance used")
    survives: bool | None = part("the metaphor effect survives the controls")
    verdict: str | None = part("the verdict as printed")


class OverlapBin(Part):
    """Accuracy of metaphorical and literal items within a band of lexical overlap."""

    low: Number | None = part("the band's lower end")
    high: Number | None = part("the band's upper end")
    n_metaphor: int | None = part("metaphorical items in it")
    accuracy_metaphor: Number | None = part("their accuracy")
    n_literal: int | None = part("literal items in it")
    accuracy_literal: Number | None = part("their accuracy")


class ControlRow(Part):
    """A model's metaphor effect with the surface-feature controls (`report.analyses.controls.Controls`)."""

    model: str | None = part("the model")
    metaphor_task: str | None = part("the metaphorical side")
    literal_task: str | None = part("the literal side")
    design: str | None = part("paired (the same items paraphrased) or unpaired (a subset against its task)")
    regression: Regression | None = part("correctness on metaphor, overlap and length")
    regression_gold: Regression | None = part("the same with the gold answer as a covariate")
    bins: list[OverlapBin] = part("accuracy per band of overlap", list)
    mean_overlap: dict[str, Number] = part("mean overlap per side, keyed metaphor / literal", dict)
    mean_length: dict[str, Number] = part("mean length per side, keyed metaphor / literal", dict)
    partial: bool | None = part("either run is partial (``--limit``)")
    metaphor_coef: Coefficient | None = part("the metaphor coefficient of ``regression``")
    overlap_coef: Coefficient | None = part("the overlap coefficient of ``regression``")
    length_coef: Coefficient | None = part("the length coefficient of ``regression``")


class ControlsTable(Part):
    """The surface-feature controls (`report.analyses.metaphor_effects.control_rows`)."""

    rows: list[ControlRow] = part("one per model and metaphor/literal pair", list)
    errors: list[str] = part("pairs that could not be analysed, and why", list)


class Gaps(Part):
    """The paired analyses across tasks: subset gaps, metaphor/literal paraphrases, controls."""

    rows: list[GapRow] = part("a model's accuracy gap between a task and its metaphor subset", list)
    errors: list[str] = part("pairs that could not be analysed, and why", list)
    paired: PairedTable | None = part("metaphor against literal paraphrases of the same items (rows, errors, layout)")
    controls: ControlsTable | None = part("the surface-feature controls' regressions (rows, errors)")


class RunNote(Part):
    """A run left off the ranking (ignored, rejected) or ranked with a mark (unverified)."""

    task: str | None = part("its task")
    model: str | None = part("its model")
    run: str | None = part("its folder")
    reason: str | None = part("why (ignored, unverified)")
    reasons: list[str] | None = part("why (rejected: every failed check)")


class Correction(Part):
    """The multiple-comparison correction within a task."""

    method: str | None = part("its key (holm, bh, none)")
    name: str | None = part("its name")


class SectionView(Part):
    """A registered section's rendered views."""

    html: str | None = part("its HTML")
    markdown: str | None = part("its Markdown")


class Board(Part):
    """The whole board: what ``leaderboard.json`` holds and every reporter reads."""

    schema_version: int = part("the board's schema version")
    title: str | None = part("the title")
    latest_run: str | None = part("when the newest run was made")
    metabench: str | None = part("the metabench version that built it")
    correction: Correction | None = part("the correction within a task")
    alpha: Number | None = part("the significance level")
    confidence: Number | None = part("the confidence level of intervals")
    n_runs: int | None = part("runs ranked")
    n_partial_runs: int | None = part("of which partial")
    ignored_runs: list[RunNote] = part("runs a newer run of the same task, model and items replaced", list)
    rejected_runs: list[RunNote] = part("runs verification rejected, with every reason", list)
    unverified_runs: list[RunNote] = part("runs ranked that could not be verified against the data", list)
    verification: str | None = part("what verification checks, as printed")
    reproduction: BoardReproduction | None = part("whether the runs were reproduced here, with the draw's key")
    marks_rule: str | None = part("the trivial-predictor rule, as printed")
    published_groups: list[PublishedNumber] = part("published numbers for groups of tasks", list)
    families: list[Family] = part("the overview's families", list)
    tasks: list[BoardTask] = part("every task", list)
    models: list[BoardModel] = part("every model", list)
    groups: list[Group] = part("group aggregates", list)
    gaps: Gaps | None = part("the paired analyses across tasks")
    paper_tables: list[PaperTable] = part("papers' tables, filled", list)
    caveat_rules: dict[str, str] = part("each caveat's rule, as printed", dict)
    headline: Headline | None = part("the headline table")
    section_views: dict[str, SectionView] = part("the registered sections' rendered views, keyed by section", dict)

    def section(self, name: str) -> Any:
        """A registered section's data (the plugin's own model where it returned one, else JSON)."""
        extra = self.__pydantic_extra__ or {}
        if name not in extra:
            raise KeyError(f"the board has no section '{name}' (it has: {', '.join(sorted(extra)) or 'none'})")
        return extra[name]

    def sections(self) -> dict[str, Any]:
        """Every registered section's data, keyed by section."""
        return dict(self.__pydantic_extra__ or {})

    def task(self, name: str) -> BoardTask:
        """A task by name."""
        for task in self.tasks:
            if task.name == name:
                return task
        raise KeyError(f"the board has no task '{name}'")


def format_markdown() -> str:
    """docs/leaderboard-format.md: every part of the board, its type and meaning."""
    lines = ["# leaderboard.json format", "",
             "<!-- generated by `metabench schema leaderboard > docs/leaderboard-format.md` from "
             "metabench/report/leaderboard/schema.py; do not edit -->", "",
             "`metabench leaderboard build` writes `leaderboard.json`, the board every reporter reads "
             "(`metabench.report.leaderboard.schema.Board`; a reporter plugin receives the typed board, "
             "[plugins.md](plugins.md)). Parts keyed by data values (models, metrics, seeds) are maps of the part "
             "named. A registered section's data is under its own name, typed by its plugin. Parts a board "
             "leaves out read as their default.", ""]
    seen: list[type[Part]] = []

    def visit(model: type[Part]) -> None:
        if model in seen:
            return
        seen.append(model)
        for spec in model.model_fields.values():
            for inner in _models_in(spec.annotation):
                visit(inner)

    visit(Board)
    for model in seen:
        lines += [f"## `{model.__name__}`", "", (model.__doc__ or "").strip(), "", "| key | type | meaning |",
                  "|---|---|---|"]
        for name, spec in model.model_fields.items():
            lines.append(f"| `{name}` | {_type_name(spec.annotation)} | {spec.description or ''} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _models_in(annotation) -> list[type[Part]]:
    if isinstance(annotation, type) and issubclass(annotation, Part):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _type_name(annotation) -> str:
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "any"
    if isinstance(annotation, type) and issubclass(annotation, Part):
        return f"[`{annotation.__name__}`](#{annotation.__name__.lower()})"
    if isinstance(annotation, type):
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(annotation.__name__,
                                                                                          annotation.__name__)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"map of {_type_name(args[1])}"
    if args:  # a union: `Number` (int | float) reads as one "number"
        names = [_type_name(arg) for arg in args]
        if "number" in names:
            names = ["number" if name == "integer" else name for name in names]
        return " or ".join(dict.fromkeys(names))
    return str(annotation)
