"""Reproducing an encoder's run (#48 item 5): from the checkpoint cached for its training data, settings and seed, or
not at all (a reproduction never trains)."""

from __future__ import annotations

import hashlib
import json

import pytest

from metabench.launch.reproduce import FAILED, NOT_REPRODUCIBLE, REPRODUCED, reproduce
from metabench.runner import RunOptions, run
from metabench.runs.stored import load_run
from metabench.store import read_samples, samples_text


@pytest.fixture
def registry(monkeypatch, tmp_path):
    import enc_toy_plugin
    import toy_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin, enc_toy_plugin))


def test_an_encoder_run_reproduces_from_its_cached_checkpoint_only(registry, tmp_path, tiny_bert, monkeypatch):
    outcome = run(registry, "enc_toy_cls", [f"hf-encoder:{tiny_bert}"],
                  RunOptions(output_dir=tmp_path / "runs", progress=False, seeds=[0]))[0]
    assert outcome.status == "ok", outcome.message
    stored = load_run(outcome.run_dir)
    found = reproduce(registry, stored, 20)
    assert found.status == REPRODUCED and len(found.items) == min(20, stored.record.n_items), found.line

    # one answer altered as a careful forger would (its score with it): the checkpoint's answer differs
    rows = read_samples(outcome.run_dir)
    labels = stored.record.task.config.labels.names
    row = next(r for r in rows if r["id"] == found.items[0])
    row["prediction"] = next(label for label in labels if label != row["prediction"])
    row["scores"]["correct"] = float(row["prediction"] == row["gold"])
    text = samples_text(rows).encode()
    (outcome.run_dir / "samples.jsonl").write_bytes(text)
    results = json.loads((outcome.run_dir / "results.json").read_text())
    results["samples_sha256"] = hashlib.sha256(text).hexdigest()
    (outcome.run_dir / "results.json").write_text(json.dumps(results))
    # the same draw (its key), so that the altered item is among the items rerun: a new key draws other items
    altered = reproduce(registry, load_run(outcome.run_dir), 20, key=found.key)
    assert altered.status == FAILED and [m.item for m in altered.mismatches] == [row["id"]]

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "elsewhere"))  # a machine without the checkpoint
    absent = reproduce(registry, stored, 20)
    assert absent.status == NOT_REPRODUCIBLE and "no checkpoint of seed 0" in absent.reason
    assert not (tmp_path / "elsewhere" / "checkpoints").exists()  # nothing was trained
    assert json.loads((outcome.run_dir / "results.json").read_text())["model"]["family"] == "encoder"
