"""How far our phi agrees with the authors' own: hmd_proxy rows against the same instances in our build.

``hmd_proxy`` holds rows of the authors' pipeline with the phi their RoBERTa SOR gave each metaphorical
instance (SemCor contexts with WordNet sense keys in its ``semcor`` and ``semcor_instances`` files; the
Senseval-3 files use Senseval-3 sense ids and are not compared). An hmd_proxy row is matched to the pool
instance of our build with the same sense key and the same context (whitespace-normalised), else to the
instance of that sense whose lowercased word set overlaps the context's most (Jaccard >= ``MIN_JACCARD``: the
authors' tokenisation of multiword units differs from SemCor's in places), and the two phi values are compared: Spearman's rho (scipy) and the agreement of the hard decision phi < xi.
Differences have several sources at once, so the number measures the reimplementation as a whole: another
encoder (MiniLM vs RoBERTa), another pool (SemCor + Raganato vs the authors' collection), and the authors'
development settings (their files predate the paper).
"""

from __future__ import annotations

import json
from pathlib import Path

from metabench.plugin_api import MET

FILES = ("semcor", "semcor_instances")
MIN_JACCARD = 0.8


def _norm(text: str) -> str:
    return " ".join(text.split())


def _match(sense: str, context: str, exact: dict, by_sense: dict):
    """Our phi for the instance of ``sense`` in ``context``: (phi, how) or (None, 'absent')."""
    key = (sense, _norm(context))
    if key in exact:
        return exact[key], "exact"
    words = set(context.lower().split())
    best, best_score = None, 0.0
    for text, phi in by_sense.get(sense, ()):
        other = set(text.lower().split())
        score = len(words & other) / len(words | other)
        if score > best_score:
            best, best_score = phi, score
    return (best, "similar") if best_score >= MIN_JACCARD else (None, "absent")


def fidelity(registry, build: Path, xi: float = 0.8, data_dir=None) -> dict:
    import scipy.stats

    from metabench.plugin_api import load_split  # noqa: PLC0415

    exact, by_sense = {}, {}
    for line in (build / "instances.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        text = _norm(" ".join(row["words"]))
        exact.setdefault((row["sense"], text), row["phi"])
        by_sense.setdefault(row["sense"], []).append((text, row["phi"]))
    out = {"xi": xi, "files": {}}
    unique = {}  # the two files share instances: the pooled figure counts each (sense, context) once
    for name in FILES:
        items = [i for i in load_split(registry, "hmd_proxy", "all", {"file": name}, data_dir).items
                 if i.label == MET and i.overlap is not None]
        found = [(i.overlap, *_match(i.sense, i.context, exact, by_sense)) for i in items]
        pairs = [(a, b) for a, b, _ in found if b is not None]
        unique.update({(i.sense, _norm(i.context)): (a, b) for i, (a, b, _) in zip(items, found) if b is not None})
        out["files"][name] = {"metaphorical_rows": len(items),
                              "matched_exact": sum(how == "exact" for _, _, how in found),
                              "matched_similar": sum(how == "similar" for _, _, how in found),
                              "with_our_phi": len(pairs), **_compare(pairs, xi, scipy.stats)}
    out["all"] = {"pairs": len(unique), **_compare(list(unique.values()), xi, scipy.stats)}
    return out


def _compare(pairs, xi: float, stats) -> dict:
    if len(pairs) < 3:
        return {"spearman": None, "p": None, "agreement": None, "hard_theirs": None, "hard_ours": None}
    theirs = [a for a, _ in pairs]
    mine = [b for _, b in pairs]
    rho = stats.spearmanr(theirs, mine)
    agree = sum((a < xi) == (b < xi) for a, b in pairs)
    return {"spearman": round(float(rho.statistic), 4), "p": float(rho.pvalue),
            "agreement": round(agree / len(pairs), 4),
            "hard_theirs": sum(a < xi for a in theirs), "hard_ours": sum(b < xi for b in mine)}
