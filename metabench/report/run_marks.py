"""What a reader must know about a run before reading its number: partial, unverified, rejected (#35).

A number from part of a split, or from a run that could not be checked against the data, reads like any other
in a table. ``compare`` therefore names each run it prints with these marks, each with its reason:

- **partial**: the run scored part of the test split (`Run.partial_reasons`, judged against the split's size
  the verifier loaded from the data: `metabench.partial_runs`): ``--limit N: N of M test items``, or
  ``N of M test items (a subset of the split)``; a ``--limit`` run whose split's size is known neither from the
  data nor from its record says so instead of claiming the whole split;
- **unverified**: verification could not check it against the data its task names (`runs.verify_data`);
- **unchecked**: some of its metrics could not be rebuilt from its golds and predictions (`runs.verify`): those
  numbers are the run's own account;
- **rejected**: verification found its files or its data disagreeing (such a run is never compared).
"""

from __future__ import annotations

from ..runs.stored import Run
from ..runs.verify import Verdict


def marks(run: Run, verdict: Verdict | None) -> list[str]:
    """Every mark of the run with its reason, as 'partial: ...', 'unverified: ...', 'rejected: ...',
    'unchecked: ...'."""
    found = [f"partial: {reason}" for reason in run.partial_reasons]
    if verdict is not None and verdict.problems:
        found.append(f"rejected: {'; '.join(verdict.problems)}")
    elif verdict is not None and verdict.unverified:
        found.append(f"unverified: {verdict.unverified.removeprefix('not checked against the data: ')}")
    if verdict is not None and not verdict.problems and verdict.unchecked:
        found.append(f"unchecked: {', '.join(verdict.unchecked)} could not be rebuilt from the samples' golds and "
                     "predictions (the run's own account)")
    return found


def short(found: list[str]) -> str:
    """The marks' names for a table cell ('' without marks): ' [partial, unverified]'."""
    names = list(dict.fromkeys(mark.split(":", 1)[0] for mark in found))
    return f" [{', '.join(names)}]" if names else ""
