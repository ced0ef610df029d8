"""Input checks shared by the significance tests, so that misuse fails loudly with a message naming the argument.

A significance test fed a wrongly aligned or wrongly typed input still returns a plausible-looking
p-value, so every public function converts its inputs here and raises `ValueError` instead of guessing.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence, Sized

import numpy as np


def correctness_vector(values: Sequence, name: str) -> np.ndarray:
    """Per-item correctness as a 1-D bool array.

    Accepts bools and the integers 0/1 (a common encoding of correctness); floats, strings and other
    integers are rejected because they usually mean scores were passed where correctness was expected.
    """
    array = np.asarray(values)
    _check_one_dimensional_non_empty(array, name)
    if array.dtype == np.bool_:
        return array
    if np.issubdtype(array.dtype, np.integer) and np.isin(array, (0, 1)).all():
        return array.astype(bool)
    bad = next(value for value in values if not _is_boolean(value))
    bad = bad.item() if isinstance(bad, np.generic) else bad
    raise ValueError(f"{name} must contain only booleans (True/False or 0/1), one per item; found {bad!r}")


def score_vector(values: Sequence, name: str) -> np.ndarray:
    """Per-item or per-seed numeric scores as a 1-D float array of finite values."""
    array = np.asarray(values)
    _check_one_dimensional_non_empty(array, name)
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        raise ValueError(f"{name} must contain numbers; got values of dtype {array.dtype}")
    array = array.astype(float)
    if not np.isfinite(array).all():
        positions = np.flatnonzero(~np.isfinite(array)).tolist()
        raise ValueError(f"{name} contains NaN or infinite values at positions {positions[:10]}")
    return array


def same_length(a: Sized, b: Sized, name_a: str, name_b: str) -> int:
    """The common length of two paired inputs; paired tests are meaningless on misaligned items."""
    if len(a) != len(b):
        raise ValueError(f"{name_a} and {name_b} must be paired item by item, but have lengths {len(a)} and {len(b)}")
    if len(a) == 0:
        raise ValueError(f"{name_a} and {name_b} are empty: need at least one item")
    return len(a)


def count(value: object, name: str) -> int:
    """A non-negative integer count (bools are rejected: True is not a count)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a non-negative integer count; got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer count; got {value}")
    return int(value)


def successes_and_trials(k: object, n: object, name_k: str, name_n: str) -> tuple[int, int]:
    """A binomial observation: k successes out of n >= 1 trials."""
    k, n = count(k, name_k), count(n, name_n)
    if n == 0:
        raise ValueError(f"{name_n} must be at least 1 (a proportion of zero trials is undefined)")
    if k > n:
        raise ValueError(f"{name_k}={k} successes cannot exceed {name_n}={n} trials")
    return k, n


def n_resamples(value: object) -> int:
    """A positive number of resamples."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"n_resamples must be a positive integer; got {value!r}")
    return int(value)


def seed(value: object) -> int:
    """A non-negative integer seed, recorded in results so that a resampling test can be rerun exactly."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"seed must be a non-negative integer; got {value!r}")
    return int(value)


def confidence(value: float) -> float:
    """A confidence level strictly between 0 and 1."""
    if not 0.0 < value < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1 (e.g. 0.95); got {value!r}")
    return float(value)


def _is_boolean(value: object) -> bool:
    return isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral) and value in (0, 1))


def _check_one_dimensional_non_empty(array: np.ndarray, name: str) -> None:
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence (one value per item); got an array of shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} is empty: need at least one item")
