"""Environment variables set for a block and restored after it, as they were (unset ones unset again)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def variables(values: dict[str, str]) -> Iterator[None]:
    """Set ``values`` for the block: libraries read such switches when first imported (a hub's offline mode, a
    progress bar's), and the caller must not be left with them set."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
