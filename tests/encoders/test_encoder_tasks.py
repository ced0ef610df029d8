"""The built-in encoder task YAMLs: valid, sourced, runnable by baselines, and sharing training where intended."""

from __future__ import annotations

from pathlib import Path

import pytest

from metabench.config.index import TaskIndex, validate_paths
from metabench.config.validate import resolve_split, split_values

TASKS = Path(__file__).resolve().parents[2] / "tasks"
FOLDERS = [TASKS / "meta4xnli" / "detection", TASKS / "meta4xnli" / "interpretation", TASKS / "vua", TASKS / "trofi",
           TASKS / "moh_x", *sorted((TASKS / "newsmet").glob("*.yaml"))]


@pytest.fixture(scope="module")
def index():
    from metabench import plugins

    return TaskIndex(plugins.load())


def test_every_encoder_yaml_validates():
    results = validate_paths(FOLDERS, __import__("metabench.plugins", fromlist=["load"]).load())
    assert len(results) >= 90
    assert [(str(p), e) for p, e in results if e] == []


def _encoder_tasks(index):
    roots = [f for f in FOLDERS if f.is_dir()]
    files = {f for f in FOLDERS if f.is_file()}
    return [t for t in index.tasks.values()
            if t.raw.path in files or any(root in t.raw.path.parents for root in roots)]


def test_tasks_cite_sources_and_run_baselines(index):
    tasks = _encoder_tasks(index)
    assert len(tasks) >= 74
    for task in tasks:
        config = task.config
        assert config.metadata.source, task.name
        assert config.metadata.choices, task.name
        # the detection folders also hold the fine-tuned-decoder taggers (Meta4XNLI Table 12, #28): they train
        # under protocol.decoder_finetune instead of an encoder protocol
        trained = config.protocol.encoder or config.protocol.decoder_finetune
        assert trained is not None and config.protocol.baseline is not None, task.name
        assert config.splits.train is not None, task.name


def _training_signature(task):
    config = task.config
    return (
        [resolve_split(config, v) for v in split_values(config.splits.train)],
        [resolve_split(config, v) for v in split_values(config.splits.validation)],
        config.kind, config.kind_args, tuple(config.labels.names or ()),
        config.protocol.encoder.finetune.model_dump(), config.metadata.version,
    )


@pytest.mark.parametrize("members", [
    ["m4x_det_en_mono", "m4x_det_en_mono_vua20", "m4x_det_en2es_zeroshot"],
    ["m4x_det_es_mono", "m4x_det_es_mono_cometa", "m4x_det_es2en_zeroshot"],
    ["m4x_det_en_multi", "m4x_det_es_multi"],
    ["m4x_det_en_xdomain_vua20"] + [f"m4x_det_en_xdomain_{s}_{p}" for s in ("esxnli", "xnli_dev", "xnli_test") for p in ("all", "prem", "hyp")],
    ["m4x_det_es_xdomain_cometa"] + [f"m4x_det_es_xdomain_{s}_{p}" for s in ("esxnli", "xnli_dev", "xnli_test") for p in ("all", "prem", "hyp")],
    [f"m4x_int_{lang}_sick_{s}_{m}" for lang in ("en", "es") for s in ("xnli_dev", "xnli_test", "esxnli") for m in ("met", "nomet")],
    ["m4x_int_en_ft_all_met", "m4x_int_en_ft_all_nomet"],
    ["newsmet_det", "newsmet_det_custom1", "newsmet_det_custom2"],
])
def test_tasks_meant_to_share_a_checkpoint_have_the_same_training(index, members):
    signatures = [_training_signature(index.tasks[name]) for name in members]
    assert all(s == signatures[0] for s in signatures), members
    tests = [resolve_split(index.tasks[n].config, index.tasks[n].config.splits.test) for n in members]
    assert len({repr(t) for t in tests}) == len(members)  # ... and different test sets
