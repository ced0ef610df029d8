"""Registers the significance tests by name, for ``metabench compare --test NAME`` and ``metabench ls tests``.

Each registration says, in ``input``, what the test consumes, so that ``compare``/``gate --test NAME`` can
feed any registered paired test (a third party's too) from aligned runs without knowing it by name:

- ``correctness``: paired, one 0/1 score per item and system, ``fn(correct_a, correct_b, **args)``;
- ``records``: paired, per-item records and a metric over a set of records, ``fn(items_a, items_b, metric, **args)``
  plus ``n_resamples=`` and ``seed=``;
- ``seeds``: paired, one metric value per seed and system, ``fn(scores_a, scores_b, **args)``;
- ``proportions``: independent groups as counts, ``fn(k1, n1, k2, n2, **args)``;
- ``samples``: independent groups as per-item scores, ``fn(x, y, **args)`` plus ``n_resamples=`` and ``seed=``.

The last two are for independent item sets (subset gaps); ``compare`` refuses them for two runs of one task.
``args`` holds fixed keyword arguments, so one function can be registered in several variants (McNemar's
exact and chi-square forms). ``swaps_items`` marks a ``records`` test that exchanges the two systems' records
item by item, which needs records of the same layout (the same seeds in both runs). Targets are lazy
strings: listing tests imports neither numpy nor scipy.
"""

from __future__ import annotations

from metabench.hookspecs import hookimpl

_P = "metabench.stats.paired"
_U = "metabench.stats.unpaired"

# name -> (target, input, fixed args, description); the randomisation test also swaps items (see above)
TESTS: dict[str, tuple[str, str, dict, str]] = {
    "mcnemar": (f"{_P}:mcnemar", "correctness", {}, "exact McNemar test on per-item correctness (same items)"),
    "mcnemar_chi2": (
        f"{_P}:mcnemar", "correctness", {"method": "chi2"}, "McNemar chi-square test, no continuity correction"
    ),
    "bootstrap": (
        f"{_P}:paired_bootstrap", "records", {},
        "paired bootstrap over items: CI and p of the metric difference (any metric, F1 included)",
    ),
    "randomisation": (
        f"{_P}:approximate_randomisation", "records", {}, "approximate randomisation test over items (p only)"
    ),
    "paired_t": (f"{_P}:paired_t", "seeds", {}, "paired t-test on per-seed metric values (same seeds)"),
    "wilcoxon": (f"{_P}:wilcoxon", "seeds", {}, "Wilcoxon signed-rank test on per-seed metric values"),
    "two_proportion_z": (
        f"{_U}:two_proportion_z", "proportions", {}, "pooled two-proportion z-test (independent item sets)"
    ),
    "fisher": (f"{_U}:fisher_exact", "proportions", {}, "Fisher's exact test on 2x2 counts (independent item sets)"),
    "permutation": (
        f"{_U}:permutation_test", "samples", {}, "two-sample permutation test on per-item scores (independent item sets)"
    ),
}


@hookimpl
def metabench_register_tests(register):
    for name, (target, consumes, args, description) in TESTS.items():
        register(name, target, description=description, input=consumes, args=args,
                 swaps_items=name == "randomisation")
