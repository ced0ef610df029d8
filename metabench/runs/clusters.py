"""Clustered resampling: items that are not independent are drawn together, as whole clusters.

The sentences of one document share its topic, register and annotator, so a model's errors on them move
together; resampling sentences as if independent understates the variance of any metric over them, as
resampling tokens does within a sentence (Miller 2024, clustered standard errors). A task names its
clusters in ``metadata.cluster`` (`metabench.config.schema.Cluster`): a regular expression whose group,
searched in each item id, is the item's cluster. The run records its config, so the reporter reads it from
results.json like everything else.

`clustered` turns a per-item reading of a metric (`decompose.ItemMetric`) into a per-cluster one: a cluster's
record is the records of its items, and the metric is the item metric over the items of the drawn clusters.
Both runs get the same clusters in the same order, so a paired bootstrap draws the same clusters for both
(and a randomisation test exchanges whole clusters). McNemar's test, which assumes independent items, no
longer applies (``correct`` is None), so the default test becomes the cluster bootstrap.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from ..errors import MetabenchError
from .decompose import ItemMetric
from ..run_record import RecordedCluster
from .stored import Run


def declared(run: Run) -> RecordedCluster | None:
    """The task's ``metadata.cluster`` as recorded in the run (its name and id pattern), or None."""
    return run.record.task.config.metadata.cluster


def cluster_members(ids: tuple[str, ...], spec: RecordedCluster, task: str) -> list[np.ndarray]:
    """The positions (in ``ids`` order) of each cluster's items, clusters in order of first appearance."""
    pattern = re.compile(spec.id_pattern)
    members: dict[str, list[int]] = {}
    for position, item_id in enumerate(ids):
        found = pattern.search(item_id)
        if found is None or found.group(1) is None:
            raise MetabenchError(
                f"task '{task}': item id {item_id!r} does not match metadata.cluster.id_pattern {spec.id_pattern!r}",
                hint="fix the pattern in the task YAML (its one group must name the cluster of every item id)",
            )
        members.setdefault(found.group(1), []).append(position)
    return [np.asarray(m) for m in members.values()]


def clustered(item: ItemMetric, members: list[np.ndarray]) -> ItemMetric:
    """``item`` with clusters as the resampling unit (see the module docstring)."""
    records = [item.records[m] for m in members]
    inner = item.metric

    def metric(drawn) -> float:
        joined = np.concatenate(list(drawn))
        return float(joined.mean()) if isinstance(inner, str) else inner(joined)

    return replace(item, records=records, metric=metric, value=metric(records), correct=None)
