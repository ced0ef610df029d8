"""What every statistical result has in common: it is immutable and it can be written to JSON.

Results are frozen dataclasses so that a reported number cannot be changed after the test that produced
it has run. `as_dict` exists because benchmark reports are JSON, and strict JSON has no NaN or Infinity:
non-finite floats (an undefined p-value, an infinite t statistic) are written as ``None``. Each result's
docstring says which of its fields can be non-finite and when.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class JsonResult:
    """Mixin for result dataclasses; fields hold plain Python values (float, int, str, None)."""

    def as_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict, with NaN and +/-Infinity replaced by ``None``."""
        return {field.name: _json_value(getattr(self, field.name)) for field in dataclasses.fields(self)}
