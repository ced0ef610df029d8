"""`--shuffle SEED` (tests/shuffle_order.py): the order scripts/test.sh runs the quick tier in."""

from __future__ import annotations

from types import SimpleNamespace

from shuffle_order import shuffled

ITEMS = [SimpleNamespace(nodeid=f"tests/t.py::test_{i}", heavy=i % 7 == 0) for i in range(40)]


def _ids(items) -> list[str]:
    return [item.nodeid for item in items]


def test_a_seed_gives_one_order_whatever_order_the_tests_were_collected_in():
    """Each pytest-xdist worker collects the tests itself: one seed must give every worker the same order."""
    order = shuffled(ITEMS, 5, lambda item: item.heavy)
    assert _ids(shuffled(ITEMS[::-1], 5, lambda item: item.heavy)) == _ids(order)
    assert sorted(_ids(order)) == sorted(_ids(ITEMS))  # every test once


def test_seeds_give_different_orders_with_the_heavy_tests_first():
    orders = {tuple(_ids(shuffled(ITEMS, seed, lambda item: item.heavy))) for seed in range(5)}
    assert len(orders) == 5
    for order in orders:
        heavy = [i for i, nodeid in enumerate(order) if int(nodeid.rsplit("_", 1)[1]) % 7 == 0]
        assert heavy == list(range(len(heavy)))  # the heavy ones lead, so the workers run them side by side
    assert _ids(shuffled(ITEMS, 0, lambda item: False)) != _ids(ITEMS)
