"""Surface controls of a metaphor/literal pair of runs: the observations, the regression and the overlap bins.

Works for both designs. Unpaired (a gap: different items on each side) — one observation per item and seed,
clustered by item when there are several seeds; fitted again with the gold label as a covariate. Paired
(variants: the same ids on both sides) — each shared item contributes its metaphorical and its literal
observation(s), and a conditional logit with one stratum per item asks whether, within the same item, the
metaphor still matters once the overlap and length changes the paraphrase made are accounted for (the gold
label is constant within an item, so that fit already holds it fixed).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ...registry import Registry
from ...stats.controls import ControlledEffect, OverlapBin, accuracy_by_overlap, controlled_effect
from ...runs.align import item_rows
from ...runs.stored import Run
from .surface import SurfaceFeatures, item_features


@dataclass
class Controls:
    """One model's metaphor effect with overlap and length controlled, for one (metaphor, literal) pair."""

    model: str
    metaphor_task: str
    literal_task: str
    design: str  # "paired" or "unpaired"
    regression: ControlledEffect
    regression_gold: ControlledEffect  # the same, with the gold label as a covariate too
    bins: list[OverlapBin]
    mean_overlap: dict
    mean_length: dict

    def as_dict(self) -> dict:
        out = asdict(self)
        out["regression"] = self.regression.as_dict()
        out["regression_gold"] = self.regression_gold.as_dict()
        return out


def controls(registry: Registry, metaphor: Run, literal: Run, *, paired: bool, confidence: float = 0.95,
             features: SurfaceFeatures | None = None) -> Controls:
    """The controlled regression and overlap bins of ``metaphor`` vs ``literal`` runs of one model; pass one
    ``features`` reader to many calls to read each task's items once."""
    read = features if features is not None else (lambda run: item_features(registry, run))
    rows = {True: item_rows(metaphor), False: item_rows(literal)}
    surface = {True: read(metaphor), False: read(literal)}
    if paired:
        shared = rows[True].keys() & rows[False].keys()
        ids = {side: sorted(shared) for side in (True, False)}
    else:
        ids = {side: sorted(rows[side]) for side in (True, False)}
    correct, indicator, overlaps, lengths, groups, golds = [], [], [], [], [], []
    for side in (True, False):
        for item in ids[side]:
            ov, ln = surface[side][item]
            for row in rows[side][item]:
                correct.append(float(row["scores"]["correct"]))
                indicator.append(int(side))
                overlaps.append(ov)
                lengths.append(ln)
                golds.append(row["gold"])
                groups.append(item if paired else f"{int(side)}:{item}")
    several_seeds = len(metaphor.record.seeds) > 1 or len(literal.record.seeds) > 1
    clusters = groups if paired or several_seeds else None
    regression = controlled_effect(correct, indicator, overlaps, lengths, groups=clusters, confidence=confidence,
                                   conditional=paired)
    if paired:  # the gold label is constant within an item: the conditional fit holds it fixed already
        regression_gold = regression
    else:
        regression_gold = controlled_effect(correct, indicator, overlaps, lengths, groups=clusters, golds=golds,
                                            confidence=confidence)

    def mean(values, side):
        chosen = [v for v, m in zip(values, indicator) if m == side]
        return sum(chosen) / len(chosen) if chosen else None

    return Controls(
        model=metaphor.record.model.spec, metaphor_task=metaphor.record.task.name, literal_task=literal.record.task.name,
        design="paired" if paired else "unpaired", regression=regression, regression_gold=regression_gold,
        bins=accuracy_by_overlap(correct, indicator, overlaps),
        mean_overlap={"metaphor": mean(overlaps, 1), "literal": mean(overlaps, 0)},
        mean_length={"metaphor": mean(lengths, 1), "literal": mean(lengths, 0)},
    )


def format_controls(results: list[Controls]) -> str:
    from tabulate import tabulate  # noqa: PLC0415

    lines = []
    for c in results:
        lines.append(f"{c.model}: {c.metaphor_task} (metaphor) vs {c.literal_task} (literal), {c.design}, "
                     f"n = {c.regression.n} observations"
                     + (f" in {c.regression.clusters} clusters" if c.regression.clusters else ""))
        lines.append(f"  mean overlap metaphor {c.mean_overlap['metaphor']:.3f} / literal {c.mean_overlap['literal']:.3f}; "
                     f"mean length {c.mean_length['metaphor']:.1f} / {c.mean_length['literal']:.1f} words")
        if c.regression.coefficients:
            level = f"{c.regression.confidence:.0%}"
            rows = [[k.name, f"{k.coef:+.4f}", f"[{k.ci_low:+.4f}, {k.ci_high:+.4f}]", f"{k.odds_ratio:.3f}",
                     "<0.0001" if k.pvalue < 1e-4 else f"{k.pvalue:.4f}"] for k in c.regression.coefficients]
            table = tabulate(rows, headers=["term", "coef (log-odds)", f"{level} CI", "odds ratio", "p"],
                             disable_numparse=True)
            lines.extend("  " + line for line in table.splitlines())
            lines.append(f"  (logit of correctness; length per 10 words; SE {c.regression.covariance})")
        bins = [[f"[{b.low:.1f}, {b.high:.1f}{']' if b.high == 1.0 else ')'}",
                 f"{b.n_metaphor}", "—" if b.accuracy_metaphor is None else f"{b.accuracy_metaphor:.3f}",
                 f"{b.n_literal}", "—" if b.accuracy_literal is None else f"{b.accuracy_literal:.3f}"] for b in c.bins]
        table = tabulate(bins, headers=["overlap", "n metaphor", "acc metaphor", "n literal", "acc literal"],
                         disable_numparse=True)
        lines.extend("  " + line for line in table.splitlines())
        lines.append(f"  does the metaphor effect survive once overlap and length are controlled? {c.regression.verdict()}")
        lines.append(f"  ... and with the gold label controlled too? {c.regression_gold.verdict()}")
        lines.append("")
    return "\n".join(lines)
