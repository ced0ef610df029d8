"""Every metric of a run rebuilt from its golds and predictions by the task's own kind, on the data's items (#48).

Check 4 of `verify` rebuilds what the samples alone can give, and some of it reads the per-item ``scores`` a
run wrote: a forger who edits a score and the metric built from it, or a prediction and nothing else, leaves
files that agree with each other. Where the task's data is loaded (`verify_data`), nothing the run wrote about
its scoring need be trusted: the task's kind, built from the task's config as it is here (its labels, its
positive class; never the config the run's file records), scores every sample's prediction against the data's
gold (``kind.item_scores``, what ``metabench run`` wrote) and aggregates every seed (``kind.aggregate``, what
it recorded). A stored score that is not its prediction's, or a recorded metric that is not the rebuilt one,
rejects the run; every metric the kind rebuilds is *checked*, and a recorded metric it does not rebuild stays
*unchecked* (`verify.Verdict`), which every report shows.
"""

from __future__ import annotations

import math

from ..jobs import TaskData
from ..kinds.answered import FORMAT_FAILURE, format_failure_rate
from .stored import Run

#: Rebuilt and recorded values may differ by float rounding only (`verify.TOLERANCE`).
TOLERANCE = 1e-6


def rebuilt_from_data(data: TaskData, run: Run, table: dict[str, tuple[dict, ...]],
                      reader=None) -> tuple[list[str], list[str]]:
    """(problems, metrics checked) of ``run`` against its task's ``data`` (loaded at the run's ``--limit``, its
    test ids and golds already found equal to the samples'); ``table``: `align.item_rows` of the run.
    ``reader``: for a generated run whose protocol section is the task's as it is here, the answering kind that
    reads a ``response`` into a prediction (``reader.prediction(item, text)``): every stored reading is then
    read again from its stored text, so an edited prediction is caught even where its scores were edited too."""
    kind, items = data.kind, data.test.items
    golds = data.test.golds(kind)
    per_seed = run.record.metrics.per_seed
    generated = run.record.answering is not None and run.record.answering.mode == "generated"
    checked: set[str] | None = None
    for j, seed in enumerate(run.record.seeds):
        rows = [table[str(item.id)][j] for item in items]
        predictions = [row["prediction"] for row in rows]
        try:
            wrong = _reading_problem(reader, items, rows) or _scores_problem(kind, items, golds, rows)
            rebuilt = kind.aggregate(items, golds, predictions)
            if generated:  # a decoder's unread answers, stored in the task's form: their share is rebuilt too
                rebuilt[FORMAT_FAILURE] = format_failure_rate(predictions)
        except Exception as exc:  # noqa: BLE001 - a prediction the task's kind cannot score is the run's fault
            return [f"the predictions at seed {seed} cannot be scored by task '{run.record.task.name}' as it is here "
                    f"({type(exc).__name__}: {exc}; fix: rerun it)"], []
        if wrong:
            return [wrong], []
        recorded = per_seed.get(str(seed), {})
        for metric in sorted(recorded.keys() & rebuilt.keys()):
            value, expected = recorded[metric], rebuilt[metric]
            if not _close(value, expected):
                return [f"{metric} at seed {seed} is {value!r} in results.json but {expected!r} rebuilt from the "
                        f"samples' predictions by task '{run.record.task.name}' as it is here (an edited metric, or a run of "
                        "another version of the task; fix: rerun it)"], []
        found = set(recorded) & set(rebuilt)
        checked = found if checked is None else checked & found
    return [], sorted(checked or ())


def _reading_problem(reader, items: list, rows: list[dict]) -> str | None:
    """The first sample whose stored prediction is not what the task's parser reads from its stored
    ``response``, or None (also where there is no reader, or a row stored no response: runs made before it was
    kept, whose readings stay as checked as their scores)."""
    if reader is None:
        return None
    for item, row in zip(items, rows):
        if "response" not in row:
            continue
        read = reader.prediction(item, row["response"])
        if read != row["prediction"]:
            return (f"item {row['id']!r} at seed {row['seed']}: its prediction {row['prediction']!r} in samples.jsonl "
                    f"is not {read!r}, what the task's parser reads from its stored response {row['response']!r} "
                    "(an edited prediction or response; fix: rerun it, or copy the run folder whole)")
    return None


def _scores_problem(kind, items: list, golds: list, rows: list[dict]) -> str | None:
    """The first sample whose stored scores are not those its prediction gets, or None."""
    for item, gold, row in zip(items, golds, rows):
        expected = kind.item_scores(item, gold, row["prediction"])
        stored = row.get("scores") or {}
        for key, value in expected.items():
            if key not in stored or not _close(stored[key], value):
                return score_mismatch(row, key, value)
    return None


def score_mismatch(row: dict, key: str, value: float) -> str:
    """Why a run is rejected whose stored score ``key`` of sample ``row`` is not the ``value`` its gold and
    prediction give (here, and in check 4 of `verify` from the samples alone)."""
    return (f"item {row['id']!r} at seed {row['seed']}: its score {key} = {(row.get('scores') or {}).get(key)!r} in "
            f"samples.jsonl is not the {value!r} its gold and prediction give (the scores disagree with the "
            "predictions; fix: rerun it, or copy the run folder whole)")


def _close(recorded, rebuilt) -> bool:
    if not isinstance(recorded, (int, float)) or isinstance(recorded, bool):
        return False
    if math.isnan(rebuilt):
        return math.isnan(recorded)
    return math.isclose(recorded, rebuilt, rel_tol=0, abs_tol=TOLERANCE)
