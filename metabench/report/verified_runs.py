"""The one way a verb that prints or publishes a number reads runs: verified first, marked, the rejected left out.

``compare`` and the leaderboard verified every run before reading it; ``compare artifacts``, ``compare
hardness`` and the suite table of ``report docs`` read what they were given, so a run verification rejects
printed its number there, and an unverified one printed it without a mark (#48). Every such verb now reads
through `verified_runs`: each run is checked against its own files and the data its task names
(`runs.verify.verify_runs`), every mark goes to stderr with its reason (`run_marks`: partial, unverified,
unchecked), and a rejected run is left out with a note naming it and why, never read.
"""

from __future__ import annotations

import sys

from ..runs.stored import Run
from ..runs.verify import Verdict, verify_runs
from .run_marks import marks


def verified_runs(registry, runs: list[Run], verb: str) -> tuple[list[Run], list[Verdict]]:
    """(the runs ``verb`` may read, the verdicts of those it must not), with one stderr line per marked or
    rejected run: ``<verb>: <run folder>: <marks>``."""
    kept, rejected, verdicts = verify_runs(registry, runs)
    for run in runs:
        if found := marks(run, verdicts[id(run)]):
            left_out = " (left out)" if not verdicts[id(run)].ok else ""
            print(f"{verb}: {run.path}{left_out}: {'; '.join(found)}", file=sys.stderr)
    return kept, rejected
