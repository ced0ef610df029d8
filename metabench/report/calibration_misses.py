"""Which comparisons have a shape on which `metabench stats calibrate` measured their procedure missing a target.

A procedure that holds its level on 3,630 sentences may not on one 64-item fold, so a reader of a p-value or an
interval must be told when the simulation found it wrong on data shaped like theirs. `metabench stats calibrate
--write` writes the rows that miss a target (type-I > 6 %, coverage < 94 %, power at the printed MDE outside
80 ± 5 %), each with the scope it stands for (the test and unit `compare` runs, the task pattern and metric it
was read from, how many units), to ``calibration_misses.json`` beside this module: committed with the package,
so `compare`, `gate` and the leaderboard read it wherever metabench is installed, without the simulation.
`calibration_notes` gives the note a comparison carries: `compare` prints it, `gate` prints it as a warning
line, the leaderboard shows it beside the comparison's cell.
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path

MISSES = Path(__file__).with_name("calibration_misses.json")
#: how each note starts, so the gate and the leaderboard tell it from a comparison's other notes
PREFIX = "calibration:"
#: a shape stands for comparisons whose unit count is within this factor of its own (folds of 64 or 65 items)
SIZE_FACTOR = 1.25


@lru_cache(maxsize=1)
def _misses() -> tuple[dict, ...]:
    return tuple(json.loads(MISSES.read_text(encoding="utf-8"))["misses"])


def applies(scope: dict, task: str, metric: str, test: str, unit: str, units: int) -> bool:
    """Whether a comparison (task, metric, the test and unit compare ran, how many units) has the shape ``scope``."""
    size = scope["size"]
    return (scope["test"] == test and scope["unit"] == unit and scope["metric"] == metric
            and fnmatchcase(task, scope["tasks"])
            and (size is None or size / SIZE_FACTOR <= units <= size * SIZE_FACTOR))


def calibration_notes(task: str, metric: str, test: str, unit: str, units: int) -> list[str]:
    """One note per calibration row of this comparison's shape that misses a target, with the measured rates."""
    return [f"{PREFIX} {m['procedure']} on the shape {m['shape']} misses its targets in `metabench stats "
            f"calibrate`: {m['figures']} (docs/reporting.md, Calibration)"
            for m in _misses() if applies(m["scope"], task, metric, test, unit, units)]
