"""A board's item-set label claims "all N test items" only where the split's size is known (from the data, else the
run's record: `Run.test_split_size`) and the run scored all of it (#35): a --limit run says how much it scored, an older run without the record claims nothing more."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from metabench.report.leaderboard.board import _item_set_label


@pytest.mark.parametrize(("n_items", "partial", "recorded", "label"), [
    (120, False, 120, "all 120 test items"),
    (50, True, 120, "first 50 test items (runs with --limit: 50 of 120)"),
    (104, False, None, "104 test items (the runs do not record the split's size)"),
])
def test_the_label_says_only_what_the_runs_show(n_items, partial, recorded, label):
    assert _item_set_label(SimpleNamespace(record=SimpleNamespace(n_items=n_items), partial=partial,
                                           test_split_size=recorded)) == label
