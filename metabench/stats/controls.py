"""Surface-feature controls for a metaphor effect: is it still there once overlap and length are held fixed?

Sanchez-Bayona & Agerri (2025) find that LLM accuracy on metaphor NLI is driven more by premise–hypothesis
lexical overlap and sentence length than by the metaphor. A raw metaphor-vs-literal difference (paired or
not) cannot tell these apart, so each item gets two surface features and a logistic regression of its
correctness on the metaphor indicator plus both features says what is left of the metaphor effect:

    logit P(correct) = b0 + b_metaphor * metaphor + b_overlap * overlap + b_length * length

Definitions (the paper's own could not be recovered; these are the extraction's, documented in
docs/paraphrase-controls.md):

- **overlap**: Jaccard similarity of the premise's and the hypothesis's word *sets*, words = maximal runs of
  lower-cased letters/digits (``\\w+`` without the underscore);
- **length**: premise words + hypothesis words (whitespace tokens), reported per 10 words so the coefficient
  reads as "per 10 more words".

Paired designs (the same item with and without its metaphor) are fitted as a **conditional** logistic
regression with one stratum per item (statsmodels ``ConditionalLogit``): only within-item differences count,
so an item the model gets right (or wrong) in both forms says nothing, exactly as in McNemar's test, and
what the gold label or the topic does is held fixed by design. Unpaired designs use the ordinary ``Logit``,
with cluster-robust standard errors by item when an item appears several times (several seeds). A design the model cannot estimate (the indicator or a feature constant, perfect separation)
gives a result with ``note`` saying why and no coefficients, never a crash.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass

_WORD = re.compile(r"[^\W_]+")
#: Overlap bins of `accuracy_by_overlap` (right-open, the last closed).
OVERLAP_BINS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
LENGTH_UNIT = 10.0


def overlap(premise: str, hypothesis: str) -> float:
    """Word-set Jaccard similarity of premise and hypothesis (0 when both are empty)."""
    a, b = set(_WORD.findall(premise.lower())), set(_WORD.findall(hypothesis.lower()))
    return len(a & b) / len(a | b) if a | b else 0.0


def length(premise: str, hypothesis: str) -> int:
    """Whitespace words of premise and hypothesis together."""
    return len(premise.split()) + len(hypothesis.split())


@dataclass(frozen=True)
class Coefficient:
    name: str
    coef: float
    ci_low: float
    ci_high: float
    pvalue: float
    odds_ratio: float


@dataclass(frozen=True)
class ControlledEffect:
    """The logistic regression of correctness on metaphor + overlap + length, and its one-line reading."""

    n: int
    clusters: int | None
    coefficients: tuple[Coefficient, ...] = ()
    confidence: float = 0.95
    note: str | None = None
    covariance: str = "nonrobust"

    def coefficient(self, name: str) -> Coefficient | None:
        return next((c for c in self.coefficients if c.name == name), None)

    @property
    def survives(self) -> bool | None:
        """Whether the metaphor coefficient's CI excludes 0 (None when the model could not be estimated)."""
        metaphor = self.coefficient("metaphor")
        if metaphor is None:
            return None
        return not (metaphor.ci_low <= 0.0 <= metaphor.ci_high)

    def verdict(self) -> str:
        """"does the metaphor effect survive once overlap and length are controlled?" in one line."""
        metaphor = self.coefficient("metaphor")
        if metaphor is None:
            return f"not estimable ({self.note})"
        direction = "lower" if metaphor.coef < 0 else "higher"
        level = f"{self.confidence:.0%}"
        if self.survives:
            return (f"yes: with overlap and length held fixed, metaphor items have {direction} odds of being right "
                    f"(OR {metaphor.odds_ratio:.2f}, {level} CI of b [{metaphor.ci_low:+.2f}, {metaphor.ci_high:+.2f}], "
                    f"p {_p(metaphor.pvalue)})")
        return (f"no: the metaphor coefficient's {level} CI [{metaphor.ci_low:+.2f}, {metaphor.ci_high:+.2f}] "
                f"includes 0 once overlap and length are controlled (p {_p(metaphor.pvalue)})")

    def as_dict(self) -> dict:
        out = asdict(self)
        out["survives"] = self.survives
        out["verdict"] = self.verdict()
        return out


def _p(p: float) -> str:
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def controlled_effect(
    correct: Sequence[float],
    metaphor: Sequence[int],
    overlaps: Sequence[float],
    lengths: Sequence[float],
    *,
    groups: Sequence | None = None,
    golds: Sequence | None = None,
    confidence: float = 0.95,
    conditional: bool = False,
) -> ControlledEffect:
    """Fit the logistic regression above with statsmodels (``Logit``); ``groups`` = cluster ids, or None.

    ``conditional``: a paired design, fitted by ``ConditionalLogit`` with one stratum per ``groups`` value (no
    intercept, no gold label: both are constant within an item).

    ``golds`` (optional) adds one indicator per gold label but the first (sorted): overlap often differs by
    label (IMPLI's entailed pairs overlap more), so for a model biased towards one label correctness follows
    overlap through the label; controlling the label too separates that from a metaphor effect.
    """
    import numpy as np  # noqa: PLC0415
    import statsmodels.api as sm  # noqa: PLC0415

    y = np.asarray(correct, dtype=float)
    x = np.column_stack([np.asarray(metaphor, dtype=float), np.asarray(overlaps, dtype=float),
                         np.asarray(lengths, dtype=float) / LENGTH_UNIT])
    if not (len(y) == len(x) and (groups is None or len(groups) == len(y))):
        raise ValueError("correct, metaphor, overlaps, lengths (and groups) need one value per observation")
    if not set(np.unique(y)) <= {0.0, 1.0}:
        raise ValueError("correct must be 0/1 per observation")
    n = len(y)
    clusters = None if groups is None else len(set(groups))
    if conditional:
        return _conditional(y, x, groups, n, clusters, confidence)
    why = _degenerate(y, x)
    if why:
        return ControlledEffect(n=n, clusters=clusters, confidence=confidence, note=why)
    names = ("const", "metaphor", "overlap", "length")
    if golds is not None:
        levels = sorted({str(g) for g in golds})[1:]
        x = np.column_stack([x] + [np.asarray([str(g) == level for g in golds], dtype=float) for level in levels])
        names += tuple(f"gold={level}" for level in levels)
    model = sm.Logit(y, sm.add_constant(x, has_constant="add"))
    if groups is None:
        kwargs, covariance = {}, "nonrobust"
    else:
        codes = np.unique(np.asarray([str(g) for g in groups]), return_inverse=True)[1]
        kwargs, covariance = {"cov_type": "cluster", "cov_kwds": {"groups": codes}}, "cluster (item)"
    try:
        with warnings.catch_warnings():  # non-convergence is reported in `note`, not as a warning
            warnings.simplefilter("ignore")
            fit = model.fit(disp=0, maxiter=200, **kwargs)
    except Exception as exc:  # noqa: BLE001 - statsmodels signals separation/singularity by raising
        return ControlledEffect(n=n, clusters=clusters, confidence=confidence, note=f"{type(exc).__name__}: {exc}")
    if not fit.mle_retvals.get("converged", True):
        return ControlledEffect(n=n, clusters=clusters, confidence=confidence,
                                note="the maximum-likelihood fit did not converge (near-separation)")
    return _effect(fit, names, n, clusters, confidence, covariance)


def _conditional(y, x, groups, n, clusters, confidence) -> ControlledEffect:
    import numpy as np  # noqa: PLC0415
    from statsmodels.discrete.conditional_models import ConditionalLogit  # noqa: PLC0415

    if groups is None:
        raise ValueError("a conditional (paired) fit needs groups: the item of each observation")
    codes = np.unique(np.asarray([str(g) for g in groups]), return_inverse=True)[1]
    informative = sum(1 for c in np.unique(codes) if y[codes == c].min() != y[codes == c].max())
    if informative < 5:
        return ControlledEffect(
            n=n, clusters=clusters, confidence=confidence, covariance="conditional (item strata)",
            note=f"only {informative} item(s) change correctness between their metaphorical and literal form")
    for column, name in enumerate(("metaphor indicator", "overlap", "length")):
        if all(x[codes == c, column].min() == x[codes == c, column].max() for c in np.unique(codes)):
            return ControlledEffect(n=n, clusters=clusters, confidence=confidence,
                                    note=f"the {name} never differs within an item, so a paired fit cannot use it")
    try:
        with warnings.catch_warnings():  # statsmodels warns about the strata it drops (no within-item variance)
            warnings.simplefilter("ignore")
            fit = ConditionalLogit(y, x, groups=codes).fit(disp=0)
    except Exception as exc:  # noqa: BLE001 - singular designs raise
        return ControlledEffect(n=n, clusters=clusters, confidence=confidence, note=f"{type(exc).__name__}: {exc}")
    return _effect(fit, ("metaphor", "overlap", "length"), n, clusters, confidence, "conditional (item strata)")


def _effect(fit, names, n, clusters, confidence, covariance) -> ControlledEffect:
    """A fitted model's coefficients with their CIs, or a note when a coefficient diverges (separation)."""
    import numpy as np  # noqa: PLC0415

    params, pvalues = np.asarray(fit.params), np.asarray(fit.pvalues)
    ci = np.asarray(fit.conf_int(alpha=1 - confidence))
    if not np.all(np.isfinite(ci)) or np.any(np.abs(params) > 30):
        return ControlledEffect(n=n, clusters=clusters, confidence=confidence,
                                note="quasi-separation: a coefficient diverges (the features nearly decide correctness)")
    coefficients = tuple(
        Coefficient(name, float(params[i]), float(ci[i, 0]), float(ci[i, 1]), float(pvalues[i]),
                    math.exp(float(params[i])))
        for i, name in enumerate(names)
    )
    return ControlledEffect(n=n, clusters=clusters, coefficients=coefficients, confidence=confidence,
                            covariance=covariance)


def _degenerate(y, x) -> str | None:
    if len(y) < 10:
        return f"only {len(y)} observations"
    if y.min() == y.max():
        return f"every observation is {'right' if y[0] else 'wrong'}: correctness does not vary"
    for column, name in enumerate(("metaphor indicator", "overlap", "length")):
        if x[:, column].min() == x[:, column].max():
            return f"the {name} is constant"
    for value in (0.0, 1.0):
        side = y[x[:, 0] == value]
        if side.min() == side.max():
            which = "metaphor" if value else "literal"
            return f"every {which} observation is {'right' if side[0] else 'wrong'} (separation)"
    return None


@dataclass(frozen=True)
class OverlapBin:
    low: float
    high: float
    n_metaphor: int
    accuracy_metaphor: float | None
    n_literal: int
    accuracy_literal: float | None


def accuracy_by_overlap(correct, metaphor, overlaps, bins: Sequence[float] = OVERLAP_BINS) -> list[OverlapBin]:
    """Accuracy of metaphor and literal observations within each overlap bin (``[low, high)``, last closed)."""
    out = []
    for i, (low, high) in enumerate(zip(bins, bins[1:])):
        last = i == len(bins) - 2
        inside = [(c, m) for c, m, o in zip(correct, metaphor, overlaps) if low <= o < high or (last and o == high)]
        met = [c for c, m in inside if m]
        lit = [c for c, m in inside if not m]
        out.append(OverlapBin(low, high, len(met), sum(met) / len(met) if met else None,
                              len(lit), sum(lit) / len(lit) if lit else None))
    return out
