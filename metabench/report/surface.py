"""Per-item surface features of a stored run (premise–hypothesis overlap and length), read from its task's data.

Runs store item ids, never text, so the features are recomputed from the task's test split. That is only
sound if the task is the one the run was made with: its config hash must match the run's (the data files
are hash-checked when they are read), else this refuses and says to rerun.
"""

from __future__ import annotations

from ..errors import MetabenchError
from ..registry import Registry
from ..stats.controls import length, overlap
from .runs import Run


def item_features(registry: Registry, run: Run) -> dict[str, tuple[float, int]]:
    """``{item id: (overlap, length)}`` for every test item of the run's task."""
    from ..config.index import TaskIndex  # noqa: PLC0415
    from ..data.load import load_split  # noqa: PLC0415

    index = TaskIndex(registry)
    if run.task not in index.tasks:
        raise MetabenchError(
            f"surface controls read the items of task '{run.task}', which is not registered here",
            hint="install the plugin that defines it, or leave out --controls",
        )
    task = index.load(run.task)
    if task.hash != run.results["task"]["config_hash"]:
        raise MetabenchError(
            f"task '{run.task}' changed since the run at {run.path} (config hash {task.hash[:12]} now, "
            f"{run.results['task']['config_hash'][:12]} in the run): its items may differ",
            hint="rerun the task (cached answers make it cheap), or leave out --controls",
        )
    features: dict[str, tuple[float, int]] = {}
    for dataset, split, args in task.slices["test"]:
        for item in load_split(registry, dataset, split, args).items:
            premise, hypothesis = getattr(item, "premise", None), getattr(item, "hypothesis", None)
            if premise is None or hypothesis is None:
                raise MetabenchError(
                    f"task '{run.task}': surface controls need premise–hypothesis items, and dataset '{dataset}' "
                    f"yields {type(item).__name__}",
                    hint="--controls applies to NLI-style tasks (Meta4XNLI, IMPLI, FLUTE, metaphor_llm_paraphrases)",
                )
            features[item.id] = (overlap(premise, hypothesis), length(premise, hypothesis))
    return features
