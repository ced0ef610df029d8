"""Result objects: immutable, and JSON-serialisable with NaN/Infinity as null."""

import dataclasses
import json

import pytest

import metabench.stats as stats

RESULTS = [
    stats.mcnemar([True, False, True], [True, True, False]),
    stats.mcnemar_from_counts(57, 96),
    stats.paired_t([0.7], [0.72]),
    stats.paired_t([1.0, 2.0], [1.5, 2.5]),
    stats.paired_t([0.7, 0.71, 0.69], [0.72, 0.70, 0.73]),
    stats.wilcoxon([0.7, 0.71, 0.69], [0.72, 0.70, 0.73]),
    stats.paired_bootstrap([1, 0, 1, 1], [1, 1, 1, 0], n_resamples=50),
    stats.approximate_randomisation([1, 0, 1, 1], [1, 1, 1, 0], n_resamples=50),
    stats.two_proportion_z(3, 10, 5, 10),
    stats.fisher_exact(10, 10, 20, 20),
    stats.proportion_difference_ci(3, 10, 5, 10),
    stats.permutation_test([0.1, 0.2], [0.3, 0.4]),
]


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: type(r).__name__)
def test_as_dict_is_strict_json(result):
    data = result.as_dict()
    assert list(data) == [field.name for field in dataclasses.fields(result)]
    json.dumps(data, allow_nan=False)
    assert all(type(value) in (int, float, str, type(None)) for value in data.values())


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: type(r).__name__)
def test_results_are_frozen(result):
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.pvalue = 0.0


def test_non_finite_values_become_none():
    assert stats.paired_t([0.7], [0.72]).as_dict()["statistic"] is None
    assert stats.paired_t([1.0, 2.0], [1.5, 2.5]).as_dict()["statistic"] is None  # +inf
    assert stats.paired_t([1.0, 2.0], [1.5, 2.5]).as_dict()["pvalue"] == 0.0


def test_public_api_is_exported():
    assert all(hasattr(stats, name) for name in stats.__all__)
    assert all(dataclasses.is_dataclass(getattr(stats, name)) for name in stats.__all__ if name[0].isupper())
