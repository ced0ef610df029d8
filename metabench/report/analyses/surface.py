"""Per-item surface features of a stored run (premise–hypothesis overlap and length), read from its task's data.

Runs store item ids, never text, so the features are recomputed from the task's test split. That is only
sound if the task is the one the run was made with: its config hash must match the run's (the data files
are hash-checked when they are read), else this refuses and says to rerun.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import MetabenchError
from ...registry import Registry
from ...stats.controls import length, overlap
from ...runs.stored import Run

if TYPE_CHECKING:  # built on first use: building the index reads every task file
    from ...config.index import TaskIndex


def item_features(registry: Registry, run: Run) -> dict[str, tuple[float, int]]:
    """``{item id: (overlap, length)}`` for every test item of the run's task."""
    return SurfaceFeatures(registry)(run)


class SurfaceFeatures:
    """`item_features` for many runs, as the leaderboard's controls need them: one task index for all (building
    it reads every task file), and each task's items read once however many model pairs share the task."""

    def __init__(self, registry: Registry):
        self.registry = registry
        self._index: TaskIndex | None = None
        self._read: dict[tuple[str, str], dict[str, tuple[float, int]]] = {}

    def __call__(self, run: Run) -> dict[str, tuple[float, int]]:
        key = (run.record.task.name, run.record.task.config_hash)
        if key not in self._read:
            if self._index is None:
                from ...config.index import TaskIndex  # noqa: PLC0415

                self._index = TaskIndex(self.registry)
            self._read[key] = _features(self.registry, self._index, run)
        return self._read[key]


def _features(registry: Registry, index, run: Run) -> dict[str, tuple[float, int]]:
    from ...data.load import load_split  # noqa: PLC0415

    if run.record.task.name not in index.tasks:
        raise MetabenchError(
            f"surface controls read the items of task '{run.record.task.name}', which is not registered here",
            hint="install the plugin that defines it, or leave out --controls",
        )
    task = index.load(run.record.task.name)
    if task.hash != run.record.task.config_hash:
        raise MetabenchError(
            f"task '{run.record.task.name}' changed since the run at {run.path} (config hash {task.hash[:12]} now, "
            f"{run.record.task.config_hash[:12]} in the run): its items may differ",
            hint="rerun the task (cached answers make it cheap), or leave out --controls",
        )
    features: dict[str, tuple[float, int]] = {}
    for dataset, split, args in task.slices["test"]:
        for item in load_split(registry, dataset, split, args).items:
            premise, hypothesis = getattr(item, "premise", None), getattr(item, "hypothesis", None)
            if premise is None or hypothesis is None:
                raise MetabenchError(
                    f"task '{run.record.task.name}': surface controls need premise–hypothesis items, and dataset '{dataset}' "
                    f"yields {type(item).__name__}",
                    hint="--controls applies to NLI-style tasks (Meta4XNLI, IMPLI, FLUTE, metaphor_llm_paraphrases)",
                )
            features[item.id] = (overlap(premise, hypothesis), length(premise, hypothesis))
    return features
