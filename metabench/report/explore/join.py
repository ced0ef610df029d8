"""The rows of ``metabench explore``: a run's per-item answers joined with the items' text from the user's mirror.

Runs hold ids, golds and predictions, never text (dataset licences). Here the task's test split is loaded
again through the registry, as the run loaded it, and each sample is joined with its item by id, on this
machine only. Every short, repeated item field (genre, POS, language, label...) becomes a facet to filter by;
the overlap ratio φ of hard-metaphor items becomes φ bins; a task's input view (``task@view``) is a facet too.
With two runs, the items are paired by id and classed by who got them right: the discordant ones are the
McNemar test's b and c cells.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import MetabenchError

#: A field with at most this many distinct values (each this short) is a facet, not text.
MAX_FACET_VALUES = 40
MAX_FACET_LENGTH = 40
#: Numeric fields shown as bins of the overlap ratio phi (Li et al.'s hard metaphors: ``SenseExample.overlap``,
#: ``meta["phi"]`` of HARD(M) items), unless the items carry their own bin (``meta["phi_bin"]``, the paper's).
PHI_FIELDS = ("overlap", "phi", "meta.overlap", "meta.phi")
PHI_BIN_FIELD = "meta.phi_bin"
PHI_BINS = ((0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.0001))


@dataclass
class Answer:
    """One run's answer on an item: shown text for gold and prediction, and whether it is right."""

    prediction: str
    correct: bool
    marks: list[tuple[str, bool, bool]] | None = None  # tagging: (word, gold positive, predicted positive)


@dataclass
class Row:
    id: str
    text: dict[str, str]
    facets: dict[str, str]
    gold: str
    answers: list[Answer]

    @property
    def pair(self) -> str:
        """With two runs: both, neither, only_a or only_b (right); '' with one run."""
        if len(self.answers) != 2:
            return ""
        a, b = (answer.correct for answer in self.answers)
        return "both" if a and b else "neither" if not (a or b) else "only_a" if a else "only_b"


@dataclass
class Exploration:
    task: str
    runs: list[dict]  # model, path, seed, n_items, partial
    rows: list[Row]
    facets: dict[str, list[str]] = field(default_factory=dict)  # name -> values, in order
    text_fields: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {"items": len(self.rows)}
        for index, run in enumerate(self.runs):
            out[f"correct_{index}"] = sum(row.answers[index].correct for row in self.rows)
        if len(self.runs) == 2:
            for name in ("both", "neither", "only_a", "only_b"):
                out[name] = sum(row.pair == name for row in self.rows)
        return out


def explore(registry, runs: list, *, seed: int | None = None, data_dir: Path | None = None) -> Exploration:
    """Join one or two stored runs (:class:`metabench.runs.stored.Run`) of a task with its test items."""
    if not 1 <= len(runs) <= 2:
        raise MetabenchError(f"explore takes one run or two runs of the same task, got {len(runs)}",
                             hint="metabench explore RUN [RUN_B]")
    task = runs[0].record.task.name
    if any(run.record.task.name != task for run in runs):
        raise MetabenchError(f"explore: the runs are of different tasks ({', '.join(run.record.task.name for run in runs)})",
                             hint="pass two runs of one task to see the items they disagree on")
    if len(runs) == 2 and Path(runs[0].path).resolve() == Path(runs[1].path).resolve():
        raise MetabenchError(f"explore: the same run given twice ({runs[0].path}): a run never disagrees with itself, "
                             "so the side-by-side page would list no items",
                             hint=f"explore it alone (metabench explore {runs[0].path}), or give two runs of "
                             f"'{task}' to see the items they disagree on")
    items = _test_items(registry, task, data_dir)
    picked = [_samples(run, seed) for run in runs]
    ids = [sample_id for sample_id in picked[0] if all(sample_id in other for other in picked[1:])]
    missing = [sample_id for sample_id in ids if sample_id not in items]
    if missing:
        raise MetabenchError(
            f"explore: {len(missing)} item(s) of the run are not in task '{task}''s test split as loaded here "
            f"(first: {missing[0]!r})", hint="the mirror or the task changed since the run; rerun it, or point "
            "--data-dir at the mirror it was run on")
    facet_fields, text_fields = _classify([items[i] for i in ids])
    if ids:  # a field holding the gold itself (a tagged sentence's tags) is the gold column already
        first_item, first_gold = items[ids[0]], picked[0][ids[0]].get("gold")
        text_fields = [name for name in text_fields if _jsonable(_value(first_item, name)) != first_gold]
    rows = [_row(items[i], [p[i] for p in picked], facet_fields, text_fields, task) for i in ids]
    facets: dict[str, list[str]] = {}
    for row in rows:
        for name, value in row.facets.items():
            facets.setdefault(name, [])
            if value not in facets[name]:
                facets[name].append(value)
    described = [{"model": run.record.model.spec, "path": str(run.path), "seed": _seed(run, seed), "n_items": len(ids),
                  "partial": run.partial} for run in runs]
    shown = [name.removeprefix("meta.") for name in text_fields]
    return Exploration(task, described, rows, {k: sorted(v) for k, v in facets.items()}, shown)


def _test_items(registry, task_name: str, data_dir: Path | None) -> dict:
    from ...config.index import TaskIndex
    from ...jobs import prepare

    index = TaskIndex(registry)
    if task_name not in index.tasks:
        raise MetabenchError(f"explore: task '{task_name}' is not installed here, so its items cannot be read",
                             hint="install the plugin that provides it (`metabench ls tasks`)")
    data = prepare(registry, index.load(task_name), data_dir=data_dir)
    return {item.id: item for item in data.test.items}


def _seed(run, seed: int | None) -> int:
    if seed is None:
        return run.record.seeds[0]
    if seed not in run.record.seeds:
        raise MetabenchError(f"--seed {seed}: run {run.path} has seeds {run.record.seeds}", hint="pick one of them")
    return seed


def _samples(run, seed: int | None) -> dict[str, dict]:
    wanted = _seed(run, seed)
    return {s["id"]: s for s in run.samples if s.get("seed", wanted) == wanted}


def _value(item, name: str):
    """An item field, or an entry of its ``meta`` dict (``meta.KEY``)."""
    if name.startswith("meta."):
        return (getattr(item, "meta", None) or {}).get(name[5:])
    return getattr(item, name, None)


def _classify(items: list) -> tuple[list[str], list[str]]:
    """(facet fields, text fields) of the items: short repeated scalars are facets, the rest text; ``meta``
    entries count as fields (``meta.KEY``)."""
    if not items:
        return [], []
    names = [f.name for f in dataclasses.fields(items[0]) if f.name not in ("id", "meta")]
    names += list(dict.fromkeys(f"meta.{key}" for item in items for key in (getattr(item, "meta", None) or {})))
    if PHI_BIN_FIELD in names:  # the items' own phi bins stand for the phi values
        names = [name for name in names if name not in PHI_FIELDS]
    facets, texts = [], []
    for name in names:
        values = [_value(item, name) for item in items]
        present = [v for v in values if v not in (None, "", (), [])]
        if not present:
            continue
        if name in PHI_FIELDS and all(isinstance(v, (int, float)) for v in present):
            facets.append(name)
        elif all(isinstance(v, (list, tuple)) and all(isinstance(w, str) for w in v) for v in present):
            texts.append(name)
        elif all(isinstance(v, (str, int, bool)) for v in present):
            distinct = {str(v) for v in present}
            if all(len(v) <= MAX_FACET_LENGTH for v in distinct) and len(distinct) <= MAX_FACET_VALUES:
                facets.append(name)
            elif all(isinstance(v, str) for v in present):  # many distinct numbers are positions and ids: left out
                texts.append(name)
    return facets, texts


def _row(item, samples: list[dict], facet_fields: list[str], text_fields: list[str], task: str) -> Row:
    facets = {}
    for name in facet_fields:
        value = _value(item, name)
        if name in PHI_FIELDS:
            facets["φ bin"] = _phi_bin(value)
        elif name == PHI_BIN_FIELD:
            facets["φ bin"] = value or "none"
        else:
            facets[name.removeprefix("meta.")] = "—" if value in (None, "") else str(value)
    if "@" in task:
        facets["view"] = task.split("@", 1)[1]
    gold = samples[0].get("gold")
    facets["gold label"] = _gold_facet(gold)
    text = {name.removeprefix("meta."): _text(_value(item, name)) for name in text_fields}
    words = getattr(item, "words", None)
    answers = [_answer(sample, words) for sample in samples]
    return Row(item.id, text, facets, _shown(gold), answers)


def _phi_bin(value) -> str:
    if not isinstance(value, (int, float)):
        return "none"
    for low, high in PHI_BINS:
        if low <= value < high:
            return f"{low:.2f}–{min(high, 1.0):.2f}"
    return "none"


def _gold_facet(gold) -> str:
    """A scalar gold as itself; a tag sequence by how many words it tags (0, 1, 2, 3+)."""
    if isinstance(gold, list):
        positives = sum(1 for tag in gold if str(tag) not in ("O", "0", "literal"))
        return f"{min(positives, 3)}{'+' if positives >= 3 else ''} tagged word(s)"
    return _shown(gold)


def _answer(sample: dict, words) -> Answer:
    gold, prediction = sample.get("gold"), sample.get("prediction")
    scores = sample.get("scores") or {}
    correct = bool(scores["correct"]) if "correct" in scores else gold == prediction
    marks = None
    if isinstance(gold, list) and isinstance(prediction, list) and words is not None and len(words) == len(gold):
        marks = [(word, _positive(g), _positive(p)) for word, g, p in zip(words, gold, prediction)]
    return Answer(_shown(prediction), correct, marks)


def _positive(tag) -> bool:
    return str(tag) not in ("O", "0", "literal", "None")


def _jsonable(value):
    return list(value) if isinstance(value, tuple) else value


def _text(value) -> str:
    return " ".join(value) if isinstance(value, (list, tuple)) else str(value)


def _shown(value) -> str:
    if isinstance(value, list):
        tagged = [str(v) for v in value if _positive(v)]
        return f"{len(tagged)} of {len(value)} tagged" if tagged else f"none of {len(value)} tagged"
    if isinstance(value, dict):
        return str(value.get("index", value))
    return "—" if value is None else str(value)
