"""Which parsed-item cache: pickle (what metabench uses) or HF `datasets` Arrow (what the design card named).

Every dataset slice that `--tasks all` reads is parsed by its loader once, then stored and read back both
ways; the numbers are CPU seconds of this process (the machine may be shared):

- **parse**: the loaders themselves (hash check of each file once, reading, typed items with stable ids);
- **pickle**: ``pickle.dump`` / ``pickle.load`` of the item lists (what ``metabench.data.itemcache`` does);
- **Arrow**: ``datasets.Dataset.from_list(...).save_to_disk`` / ``load_from_disk`` + ``to_list`` + rebuilding
  the typed items. ``meta`` dicts are JSON-encoded first (their values differ in type between rows) and
  tuple fields come back as lists, which the timing leaves unconverted, so Arrow is, if anything, flattered.

    METABENCH_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_item_cache.py
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def slices(registry) -> list[tuple[str, str, dict]]:
    from metabench.config.index import TaskIndex
    from metabench.config.validate import resolve_split, split_values

    index, seen = TaskIndex(registry), set()
    for name in index.select("all"):
        task = index.load(name)
        for role in ("test", "train", "validation"):
            value = getattr(task.config.splits, role)
            for one in split_values(value) if value is not None else ():
                dataset, split, args = resolve_split(task.config, one)
                seen.add((dataset, split, json.dumps(args, sort_keys=True)))
    return [(d, s, json.loads(a)) for d, s, a in sorted(seen)]


def cpu(fn):
    started = time.process_time()
    out = fn()
    return time.process_time() - started, out


def main() -> int:
    os.environ["METABENCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-item-cache-")  # parse for real
    from metabench.data.load import load_split
    from metabench.plugins import load

    registry = load()
    wanted = slices(registry)
    from metabench.errors import MetabenchError

    def parse_all():
        out = []
        for dataset, split, args in wanted:
            try:
                out.append(load_split(registry, dataset, split, args).items)
            except MetabenchError as exc:  # a derived dataset not built here (e.g. hard_metaphors)
                print(f"skipped {dataset}/{split}: {exc.message}")
        return out

    parse_s, loaded = cpu(parse_all)
    n_items = sum(len(items) for items in loaded)
    work = Path(tempfile.mkdtemp(prefix="bench-item-cache-"))

    def pickle_dump():
        for i, items in enumerate(loaded):
            with open(work / f"{i}.pkl", "wb") as handle:
                pickle.dump(items, handle, protocol=pickle.HIGHEST_PROTOCOL)

    def pickle_load():
        for i in range(len(loaded)):
            with open(work / f"{i}.pkl", "rb") as handle:
                pickle.load(handle)

    import datasets

    datasets.disable_progress_bars()

    def arrow_dump():
        for i, items in enumerate(loaded):
            rows = [{**dataclasses.asdict(item), "meta": json.dumps(item.meta)} for item in items]
            datasets.Dataset.from_list(rows).save_to_disk(str(work / f"a{i}"))

    def arrow_load():
        for i, items in enumerate(loaded):
            if items:
                cls = type(items[0])
                rows = datasets.load_from_disk(str(work / f"a{i}")).to_list()
                [cls(**{**row, "meta": json.loads(row["meta"])}) for row in rows]

    p_dump, _ = cpu(pickle_dump)
    p_load, _ = cpu(pickle_load)
    a_dump, _ = cpu(arrow_dump)
    a_load, _ = cpu(arrow_load)
    size = lambda pattern: sum(f.stat().st_size for f in work.glob(pattern) if f.is_file())  # noqa: E731
    print(f"{len(loaded)} slices, {n_items} items; load average {os.getloadavg()[0]:.1f}\n")
    print(f"{'':8s} {'write s':>8s} {'read s':>8s} {'MB':>6s}")
    print(f"{'parse':8s} {'':>8s} {parse_s:8.2f}")
    print(f"{'pickle':8s} {p_dump:8.2f} {p_load:8.2f} {size('*.pkl') / 1e6:6.0f}")
    print(f"{'Arrow':8s} {a_dump:8.2f} {a_load:8.2f} {size('a*/**/*') / 1e6:6.0f}")
    print(f"\nread speed-up over parsing: pickle {parse_s / p_load:.2f}x, Arrow {parse_s / a_load:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
