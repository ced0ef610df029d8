"""Pairing two runs item by item, or refusing to and saying exactly why.

A paired test on misaligned items still returns a plausible p-value, so every reason two runs might not
hold the same items is checked before any test runs: the task, its config hash (an edited YAML can change
items or scoring), the data file hashes, each run's completeness (every item once per seed), the item id
sets and the gold answers.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import MetabenchError
from .stored import Run


class AlignmentError(MetabenchError):
    """Two runs that do not hold the same items, so no paired test may compare them."""


@dataclass(frozen=True)
class Pair:
    """Two runs of one task aligned by item id: ``rows_a[i][j]`` is item ``ids[i]`` at seed ``a.seeds[j]``."""

    a: Run
    b: Run
    ids: tuple[str, ...]
    rows_a: tuple[tuple[dict, ...], ...]
    rows_b: tuple[tuple[dict, ...], ...]


def describe(run: Run) -> str:
    return f"'{run.record.model.spec}' ({run.path})"


def _examples(values, limit: int = 3) -> str:
    shown = ", ".join(repr(v) for v in sorted(values)[:limit])
    return shown + (", ..." if len(values) > limit else "")


#: `item_rows` per run, kept here while the run lives: verification, the marks and every comparison read them
#: (a leaderboard asks four times per run and more), and a `Run` is its folder, record and samples, nothing more.
_ROWS: weakref.WeakKeyDictionary[Run, dict[str, tuple[dict, ...]]] = weakref.WeakKeyDictionary()


def item_rows(run: Run) -> dict[str, tuple[dict, ...]]:
    """Each item id's samples, one per seed in ``run.seeds`` order; refuses incomplete or duplicated rows.
    Made once per run; never changed by a reader."""
    found = _ROWS.get(run)
    if found is None:
        found = _ROWS[run] = _item_rows(run)
    return found


def _item_rows(run: Run) -> dict[str, tuple[dict, ...]]:
    seeds = run.record.seeds
    position = {seed: j for j, seed in enumerate(seeds)}
    table: dict[str, list[dict | None]] = {}
    for row in run.samples:
        seed = row.get("seed")
        j = position.get(seed) if isinstance(seed, int) else None
        if j is None:
            raise AlignmentError(
                f"{describe(run)}: samples.jsonl has item {row.get('id')!r} at seed {row.get('seed')!r}, "
                f"but results.json lists seeds {seeds}",
                hint="the two files are from different runs; copy the whole run folder",
            )
        slots = table.setdefault(row["id"], [None] * len(seeds))
        if slots[j] is not None:
            raise AlignmentError(f"{describe(run)}: item {row['id']!r} appears twice at seed {row['seed']} in samples.jsonl")
        slots[j] = row
    for seed, j in position.items():
        missing = [item for item, slots in table.items() if slots[j] is None]
        if missing:
            raise AlignmentError(
                f"{describe(run)}: {len(missing)} item(s) have no sample at seed {seed}, e.g. {_examples(missing)}",
                hint="the run is incomplete; rerun it (answers already computed come from the cache)",
            )
    return {item: tuple(slot for slot in slots if slot is not None) for item, slots in table.items()}  # all filled


def check_same_task(a: Run, b: Run) -> None:
    """Same task, same config, same data: otherwise equal item ids may name different items."""
    if a.record.task.name != b.record.task.name:
        raise AlignmentError(f"{describe(a)} is task '{a.record.task.name}' but {describe(b)} is task '{b.record.task.name}'")
    hash_a, hash_b = a.record.task.config_hash, b.record.task.config_hash
    if hash_a != hash_b:
        raise AlignmentError(
            f"task '{a.record.task.name}' was configured differently: config hash {hash_a[:12]} in {describe(a)}, "
            f"{hash_b[:12]} in {describe(b)} (the task YAML changed between the runs, so items or scoring may differ)",
            hint="rerun both models with the same version of the task",
        )
    files_a, files_b = a.record.data_files, b.record.data_files
    if files_a != files_b:
        changed = sorted(k for k in set(files_a) | set(files_b) if files_a.get(k) != files_b.get(k))
        raise AlignmentError(
            f"task '{a.record.task.name}': the runs read different data files ({', '.join(changed)} differ between "
            f"{describe(a)} and {describe(b)})",
            hint="rerun both models on the same data",
        )


def check_same_gold(ids, rows_a: dict, rows_b: dict, problem: Callable[[list[str]], str], hint: str) -> None:
    """Refuses items that share an id but not their gold answer (each id's first sample in two ``item_rows``
    tables): an `AlignmentError` with ``problem(those ids, in ids' order)`` and ``hint``. Two runs of one task
    (``pair``) and an original task with its paraphrase (``report.analyses.paired_variants``) use it."""
    wrong = [item for item in ids if rows_a[item][0]["gold"] != rows_b[item][0]["gold"]]
    if wrong:
        raise AlignmentError(problem(wrong), hint=hint)


def pair(a: Run, b: Run) -> Pair:
    """Align two runs of the same task by item id; raises `AlignmentError` naming the first difference."""
    check_same_task(a, b)
    table_a, table_b = item_rows(a), item_rows(b)
    only_a = table_a.keys() - table_b.keys()
    only_b = table_b.keys() - table_a.keys()
    if only_a or only_b:
        parts = []
        if only_a:
            parts.append(f"{len(only_a)} item id(s) in A are not in B, e.g. {_examples(only_a)}")
        if only_b:
            parts.append(f"{len(only_b)} item id(s) in B are not in A, e.g. {_examples(only_b)}")
        raise AlignmentError(
            f"task '{a.record.task.name}': A = {describe(a)} and B = {describe(b)} hold different items: {'; '.join(parts)}",
            hint="compare runs made with the same --limit and data; rerun the shorter one",
        )
    ids = tuple(table_a)
    check_same_gold(ids, table_a, table_b,
                    lambda wrong: f"task '{a.record.task.name}': {len(wrong)} item(s) have different gold answers in {describe(a)} "
                                  f"and {describe(b)}, e.g. {_examples(wrong)}",
                    hint="the runs read different versions of the dataset; rerun both")
    return Pair(a, b, ids, tuple(table_a[i] for i in ids), tuple(table_b[i] for i in ids))
