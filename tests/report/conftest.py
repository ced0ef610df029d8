"""Runs to compare: real toy runs made once per session, edited copies of them, and small synthetic runs.

Real runs come from the runner on the toy plugin; a "worse candidate" is a copy whose predictions are
changed and rescored with the registered metrics, so results.json and samples.jsonl still agree (the
reporter checks that they do). Synthetic runs are written directly when a test needs exact per-item
vectors or task names the toy plugin does not have (subset tasks for gaps).
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest

from metabench.store import read_samples, write_run


@pytest.fixture(scope="session")
def report_registry():
    """Built-ins, the toy plugin, and the stats and report plugins (unless already built in)."""
    import toy_plugin

    from metabench import plugins
    from metabench.report import plugin as report_plugin
    from metabench.stats import plugin as stats_plugin

    extras = [m for m in (stats_plugin, report_plugin) if m.__name__ not in plugins.BUILTIN_PLUGINS]
    return plugins.load(extra_plugins=(toy_plugin, *extras))


def _run_toy(registry, out: Path, models, limit=None) -> Path:
    """Toy runs, with the toy data also in the session's data cache: reports check runs against the data their
    task names (`verify_data`), and find it there while METABENCH_DATA_DIR stays the real mirror."""
    import toy_plugin

    from metabench.data.resolve import cache_dir
    from metabench.runner import RunOptions, run

    options = RunOptions(output_dir=out, progress=False, use_cache=False, data_dir=toy_plugin.DATA_DIR, limit=limit)
    outcomes = run(registry, "toy_all", list(models), options)
    assert all(o.status == "ok" for o in outcomes), [o.message for o in outcomes]
    shutil.copytree(toy_plugin.DATA_DIR, cache_dir(), dirs_exist_ok=True)
    return out


@pytest.fixture(scope="session")
def toy_runs(report_registry, tmp_path_factory) -> Path:
    """An output folder: toy_tag and toy_cls × majority, lookup, random (2 seeds), random:strategy=prior (2 seeds)."""
    return _run_toy(report_registry, tmp_path_factory.mktemp("toy") / "runs",
                    ["majority", "lookup", "random", "random:strategy=prior"])


@pytest.fixture(scope="session")
def short_runs(report_registry, tmp_path_factory) -> Path:
    """The lookup model on the first 30 items only (items that differ from the full runs)."""
    return _run_toy(report_registry, tmp_path_factory.mktemp("short") / "runs", ["lookup"], limit=30)


@pytest.fixture(scope="session")
def short_pairs(report_registry, tmp_path_factory) -> Path:
    """majority and lookup on the first 30 items only: a pair over other items than the full runs'."""
    return _run_toy(report_registry, tmp_path_factory.mktemp("short-pairs") / "runs", ["majority", "lookup"], limit=30)


@pytest.fixture
def copy_run(tmp_path):
    """Copy a run folder to ``tmp_path/<name>/<task>/<model>`` so that a test may edit it."""

    def copy(run_dir: Path, name: str) -> Path:
        target = tmp_path / name / run_dir.parent.name / run_dir.name
        shutil.copytree(run_dir, target)
        return target

    return copy


def _aggregate(per_seed: dict) -> dict:
    names = sorted({n for metrics in per_seed.values() for n in metrics})
    out = {}
    for name in names:
        values = [m[name] for m in per_seed.values()]
        out[name] = {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
                     "n": len(values)}
    return out


@pytest.fixture
def repredict(report_registry):
    """Change a classification run's predictions in place and rescore it: ``repredict(run_dir, {id: label})``."""

    def edit(run_dir: Path, predictions: dict[str, str]) -> None:
        results = json.loads((run_dir / "results.json").read_text())
        samples = read_samples(run_dir)
        for row in samples:
            if row["id"] in predictions:
                row["prediction"] = predictions[row["id"]]
                row["scores"]["correct"] = float(row["gold"] == row["prediction"])
        per_seed = {}
        for seed in results["seeds"]:
            rows = [r for r in samples if r["seed"] == seed]
            golds, preds = [r["gold"] for r in rows], [r["prediction"] for r in rows]
            metrics = {}
            for spec in results["task"]["config"]["metrics"]:
                name, args = (spec, {}) if isinstance(spec, str) else (spec["name"], spec["args"])
                metrics[name] = float(report_registry.resolve("metric", name)(golds, preds, **args))
            per_seed[str(seed)] = metrics
        results["metrics"] = {"per_seed": per_seed, "aggregate": _aggregate(per_seed)}
        write_run(run_dir, results, samples, overwrite=True)

    return edit


def write_synthetic_run(path: Path, *, task: str = "syn", model: str = "m", correct: dict[int, list[int]], ids=None,
                        config_hash: str = "c" * 64, higher_is_better: bool = True,
                        created: str = "2026-01-01T00:00:00+00:00") -> Path:
    """A classification run whose per-item correctness is given per seed: ``correct[seed] = [0/1, ...]``."""
    n = len(next(iter(correct.values())))
    ids = ids or [f"item-{i}" for i in range(n)]
    samples = [
        {"id": item, "seed": seed, "gold": "yes", "prediction": "yes" if c else "no", "scores": {"correct": float(c)}}
        for seed, values in correct.items() for item, c in zip(ids, values)
    ]
    per_seed = {str(seed): {"accuracy": sum(values) / n} for seed, values in correct.items()}
    results = {
        "schema_version": 1, "created": created,
        "task": {"name": task, "version": 1, "config_hash": config_hash, "kind": "classification", "dataset": "syn",
                 "primary_metric": "accuracy", "source": "synthetic", "plugin": "tests",
                 "config": {"metrics": ["accuracy"], "labels": {"names": ["yes", "no"], "positive": "yes"}}},
        "data": {"files": {"syn:test.tsv": "0" * 64}},
        "model": {"spec": model, "adapter": model, "family": "baseline", "args": {}, "fingerprint": model, "info": {}},
        "seeds": list(correct), "limit": None, "n_items": n, "higher_is_better": {"accuracy": higher_is_better},
        "metrics": {"per_seed": per_seed, "aggregate": _aggregate(per_seed)},
    }
    write_run(path, results, samples)
    return path


@pytest.fixture
def make_run():
    return write_synthetic_run


HOSTILE = "<script>alert(1)</script>"


@pytest.fixture(scope="session")
def site(report_registry, toy_runs, tmp_path_factory) -> Path:
    """A leaderboard built from the toy runs, a model named like an XSS attack, and met/no-met subset runs."""
    from metabench.report.leaderboard import build_site

    root = tmp_path_factory.mktemp("site")
    runs = root / "runs"
    shutil.copytree(toy_runs, runs)
    hostile = runs / "toy_cls" / "hostile"
    shutil.copytree(runs / "toy_cls" / "majority", hostile)
    results = json.loads((hostile / "results.json").read_text())
    results["model"]["spec"] = HOSTILE
    (hostile / "results.json").write_text(json.dumps(results))
    for folder, model, nomet, met in (("m", "m", 45, 12), ("hostile", HOSTILE, 50, 25)):
        write_synthetic_run(runs / "t_nomet" / folder, task="t_nomet", model=model,
                            correct={0: [1] * nomet + [0] * (60 - nomet)}, ids=[f"n{i}" for i in range(60)])
        write_synthetic_run(runs / "t_met" / folder, task="t_met", model=model,
                            correct={0: [1] * met + [0] * (30 - met)}, ids=[f"m{i}" for i in range(30)])
    out = root / "site"
    out.mkdir()
    (out / "README.md").write_text("hand-written, must survive builds\n")
    build_site(report_registry, [runs], out, n_resamples=1000)
    return out


@pytest.fixture
def cli(report_registry, monkeypatch, capsys):
    """Run ``metabench ARGS`` in-process on the test registry: returns (exit code, stdout, stderr)."""
    from metabench import plugins
    from metabench.cli import main

    monkeypatch.setattr(plugins, "default_registry", lambda: report_registry)

    def invoke(*args) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return invoke


#: The committed runs, from which `metabench leaderboard build leaderboard/runs -o DIR` builds the site (the HTML
#: is built, never committed: leaderboard.md and leaderboard.json are).
COMMITTED_RUNS = Path(__file__).resolve().parents[2] / "leaderboard" / "runs"


@pytest.fixture(scope="session")
def committed_site(report_registry, tmp_path_factory) -> Path:
    """The whole site built from the committed runs, as `metabench leaderboard build leaderboard/runs` writes it
    (default options), once per test session: the pytest-xdist workers of one session share it (the first
    builds it under a lock, the others wait and read it). About a minute of CPU on the 829 committed runs."""
    import os

    from metabench.filelock import locked
    from metabench.report.leaderboard import build_site

    if not COMMITTED_RUNS.is_dir():
        pytest.skip("no committed runs (leaderboard/runs) in this checkout")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the session's folder either way
    out = shared / "committed-site"
    with locked(shared / "committed-site.lock"):
        if not (out / "index.html").is_file():
            build_site(report_registry, [COMMITTED_RUNS], out)
    return out
