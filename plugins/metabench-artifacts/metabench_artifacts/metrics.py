"""Model-free diagnostics reported beside a model's scores on expression-level tasks.

Both ignore the predictions: they describe the test set as the task's view presents it, so every run of a
task carries them and a model's score can be read against them without another run.

- ``majority_accuracy``: the share of the most frequent gold label of *this* test split. Not Boisson et al.'s
  "Maj", which is the dataset's majority share (the reports pool the test folds for it,
  ``artifacts.report.tables.dataset_majority``): averaged over folds this one picks the better class per fold.
- ``collision_ceiling``: the best accuracy *any* model could reach when it sees only the view's input
  string. Items with identical inputs must receive the same answer, so within each group of identical
  inputs at most the majority gold label can be right. On CARD_N's ``pme_only`` view every PME appears
  once literal and once metaphorical, so the ceiling is exactly 0.5 (the paper's Table 5, 50.0).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence

from metabench.plugin_api import MetricInputError, check_pair


def majority_accuracy(golds: Sequence[Hashable], preds: Sequence[Hashable]) -> float:
    """Accuracy of always answering the test set's most frequent gold label."""
    golds, _ = check_pair(golds, preds, "majority_accuracy")
    return max(Counter(golds).values()) / len(golds)


def collision_ceiling(golds: Sequence[Hashable], preds: Sequence[Hashable], *, inputs: Sequence[str]) -> float:
    """Upper bound on accuracy for any function of the input string: Σ_groups max label count / n."""
    golds, _ = check_pair(golds, preds, "collision_ceiling")
    if len(inputs) != len(golds):
        raise MetricInputError(f"collision_ceiling: {len(inputs)} inputs for {len(golds)} golds")
    best: dict[str, int] = {}  # input -> the count of its most frequent gold label
    for (text, _), count in Counter(zip(inputs, golds)).items():  # counted in C; one pass over the pairs
        if count > best.get(text, 0):
            best[text] = count
    return sum(best.values()) / len(golds)
