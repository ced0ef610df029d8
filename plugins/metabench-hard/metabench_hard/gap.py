"""Metaphor identification on HARD(M) against VUA-Verb: the precision/recall gap and its unpaired tests.

The paper's Fig 5a compares MelBERT's precision and recall on HMD with its precision and recall on VUA
(−0.25 and −0.14) and reports "a two-tailed t-test" (p < 0.001) without saying on what. We test each metric
on its own units, which are different items in the two sets (so unpaired):

- recall: the gold-metaphor items, correct = predicted metaphor;
- precision: the items predicted metaphor, correct = gold metaphor;

with Welch's two-sided t-test on the 0/1 correctness (scipy ``ttest_ind(equal_var=False)``: the sets differ in
size and variance) and the pooled two-proportion z-test (:func:`metabench.stats.two_proportion_z`). HARD(M)
repeats sentences (one literal instance is the nearest negative of several metaphors: 359 negatives were 153
sentences in the first build), and copies are not independent units: the model sees the same input and gives
the same answer. So the HARD units are **distinct sentences** (instance ids from the build), each counted
once, and the report says so (``unit``); counting every copy overstated the precision p-values. The gap is
HARD minus VUA, so a negative gap means the hard set is harder. Precision on HARD(M) is against adversarially
near literal negatives, so it is not comparable with VUA precision in kind (the paper says recall is fairer).

Recall per phi bin (Fig 5b: 0-0.2, ..., 0.6-0.8) breaks a run down by the hardness of its metaphors.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass

import numpy as np

from metabench.plugin_api import MetabenchError
from .mine import phi_bin

#: Fig 5a as printed (text) and the unverified values of the authors' plotting script (fig/gap.py).
PAPER = {
    "model": "MelBERT (RoBERTa) on HMD(RoBERTa) vs VUA: the paper's models, not run here",
    "precision": {"vua": 0.801, "hard": 0.55, "gap": -0.25},
    "recall": {"vua": 0.769, "hard": 0.63, "gap": -0.14},
    "source": "Li et al. §6.3 text (gaps −0.25 / −0.14, two-tailed t-test p < 0.001); set values from the "
              "authors' fig/gap.py [ext], unverified",
}


@dataclass(frozen=True)
class GapTest:
    metric: str
    vua: float
    hard: float
    gap: float  # hard - vua
    n_vua: int
    n_hard: int
    t: float
    p_t: float  # Welch, two-sided
    z: float
    p_z: float  # pooled two-proportion z, two-sided


def _units(samples: list[dict], positive: str, metric: str) -> np.ndarray:
    if metric == "recall":
        return np.array([s["prediction"] == positive for s in samples if s["gold"] == positive], dtype=float)
    return np.array([s["gold"] == positive for s in samples if s["prediction"] == positive], dtype=float)


def sentence_units(rows: list[dict]) -> dict[str, str]:
    """HARD item id -> the pool instance it shows (a hard metaphor itself, a negative its literal instance)."""
    out = {}
    for row in rows:
        out[f"hard:{row['id']}"] = row["id"]
        if row.get("nearest_literal"):
            out[f"lit:{row['id']}"] = row["nearest_literal"]
    return out


def distinct(samples: list[dict], unit_of: dict[str, str]) -> list[dict]:
    """One sample per distinct unit (the first), for samples whose ids ``unit_of`` maps; others kept as they are."""
    seen, out = set(), []
    for sample in samples:
        unit = unit_of.get(sample["id"], sample["id"])
        if unit not in seen:
            seen.add(unit)
            out.append(sample)
    return out


def gap_test(vua_samples: list[dict], hard_samples: list[dict], metric: str, positive: str = "metaphor") -> GapTest:
    """The unpaired tests on the given samples (pass HARD's through :func:`distinct` to test sentences)."""
    import scipy.stats

    from metabench.plugin_api import two_proportion_z  # noqa: PLC0415

    x, y = _units(vua_samples, positive, metric), _units(hard_samples, positive, metric)
    if len(x) < 2 or len(y) < 2:
        raise MetabenchError(f"{metric}: too few units to test (VUA {len(x)}, HARD {len(y)})",
                             hint="a run that never predicts the positive class has no precision units")
    t = scipy.stats.ttest_ind(y, x, equal_var=False)
    z = two_proportion_z(int(x.sum()), len(x), int(y.sum()), len(y))
    return GapTest(metric, float(x.mean()), float(y.mean()), float(y.mean() - x.mean()), len(x), len(y),
                   float(t.statistic), float(t.pvalue), z.statistic, z.pvalue)


def wilson(units: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    """Wilson score interval of a proportion of 0/1 units (sound at the small counts of a phi bin, unlike Wald)."""
    if not len(units):
        return None, None
    import scipy.stats

    ci = scipy.stats.binomtest(int(units.sum()), len(units)).proportion_ci(confidence, method="wilson")
    return float(ci.low), float(ci.high)


def breakdown(samples: list[dict], phi: dict[str, float | None], positive: str = "metaphor",
              confidence: float = 0.95) -> list[dict]:
    """Per phi bin (and 'no phi'): items, metaphors, recall, predicted metaphors, precision, Wilson CIs."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for sample in samples:
        groups[phi_bin(phi.get(sample["id"])) or "no phi"].append(sample)
    rows = []
    for name in sorted(groups, key=lambda b: (b == "no phi", b)):
        group = groups[name]
        recall_units = _units(group, positive, "recall")
        precision_units = _units(group, positive, "precision")
        rows.append({
            "phi_bin": name, "items": len(group), "metaphors": len(recall_units),
            "recall": float(recall_units.mean()) if len(recall_units) else None,
            "recall_ci": wilson(recall_units, confidence),
            "predicted_metaphors": len(precision_units),
            "precision": float(precision_units.mean()) if len(precision_units) else None,
            "precision_ci": wilson(precision_units, confidence),
        })
    return rows


def one_seed(samples: list[dict], where: str) -> list[dict]:
    seeds = sorted({s["seed"] for s in samples})
    if not seeds:
        raise MetabenchError(f"{where}: the run has no samples")
    return [s for s in samples if s["seed"] == seeds[0]]


def report(vua_run, hard_run, hard_phi: dict[str, float | None], vua_phi: dict[str, float | None] | None,
           unit_of: dict[str, str] | None = None) -> dict:
    """The gap of one detector between a VUA-Verb run and a HARD(M) run (first seed of each), with breakdowns;
    the HARD side of the tests on distinct sentences (``unit_of``: :func:`sentence_units` of the build; without
    it, on items, and the report says so)."""
    vua = one_seed(vua_run.samples, str(vua_run.path))
    hard = one_seed(hard_run.samples, str(hard_run.path))
    units = distinct(hard, unit_of) if unit_of is not None else hard
    out = {
        "detector": hard_run.record.model.spec,
        "vua_run": {"task": vua_run.record.task.name, "model": vua_run.record.model.spec, "items": len(vua), "seed": vua[0]["seed"]},
        "hard_run": {"task": hard_run.record.task.name, "model": hard_run.record.model.spec, "items": len(hard), "seed": hard[0]["seed"],
                     "distinct_sentences": len(units)},
        "unit": "distinct sentences" if unit_of is not None else "items",
        "tests": [asdict(gap_test(vua, units, m)) for m in ("precision", "recall")],
        "hard_by_phi": [r for r in breakdown(hard, hard_phi) if r["metaphors"]],
        "paper": PAPER,
    }
    if vua_phi is not None:
        out["vua_by_phi"] = breakdown(vua, vua_phi)
    return out


def _fmt(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def format_report(data: dict) -> str:
    lines = [f"Detector: {data['detector']}  (VUA: {data['vua_run']['task']}, {data['vua_run']['items']} items; "
             f"HARD: {data['hard_run']['task']}, {data['hard_run']['items']} items; HARD tested on "
             f"{data.get('unit', 'items')})", "",
             "| metric | VUA-Verb | HARD | gap (HARD − VUA) | Welch t | p (t) | z | p (z) | n VUA / HARD |",
             "|---|---|---|---|---|---|---|---|---|"]
    for t in data["tests"]:
        lines.append(f"| {t['metric']} | {_fmt(t['vua'])} | {_fmt(t['hard'])} | {t['gap']:+.3f} | {t['t']:.2f} | "
                     f"{t['p_t']:.2g} | {t['z']:.2f} | {t['p_z']:.2g} | {t['n_vua']} / {t['n_hard']} |")
    paper = data["paper"]
    for metric in ("precision", "recall"):
        p = paper[metric]
        lines.append(f"| {metric}, paper | {p['vua']:.3f} | {p['hard']:.3f} | {p['gap']:+.2f} | | p < 0.001 | | | |")
    lines += ["", f"Paper rows: {paper['model']}. {paper['source']}.", ""]
    # HARD's bins hold only metaphors (its literal negatives have no phi): recall only, as Fig 5b
    lines += ["HARD recall by phi bin (Fig 5b):", "", "| phi bin | metaphors | recall |", "|---|---|---|"]
    lines += [f"| {r['phi_bin']} | {r['metaphors']} | {_fmt(r['recall'])} |" for r in data["hard_by_phi"]]
    lines.append("")
    if "vua_by_phi" in data:
        lines += ["VUA-Verb test by phi bin:", "", format_breakdown(data["vua_by_phi"]), ""]
    return "\n".join(lines)


def _ci(pair) -> str:
    low, high = pair if pair else (None, None)
    return "" if low is None else f" [{low:.2f}, {high:.2f}]"


def format_breakdown(rows: list[dict]) -> str:
    """Markdown table of :func:`breakdown` rows (Wilson CIs in brackets)."""
    lines = ["| phi bin | items | metaphors | recall [CI] | predicted metaphors | precision [CI] |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['phi_bin']} | {r['items']} | {r['metaphors']} | {_fmt(r['recall'])}{_ci(r.get('recall_ci'))} | "
              f"{r['predicted_metaphors']} | {_fmt(r['precision'])}{_ci(r.get('precision_ci'))} |" for r in rows]
    return "\n".join(lines)
