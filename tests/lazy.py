"""Reference libraries imported on first use, not while the suite is collected.

scikit-learn's metrics cost 1.4 s to import, statsmodels 0.3 s, datasets and ray 0.3-0.4 s each: at a test
module's top they are paid by every `pytest` run, `-k` and `--collect-only` included, even when none of the
module's tests is selected. ``sk = lazy("sklearn.metrics")`` reads like the import and imports on the first
attribute read.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class lazy:  # noqa: N801 - used like a module name
    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str):
        if attr.startswith("_"):  # pytest probes a module's names for fixture and test marks while collecting
            raise AttributeError(attr)
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"lazy({self._name!r})"
