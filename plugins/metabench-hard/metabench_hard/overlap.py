"""The overlap ratio phi = s/k of Li et al. (section 4.1): how well an instance sits among its own sense.

For each instance i of sense g of a word, take the k nearest other instances of the same word (cosine
similarity) and count the s that share sense g: phi_i = s/k. The paper sets k to "the number of instances with
same word sense g"; its worked examples (1/19 and 18/19 with 20 instances) and the authors' code use
k = n_g - 1 with the instance itself excluded, which is the default here (``k_rule="n_minus_1"``);
``k_rule="n"`` is the literal reading (k = n_g, self still excluded, so phi can never reach 1).

Two gates, as in the authors' code. Senses with fewer than ``pool_min_instances`` instances (default 2: the
code's ``remove_rare_context``) are dropped from the pool before neighbours are searched, so they neither get a
phi nor occupy a neighbour slot. Of the senses in the pool, only those with at least ``rate_min_instances``
(default 4: the paper's "at least four examples") get a phi; the others stay in the pool as neighbours. The
legacy keyword ``min_instances=N`` sets both gates to N (the single knob before the split).

Ties at the k-th similarity are resolved by expectation: when r slots remain and t candidates tie, m of them
of sense g, they contribute r*m/t. That is the mean of s over every order of the tied candidates, so phi
does not depend on the order instances happen to be stored in.

Pure numpy: no model is needed, and the tests check the worked examples on constructed vectors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

K_RULES = ("n_minus_1", "n")


@dataclass(frozen=True)
class Overlap:
    """phi per instance (NaN where its sense was dropped) and the senses kept in the pool."""

    phi: np.ndarray
    kept: np.ndarray  # bool per instance: its sense has at least pool_min_instances instances (in the pool)
    senses: dict[str, int]  # kept sense -> number of instances
    rated: np.ndarray | None = None  # bool per instance: its sense also has at least rate_min_instances (has a phi)


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, so dot products are cosine similarities (a zero row is an error)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    if vectors.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {vectors.shape}")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError(f"row {int(np.flatnonzero(norms[:, 0] == 0)[0])} is a zero vector: cosine is undefined")
    return vectors / norms


POOL_MIN_INSTANCES, RATE_MIN_INSTANCES = 2, 4  # the authors' code and the paper's "at least four"


def _gates(pool_min_instances: int, rate_min_instances: int, min_instances: int | None, k_rule: str) -> tuple[int, int]:
    """(pool gate, rate gate), checked; ``min_instances`` (legacy) sets both."""
    if k_rule not in K_RULES:
        raise ValueError(f"k_rule={k_rule!r} is not one of {K_RULES}")
    if min_instances is not None:
        pool_min_instances = rate_min_instances = min_instances
    if pool_min_instances < 2:
        raise ValueError(f"pool_min_instances={pool_min_instances}: a sense needs at least 2 instances to have "
                         "neighbours")
    if rate_min_instances < pool_min_instances:
        raise ValueError(f"rate_min_instances={rate_min_instances} < pool_min_instances={pool_min_instances}: a "
                         "sense left out of the pool cannot be rated")
    return pool_min_instances, rate_min_instances


def _k(n_g: int, k_rule: str, available: int) -> int:
    """Neighbours to inspect for an instance of a sense with ``n_g`` instances (counting the instance itself)."""
    k = n_g - 1 if k_rule == "n_minus_1" else n_g
    return min(k, available)


def same_sense_in_top_k(similarities: np.ndarray, same: np.ndarray, k: int) -> float:
    """s: how many of the ``k`` most similar candidates share the sense, ties at the boundary by expectation."""
    if k <= 0:
        raise ValueError("k must be positive")
    order = np.sort(similarities)[::-1]
    boundary = order[k - 1]
    above = similarities > boundary
    tied = similarities == boundary
    remaining = k - int(above.sum())
    s = float(np.count_nonzero(same & above))
    ties = int(tied.sum())
    return s + remaining * np.count_nonzero(same & tied) / ties


def overlap_ratios(
    vectors: np.ndarray, senses: Sequence[str], *, pool_min_instances: int = POOL_MIN_INSTANCES,
    rate_min_instances: int = RATE_MIN_INSTANCES, k_rule: str = "n_minus_1", min_instances: int | None = None,
) -> Overlap:
    """phi of every instance of ONE word, given its vectors and the sense of each (same order): NaN where its
    sense is below the rate gate (it may still be in the pool, as a neighbour of the others)."""
    pool_min, rate_min = _gates(pool_min_instances, rate_min_instances, min_instances, k_rule)
    if len(senses) != len(vectors):
        raise ValueError(f"{len(vectors)} vectors but {len(senses)} senses")
    counts = Counter(senses)
    kept_senses = {g: n for g, n in counts.items() if n >= pool_min}
    kept = np.array([g in kept_senses for g in senses], dtype=bool)
    rated = np.array([counts[g] >= rate_min for g in senses], dtype=bool) & kept
    phi = np.full(len(senses), np.nan)
    index = np.flatnonzero(kept)
    if len(index) < 2:
        return Overlap(phi, kept, kept_senses, np.zeros(len(senses), dtype=bool))
    pool = normalise(np.asarray(vectors)[index])
    labels = np.array([senses[i] for i in index], dtype=object)
    sims = pool @ pool.T
    for row, i in enumerate(index):
        if not rated[i]:
            continue
        others = np.arange(len(index)) != row
        k = _k(kept_senses[senses[i]], k_rule, len(index) - 1)
        phi[i] = same_sense_in_top_k(sims[row, others], labels[others] == senses[i], k) / k
    return Overlap(phi, kept, kept_senses, rated)


def query_overlap(
    queries: np.ndarray,
    query_senses: Sequence[str],
    pool: np.ndarray,
    pool_senses: Sequence[str],
    *,
    pool_min_instances: int = POOL_MIN_INSTANCES,
    rate_min_instances: int = RATE_MIN_INSTANCES,
    k_rule: str = "n_minus_1",
    min_instances: int | None = None,
) -> np.ndarray:
    """phi of instances from outside the pool (e.g. VUA items) placed among one word's pool instances.

    Each query is treated as one more instance of its sense: with n_g pool instances of that sense, the query's
    sense has n_g + 1 instances, so k = n_g (``n_minus_1``) or n_g + 1 (``n``), over the pool only (the query is
    its own 'self'). The pool keeps the senses with at least ``pool_min_instances`` instances; a query gets a phi
    only where its sense has at least ``rate_min_instances`` pool instances (NaN otherwise).
    """
    pool_min, rate_min = _gates(pool_min_instances, rate_min_instances, min_instances, k_rule)
    counts = Counter(pool_senses)
    keep = np.array([counts[g] >= pool_min for g in pool_senses], dtype=bool)
    kept_senses = {g for g, n in counts.items() if n >= rate_min}  # the senses a query may be rated under
    phi = np.full(len(query_senses), np.nan)
    if not keep.any():
        return phi
    pool_vectors = normalise(np.asarray(pool)[keep])
    labels = np.array([g for g, k in zip(pool_senses, keep) if k], dtype=object)
    sims = normalise(queries) @ pool_vectors.T
    for q, g in enumerate(query_senses):
        if g not in kept_senses:
            continue
        k = _k(counts[g] + 1, k_rule, len(labels))
        phi[q] = same_sense_in_top_k(sims[q], labels == g, k) / k
    return phi


def nearest(vector: np.ndarray, candidates: np.ndarray) -> int:
    """Index of the candidate with the highest cosine similarity to ``vector`` (the first one on a tie)."""
    return int(np.argmax(normalise(np.asarray(candidates)) @ normalise(np.asarray(vector)[None, :])[0]))
