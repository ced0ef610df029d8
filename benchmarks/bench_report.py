"""How long the reporter's paired tests and the leaderboard build take on test sets of realistic size.

Run: .venv/bin/python benchmarks/bench_report.py [--items 4000] [--resamples 10000]
Writes synthetic runs (tagging with per-sentence span counts, classification with labels) to a temporary
folder and times `compare_pair` for each default test path (McNemar, bootstrap over F1 counts with 1 and 5
seeds, macro-F1 from labels, paired t) and a leaderboard build of several tasks and models.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from tabulate import tabulate

from metabench import plugins
from metabench.metrics.common import prf
from metabench.metrics.classification import macro_f1
from metabench.report import plugin as report_plugin
from metabench.report.compare import Options, compare_pair
from metabench.report.leaderboard import build_site
from metabench.runs.stored import load_run
from metabench.stats import plugin as stats_plugin
from metabench.store import write_run

LABELS = ("entailment", "neutral", "contradiction")


def _results(task: str, kind: str, model: str, seeds: list[int], per_seed: dict, metrics: list, n: int) -> dict:
    aggregate = {}
    for name in per_seed[str(seeds[0])]:
        values = [per_seed[str(s)][name] for s in seeds]
        aggregate[name] = {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
                           "n": len(values)}
    return {
        "schema_version": 1, "created": "2026-01-01T00:00:00+00:00",
        "task": {"name": task, "version": 1, "config_hash": "0" * 64, "kind": kind, "dataset": "bench",
                 "primary_metric": metrics[0] if isinstance(metrics[0], str) else metrics[0]["name"], "source": "",
                 "plugin": "bench", "config": {"metrics": metrics, "labels": {"names": list(LABELS), "positive": "METAPHOR"}}},
        "data": {"files": {}}, "model": {"spec": model}, "seeds": seeds, "limit": None, "n_items": n,
        "higher_is_better": {}, "metrics": {"per_seed": per_seed, "aggregate": aggregate},
    }


def tagging_run(path: Path, task: str, model: str, n: int, seeds: list[int], quality: float) -> Path:
    rng = np.random.default_rng(hash((task, model)) % 2**32)
    samples, per_seed = [], {}
    for seed in seeds:
        gold = rng.poisson(1.0, n)
        tp = rng.binomial(gold, quality)
        fp = rng.poisson(0.3, n)
        for i in range(n):
            samples.append({"id": f"s{i}", "seed": seed, "gold": [], "prediction": [], "scores": {
                "correct": float(tp[i] == gold[i] and fp[i] == 0), "span_tp": float(tp[i]), "span_fp": float(fp[i]),
                "span_fn": float(gold[i] - tp[i])}})
        per_seed[str(seed)] = {"span_f1": prf(tp.sum(), fp.sum(), (gold - tp).sum())["f1"]}
    write_run(path, _results(task, "tagging", model, seeds, per_seed, ["span_f1"], n), samples)
    return path


def nli_run(path: Path, task: str, model: str, n: int, seeds: list[int], quality: float) -> Path:
    rng = np.random.default_rng(hash((task, model)) % 2**32)
    gold = np.random.default_rng(0).choice(len(LABELS), n)
    samples, per_seed = [], {}
    for seed in seeds:
        pred = np.where(rng.random(n) < quality, gold, rng.choice(len(LABELS), n))
        golds, preds = [LABELS[g] for g in gold], [LABELS[p] for p in pred]
        for i in range(n):
            samples.append({"id": f"p{i}", "seed": seed, "gold": golds[i], "prediction": preds[i],
                            "scores": {"correct": float(golds[i] == preds[i])}})
        per_seed[str(seed)] = {"accuracy": float(np.mean(gold == pred)), "macro_f1": macro_f1(golds, preds)}
    write_run(path, _results(task, "classification", model, seeds, per_seed, ["accuracy", "macro_f1"], n), samples)
    return path


def _time(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    registry = plugins.load(extra_plugins=tuple(m for m in (stats_plugin, report_plugin)
                                                if m.__name__ not in plugins.BUILTIN_PLUGINS))
    options = Options(n_resamples=args.resamples)
    n = args.items
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        tag_a1 = load_run(tagging_run(root / "tag" / "a", "tag", "a", n, [0], 0.6))
        tag_b1 = load_run(tagging_run(root / "tag" / "b", "tag", "b", n, [0], 0.62))
        tag_a5 = load_run(tagging_run(Path(tmp) / "tag5" / "a", "tag", "a", n, [0, 1, 2, 3, 4], 0.6))
        nli_a = load_run(nli_run(root / "nli" / "a", "nli", "a", n, [0], 0.7))
        nli_b = load_run(nli_run(root / "nli" / "b", "nli", "b", n, [0], 0.72))
        nli_a3 = load_run(nli_run(Path(tmp) / "nli3" / "a", "nli", "a", n, [0, 1, 2], 0.7))
        nli_b3 = load_run(nli_run(Path(tmp) / "nli3" / "b", "nli", "b", n, [0, 1, 2], 0.72))
        cases = [
            ("accuracy, 1 seed each", nli_a, nli_b, "accuracy"),
            ("span F1, 1 seed each", tag_a1, tag_b1, "span_f1"),
            ("span F1, 5 seeds vs 1", tag_a5, tag_b1, "span_f1"),
            ("macro F1 from labels, 1 seed each", nli_a, nli_b, "macro_f1"),
            ("accuracy, 3 seeds each", nli_a3, nli_b3, "accuracy"),
        ]
        rows = []
        for label, a, b, metric in cases:
            result = compare_pair(registry, a, b, metric, options)
            rows.append([label, result.test, f"{_time(lambda a=a, b=b, m=metric: compare_pair(registry, a, b, m, options)):.3f}"])
        print(f"compare_pair, {n} items, {args.resamples} resamples (median of 3):")
        print(tabulate(rows, headers=["pair", "test", "seconds"]))

        for t in range(6):
            for m, quality in (("x", 0.6), ("y", 0.62), ("z", 0.5)):
                tagging_run(root / f"tag{t}" / m, f"tag{t}", m, n, [0], quality)
                nli_run(root / f"nli{t}" / m, f"nli{t}", m, n, [0], quality + 0.1)
        start = time.perf_counter()
        build_site(registry, [root], Path(tmp) / "site", n_resamples=args.resamples)
        print(f"\nleaderboard build: 14 tasks, 2-3 models each, {n} items: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
