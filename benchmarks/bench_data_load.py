"""Loading all of Meta4XNLI detection (EN + ES, train/dev/test = 26,640 sentences) into items.

Compares metabench's loader (hash check of every file, typed items with stable ids, source/subset recovered
by matching split sentences to the source files) with the plain-library way: a bare Python loop that
splits the same CoNLL files into (words, tags) lists and does nothing else.

Run: METABENCH_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_data_load.py
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tabulate import tabulate

from metabench.data import resolve
from metabench.data.load import load_split
from metabench.plugins import load as load_plugins

SPLITS = ("train", "dev", "test")
LANGUAGES = ("en", "es")


def plain_loop(root: Path) -> int:
    count = 0
    for language in LANGUAGES:
        for split in SPLITS:
            words: list[str] = []
            for line in (root / "meta4xnli" / "detection" / "splits" / language / f"meta4xnli_{split}.tsv").read_text(encoding="utf-8").splitlines():
                if line.strip():
                    words.append(line.split("\t")[0])
                elif words:
                    count += 1
                    words = []
            count += bool(words)
    return count


def metabench_load(registry) -> int:
    return sum(len(load_split(registry, "meta4xnli_detection", split, {"language": language}).items)
               for language in LANGUAGES for split in SPLITS)


def timed(fn, *args) -> tuple[float, int]:
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def main() -> None:
    root = Path(os.environ["METABENCH_DATA_DIR"])
    registry = load_plugins()
    plain_s, plain_n = timed(plain_loop, root)
    cold_s, cold_n = timed(metabench_load, registry)
    resolve._verified.clear()  # hashes are checked once per process: a second load re-reads but skips nothing else
    warm_s, warm_n = timed(metabench_load, registry)
    assert plain_n == cold_n == warm_n, (plain_n, cold_n, warm_n)
    rows = [
        ["plain loop (words only, no checks)", f"{plain_s:.3f}", "1.00x"],
        ["metabench, first load (hashes + items + source matching)", f"{cold_s:.3f}", f"{cold_s / plain_s:.2f}x"],
        ["metabench, second load in the process", f"{warm_s:.3f}", f"{warm_s / plain_s:.2f}x"],
    ]
    print(tabulate(rows, headers=["loader", "seconds", "vs plain"]))
    print(f"\n{cold_n} sentences")


if __name__ == "__main__":
    main()
