"""Cutting a run's jobs into batches for parallel launchers (``--launcher processes`` and ``ray``).

A worker keeps every dataset slice it parsed (``jobs._load_memo``) and every derived pool it built for its
whole life, so jobs that read the same datasets are sent to one worker together: each dataset is then parsed
(or unpickled) once per worker that needs it, not once per job. Groups go largest first (LPT order) to
whichever worker is free, and very large groups are cut so that the last one to start cannot keep one worker
busy long after the others are done.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..jobs import Job
    from ..registry import Registry

#: A data group larger than total jobs / (workers × this) is cut.
_SPLIT = 3


def batches(jobs: list[Job], numbers: list[int], workers: int, registry: Registry | None = None) -> list[list[int]]:
    """Job numbers grouped by the data their task reads, large groups cut, largest first (LPT order). With the
    ``registry``, datasets built together (``DatasetSpec.built_with``) count as one."""
    groups: dict[str, list[int]] = defaultdict(list)
    for n in numbers:
        groups[data_key(jobs[n], registry)].append(n)
    cap = max(1, math.ceil(len(numbers) / (max(1, workers) * _SPLIT)))
    out = []
    for members in groups.values():
        parts = math.ceil(len(members) / cap)
        size = math.ceil(len(members) / parts)
        out.extend(members[i : i + size] for i in range(0, len(members), size))
    return sorted(out, key=len, reverse=True)


def data_key(job: Job, registry: Registry | None = None) -> str:
    """The datasets a job's task reads, in any role. A Boisson dataset's regimes × folds × views all come from
    one pool (for the VUAC_BO-style ones, a sampled corpus), which grouping by slice built again on every
    worker; a BO sample and its random control are drawn in one pass (``built_with``), which two workers
    would each make."""
    names = {dataset for slices in job.task.slices.values() for dataset, _, _ in slices}
    if registry is not None:
        names = {_built_by(registry, name) for name in names}
    return json.dumps(sorted(names))


def _built_by(registry: Registry, dataset: str) -> str:
    """The first (by name) of a dataset and those built with it; the dataset itself if it cannot be resolved
    (its job fails on the worker, with its own message)."""
    try:
        others = registry.resolve("dataset", dataset).built_with
        return min((dataset, *((others,) if isinstance(others, str) else others)))  # one name given as a string
    except Exception:  # noqa: BLE001 - a malformed built_with only costs the grouping
        return dataset


def model_family(registry: Registry, job: Job) -> str:
    """The job's adapter family (``baseline``, ``encoder``, ``decoder``…), or "" for an adapter that cannot be
    resolved (it fails on the worker, with its own message)."""
    try:
        return getattr(registry.resolve("model", job.model.name), "family", "")
    except Exception:  # noqa: BLE001
        return ""
