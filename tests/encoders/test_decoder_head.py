"""``hf-decoder:NAME,finetune=true`` on a classification task: a classification head on the decoder, trained on the
task's encoder recipe, recorded as a decoder's fine-tuned way (metabench.models.decoder_head)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from metabench.runner import RunOptions, run

sys.path.insert(0, str(Path(__file__).parents[1] / "decoders"))


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory) -> Path:
    from tiny import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture
def registry(monkeypatch, tmp_path):
    import enc_toy_plugin
    import toy_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin, enc_toy_plugin))


def test_a_fine_tuned_decoder_answers_a_classification_task_with_a_head(registry, tmp_path, tiny_llama):
    (outcome,) = run(registry, "enc_toy_cls", [f"hf-decoder:{tiny_llama},finetune=true"],
                     RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert outcome.status == "ok", outcome.message
    record = outcome.record
    assert record.protocol == "encoder" and record.answering is not None
    assert record.answering.mode == "fine-tuned" and record.answering.shots == 0
    assert record.model.info.head == "sequence"  # the encoders' classification head, on the decoder
    assert record.metrics.aggregate["accuracy"].n == 1  # the encoder recipe's one seed
    # the board and compare read the way from the record: a decoder's fine-tuned row, not an encoder's
    from metabench.report.answering_label import way

    assert way(record) == "fine-tuned"


def test_a_head_refuses_lora_by_name(registry, tmp_path, tiny_llama):
    (outcome,) = run(registry, "enc_toy_cls", [f"hf-decoder:{tiny_llama},finetune=true,method=lora"],
                     RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert outcome.status == "skipped"
    assert "method=lora" in outcome.message and "classification head" in outcome.message
