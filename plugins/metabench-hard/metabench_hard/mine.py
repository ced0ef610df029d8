"""Mining: phi of every pool instance of a MOH verb and the nearest literal instance of each metaphorical one.

Per word (lemma + part of speech), phi is computed among that word's instances only (the authors' code pools
all collected instances of the same word, metaphorical and literal). The literal negative of a metaphorical
instance is the most similar instance (cosine, SOR space) of the same word whose sense MOH labels literal: a
near miss, as in the code, so the same literal sentence may serve several metaphors (1:1 by count, not by
distinct sentence). Rows are written for every instance so that any threshold xi can be applied on loading.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from metabench.plugin_api import LIT, MET
from .overlap import nearest, overlap_ratios
from .pool import Instance, SenseLabels

UNLABELLED = "unlabelled"


def mine_word_phi(instances: list[Instance], vectors: np.ndarray, labels: SenseLabels, settings) -> list[dict]:
    """One row per instance: its sense, MOH label, phi (None where its sense is below the rate gate, or out of
    the pool) and nearest literal."""
    by_word: dict[str, list[int]] = defaultdict(list)
    for position, inst in enumerate(instances):
        by_word[inst.word].append(position)
    rows = []
    for word in sorted(by_word):
        members = by_word[word]
        senses = [instances[i].key for i in members]
        phi = overlap_ratios(vectors[members], senses, pool_min_instances=settings.pool_min_instances,
                             rate_min_instances=settings.rate_min_instances, k_rule=settings.k_rule).phi
        literal = [i for i in members if labels.labels.get(instances[i].key) == LIT]
        for local, i in enumerate(members):
            inst = instances[i]
            label = labels.labels.get(inst.key, UNLABELLED)
            negative = None
            if label == MET and literal:
                negative = instances[literal[nearest(vectors[i], vectors[literal])]].id
            rows.append({
                "id": inst.id, "word": word, "sense": inst.key, "gloss": labels.glosses.get(inst.key, ""),
                "label": label, "phi": None if math.isnan(phi[local]) else round(float(phi[local]), 6),
                "words": list(inst.words), "index": inst.index, "nearest_literal": negative,
            })
    return rows


#: what becomes of a hard metaphor whose verb has no literal instance to pair: kept without a negative (the
#: authors' set keeps it) or dropped (the strict 1:1 reading)
UNPAIRED = ("keep", "drop")


def select_hard(rows: list[dict], xi: float, unpaired: str = "keep") -> list[tuple[dict, dict | None]]:
    """(hard metaphor, its nearest literal or None): metaphorical instances with phi < xi; one without a literal
    to pair is kept with None (``unpaired="keep"``, the authors') or left out (``"drop"``)."""
    by_id = {row["id"]: row for row in rows}
    hard = [row for row in rows if row["label"] == MET and row["phi"] is not None and row["phi"] < xi]
    return [(row, by_id[row["nearest_literal"]] if row["nearest_literal"] else None) for row in hard
            if row["nearest_literal"] or unpaired == "keep"]


PHI_BINS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def phi_bin(phi: float | None) -> str:
    """'0.0-0.2', ..., '0.8-1.0' (Fig 5b's bins: lower edge inclusive, the last bin includes 1.0); '' for None."""
    if phi is None or (isinstance(phi, float) and math.isnan(phi)):
        return ""
    for low, high in zip(PHI_BINS, PHI_BINS[1:]):
        if phi < high or high == PHI_BINS[-1]:
            return f"{low:.1f}-{high:.1f}"
    return ""


def statistics(rows: list[dict], xi: float, unpaired: str = "keep") -> dict:
    """Table 4 style statistics of HARD(M) at threshold xi, plus what the pool offered (for the 110-of-910 line)."""
    pairs = select_hard(rows, xi, unpaired)
    hard = [h for h, _ in pairs]
    negatives = [n for _, n in pairs if n is not None]
    metaphorical = [r for r in rows if r["label"] == MET]
    rated = [r for r in metaphorical if r["phi"] is not None]
    histogram = {b: 0 for b in (phi_bin(x + 0.01) for x in PHI_BINS[:-1])}
    for row in rated:
        histogram[phi_bin(row["phi"])] += 1
    hard_words = {r["word"] for r in hard}
    tokens = [len(r["words"]) for r in hard + negatives]
    return {
        "xi": xi,
        "examples": len(hard) + len(negatives),
        "hard_metaphors": len(hard),
        "hard_without_literal": sum(r["label"] == MET and r["phi"] is not None and r["phi"] < xi
                                    and not r["nearest_literal"] for r in rows),
        "literal_negatives": len(negatives),
        "distinct_literal_sentences": len({n["id"] for n in negatives}),
        "words": len(hard_words),
        "senses": len({r["sense"] for r in hard}),
        "examples_per_word": round((len(hard) + len(negatives)) / len(hard_words), 1) if hard_words else 0,
        "tokens_per_example": round(sum(tokens) / len(tokens), 1) if tokens else 0,
        "pool_instances": len(rows),
        "pool_words": len({r["word"] for r in rows}),
        "metaphorical_instances_rated": len(rated),
        "metaphorical_senses_rated": len({r["sense"] for r in rated}),
        "metaphorical_instances_too_rare": len(metaphorical) - len(rated),
        "phi_histogram_metaphorical": histogram,
    }
