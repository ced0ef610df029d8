"""A careful forger's rewrite of a run (imported by name: tests run with --import-mode=importlib): whatever is
changed, every score, metric and digest is recomputed with metabench's own code, so the run's files agree with
each other in every respect and only the data (`runs.verify_data`) or the model (`launch.reproduce`) can tell."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from metabench.config.index import TaskIndex
from metabench.jobs import build_kind, prepare
from metabench.launch.record import seed_summary
from metabench.store import golds_sha256, read_samples, samples_text


def forge_consistently(registry, run_dir: Path, *, golds: dict | None = None, task: str | None = None,
                       data: dict | None = None, predictions: dict | None = None, model: dict | None = None,
                       seeds: dict | None = None) -> None:
    """Rewrite a run as a careful forger would: new golds (item id -> gold), new predictions (item id -> answer,
    at every seed), another model record (``model``: the fields of results.json's ``model`` replaced, e.g. spec,
    adapter and fingerprint), other seeds claimed (``seeds``: old -> new), or another task's name, config hash,
    config and data record (``data``, copied from an honest run of it); then every score and metric recomputed
    with the task's own kind, and every digest (samples, ids, golds) recomputed."""
    import toy_plugin

    results = json.loads((run_dir / "results.json").read_text())
    index = TaskIndex(registry)
    source = prepare(registry, index.load(results["task"]["name"]), data_dir=toy_plugin.DATA_DIR)
    items = {str(i.id): i for i in source.test.items}
    target = index.load(task or results["task"]["name"])
    kind = build_kind(registry, target) if task else source.kind  # the run's own: fitted on its training split
    rows = read_samples(run_dir)
    renamed = seeds or {}
    for row in rows:
        row["seed"] = renamed.get(row["seed"], row["seed"])
    results["seeds"] = [renamed.get(seed, seed) for seed in results["seeds"]]
    per_seed = {}
    for seed in results["seeds"]:
        mine = [r for r in rows if r["seed"] == seed]
        for row in mine:
            row["gold"] = golds[row["id"]] if golds else row["gold"]
            row["prediction"] = predictions.get(row["id"], row["prediction"]) if predictions else row["prediction"]
            row["scores"] = kind.item_scores(items[row["id"]], row["gold"], row["prediction"])
        per_seed[str(seed)] = kind.aggregate([items[r["id"]] for r in mine], [r["gold"] for r in mine],
                                             [r["prediction"] for r in mine])
    results["metrics"] = {"per_seed": per_seed, "aggregate": seed_summary(per_seed)}
    results["model"].update(model or {})
    first = [r for r in rows if r["seed"] == results["seeds"][0]]
    results["data"] = data or results["data"]
    test = results["data"]["splits"]["test"]
    test["n"] = len(first)
    test["golds_sha256"] = golds_sha256((r["id"], r["gold"]) for r in first)
    test["ids_sha256"] = hashlib.sha256("\n".join(sorted(r["id"] for r in first)).encode()).hexdigest()
    results["task"].update(name=target.name, config_hash=target.hash, config=target.config.model_dump(mode="json"))
    text = samples_text(rows).encode()
    (run_dir / "samples.jsonl").write_bytes(text)
    results["samples_sha256"] = hashlib.sha256(text).hexdigest()
    (run_dir / "results.json").write_text(json.dumps(results))
