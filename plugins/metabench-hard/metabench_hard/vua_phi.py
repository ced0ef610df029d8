"""phi of VUA-Verb test items under a model's SOR, so any VUA-Verb detection run can be broken down by hardness.

Beyond the paper. Each VUA-Verb test item gets a WordNet sense from ``vua_verb_wsd`` (the same 5,873 targets in
MelBERT's layout, with the WordNet gloss of the target's sense as text): the sense key is the verb sense of the
item's lemma (from ``vua_verb``, aligned row by row on document and sentence) whose WordNet gloss starts with
that text. The item is then embedded with the SOR encoder and placed among the pool instances of its verb
(:func:`metabench_hard.overlap.query_overlap`: k = the number of pool instances of its sense).

Only the verbs of the HARD(M) build are covered (the MOH verbs, whose pool vectors the build holds), and an
item gets a phi only where its sense has at least ``rate_min_instances`` pool instances (the pool itself holds the
senses with at least ``pool_min_instances``); the others are counted as uncovered, never guessed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from metabench.plugin_api import DataError
from .overlap import query_overlap
from .pool import Instance

PHI_FILE = "vua_verb_test_phi.jsonl"


def _definition(gloss: str) -> str:
    return gloss.strip().lower()


def vua_sense_keys(registry, data_dir=None) -> tuple[list[dict], dict[str, int]]:
    """Per VUA-Verb test item: its ids, lemma, text, target and WordNet sense key ('' when none matches)."""
    from metabench.plugin_api import load_split  # noqa: PLC0415

    gao = load_split(registry, "vua_verb", "test", {}, data_dir).items
    wsd = load_split(registry, "vua_verb_wsd", "test", {}, data_dir).items
    if len(gao) != len(wsd):
        raise DataError(f"vua_verb test has {len(gao)} items but vua_verb_wsd test {len(wsd)}: cannot align them")
    wordnet = load_split(registry, "wordnet", "all", {"pos": "v"}, data_dir).items
    by_lemma = defaultdict(list)
    for sense in sorted(wordnet, key=lambda s: s.sense_number):
        by_lemma[sense.lemma.lower()].append(sense)
    counts = {"items": len(gao), "no_gloss_match": 0, "ambiguous_gloss": 0}
    rows = []
    for g, w in zip(gao, wsd):
        if w.group != f"{g.meta['txt_id']}_{g.meta['sentence_id']}":
            raise DataError(f"vua_verb {g.id} and vua_verb_wsd {w.id} are different sentences ({g.group} vs {w.group})")
        wanted = _definition(w.meta["word_sense"])
        matches = [s for s in by_lemma.get(g.lemma.lower(), []) if _definition(s.gloss).startswith(wanted)] if wanted else []
        if not matches:
            counts["no_gloss_match"] += 1
        elif len(matches) > 1:
            counts["ambiguous_gloss"] += 1  # the lowest sense number (most frequent) is taken
        rows.append({"id": g.id, "wsd_id": w.id, "lemma": g.lemma.lower(), "label": g.label, "text": g.text,
                     "index": g.target_index, "sense": matches[0].id if matches else ""})
    return rows, counts


def vua_phi(registry, build: Path, sor_folder: Path, *, pool_min_instances: int, rate_min_instances: int,
            k_rule: str, max_length: int, layer: int, log=None) -> tuple[list[dict], dict]:
    """phi per VUA-Verb test item (None where uncovered), and the coverage counts."""
    from .sor import embed  # noqa: PLC0415

    rows, counts = vua_sense_keys(registry)
    pool = [json.loads(line) for line in (build / "instances.jsonl").read_text(encoding="utf-8").splitlines()]
    vectors = np.load(build / "vectors.npy")
    by_word = defaultdict(list)
    for position, row in enumerate(pool):
        by_word[row["word"]].append(position)
    covered = [r for r in rows if r["sense"] and f"{r['lemma']}.v" in by_word]
    counts["verb_in_build"] = len(covered)
    queries = [Instance(id=r["id"], words=tuple(r["text"].split()), index=r["index"], key=r["sense"]) for r in covered]
    if log is not None:
        log(f"embedding {len(queries)} VUA-Verb test items whose verb is in the build")
    query_vectors = embed(sor_folder, queries, max_length=max_length, layer=layer, log=log) if queries else None
    phi_by_id = {}
    by_query_word = defaultdict(list)
    for position, r in enumerate(covered):
        by_query_word[f"{r['lemma']}.v"].append(position)
    for word, positions in by_query_word.items():
        members = by_word[word]
        phi = query_overlap(query_vectors[positions], [covered[p]["sense"] for p in positions], vectors[members],
                            [pool[m]["sense"] for m in members], pool_min_instances=pool_min_instances,
                            rate_min_instances=rate_min_instances, k_rule=k_rule)
        for p, value in zip(positions, phi):
            if not np.isnan(value):
                phi_by_id[covered[p]["id"]] = round(float(value), 6)
    counts["with_phi"] = len(phi_by_id)
    out = [{"id": r["id"], "wsd_id": r["wsd_id"], "sense": r["sense"], "label": r["label"],
            "phi": phi_by_id.get(r["id"])} for r in rows]
    return out, counts
