"""What ``--repeat N`` does to the gate on a sampled decoder: null comparisons, single draws against majorities.

A baseline and a candidate are the same sampled model run with other sampling seeds (a null comparison: the
candidate is no worse). Each item has its own chance ``q`` that one draw is right, drawn from Beta(a, b)
(default 0.6, 0.4: most items nearly always or nearly never right, some in between, as a decoder's items are);
a run's verdict on an item is one draw (``--repeat 1``) or the majority of N draws (odd N: no ties). Each null
comparison is tested as ``metabench gate`` tests a single-seed run of correct/wrong items: exact McNemar, a
failure when the candidate is worse and p <= alpha (tolerance 0). Printed per mode: the false fails, the share
of items whose verdict differs between the two runs (what McNemar tests) and McNemar's mean minimum detectable
effect at that discordance (smaller: the gate can pass on fewer items).

    .venv/bin/python tools/sim_repeat_gate.py --items 200 --gates 2000 --repeat 5 --alpha 0.05
"""

from __future__ import annotations

import argparse

import numpy as np

from metabench.stats.paired import mcnemar_from_counts
from metabench.stats.power import mcnemar_mde


def null_gates(items: int, gates: int, draws: int, alpha: float, shape: tuple[float, float], seed: int) -> dict:
    rng = np.random.default_rng(seed)
    fails, discordant, mdes = 0, [], []
    for _ in range(gates):
        q = rng.beta(*shape, items)
        baseline, candidate = (rng.binomial(draws, q) * 2 > draws for _ in range(2))
        lost, won = int(np.sum(baseline & ~candidate)), int(np.sum(~baseline & candidate))
        fails += lost > won and mcnemar_from_counts(lost, won).pvalue <= alpha
        discordant.append((lost + won) / items)
        mdes.append(mcnemar_mde(items, max(discordant[-1], 1e-9), alpha=alpha).mde)
    return {"false_fails": fails, "discordant": float(np.mean(discordant)), "mde": float(np.mean(mdes))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--gates", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5, help="draws of the majority mode (odd)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, nargs=2, default=(0.6, 0.4), metavar=("A", "B"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.repeat % 2 == 0:
        parser.error("--repeat must be odd (an even count can tie)")
    for label, draws in (("single draw", 1), (f"majority of {args.repeat}", args.repeat)):
        found = null_gates(args.items, args.gates, draws, args.alpha, tuple(args.beta), args.seed)
        print(f"{label}: {args.items} items, {args.gates} null gates at alpha {args.alpha:g}: false fails "
              f"{found['false_fails']}/{args.gates} = {found['false_fails'] / args.gates:.4f}; items whose verdict "
              f"differs {found['discordant']:.3f}; McNemar MDE {found['mde']:.3f}")


if __name__ == "__main__":
    main()
