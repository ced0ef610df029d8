"""When a run is partial: the one definition the typed record, the verifier and every report share (#48).

A run that scored part of its test split must say so wherever its number appears (◐ on the board,
``[partial]`` in ``compare``, ``partial=`` in an export), and two readers must never disagree on it. The test
is a comparison of two counts, so it lives here as a pure function of them: the items the run scored and the
split's size. Which size is fed to it is the caller's choice, and the reports feed the one the verifier loaded
from the data (`runs.verify_data`): a ``--limit 50`` run that records ``n_test_items: 50`` is still 50 of 500.
``limit`` only words the reason, and decides alone where no size is known (a run older than the record of the
split's size, read where its data is not): a limit that could have cut the split counts as partial.
"""

from __future__ import annotations


def partial(n_scored_items: int, split_size: int | None, limit: int | None) -> list[str]:
    """Why a run that scored ``n_scored_items`` distinct test items of a split of ``split_size`` items (None:
    unknown) under ``--limit limit`` (None: none) is partial; [] for a whole run. ``--limit 10000`` on a
    500-item split scored all 500: not partial."""
    if split_size is not None:
        if n_scored_items >= split_size:
            return []
        if limit is not None:
            return [f"--limit {limit}: {n_scored_items} of {split_size} test items"]
        return [f"{n_scored_items} of {split_size} test items (a subset of the split)"]
    if limit is not None and n_scored_items >= limit:
        return [f"--limit {limit}: {n_scored_items} test items (the run does not record the split's size)"]
    return []


def cutting_limit(limit: int | None, split_size: int | None) -> int | None:
    """The ``--limit`` a run over a split of ``split_size`` items (None: not known yet) is partial under, which
    names its folder (``@limit=N``); None where the limit keeps every item (``--limit 10000`` on a 500-item
    split: the full run's folder). The same rule as :func:`partial` on the items such a run scores."""
    if limit is None:
        return None
    return limit if split_size is None or limit < split_size else None
