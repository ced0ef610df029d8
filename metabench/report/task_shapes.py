"""The task shapes `metabench stats calibrate` simulates, read from the committed runs.

A simulated test set must look like the real ones: as many items (or documents) as the task has, the real class
balance and cluster sizes, and two systems that agree and disagree as real runs do. So each shape is built from
two seeds of one committed run (the same recipe twice: a difference of exactly 0 in expectation) through the
run readers, never typed: MOH-X folds of 64 items (the ten folds pooled as the population), MUNCH judgements
(the full split and the 100-item decoder runs), VUA-18 sentences in their documents (`metadata.cluster`), and
the Meta4XNLI English detection sentences. The spread of per-seed differences for the paired t comes from the
per-seed values of the same runs.

Which two seeds form the pair matters: two runs of one recipe agree more on some pairs than on others, and a
procedure's error rates move with it (issue 48 item 6: VUA-18's bootstraps, over sentences and over documents,
miss their targets by more on seeds 0/2 and 1/2 than on 0/1, the one pair simulated before; issue 58 item 12: the
sentence bootstrap's worst pair, 0/3, lay outside the first three seeds' pairs, simulated then). So no pair is
picked: `populations` gives one population per pair of the run's seeds (`seed_pairs`: all ten of five seeds, in
`itertools.combinations` order within each shape), and the calibration simulates each one, with fewer test sets
per pair than three pairs had (`calibration.Settings`), so the whole costs what three pairs did.
The paired t's shapes (`seed_shapes`) take every seed too: their figures are numbers, not test sets.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from pathlib import Path

import numpy as np

from ..errors import MetabenchError
from ..stats.calibrate import Population, SeedShape
from ..runs.stored import Run, find_runs

#: (task or fold pattern, run folder) of each shape's population: two seeds of one recipe
MOH_X = ("moh_x_cv_fold*", "hf_minilm-l6")
MUNCH = ("munch_sent_judge_msent_p1", "random")
MUNCH_DECODER = "hf-decoder_smollm2-135m@limit=100"
VUA18 = ("vua18_seq", "hf_minilm-l6")
M4X = ("m4x_det_en_mono", "hf_minilm-l6")
#: every (task pattern, run folder) read here
READ = (MOH_X, MUNCH, (MUNCH[0], MUNCH_DECODER), VUA18, M4X)


def _runs(root: Path, task: str, folder: str) -> list[Run]:
    paths = sorted(p for p in root.glob(f"{task}/{folder}") if p.is_dir())
    if not paths:
        raise MetabenchError(f"{root}/{task}/{folder}: no committed run to read the task's shape from",
                             hint="run from the repository root, or pass --runs leaderboard/runs")
    return find_runs(paths)


def _by_seed(run: Run) -> dict[int, list[dict]]:
    rows: dict[int, list[dict]] = {}
    for row in run.samples:
        rows.setdefault(int(row["seed"]), []).append(row)
    return rows


def seed_pairs(runs: list[Run]) -> list[tuple[int, int]]:
    """Every pair of the seeds the runs share (each shape's runs are one recipe: the same seeds)."""
    seeds = [tuple(run.record.seeds) for run in runs]
    if len(set(seeds)) != 1:
        raise MetabenchError(f"{runs[0].record.task.name}: the runs of one shape have different seeds: {sorted(set(seeds))}")
    if len(seeds[0]) < 2:
        raise MetabenchError(f"{runs[0].record.task.name}: a shape needs two seeds of one recipe; the run has {list(seeds[0])}")
    return list(itertools.combinations(sorted(seeds[0]), 2))


def _records(run: Run, metric: str, pair: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per-item records of the two seeds of ``pair`` (see `Population`) and the item ids, in the run's order."""
    rows = _by_seed(run)
    first, second = rows[pair[0]], {r["id"]: r for r in rows[pair[1]]}
    ids = [r["id"] for r in first]

    def record(row: dict) -> list[float]:
        scores = row["scores"]
        if metric == "correct":
            return [scores["correct"], 1.0]
        if metric in ("token", "span"):
            return [scores[f"{metric}_tp"], scores[f"{metric}_fp"], scores[f"{metric}_fn"]]
        gold, predicted = row["gold"] == metric, row["prediction"] == metric  # F1 of the positive label
        return [float(gold and predicted), float(predicted and not gold), float(gold and not predicted)]

    return (np.array([record(r) for r in first]), np.array([record(second[i]) for i in ids]), ids)


def _positive(run: Run) -> str:
    for spec in run.record.task.config.metrics:
        if not isinstance(spec, str) and spec.name == "f1" and "positive" in spec.args:
            return spec.args["positive"]
    raise MetabenchError(f"task '{run.record.task.name}' has no f1 metric with a positive label")


def populations(root: Path) -> list[Population]:
    """Every item-level shape (see the module docstring), read from the committed runs under ``root``: one
    population per shape and pair of seeds, the pairs of a shape in `seed_pairs`' order."""
    folds = _runs(root, *MOH_X)
    fold_size = folds[0].record.n_items
    munch = _runs(root, *MUNCH)[0]
    decoder = _runs(root, MUNCH[0], MUNCH_DECODER)[0]
    vua = _runs(root, *VUA18)[0]
    spec = vua.record.task.config.metadata.cluster
    if spec is None:
        raise MetabenchError(f"task '{VUA18[0]}' declares no metadata.cluster: its documents cannot be resampled")
    m4x = _runs(root, *M4X)[0]
    out = []
    for pair in seed_pairs(folds):
        correct = [_records(run, "correct", pair) for run in folds]
        out.append(Population("moh_x_cv fold", "mean", np.concatenate([a for a, _, _ in correct]),
                              np.concatenate([b for _, b, _ in correct]), "items", fold_size, tasks=MOH_X[0],
                              metric_name="accuracy", seeds=pair))
    for pair in seed_pairs(folds):
        f1 = [_records(run, _positive(run), pair) for run in folds]
        out.append(Population("moh_x_cv fold F1", "f1", np.concatenate([a for a, _, _ in f1]),
                              np.concatenate([b for _, b, _ in f1]), "items", fold_size, tasks=MOH_X[0],
                              metric_name="f1", seeds=pair))
    for task, size in ((f"{MUNCH[0]}@limit", decoder.record.n_items), (MUNCH[0], munch.record.n_items)):
        for pair in seed_pairs([munch]):
            munch_a, munch_b, _ = _records(munch, "correct", pair)
            out.append(Population(task, "mean", munch_a, munch_b, "items", size, tasks=MUNCH[0],
                                  metric_name="accuracy", seeds=pair))
    for pair in seed_pairs([vua]):
        vua_a, vua_b, vua_ids = _records(vua, "token", pair)
        names = [_document(spec.id_pattern, i) for i in vua_ids]
        documents = {name: k for k, name in enumerate(dict.fromkeys(names))}
        out.append(Population(f"{VUA18[0]} token_f1", "f1", vua_a, vua_b, spec.name, len(documents),
                              np.array([documents[n] for n in names]), tasks=VUA18[0], metric_name="token_f1",
                              seeds=pair))
    for pair in seed_pairs([m4x]):
        m4x_a, m4x_b, _ = _records(m4x, "span", pair)
        out.append(Population(f"{M4X[0]} span_f1", "f1", m4x_a, m4x_b, "sentences", m4x.record.n_items, tasks=M4X[0],
                              metric_name="span_f1", seeds=pair))
    return out


def _document(pattern: str, item_id: str) -> str:
    """The document an item id names (the task's ``clusters.id_pattern``'s first group)."""
    found = re.search(pattern, item_id)
    if found is None:
        raise MetabenchError(f"item id {item_id!r} does not match the task's cluster id_pattern {pattern!r}",
                             hint="the committed runs and the task's clusters disagree: rerun the task")
    return found.group(1)


def seed_shapes(root: Path) -> list[SeedShape]:
    """The paired t's shapes: seeds per run, and the spread of per-seed differences of two such runs,
    sqrt(2) times the runs' per-seed standard deviation of the primary metric (the median over MOH-X's folds)."""
    def spread(runs: list[Run]) -> float:
        return math.sqrt(2) * statistics.median(
            statistics.stdev(v for v in r.record.per_seed(r.record.primary_metric) if v is not None) for r in runs)

    folds = _runs(root, *MOH_X)
    vua, m4x = _runs(root, *VUA18), _runs(root, *M4X)
    return [SeedShape(f"moh_x_cv fold {folds[0].record.primary_metric}", len(folds[0].record.seeds), spread(folds), MOH_X[0],
                      folds[0].record.primary_metric),
            SeedShape(f"{VUA18[0]} {vua[0].record.primary_metric}", len(vua[0].record.seeds), spread(vua), VUA18[0],
                      vua[0].record.primary_metric),
            SeedShape(f"{M4X[0]} {m4x[0].record.primary_metric}", len(m4x[0].record.seeds), spread(m4x), M4X[0],
                      m4x[0].record.primary_metric)]


def family_size(root: Path) -> int:
    """How many checks one Holm/BH family holds: the MOH-X folds, gated together."""
    return len(_runs(root, *MOH_X))
