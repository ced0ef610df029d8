"""`--shuffle SEED`: run the collected tests in an order drawn from SEED instead of the files' order.

A test that passes only after another one has run (a memo, an environment variable, a registered plugin left
behind) passes in the files' order and in pytest-xdist's usual split, and fails for whoever runs it alone or in
another order: issue 59's order-dependent failure was one (a data memo outliving a change of
METABENCH_DATA_DIR). scripts/test.sh runs the quick tier shuffled, with a fresh seed each time that it prints, so
every run is such a check, and `METABENCH_TEST_SHUFFLE=SEED bash scripts/test.sh quick` replays an order that
failed. Under pytest-xdist every worker collects the tests and must see one order: the seed is an option, so
the workers get it from the controller's command line. The `heavy` tests stay first (tests/conftest.py: they
are scheduled first so the workers run them side by side), each group shuffled within itself.
"""

from __future__ import annotations

import random


def add_option(parser) -> None:
    parser.addoption("--shuffle", type=int, default=None, metavar="SEED",
                     help="run the tests in an order drawn from SEED (the heavy ones still first); "
                          "scripts/test.sh passes a fresh one to the quick tier and prints it")


def shuffled(items: list, seed: int, first) -> list:
    """``items`` with those for which ``first(item)`` holds ahead of the rest, each group in an order drawn from
    ``seed`` (the same order for the same seed and items, whatever order they came in)."""
    rng = random.Random(seed)
    out = []
    for group in ([i for i in items if first(i)], [i for i in items if not first(i)]):
        group = sorted(group, key=lambda item: item.nodeid)
        rng.shuffle(group)
        out += group
    return out
