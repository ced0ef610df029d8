"""Surface controls: the feature definitions, and the regression against statsmodels fitted directly."""

from __future__ import annotations

import numpy as np
import pytest
from lazy import lazy

from metabench.stats.controls import accuracy_by_overlap, controlled_effect, length, overlap

sm = lazy("statsmodels.api")


def test_overlap_is_word_set_jaccard_and_length_counts_both_sides():
    assert overlap("The cat sat.", "the cat ran, the END") == pytest.approx(2 / 5)  # {the, cat} of 5 words
    assert overlap("", "") == 0.0
    assert length("a b c", "d e") == 5


def _data(n=400, seed=1, metaphor_effect=-0.8):
    rng = np.random.default_rng(seed)
    metaphor = rng.integers(0, 2, n)
    ov = rng.uniform(0, 1, n)
    ln = rng.integers(8, 40, n).astype(float)
    logit = 0.3 + metaphor_effect * metaphor + 2.0 * ov - 0.03 * ln
    correct = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(float)
    return correct, metaphor, ov, ln


def test_regression_matches_statsmodels_logit():
    correct, metaphor, ov, ln = _data()
    result = controlled_effect(correct, metaphor, ov, ln, confidence=0.9)
    x = sm.add_constant(np.column_stack([metaphor, ov, ln / 10]))
    fit = sm.Logit(correct, x).fit(disp=0)
    ci = fit.conf_int(alpha=0.1)
    for i, name in enumerate(("const", "metaphor", "overlap", "length")):
        c = result.coefficient(name)
        assert c.coef == pytest.approx(fit.params[i], rel=1e-6)
        assert (c.ci_low, c.ci_high) == pytest.approx(tuple(ci[i]), rel=1e-6)
        assert c.pvalue == pytest.approx(fit.pvalues[i], rel=1e-6)
    assert result.survives is True and result.verdict().startswith("yes: ")


def test_clustered_regression_matches_statsmodels_cluster_se():
    correct, metaphor, ov, ln = _data(seed=2, metaphor_effect=0.0)
    groups = [f"item{i // 2}" for i in range(len(correct))]
    result = controlled_effect(correct, metaphor, ov, ln, groups=groups)
    codes = np.arange(len(correct)) // 2
    fit = sm.Logit(correct, sm.add_constant(np.column_stack([metaphor, ov, ln / 10]))).fit(
        disp=0, cov_type="cluster", cov_kwds={"groups": codes})
    assert result.coefficient("metaphor").pvalue == pytest.approx(fit.pvalues[1], rel=1e-6)
    assert result.clusters == len(correct) // 2 and result.covariance.startswith("cluster")


def test_degenerate_designs_say_why_instead_of_crashing():
    correct, metaphor, ov, ln = _data(n=50)
    assert "does not vary" in controlled_effect(np.ones(50), metaphor, ov, ln).verdict()
    separated = controlled_effect(metaphor.astype(float), metaphor, ov, ln)
    assert separated.survives is None and "separation" in separated.note


def test_accuracy_by_overlap_bins():
    bins = accuracy_by_overlap([1, 0, 1, 1], [1, 1, 0, 0], [0.1, 0.15, 0.5, 1.0])
    assert (bins[0].n_metaphor, bins[0].accuracy_metaphor, bins[0].n_literal) == (2, 0.5, 0)
    assert (bins[2].n_literal, bins[4].n_literal, bins[4].accuracy_literal) == (1, 1, 1.0)


def test_gold_label_covariate_matches_statsmodels():
    correct, metaphor, ov, ln = _data(seed=3)
    golds = np.where(np.random.default_rng(4).uniform(size=len(correct)) < 0.5, "entailment", "not_entailment")
    result = controlled_effect(correct, metaphor, ov, ln, golds=list(golds))
    x = sm.add_constant(np.column_stack([metaphor, ov, ln / 10, golds == "not_entailment"]).astype(float))
    fit = sm.Logit(correct, x).fit(disp=0)
    assert [c.name for c in result.coefficients][-1] == "gold=not_entailment"
    assert [c.coef for c in result.coefficients] == pytest.approx(list(fit.params), rel=1e-6)


def test_paired_design_is_a_conditional_logit_by_item():
    from statsmodels.discrete.conditional_models import ConditionalLogit

    rng = np.random.default_rng(5)
    n = 300
    items = np.repeat(np.arange(n), 2)
    metaphor = np.tile([1, 0], n)
    ov, ln = rng.uniform(size=2 * n), rng.integers(5, 30, 2 * n).astype(float)
    ability = np.repeat(rng.normal(size=n), 2)
    correct = (rng.uniform(size=2 * n) < 1 / (1 + np.exp(-(ability - 0.9 * metaphor + 1.5 * ov)))).astype(float)
    result = controlled_effect(correct, metaphor, ov, ln, groups=[f"i{i}" for i in items], conditional=True)
    fit = ConditionalLogit(correct, np.column_stack([metaphor, ov, ln / 10]), groups=items).fit(disp=0)
    assert [c.name for c in result.coefficients] == ["metaphor", "overlap", "length"]
    assert [c.coef for c in result.coefficients] == pytest.approx(list(fit.params), rel=1e-6)
    assert [c.pvalue for c in result.coefficients] == pytest.approx(list(fit.pvalues), rel=1e-6)
    same = controlled_effect(np.repeat(correct[::2], 2), metaphor, ov, ln, groups=list(items), conditional=True)
    assert same.survives is None and "change correctness" in same.note  # no item differs between its forms
