"""Holm and Benjamini-Hochberg adjustments against statsmodels' multipletests."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from metabench.stats import benjamini_hochberg, holm

TOL = 1e-9
METHODS = [(holm, "holm"), (benjamini_hochberg, "fdr_bh")]


def _random_pvalues(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60))
    p = np.concatenate([rng.uniform(0, 1, m), rng.uniform(0, 0.01, m // 3)])
    return rng.permutation(p)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("ours,name", METHODS)
def test_matches_statsmodels_on_random_inputs(ours, name, seed):
    p = _random_pvalues(seed)
    np.testing.assert_allclose(ours(p), multipletests(p, method=name)[1], rtol=0, atol=TOL)


EDGE_PVALUES = [[0.03], [0.0, 1.0], [0.02, 0.02, 0.02, 0.5], [1.0, 1.0], [0.01, 0.04, 0.03, 0.005, 0.04]]


@pytest.mark.parametrize("ours,name", METHODS)
@pytest.mark.parametrize("p", EDGE_PVALUES)
def test_matches_statsmodels_on_edge_inputs(ours, name, p):
    np.testing.assert_allclose(ours(p), multipletests(p, method=name)[1], rtol=0, atol=TOL)


@pytest.mark.parametrize("ours,name", METHODS)
def test_nan_stays_nan_and_is_excluded_from_m(ours, name):
    p = np.array([0.01, np.nan, 0.04, 0.03, np.nan])
    adjusted = ours(p)
    assert np.isnan(adjusted[[1, 4]]).all()
    valid = ~np.isnan(p)
    np.testing.assert_allclose(adjusted[valid], multipletests(p[valid], method=name)[1], rtol=0, atol=TOL)


@pytest.mark.parametrize("ours", [holm, benjamini_hochberg])
def test_empty_and_all_nan(ours):
    assert ours([]).shape == (0,)
    assert np.isnan(ours([np.nan, np.nan])).all()


def test_known_values_in_input_order():
    p = [0.04, 0.01, 0.03]
    np.testing.assert_allclose(holm(p), [0.06, 0.03, 0.06], atol=TOL)
    np.testing.assert_allclose(benjamini_hochberg(p), [0.04, 0.03, 0.04], atol=TOL)


@pytest.mark.parametrize("ours", [holm, benjamini_hochberg])
def test_invalid_pvalues(ours):
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\].*1.5 at position 1"):
        ours([0.2, 1.5])
    with pytest.raises(ValueError, match="flat sequence"):
        ours([[0.1, 0.2]])
