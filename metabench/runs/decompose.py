"""A corpus metric rebuilt from per-item records, which is what item-level tests resample.

Accuracy is a mean of per-item correctness, but F1 is not a mean of per-item F1s: a bootstrap must
resample items and recompute F1 from the summed counts of the resample. For a metric of two paired runs
this module finds per-item records and one function of a set of records that gives back the metric:

- a mean of a per-item score: ``accuracy`` from ``correct``, any metric whose name is also a per-item score
  key, and the generation kind's ``mrr``, ``accuracy_at_1`` and ``recall_at_k[k=K]`` from its
  ``reciprocal_rank``, ``correct`` and ``recall_at_K``. Records: the item's score averaged over seeds, and
  the metric is ``"mean"`` (the stats module's vectorised path).
- ``span_*`` / ``token_*`` precision, recall and F1 from the per-item ``{span,token}_{tp,fp,fn}`` counts.
- classification ``precision``/``recall``/``f1`` (``positive=``) and ``macro_f1`` (``labels=`` or, like
  the metric itself, the labels seen in gold or predictions) from one-vs-rest counts of gold and prediction.
- any metric that declares a per-item decomposition (:mod:`metabench.metrics.decomposition`, e.g. a plugin's):
  the per-item contributions the runner stored (``<metric>#<j>`` scores) and the metric's own ``combine``.
- failing all of these, any registered metric ``f(golds, preds, **args)``: the function itself, called on each
  resample's gold answers and predictions from samples.jsonl (`_recomputed`), kept when it reproduces
  results.json.

For count metrics the records are the items' *positions* in a count table of the pair (0..n-1 for the
baseline, n..2n-1 for the candidate), and the metric sums the counts of the drawn positions with one
matrix product. A bootstrap thus never copies count rows (ten times faster on thousands of items), and a
randomisation test that exchanges items between the runs still finds each item's own counts.

The records here are per item: a sentence for tagging tasks, whose tokens are not independent (one
sentence's words share a topic, a register and an annotator's reading), so their counts move together
(`clusters` groups items further where a task declares clusters, e.g. documents). `token_units` gives the
same metrics with every token as a unit instead, which is what a naive token-level bootstrap does;
`metabench compare --unit token` shows it beside the default to make the clustering visible (its interval is
narrower, and too narrow).

With several seeds the metric is the mean over seeds of the per-seed metric, the same items resampled for
every seed, so it reproduces results.json's ``aggregate.mean``; that is checked, so samples that do not
belong to their results.json are caught. Metrics needing context the samples do not hold (in/out-of-
vocabulary F1 needs the words) have no decomposition: seed-level tests remain for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import MetabenchError
from ..metrics.common import prf
from ..metrics.decomposition import contribution_keys, decomposition_of
from ..metrics.tagging import parse_tag
from ..stats.paired import over_rows
from ..run_record import RecordedConfig
from .align import Pair
from .stored import Run

_COUNTS = re.compile(r"^(span|token)_(precision|recall|f1)$")
_LABEL_METRICS = ("precision", "recall", "f1", "macro_f1")
_SCORE_OF = {"accuracy": "correct"}
#: readings by naming convention (the generation kind's per-item scores), kept only when they reproduce the metric
_CONVENTIONAL = {"mrr": "reciprocal_rank", "accuracy_at_1": "correct"}
_RECALL_AT = re.compile(r"^recall_at_k\[k=(\d+)\]$")
_TOLERANCE = 1e-6


@dataclass(frozen=True)
class ItemMetric:
    """A metric as a function of per-item records (first axis: items, in the pair's order).

    ``metric`` is what `metabench.stats.paired_bootstrap` takes: ``"mean"`` or a callable. ``correct`` is
    the per-item 0/1 vector when the metric is a proportion of correct items at a single seed (McNemar's
    input), else None. ``layout`` is the shape of one item's record behind the scenes (seeds × labels ×
    counts, or the seed count for means): two runs may exchange items only when it is the same.
    """

    #: one row per item; `clusters.clustered` makes it one array of rows per cluster (clusters differ in size)
    records: np.ndarray | list[np.ndarray]
    metric: Callable[[np.ndarray], float] | str
    value: float
    correct: np.ndarray | None
    layout: tuple


@dataclass(frozen=True)
class _Counts:
    """tp/fp/fn per item, seed and label: ``table[i, j, l] = (tp, fp, fn)``; ``stat`` is averaged over labels."""

    table: np.ndarray
    stat: str
    fixed_labels: bool


def metric_args(run: Run, metric: str, config: RecordedConfig | None = None) -> dict | None:
    """The arguments of ``metric`` in ``config`` (default: the run's recorded task config), or None when the
    task does not list it."""
    return (run.record.task.config if config is None else config).metric_args(metric)


def item_metrics(aligned: Pair, metric: str, registry=None) -> tuple[ItemMetric | None, ItemMetric | None]:
    """Per-item records of ``metric`` for both runs of a pair, or (None, None) if the samples cannot give them.

    A reading from the per-item scores the kind made for this metric must reproduce results.json, or the
    files do not belong together (an error). A reading by convention (labels counted from the samples' gold
    and prediction, score names of other kinds) that does not is dropped: a kind may parse raw outputs
    into labels before scoring, and then the samples' predictions are not the metric's input. ``registry``
    resolves the ``combine`` of metrics that declare a decomposition (without it, they have no reading).
    """
    labels = _labels(aligned.rows_a, aligned.rows_b) if metric in _LABEL_METRICS else None
    declared = _declared(registry, metric)
    found_a = _build(aligned.a, aligned.rows_a, metric, labels, declared)
    found_b = _build(aligned.b, aligned.rows_b, metric, labels, declared)
    built: list[ItemMetric] | None
    if found_a is None or found_b is None:
        built, exact = _recomputed(aligned, metric, registry), False
    else:
        (reading_a, exact), (reading_b, _) = found_a, found_b
        if isinstance(reading_a, _Counts) and isinstance(reading_b, _Counts):
            built = _positional(reading_a, reading_b)
        elif isinstance(reading_a, ItemMetric) and isinstance(reading_b, ItemMetric):
            built = [reading_a, reading_b]
        else:  # one run's samples read as counts, the other's not: no one reading of both
            built = None
    if built is None:
        return None, None
    for run, item in zip((aligned.a, aligned.b), built):
        stored = run.record.mean(metric)
        if stored is not None and abs(item.value - stored) > _TOLERANCE:
            if not exact:
                return None, None
            raise MetabenchError(
                f"{run.path}: {metric} recomputed from samples.jsonl is {item.value:.6f} but results.json "
                f"reports {stored:.6f}; the two files do not belong together",
                hint="copy both files of one run, or rerun it",
            )
    return built[0], built[1]


def _recomputed(aligned: Pair, metric: str, registry) -> list[ItemMetric] | None:
    """The last resort for a metric of the form ``f(golds, preds, **args)``: call the registered function itself
    on each resample's gold answers and predictions (mean over seeds), as the samples hold both. Slower than a
    decomposition (one call per resample), but it needs nothing from the metric's author; a metric that needs
    more than (gold, prediction), or whose kind scored parsed outputs, fails to reproduce results.json and gets
    no reading. Records are positions, as for count metrics (see the module docstring)."""
    if registry is None or "[" in metric or not registry.has("metric", metric):
        return None
    args_a, args_b = (metric_args(run, metric) for run in (aligned.a, aligned.b))
    if args_a is None or args_a != args_b:
        return None
    fn = registry.resolve("metric", metric)
    n = len(aligned.ids)
    # answers[side][seed] = (golds, predictions) over the items in pair order
    answers = [[([item[j]["gold"] for item in rows], [item[j]["prediction"] for item in rows])
                for j in range(len(rows[0]))] for rows in (aligned.rows_a, aligned.rows_b)]
    same_layout = len(answers[0]) == len(answers[1])

    def value(positions: np.ndarray) -> float:
        if same_layout:  # positions of either run, or of both when a test exchanges items
            sides, local = positions >= n, positions % n
            seeds = [[(answers[int(s)][j][0][i], answers[int(s)][j][1][i]) for s, i in zip(sides, local)]
                     for j in range(len(answers[0]))]
        else:  # other seeds: only a bootstrap, drawing from one run at a time
            side = int(positions[0] >= n)
            seeds = [[(g[i], p[i]) for i in positions - side * n] for g, p in answers[side]]
        total = 0.0
        for pairs in seeds:
            golds, preds = zip(*pairs)
            total += float(fn(list(golds), list(preds), **args_a))
        return total / len(seeds)

    positions = (np.arange(n), np.arange(n, 2 * n))
    try:
        values = [value(p) for p in positions]
    except Exception:  # noqa: BLE001 - a metric needing more than (gold, prediction) raises here: no reading
        return None
    return [ItemMetric(p, value, v, None, (len(answers[side]), "recomputed"))
            for side, (p, v) in enumerate(zip(positions, values))]


def token_units(aligned: Pair, metric: str) -> tuple[ItemMetric, ItemMetric] | None:
    """``token_*`` precision/recall/F1 of both runs with each token (word) as a resampling unit, or None for
    other metrics. Per token: (tp, fp, fn) of the positive type, summed back to each sentence's stored counts
    (checked, so the token table is the same metric, only cut finer)."""
    match = _COUNTS.match(metric)
    if not match or match[1] != "token" or not _has_tags(aligned):
        return None
    tables = [_token_table(run, rows, metric)
              for run, rows in ((aligned.a, aligned.rows_a), (aligned.b, aligned.rows_b))]
    if tables[0].shape[0] != tables[1].shape[0]:
        raise MetabenchError(f"task '{aligned.a.record.task.name}': the runs' predictions have different numbers of words")
    token_a, token_b = _positional(*(_Counts(t, match[2], fixed_labels=True) for t in tables))
    return token_a, token_b


def _has_tags(aligned: Pair) -> bool:
    first = aligned.rows_a[0][0]
    return isinstance(first.get("gold"), list) and isinstance(first.get("prediction"), list)


def _token_table(run: Run, rows, metric: str) -> np.ndarray:
    """tokens × seeds × 1 × (tp, fp, fn), tokens in item order then word order."""
    default = run.record.task.config.labels.positive
    positive = (metric_args(run, metric) or {}).get("positive", default)
    seen: dict = {}

    def hit(tag) -> bool:
        key = (tag.__class__, tag)
        if key not in seen:
            prefix, type_ = parse_tag(tag, positive)
            seen[key] = prefix != "O" and type_ == positive
        return seen[key]

    per_seed = []
    for j in range(len(rows[0])):
        tallies = []
        for item in rows:
            row = item[j]
            words = [(hit(g), hit(p)) for g, p in zip(row["gold"], row["prediction"])]
            counts = [(int(g and p), int(p and not g), int(g and not p)) for g, p in words]
            stored = tuple(row["scores"].get(f"token_{c}") for c in ("tp", "fp", "fn"))
            if None not in stored and tuple(map(sum, zip(*counts, (0, 0, 0)))) != tuple(int(v) for v in stored):
                raise MetabenchError(
                    f"{run.path}: item {row['id']!r}: the token counts of its tags differ from the stored "
                    f"token_tp/fp/fn {stored}", hint="copy both files of one run, or rerun it")
            tallies.extend(counts)
        per_seed.append(tallies)
    return np.array(per_seed, dtype=float).transpose(1, 0, 2)[:, :, None, :]


def seed_values(run: Run, rows, metric: str, registry=None, config: RecordedConfig | None = None) -> tuple[list[float], bool] | None:
    """``metric`` at each seed of one run, rebuilt from its samples (``rows`` as `align.item_rows` gives them,
    in the run's item order) with ``config`` (the task's config as it is here; default: the run's recorded
    one), and whether the reading is exact (see `item_metrics`); None when the samples cannot give it. What the
    leaderboard's verification compares with results.json's per-seed values."""
    declared = _declared(registry, metric)
    values, exact = [], True
    for seed in range(len(run.record.seeds)):
        one = [(item[seed],) for item in rows]
        found = _build(run, one, metric, _labels(one) if metric in _LABEL_METRICS else None, declared, config)
        if found is None:
            return None
        built, exact = found[0], exact and found[1]
        if isinstance(built, _Counts):
            values.append(_score(built.table.sum(axis=0), built.stat, built.fixed_labels))
        else:
            values.append(built.value)
    return values, exact


def _labels(*row_sets) -> list | None:
    """Every gold and predicted answer of these rows (a pair's two runs, or one seed of a run), in first-seen
    order; None if answers are not single labels (tag sequences, rankings)."""
    answers = [r[key] for rows in row_sets for item in rows for r in item for key in ("gold", "prediction")]
    if not all(isinstance(v, (str, int, float, bool)) or v is None for v in answers):
        return None
    return list(dict.fromkeys(answers))


def _declared(registry, metric: str):
    """The decomposition the metric's function declares (``recall_at_k[k=5]`` is metric ``recall_at_k``)."""
    name = metric.split("[", 1)[0]
    if registry is None or not registry.has("metric", name):
        return None
    return decomposition_of(registry.resolve("metric", name))


def _build(run: Run, rows, metric: str, labels: list | None, declared=None,
           config: RecordedConfig | None = None) -> tuple[ItemMetric | _Counts, bool] | None:
    """A reading of ``metric`` from the samples and whether it is exact (see `item_metrics`), or None; labels,
    positive class and metric arguments from ``config`` (default: the run's recorded task config)."""
    config = run.record.task.config if config is None else config
    scores = rows[0][0]["scores"]
    keys = contribution_keys(scores, metric)
    if declared is not None and keys:
        return _contributions(rows, keys, declared, metric_args(run, metric.split("[", 1)[0], config) or {}), True
    score = _SCORE_OF.get(metric, metric)
    if score in scores:
        return _mean_of(rows, score), True
    match = _COUNTS.match(metric)
    if match and f"{match[1]}_tp" in scores:
        positive = config.labels.positive
        if (metric_args(run, metric, config) or {}).get("positive", positive) != positive:
            return None  # the per-item counts were taken for the task's positive class, not this one
        unit, stat = match[1], match[2]
        table = np.array([[[r["scores"][f"{unit}_{c}"] for c in ("tp", "fp", "fn")] for r in item] for item in rows])
        return _Counts(table[:, :, None, :], stat, fixed_labels=True), True
    recall = _RECALL_AT.match(metric)
    conventional = f"recall_at_{recall[1]}" if recall else _CONVENTIONAL.get(metric)
    if conventional is not None and conventional in scores:
        return _mean_of(rows, conventional), False
    if metric in _LABEL_METRICS:
        counts = _label_counts(metric_args(run, metric, config), rows, metric, labels)
        return None if counts is None else (counts, False)
    return None


def _contributions(rows, keys: list[str], declared, args: dict) -> ItemMetric:
    """Records: contributions per item × seed × component; the metric: ``combine`` per seed, averaged."""
    table = np.array([[[r["scores"][k] for k in keys] for r in item] for item in rows], dtype=float)

    def value(records: np.ndarray) -> float:
        return sum(declared.value(records[:, seed, :], args) for seed in range(records.shape[1])) / records.shape[1]

    return ItemMetric(table, value, value(table), None, table.shape[1:])


def _mean_of(rows, score: str) -> ItemMetric:
    values = np.array([[r["scores"][score] for r in item] for item in rows], dtype=float)
    correct = None
    if values.shape[1] == 1 and np.isin(values, (0.0, 1.0)).all():
        correct = values[:, 0].astype(bool)
    per_item = values.mean(axis=1)
    return ItemMetric(per_item, "mean", float(per_item.mean()), correct, (values.shape[1],))


def _label_counts(args: dict | None, rows, metric: str, seen: list | None) -> _Counts | None:
    """One-vs-rest counts per label (``args``: the metric's arguments in the task config); ``seen`` (every gold
    and predicted answer of the pair) is the label set of ``macro_f1`` without ``labels=``: labels absent from a
    resample drop out, as in the metric itself."""
    if args is None or seen is None:
        return None
    if metric == "macro_f1":
        fixed = args.get("labels") is not None
        labels, stat = (list(dict.fromkeys(args["labels"])) if fixed else seen), "f1"
    elif "positive" in args:
        fixed, labels, stat = True, [args["positive"]], metric
    else:
        return None
    return _Counts(_one_vs_rest(rows, labels), stat, fixed)


#: answers compared with numpy's elementwise ``==`` on object arrays: Python's own ``==`` for each, so 1 == 1.0
#: == True as in the metric; anything else (a list) is compared one item at a time
_SCALARS = (str, int, float, bool, type(None))


def _one_vs_rest(rows, labels: list) -> np.ndarray:
    """``table[item, seed, label] = (tp, fp, fn)`` of each label against the rest: one elementwise comparison
    per label over every answer (Python's ``==`` on each pair, as `_one_vs_rest_item` does) when all are
    single values, which the leaderboard's thousands of rows need; else item by item."""
    shape = (len(rows), len(rows[0]))
    golds = [r["gold"] for item in rows for r in item]
    predictions = [r["prediction"] for item in rows for r in item]
    if not all(type(v) in _SCALARS for v in (*golds, *predictions, *labels)):
        return np.array([[[_one_vs_rest_item(r["gold"], r["prediction"], label) for label in labels] for r in item]
                         for item in rows], dtype=float)
    gold, prediction = np.empty(len(golds), dtype=object), np.empty(len(golds), dtype=object)
    gold[:], prediction[:] = golds, predictions
    table = np.empty((len(golds), len(labels), 3))
    for j, label in enumerate(labels):
        is_gold, is_predicted = (gold == label).astype(bool), (prediction == label).astype(bool)
        table[:, j, 0] = is_predicted & is_gold
        table[:, j, 1] = is_predicted & (gold != label).astype(bool)
        table[:, j, 2] = (prediction != label).astype(bool) & is_gold
    return table.reshape(*shape, len(labels), 3)


def _one_vs_rest_item(gold, prediction, label) -> tuple[int, int, int]:
    return (int(prediction == label and gold == label), int(prediction == label and gold != label),
            int(prediction != label and gold == label))


def _score(totals: np.ndarray, stat: str, fixed_labels: bool) -> float:
    """Mean over seeds of ``stat`` averaged over labels, from summed counts ``totals[seed, label] = (tp, fp, fn)``.

    Without a fixed label set a label counts only where it occurs (as gold or prediction) at that seed, which
    is how the metric itself chooses its labels.
    """
    per_seed = []
    for seed in totals.tolist():
        counts = seed if fixed_labels else [c for c in seed if any(c)]
        per_seed.append(sum(prf(*c)[stat] for c in counts) / len(counts))
    return sum(per_seed) / len(per_seed)


def _positional(a: _Counts, b: _Counts) -> list[ItemMetric]:
    """Both runs' count metrics over one position table (see the module docstring), each with its form over a
    block of resamples (`metabench.stats.paired.over_rows`, see `_tallies`)."""
    n = len(a.table)
    flat = (a.table.reshape(n, -1), b.table.reshape(n, -1))
    shapes = (a.table.shape[1:], b.table.shape[1:])
    positions = (np.arange(n), np.arange(n, 2 * n))

    def metric(positions: np.ndarray) -> float:
        weights = np.bincount(positions, minlength=2 * n)
        if shapes[0] == shapes[1]:  # positions of either run, or of both when a test exchanges items
            totals, shape = weights[:n] @ flat[0] + weights[n:] @ flat[1], shapes[0]
        else:  # other seeds: only a bootstrap, drawing from one run at a time (``layout`` keeps swaps away)
            side = int(positions[0] >= n)
            totals, shape = weights[side * n:(side + 1) * n] @ flat[side], shapes[side]
        return _score(totals.reshape(shape), a.stat, a.fixed_labels)

    items = _Tallies(np.hstack(flat), split=flat[0].shape[1])  # an item: both runs' counts side by side
    pooled = _Tallies(np.vstack(flat)) if shapes[0] == shapes[1] else None  # a position of either run

    def rows(records: np.ndarray, draws: np.ndarray) -> np.ndarray:
        side = next((s for s in (0, 1) if records is positions[s]), None)
        if side is not None:  # one run's own positions: the draws are item numbers, the same for both runs
            totals, shape = items.totals(draws, side), shapes[side]
        elif pooled is not None:  # positions of both runs, as a test that exchanges items draws them
            totals, shape = pooled.totals(np.take(records, draws, axis=0), 0), shapes[0]
        else:  # both runs of other seeds in one pool (no test draws them): as `metric` reads each row
            return np.array([metric(row) for row in np.take(records, draws, axis=0)])
        scored = _scores(totals.reshape(len(draws), *shape), a.stat, a.fixed_labels)
        if scored is None:  # a seed with no label to average: `_score` raises the error it always raised
            return np.array([metric(row) for row in np.take(records, draws, axis=0)])
        return scored

    return [ItemMetric(p, over_rows(metric, rows), metric(p), None, shape) for p, shape in zip(positions, shapes)]


class _Tallies:
    """Summed count rows of many resamples at once, through the few distinct rows a count table holds.

    A resample's totals are the sum of its drawn items' count rows. Items of a binary task at one seed have a
    handful of distinct rows (a true positive, a false positive...), so each drawn item is read as its row's
    number, one ``bincount`` per block counts how often each distinct row was drawn in each resample, and a
    small matrix product gives the totals: no copy of the draws, no items × resamples matrix. Counts are whole
    numbers, so the totals are exact, equal to the one-resample sums whatever the order of the additions.
    The last block is kept (alive, so ``is`` cannot mistake a new array for it): a bootstrap hands both runs'
    calls the same block, and its tally is made once.
    """

    def __init__(self, table: np.ndarray, split: int | None = None):
        distinct, self.row_of = np.unique(table, axis=0, return_inverse=True)
        self.row_of = self.row_of.reshape(-1)
        self.tables = (distinct,) if split is None else (distinct[:, :split], distinct[:, split:])
        self._last: tuple = (None, None)

    def totals(self, draws: np.ndarray, part: int) -> np.ndarray:
        """Each row of ``draws``' summed counts in ``tables[part]``; ``draws`` index the table's rows."""
        if self._last[0] is not draws:
            self._last = (draws, _drawn_counts(self.row_of, draws, len(self.tables[0])))
        return self._last[1] @ self.tables[part]


#: Up to this many distinct count rows, how often each is drawn is counted by comparing the drawn row numbers
#: (one byte each) with each row number, instead of one ``bincount`` over an offset int64 copy of the draws:
#: ~4x faster where a task has a handful of rows (every binary task), the same whole numbers.
_COMPARED_ROWS = 16


def _drawn_counts(row_of: np.ndarray, draws: np.ndarray, k: int) -> np.ndarray:
    """``counts[r, j]``: how many of resample ``r``'s draws are of distinct row ``j`` (int64)."""
    if k > _COMPARED_ROWS:
        drawn = row_of[draws] + (k * np.arange(len(draws)))[:, None]
        return np.bincount(drawn.ravel(), minlength=k * len(draws)).reshape(len(draws), k)
    drawn = row_of.astype(np.uint8)[draws]
    counts = np.empty((len(draws), k), dtype=np.int64)
    for row in range(k - 1):
        counts[:, row] = np.count_nonzero(drawn == row, axis=1)
    counts[:, k - 1] = draws.shape[1] - counts[:, :k - 1].sum(axis=1)  # every draw is of some row
    return counts


def _scores(totals: np.ndarray, stat: str, fixed_labels: bool) -> np.ndarray | None:
    """`_score` of many count tables at once (``totals[row, seed, label] = (tp, fp, fn)``), with the same
    floating-point operations in the same order, so every value equals `_score`'s bit for bit (what keeps the
    leaderboard's numbers those of the one-resample-at-a-time bootstrap). None when some seed of some row has
    no label to average over (where `_score` raises): the caller then takes `_score`'s path for its error."""
    tp, fp, fn = totals[..., 0], totals[..., 1], totals[..., 2]
    precision = _safe_divide(tp, tp + fp)
    recall = _safe_divide(tp, tp + fn)
    value = {"precision": precision, "recall": recall,
             "f1": _safe_divide(2 * precision * recall, precision + recall)}[stat]
    counted = np.ones(tp.shape, dtype=bool) if fixed_labels else (totals != 0).any(axis=-1)
    labels = counted.sum(axis=-1)
    if not labels.all():
        return None
    per_seed = np.zeros(labels.shape)
    for label in range(value.shape[-1]):  # label by label, as Python's sum() adds them
        per_seed = per_seed + np.where(counted[..., label], value[..., label], 0.0)
    per_seed = per_seed / labels
    total = np.zeros(len(totals))
    for seed in range(per_seed.shape[1]):
        total = total + per_seed[:, seed]
    return total / per_seed.shape[1]


def _safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """`metabench.metrics.common.safe_div` elementwise: 0.0 where the denominator is 0."""
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0)
