"""Each ranked run's facts, made once where the run is ranked and read by every later stage of the board.

What the board says of one run — what verification rebuilt, its marks (constant, ≈ chance against the best
constant answer, eligible for the ★, unverified, unchecked, reproduced) and its caveats (below chance, a collapsed
fit, seed stability, a lenient parser) — comes from one reading of its items (`runs.align.item_rows`, kept per
run by `align`) and one assessment against the constant answers (`trivial.assessment`: the best constant answer
found once per metric, each paired test made once). They are made in the task workers (`board._facts`), where the
run is ranked; the board's entries carry them, and the registered sections receive them (`BoardInputs.facts`)
rather than testing a run again.
"""

from __future__ import annotations

from dataclasses import dataclass

from .schema import Caveats, Entry, Marks, Verified


@dataclass(frozen=True)
class RunFacts:
    """One ranked run's facts: its folder as the board names it, and its typed parts."""

    run: str
    verified: Verified | None
    marks: Marks
    caveats: Caveats

    @property
    def unproven(self) -> bool:
        """On a board built with ``--reproduce``: the run was tried and not reproduced here (its number is only its
        own account: ranked below every reproduced run and never ★)."""
        return self.marks.reproduced is False

    @classmethod
    def of(cls, entry: Entry) -> RunFacts:
        """The facts a ranked entry carries."""
        return cls(entry.run or "", entry.verified, entry.marks or Marks(), entry.caveats or Caveats())
