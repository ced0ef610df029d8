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
"""

from metabench.stats.corrections import benjamini_hochberg, holm
from metabench.stats.paired import (
    BootstrapResult,
    McNemarResult,
    PairedTResult,
    RandomisationResult,
    WilcoxonResult,
    approximate_randomisation,
    mcnemar,
    mcnemar_from_counts,
    paired_bootstrap,
    paired_t,
    wilcoxon,
)
from metabench.stats.unpaired import (
    FisherResult,
    PermutationResult,
    ProportionDifferenceCI,
    TwoProportionResult,
    fisher_exact,
    mean_difference,
    permutation_test,
    proportion_difference_ci,
    two_proportion_z,
)

__all__ = [
    "BootstrapResult",
    "FisherResult",
    "McNemarResult",
    "PairedTResult",
    "PermutationResult",
    "ProportionDifferenceCI",
    "RandomisationResult",
    "TwoProportionResult",
    "WilcoxonResult",
    "approximate_randomisation",
    "benjamini_hochberg",
    "fisher_exact",
    "holm",
    "mcnemar",
    "mcnemar_from_counts",
    "mean_difference",
    "paired_bootstrap",
    "paired_t",
    "permutation_test",
    "proportion_difference_ci",
    "two_proportion_z",
    "wilcoxon",
]
