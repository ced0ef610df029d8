"""The metabench command run in-process on the toy registry, and a synthetic run folder: shared by the
bad-input suites (tests/core/test_bad_inputs.py, tests/core/test_hostile_inputs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metabench import plugins
from metabench.cli import main
from metabench.store import write_run


#: A valid task file on the toy data; each suite breaks one line of it (line numbers matter to the messages).
GOOD_TASK = """\
task: bad_input_task
kind: classification
dataset: toy_cls
splits: {train: train, test: test}
labels: {names: [literal, metaphorical], positive: metaphorical}
metrics: [accuracy, macro_f1]
protocol:
  baseline: {seeds: 1}
"""


@pytest.fixture(scope="module")
def registry():
    import toy_plugin

    return plugins.load(extra_plugins=(toy_plugin,), strict=False)


@pytest.fixture
def cli(registry, monkeypatch, capsys, tmp_path):
    """``metabench ARGS`` in-process on the toy registry, in a scratch folder: (exit code, stdout + stderr)."""
    import toy_plugin

    monkeypatch.setattr(plugins, "default_registry", lambda: registry)
    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("METABENCH_PLUGIN_MODULES", "toy_plugin")
    monkeypatch.delenv("METABENCH_STRICT", raising=False)
    monkeypatch.chdir(tmp_path)

    def invoke(*args) -> tuple[int, str]:
        allowed = _outputs([str(a) for a in args], tmp_path)
        before = _files_outside(tmp_path, allowed)
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
        captured = capsys.readouterr()
        text = captured.out + captured.err
        assert "Traceback" not in text, text
        assert _files_outside(tmp_path, allowed) == before, f"files changed outside the output folders {allowed}:\n{text}"
        return code, text

    return invoke


#: Options naming where a command may write (besides the cache): the output folder and the report files.
_OUTPUT_OPTIONS = ("-o", "--output-dir", "--output", "--save", "--junit", "--summary", "--json")


def _outputs(args: list[str], cwd: Path) -> list[Path]:
    """Where ``metabench ARGS`` may write: the cache, ./runs (the default output folder), and each output option."""
    named = [Path(value) for option, value in zip(args, args[1:]) if option in _OUTPUT_OPTIONS]
    return [cwd / "cache", cwd / "runs", *(p if p.is_absolute() else cwd / p for p in named)]


def _files_outside(root: Path, allowed: list[Path]) -> dict[str, tuple]:
    """Every file, link and folder below ``root`` but outside ``allowed``, with its size and modification time:
    a command that changes one has written where it must not."""
    state = {}
    for path in root.rglob("*"):
        if any(path == a or path.is_relative_to(a) for a in allowed):
            continue
        info = path.lstat()
        state[str(path)] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return state


def check(text: str, needles: tuple[str, ...]) -> None:
    for needle in needles:
        assert needle in text, f"{needle!r} not in:\n{text}"


def good_run(path: Path, n: int = 20, seed_values=(0,), prediction="yes") -> Path:
    samples = [{"id": f"i{i}", "seed": s, "gold": "yes", "prediction": prediction if i % 3 else "no",
                "scores": {"correct": float(bool(i % 3) and prediction == "yes")}} for s in seed_values for i in range(n)]
    accuracy = sum(r["scores"]["correct"] for r in samples if r["seed"] == seed_values[0]) / n
    results = {
        "schema_version": 1, "created": "2026-01-01T00:00:00+00:00",
        "task": {"name": "syn", "version": 1, "config_hash": "c" * 64, "kind": "classification", "dataset": "syn",
                 "primary_metric": "accuracy", "source": "", "plugin": "tests",
                 "config": {"metrics": ["accuracy"], "labels": {"names": ["yes", "no"], "positive": "yes"}}},
        "data": {"files": {}}, "model": {"spec": path.name, "adapter": "m", "family": "baseline", "args": {}},
        "seeds": list(seed_values), "limit": None, "n_items": n, "higher_is_better": {"accuracy": True},
        "metrics": {"per_seed": {str(s): {"accuracy": accuracy} for s in seed_values},
                    "aggregate": {"accuracy": {"mean": accuracy, "std": 0.0, "n": len(seed_values)}}},
    }
    write_run(path, results, samples)
    return path
