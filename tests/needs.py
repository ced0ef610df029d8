"""Skip markers for optional heavy packages that look a package up without importing it.

``pytest.importorskip("peft")`` at a module's top imports peft (and through it transformers and scikit-learn)
while the suite is being *collected*: 13 s before the first test runs, even for ``pytest -k`` that selects none
of its tests. ``pytestmark = needs("torch", "peft")`` skips the same tests when a package is absent, and the
tests import what they use themselves.
"""

from __future__ import annotations

from importlib.util import find_spec

import pytest


def needs(*packages: str) -> pytest.MarkDecorator:
    missing = [name for name in packages if find_spec(name) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (not installed)")
