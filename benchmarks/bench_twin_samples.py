"""A corpus's BO sample and its random control drawn apart (one pass each, as two workers did) or together
(``derived.sampled_pools``: one pass, shared word forms, metaphors and span ranks).

For each corpus with twins (VUA-18 and Meta4XNLI-EN: ``boisson_*_bo`` and ``boisson_*_rs``) it builds both
pools, folding included, both ways in alternating rounds, from base slices already parsed (read once
before timing, so only the pools' own work is timed), and checks that the two ways give the same items and
folds. CPU seconds of this process (the machine may be shared); the median of the rounds is compared.

    METABENCH_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_twin_samples.py --rounds 5
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ.setdefault("METABENCH_CACHE_DIR", tempfile.mkdtemp(prefix="bench-twins-"))
    from metabench_artifacts import derived
    from metabench_artifacts.recipes import RECIPES
    from metabench.data.context import DataContext
    from metabench.plugins import load

    registry = load()
    corpora = {}
    for recipe in RECIPES.values():
        family = derived.twins(recipe)
        if len(family) > 1 and recipe is family[0]:
            ctx = DataContext(registry.resolve("dataset", derived.PREFIX + recipe.name), None)
            derived._build(ctx, [recipe], 0, {})  # base slices parsed and cached before any timing
            corpora[" + ".join(r.name for r in family)] = (ctx, family)
    gc.disable()  # as while loading (data/load.py pauses the collector)
    timings: dict[str, dict[str, list[float]]] = {name: {"apart": [], "together": []} for name in corpora}
    identical = True
    for _ in range(args.rounds):
        for name, (ctx, family) in corpora.items():
            started = time.process_time()
            apart = [derived._build(ctx, [recipe], 0, {})[0] for recipe in family]
            timings[name]["apart"].append(time.process_time() - started)
            started = time.process_time()
            together = derived._build(ctx, family, 0, {})
            timings[name]["together"].append(time.process_time() - started)
            identical &= all(a.items == b.items and a.folds == b.folds for a, b in zip(apart, together))
    gc.enable()
    print(f"{args.rounds} alternating rounds, CPU s (median; min-max)")
    for name, both in timings.items():
        a, t = (statistics.median(both[k]) for k in ("apart", "together"))
        print(f"  {name:22s} apart {a:5.2f} ({min(both['apart']):.2f}-{max(both['apart']):.2f})   together "
              f"{t:5.2f} ({min(both['together']):.2f}-{max(both['together']):.2f})   ratio {t / a:.2f}")
    print(f"same items and folds both ways: {identical}")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
