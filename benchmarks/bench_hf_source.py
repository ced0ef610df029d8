"""What a task's `hf_dataset` costs next to reading the same `datasets` folder by hand.

A save_to_disk folder of synthetic tagged sentences (``--rows``, default 20000 train + 5000 test) is written to
a temporary folder, then one split is read three ways; the numbers are CPU seconds of this process (the
machine may be shared), best of ``--repeat``:

- **plain**: ``datasets.load_from_disk`` and a ``TaggedSentence`` per row, what a hand-written loader does;
- **metabench cold**: loading the task (its spec built: every file listed and hashed) and ``load_split`` of
  its ``hf.<task>`` dataset with an empty cache: the split read through ``datasets``, rows to items, the
  parsed-item cache written (the plugins and the task index, which every run builds, are not timed);
- **metabench warm**: the same call again in a new process's state (the in-process memos cleared): the files'
  stamps checked instead of their bytes, the items unpickled from the parsed-item cache.

    .venv/bin/python benchmarks/bench_hf_source.py [--rows 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TASK = """task: bench_tag
kind: tagging
hf_dataset: {path: ./tagged, columns: {words: tokens, tags: tags}}
splits: {train: train, test: test}
labels: {scheme: BIO, positive: METAPHOR, names: [O, B-METAPHOR, I-METAPHOR]}
metrics: [span_f1]
"""


def write_folder(folder: Path, rows: int) -> None:
    import datasets

    words = ["the", "storm", "of", "words", "hit", "him", "hard", "in", "a", "cold", "way"]
    features = datasets.Features({"tokens": datasets.Sequence(datasets.Value("string")),
                                  "tags": datasets.Sequence(datasets.ClassLabel(names=["O", "B-METAPHOR", "I-METAPHOR"]))})

    def split(n: int, shift: int):
        tokens = [[words[(i + j + shift) % len(words)] for j in range(8 + i % 12)] for i in range(n)]
        return datasets.Dataset.from_dict(
            {"tokens": tokens, "tags": [[1 if w in ("storm", "hit", "cold") else 0 for w in s] for s in tokens]},
            features=features)

    datasets.disable_progress_bars()
    datasets.DatasetDict({"train": split(rows, 0), "test": split(rows // 4, 3)}).save_to_disk(str(folder))


def cpu(fn):
    started = time.process_time()
    out = fn()
    return time.process_time() - started, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="bench-hf-source-"))
    tasks = root / "tasks"
    tasks.mkdir()
    write_folder(tasks / "tagged", args.rows)
    (tasks / "bench_tag.yaml").write_text(TASK, encoding="utf-8")

    import datasets

    from metabench import plugins
    from metabench.config.index import TaskIndex
    from metabench.data import resolve
    from metabench.data.items import TaggedSentence
    from metabench.data.load import load_split
    from metabench.hookspecs import hookimpl

    module = types.ModuleType("bench_hf_tasks")
    module.metabench_register_tasks = hookimpl(lambda register: register(str(tasks)))

    def plain():
        split = datasets.load_from_disk(str(tasks / "tagged"))["train"]
        names = split.features["tags"].feature.names
        table = split.to_dict()
        return [TaggedSentence(id=f"train:{i}", words=tuple(w), tags=tuple(names[t] for t in g))
                for i, (w, g) in enumerate(zip(table["tokens"], table["tags"]))]

    registry = plugins.load(extra_plugins=(module,))
    index = TaskIndex(registry)  # the plugins and the task index, which any run builds, are not timed

    def metabench():
        index.load("bench_tag")  # checks the source and builds its spec (files listed and hashed)
        return load_split(registry, "hf.bench_tag", "train").items

    def fresh_process_state():
        resolve._verified.clear()  # what a new process starts without (the stamps file stays)
        resolve._stamps = None

    timings: dict[str, float] = {}
    for attempt in range(args.repeat):
        os.environ["METABENCH_CACHE_DIR"] = str(root / f"cache-{attempt}")
        fresh_process_state()
        plain_s, expected = cpu(plain)
        cold_s, cold = cpu(metabench)
        fresh_process_state()
        warm_s, warm = cpu(metabench)
        assert cold == expected == warm, "metabench's items differ from the plain reading"
        for name, seconds in (("plain", plain_s), ("metabench cold", cold_s), ("metabench warm", warm_s)):
            timings[name] = min(timings.get(name, seconds), seconds)

    print(f"{args.rows} train rows (save_to_disk folder), CPU s, best of {args.repeat}")
    for name, seconds in timings.items():
        print(f"  {name:15s} {seconds:7.3f}  ({seconds / timings['plain']:.2f}x plain)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
