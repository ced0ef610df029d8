"""Reports read only stored runs (through ``metabench.runs``): ``compare``, the CI gate (``gate/``), the docs
generators (``docs/``), the analyses (``analyses/``), the leaderboard (``leaderboard/``) and the local per-item
page (``explore/``). CONTRIBUTING.md says where a new one goes."""

from __future__ import annotations

import warnings


def moved_names(old: str, new, category: type[Warning] = DeprecationWarning):
    """A module ``__getattr__`` for a module that moved: a name of ``new`` read at ``old`` still resolves, with a
    warning of ``category`` naming where it lives now; any other name is an AttributeError."""

    def __getattr__(name: str):
        if name.startswith("__") or not hasattr(new, name):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(f"{old}.{name} moved to {new.__name__}.{name}", category, stacklevel=2)
        return getattr(new, name)

    return __getattr__
