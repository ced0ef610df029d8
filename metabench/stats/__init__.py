"""Significance testing for benchmark comparisons.

Which test to use:

* two systems on the same items, per-item correctness: `mcnemar` (exact by default);
* two systems on the same items, any corpus-level metric (F1, ...): `paired_bootstrap` for a CI and
  p-value of the difference, or `approximate_randomisation` for a p-value only;
* two systems over several seeds: `paired_t`, or `wilcoxon` when normality is doubtful;
* independent groups (different items): `two_proportion_z`, `fisher_exact`, `proportion_difference_ci`,
  `permutation_test`;
* many comparisons at once: adjust with `holm` (family-wise error) or `benjamini_hochberg` (FDR).

Throughout, the first system/group is the baseline and the second the candidate, every signed difference
is candidate - baseline, and every test is two-sided. Results are frozen dataclasses with `as_dict()`.

Names are imported on first use (PEP 562), so that importing the package — as the plugin registration does —
costs nothing: scipy and numpy load only when a test actually runs.
"""

from __future__ import annotations

import importlib

_HOMES = {
    "metabench.stats.corrections": ("benjamini_hochberg", "holm"),
    "metabench.stats.paired": (
        "BootstrapResult", "McNemarResult", "PairedTResult", "RandomisationResult", "WilcoxonResult",
        "approximate_randomisation", "mcnemar", "mcnemar_from_counts", "over_rows", "paired_bootstrap", "paired_t",
        "wilcoxon",
    ),
    "metabench.stats.unpaired": (
        "FisherResult", "PermutationResult", "ProportionDifferenceCI", "TwoProportionResult", "fisher_exact",
        "mean_difference", "permutation_test", "proportion_difference_ci", "two_proportion_z",
    ),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'metabench.stats' has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value
