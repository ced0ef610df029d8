"""What a reader must know about a run before reading its number: partial, unverified, rejected (#35).

A number from part of a split, or from a run that could not be checked against the data, reads like any other
in a table. ``compare`` therefore names each run it prints with these marks, each with its reason:

- **partial**: the run scored part of the test split: ``--limit N of M test items``, or, where the
  run recorded the split's size without a limit, ``N of M test items (a subset of the split)``; a ``--limit``
  run written before runs recorded the split's size says so instead of claiming the whole split;
- **unverified**: verification could not check it against the data its task names (`runs.verify_data`);
- **rejected**: verification found its files or its data disagreeing (such a run is never compared).
"""

from __future__ import annotations

from ..runs.stored import Run
from ..runs.verify import Verdict


def partial_reasons(run: Run) -> list[str]:
    """Why the run is partial ([] for a whole run): it scored part of the test split (``--limit``, a subset).

    Seeds are not judged here: a run does not record whether its adapter is deterministic (one seed whatever
    the protocol asks), so fewer seeds than the protocol is not evidence of a partial run."""
    reasons = []
    total, limit = run.results.get("n_test_items"), run.results.get("limit")
    if total is not None and run.n_items < total:
        how = f"--limit {limit}: " if limit is not None else ""
        reasons.append(f"{how}{run.n_items} of {total} test items" + ("" if limit is not None else " (a subset of the split)"))
    elif total is None and run.partial:
        reasons.append(f"--limit {limit}: {run.n_items} test items (the run does not record the split's size)")
    return reasons


def marks(run: Run, verdict: Verdict | None) -> list[str]:
    """Every mark of the run with its reason, as 'partial: ...', 'unverified: ...', 'rejected: ...'."""
    found = [f"partial: {reason}" for reason in partial_reasons(run)]
    if verdict is not None and verdict.problems:
        found.append(f"rejected: {'; '.join(verdict.problems)}")
    elif verdict is not None and verdict.unverified:
        found.append(f"unverified: {verdict.unverified.removeprefix('not checked against the data: ')}")
    return found


def short(found: list[str]) -> str:
    """The marks' names for a table cell ('' without marks): ' [partial, unverified]'."""
    names = list(dict.fromkeys(mark.split(":", 1)[0] for mark in found))
    return f" [{', '.join(names)}]" if names else ""
