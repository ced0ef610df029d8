"""How far our phi agrees with the authors' own: hmd_proxy rows against the same instances in our build.

``hmd_proxy`` holds rows of the authors' pipeline with the phi their RoBERTa SOR gave each metaphorical
instance (SemCor contexts with WordNet sense keys in its ``semcor`` and ``semcor_instances`` files; the
Senseval-3 files use Senseval-3 sense ids and are not compared). An hmd_proxy row is matched to the pool
instance of our build with the same sense key and the same context (whitespace-normalised), and the two phi
values are compared: Spearman's rho (scipy) and the agreement of the hard decision phi < xi.
Differences have several sources at once, so the number measures the reimplementation as a whole: another
encoder (MiniLM vs RoBERTa), another pool (SemCor + Raganato vs the authors' collection), and the authors'
development settings (their files predate the paper).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..data.datasets._common import MET

FILES = ("semcor", "semcor_instances")


def _norm(text: str) -> str:
    return " ".join(text.split())


def fidelity(registry, build: Path, xi: float = 0.8, data_dir=None) -> dict:
    import scipy.stats

    from ..data.load import load_split  # noqa: PLC0415

    ours = {}
    for line in (build / "instances.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        ours.setdefault((row["sense"], _norm(" ".join(row["words"]))), row["phi"])
    out = {"xi": xi, "files": {}}
    pairs_all = []
    for name in FILES:
        items = [i for i in load_split(registry, "hmd_proxy", "all", {"file": name}, data_dir).items
                 if i.label == MET and i.overlap is not None]
        matched = [(i.overlap, ours.get((i.sense, _norm(i.context)))) for i in items]
        in_pool = sum((i.sense, _norm(i.context)) in ours for i in items)
        pairs = [(a, b) for a, b in matched if b is not None]
        out["files"][name] = {"metaphorical_rows": len(items), "matched_in_pool": in_pool,
                              "with_our_phi": len(pairs), **_compare(pairs, xi, scipy.stats)}
        pairs_all.extend(pairs)
    out["all"] = {"pairs": len(pairs_all), **_compare(pairs_all, xi, scipy.stats)}
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
