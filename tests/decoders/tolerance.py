"""How close two float32 log-likelihoods of the same item must be.

A log-likelihood is a sum over tokens computed in float32; another batch shape or another engine changes the
kernels' summation order, so two correct computations differ by a few units in the last place *of the value*
(one float32 step at -110 is 7.6e-6). Tolerances are therefore relative, in float32 epsilons, with the same
figure as an absolute floor for values near zero; a fixed absolute tolerance breaks on large sums.
"""

from __future__ import annotations

import numpy as np
import pytest

FLOAT32_EPS = float(np.finfo(np.float32).eps)


def approx_f32(values, ulps: int = 16):
    """``pytest.approx`` for float32 log-likelihoods: ``ulps`` epsilons relative to each value."""
    tol = ulps * FLOAT32_EPS
    return pytest.approx(values, rel=tol, abs=tol)
