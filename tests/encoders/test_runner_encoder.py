"""hf-encoder through the runner: shared checkpoints across tasks, concatenated training slices, --no-cache."""

from __future__ import annotations

import pytest

from metabench.runner import RunOptions, run
from metabench.store import read_samples


@pytest.fixture
def registry(monkeypatch, tmp_path):
    import enc_toy_plugin
    import toy_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin, enc_toy_plugin))


def _run(registry, tmp_path, tasks, model, **kw):
    return run(registry, tasks, [model], RunOptions(output_dir=tmp_path / "runs", progress=False, **kw))


def test_tasks_sharing_training_data_train_once(registry, tmp_path, tiny_bert):
    model = f"hf:pretrained={tiny_bert}"
    first, second = _run(registry, tmp_path, "enc_toy_tag,enc_toy_tag_on_train", model)
    assert first.status == "ok", first.message
    assert second.status == "ok", second.message
    assert first.record.raw["seeds"] == [0, 1] and first.record.raw["protocol"] == "encoder"
    info_a, info_b = first.record.raw["model"]["info"], second.record.raw["model"]["info"]
    assert info_a["head"] == "token"
    assert {s: c["cached"] for s, c in info_a["checkpoints"].items()} == {"0": False, "1": False}
    assert {s: c["cached"] for s, c in info_b["checkpoints"].items()} == {"0": True, "1": True}
    assert info_a["checkpoints"]["0"]["key"] == info_b["checkpoints"]["0"]["key"]
    assert info_a["checkpoints"]["0"]["key"] != info_a["checkpoints"]["1"]["key"]
    assert first.record.raw["model"]["family"] == "encoder" and first.record.raw["model"]["adapter"] == "hf-encoder"
    agg = first.record.raw["metrics"]["aggregate"]["span_f1"]
    assert agg["n"] == 2 and agg["mean"] is not None
    samples = read_samples(first.run_dir)
    assert len(samples) == 2 * first.record.raw["n_items"]

    again = _run(registry, tmp_path, "enc_toy_tag", model)[0]  # every answer cached: no fit at all
    assert again.record.raw["timings"]["cached_items"] == 2 * again.record.raw["n_items"]
    assert again.record.raw["timings"]["fit_s"] == 0.0
    # the remembered job keeps the computing run's model facts (its checkpoints), which no fit here could give
    assert again.record.raw["model"] == first.record.raw["model"]


def test_concatenated_training_slices_and_classification(registry, tmp_path, tiny_bert):
    model = f"hf-encoder:{tiny_bert}"
    single, twice, cls = _run(registry, tmp_path, "enc_toy_tag,enc_toy_tag_twice,enc_toy_cls", model, seeds=[0])
    assert twice.status == "ok", twice.message
    n_single = single.record.raw["model"]["info"]["checkpoints"]["0"]["train_examples"]
    record = twice.record.raw["model"]["info"]["checkpoints"]["0"]
    assert record["train_examples"] == 2 * n_single and record["cached"] is False  # other data: other checkpoint
    assert cls.status == "ok", cls.message
    assert cls.record.raw["model"]["info"]["head"] == "sequence"
    assert cls.record.raw["model"]["info"]["checkpoints"]["0"]["best_epoch"] == 2  # no validation: last epoch


def test_no_cache_reads_and_writes_nothing_persistent(registry, tmp_path, tiny_bert):
    outcomes = _run(registry, tmp_path, "enc_toy_tag,enc_toy_tag_on_train", f"hf:{tiny_bert}", seeds=[0], use_cache=False)
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert not (tmp_path / "cache" / "checkpoints").exists()
    second = outcomes[1].record.raw["model"]["info"]
    assert second["checkpoints"]["0"]["cached"] is True  # shared within the invocation, in a temporary folder
    assert second["checkpoint_cache"].startswith("temporary")
