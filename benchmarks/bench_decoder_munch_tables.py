"""MUNCH's paper tables from stored runs: Table 2 (judgement accuracy, mean (SD) over the 3 prompts of each
condition), Table 9 (expected type x prediction at each model's best judgement prompt), Table 3 (generation
MRR / Recall@5 / Recall@10, mean (SD) over the 3 prompts) and the genre breakdown.

    python benchmarks/bench_decoder_munch_tables.py leaderboard/runs

SD is the sample standard deviation over the 3 prompts (n-1; the paper does not say which, munch.md §8.13).
Reads only results.json files, so it works on runs made anywhere.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

CONDITIONS = [(s, c) for s in ("word", "sent") for c in ("implicit", "msent", "mword")]
NAMES = {"implicit": "Implicit", "msent": "M-Sent", "mword": "M-Word"}


def _load(root: Path) -> dict[tuple[str, str], dict]:
    runs = {}
    for path in sorted(root.glob("munch_*/*/results.json")):
        results = json.loads(path.read_text())
        runs[(results["task"]["name"], results["model"]["spec"])] = results
    return runs


def _mean_sd(values: list[float]) -> str:
    if not values:
        return "–"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.3f} ({sd:.3f})" + ("" if len(values) == 3 else f" [n={len(values)}]")


def _metric(results, name):
    value = results["metrics"]["aggregate"].get(name)
    return None if value is None else value["mean"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", type=Path, nargs="?", default=Path("leaderboard/runs"))
    args = parser.parse_args(argv)
    runs = _load(args.runs)
    models = sorted({m for _, m in runs})

    print("Table 2 — paraphrase judgement accuracy, mean (SD) over prompts 1-3")
    print("| setup / condition | items | " + " | ".join(models) + " |")
    print("|---|---|" + "---|" * len(models))
    best: dict[str, tuple[float, str]] = {}
    for setup, condition in CONDITIONS:
        cells, items = [], set()
        for model in models:
            values = []
            for p in (1, 2, 3):
                task = f"munch_{setup}_judge_{condition}_p{p}"
                results = runs.get((task, model))
                if results is None:
                    continue
                accuracy = _metric(results, "accuracy")
                values.append(accuracy)
                items.add(results["n_items"])
                if accuracy is not None and accuracy > best.get(model, (-1.0, ""))[0]:
                    best[model] = (accuracy, task)
            cells.append(_mean_sd(values))
        print(f"| {setup} {NAMES[condition]} | {'/'.join(map(str, sorted(items))) or '–'} | " + " | ".join(cells) + " |")

    print("\nTable 9 — expected type x prediction at each model's best judgement prompt")
    keys = ["apt_inapt/correct", "apt_inapt/wrong_ab", "apt_inapt/C", "apt_inapt/D", "apt_apt/C", "apt_apt/AB",
            "apt_apt/D", "inapt_inapt/D", "inapt_inapt/AB", "inapt_inapt/C"]
    shown = [m for m in models if m in best]
    print("| expected → predicted | " + " | ".join(f"{m} ({best[m][1].removeprefix('munch_')})" for m in shown) + " |")
    print("|---|" + "---|" * len(shown))
    for key in keys:
        row = [runs[(best[m][1], m)]["metrics"]["aggregate"].get(f"munch_table9/{key}", {}).get("mean") for m in shown]
        print(f"| {key} | " + " | ".join("–" if v is None else f"{v:.0f}" for v in row) + " |")

    print("\nTable 3 — paraphrase generation, mean (SD) over prompts 1-3")
    metrics = [("mrr", "MRR"), ("recall_at_k[k=5]", "Recall@5"), ("recall_at_k[k=10]", "Recall@10"),
               ("accuracy_at_1", "acc@1")]
    print("| model | items | " + " | ".join(label for _, label in metrics) + " |")
    print("|---|---|" + "---|" * len(metrics))
    genres: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for model in models:
        found = [runs[(f"munch_generation_p{p}", model)] for p in (1, 2, 3) if (f"munch_generation_p{p}", model) in runs]
        if not found:
            continue
        cells = [_mean_sd([_metric(r, key) for r in found if _metric(r, key) is not None]) for key, _ in metrics]
        print(f"| {model} | {'/'.join(sorted({str(r['n_items']) for r in found}))} | " + " | ".join(cells) + " |")
        for results in found:
            for key, value in results["metrics"]["aggregate"].items():
                if key.startswith("accuracy_at_1@genre="):
                    genres[model][key.split("=", 1)[1]].append(value["mean"])
    if genres:
        print("\nTable 11 (generation part) — top-1 accuracy by genre, mean over prompts")
        for model, by_genre in genres.items():
            print(f"{model}: " + ", ".join(f"{g} {statistics.fmean(v):.3f}" for g, v in sorted(by_genre.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
