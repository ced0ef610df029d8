"""The board's caveats of one run, as lines a publication carries beside its number (#48 item 6).

The leaderboard prints beside a number what keeps it from being read at face value: constant, ≈ chance,
below chance (a probable answer-format failure for a decoder), a collapsed fit (a classifier's answers), unstable
across seeds, a test that misses its calibration targets on the task's shape, unchecked. The export has no
comparison of its own, so the calibration miss it carries is that of the ≈ chance test (the run against its
best constant answer), the test its ≈ chance verdict rests on. A number exported to the Hub leaves the board behind, so the export carries the same
verdicts in its notes, made by the same functions (`trivial`, `seed_stability`, `runs.verify.Verdict`).
"""

from __future__ import annotations

from ..runs.stored import Run
from ..runs.verify import Verdict
from .analyses import seed_stability
from .compare import Options
from .trivial import ALPHA, assessment


def caveats(registry, run: Run, verdict: Verdict, metric: str, options: Options = Options(),
            alpha: float = ALPHA) -> list[str]:
    """The caveats of ``run``'s ``metric`` (its primary metric is the one the trivial baseline and the seeds
    are judged on), each one line; [] for a number that may be read as it is."""
    primary = run.record.primary_metric
    found_by = assessment(registry, run, options, alpha)  # the marks and flags, from one reading of its items
    marks, trivial = found_by.marks(), found_by.trivial
    found = []
    if marks["constant"]:
        found.append(f"constant: one answer covers 99 % or more of the items at every seed ({primary})")
    elif trivial["chance"] is True:
        tested = trivial.get("tested_metric")  # the primary cannot tell a constant answer from a perfect model
        found.append(f"≈ chance on {tested}: {trivial['note']}" if tested else
                     f"≈ chance: {trivial['note']} ({trivial['baseline']} = {trivial['baseline_value']:.4f}, {primary})")
    found += [flag for flag in (found_by.below_chance, found_by.collapsed_fit) if flag]
    if run.record.model.family != "baseline" and not marks["constant"]:
        found += seed_stability.marks(seed_stability.assess(run.record.per_seed(primary), [run]))
    found += [f"calibration miss of the ≈ chance test: {note}" for note in trivial.get("calibration", [])]
    note = verdict.unchecked_note(metric)
    found += [f"unchecked: {note}"] if note else []
    return found
