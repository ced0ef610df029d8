"""Bad task YAML: each error names the file, the line and the fix (did-you-mean)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from metabench.config.index import TaskIndex, validate_paths
from metabench.config.loader import config_hash, parse, read_raw
from metabench.errors import ConfigError

GOOD = """\
task: my_task
tag: [toy]
kind: classification
dataset: toy_cls
splits: {train: train, test: test}
labels: {names: [literal, metaphorical], positive: metaphorical}
metrics: [accuracy, macro_f1]
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def _error(registry, path: Path) -> str:
    ((_, error),) = validate_paths([path], registry)
    assert error is not None, "expected a validation error"
    return error


def test_good_file_validates(toy_registry, tmp_path):
    path = _write(tmp_path, "t.yaml", GOOD)
    assert validate_paths([path], toy_registry) == [(path, None)]


def test_unknown_key_names_line_and_closest_key(toy_registry, tmp_path):
    path = _write(tmp_path, "t.yaml", GOOD + "metrix: [accuracy]\n")
    error = _error(toy_registry, path)
    assert f"{path}:8" in error and "unknown key 'metrix'" in error and "did you mean 'metrics'" in error


def test_nested_unknown_key(toy_registry, tmp_path):
    path = _write(tmp_path, "t.yaml", GOOD + "protocol:\n  encoder:\n    finetune: {lr: 1.0e-5, epoch: 3}\n")
    error = _error(toy_registry, path)
    assert f"{path}:10" in error and "protocol.encoder.finetune.epoch" in error and "'epochs'" in error


def test_wrong_type_names_field_and_value(toy_registry, tmp_path):
    path = _write(tmp_path, "t.yaml", GOOD + "protocol:\n  baseline: {seeds: many}\n")
    error = _error(toy_registry, path)
    assert f"{path}:9" in error and "protocol.baseline.seeds" in error and "'many'" in error


def test_missing_required_key(toy_registry, tmp_path):
    path = _write(tmp_path, "t.yaml", GOOD.replace("kind: classification\n", ""))
    assert "required key 'kind' is missing" in _error(toy_registry, path)


def test_missing_include(toy_registry, tmp_path):
    _write(tmp_path, "_base.yaml", "tag: [x]\n")
    path = _write(tmp_path, "t.yaml", "include: _bsae.yaml\n" + GOOD)
    error = _error(toy_registry, path)
    assert f"{path}:1" in error and "'_bsae.yaml' not found" in error and "did you mean '_base.yaml'" in error


def test_include_cycle(toy_registry, tmp_path):
    _write(tmp_path, "_a.yaml", "include: _b.yaml\n")
    _write(tmp_path, "_b.yaml", "include: _a.yaml\n")
    path = _write(tmp_path, "t.yaml", "include: _a.yaml\n" + GOOD)
    error = _error(toy_registry, path)
    assert "include cycle" in error and "_a.yaml -> " in error and "_b.yaml" in error


def test_include_merges_and_overrides(toy_registry, tmp_path):
    _write(tmp_path, "_base.yaml", "protocol:\n  encoder:\n    finetune: {lr: 1.0e-5, epochs: 3}\n    seeds: 5\n")
    path = _write(tmp_path, "t.yaml", "include: _base.yaml\n" + GOOD + "protocol:\n  encoder:\n    finetune: {epochs: 7}\n")
    config = parse(read_raw(path))
    assert config.protocol.encoder.finetune.lr == 1e-5 and config.protocol.encoder.finetune.epochs == 7
    assert config.protocol.encoder.seeds == 5


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("kind: classification", "kind: clasification", "unknown kind 'clasification' (did you mean 'classification'?)"),
        ("metrics: [accuracy, macro_f1]", "metrics: [accuracy, macro_f2]", "unknown metric 'macro_f2' (did you mean 'macro_f1'?)"),
        ("dataset: toy_cls", "dataset: toy_clss", "unknown dataset 'toy_clss' (did you mean 'toy_cls'?)"),
        ("splits: {train: train, test: test}", "splits: {train: train, test: tset}", "no split 'tset' (did you mean 'test'?)"),
    ],
)
def test_unknown_registered_names(toy_registry, tmp_path, old, new, expected):
    path = _write(tmp_path, "t.yaml", GOOD.replace(old, new))
    error = _error(toy_registry, path)
    assert expected in error
    line = GOOD.splitlines().index(old) + 1
    assert f"{path}:{line}" in error


def test_kind_args_checked_by_kind(toy_registry, tmp_path):
    path = _write(tmp_path, "t.yaml", GOOD + "kind_args: {text_feild: text}\n")
    error = _error(toy_registry, path)
    assert f"{path}:8" in error and "kind_args.text_feild" in error and "did you mean 'text_field'" in error


def test_yaml_syntax_error_and_unsafe_tags(toy_registry, tmp_path):
    path = _write(tmp_path, "t.yaml", GOOD + "labels: [unclosed\n")
    assert f"{path}:" in _error(toy_registry, path) and "invalid YAML" in _error(toy_registry, path)
    evil = _write(tmp_path, "evil.yaml", "task: !!python/object/apply:os.system ['echo pwned']\n")
    assert "invalid YAML" in _error(toy_registry, evil)


def test_duplicate_key_is_an_error(toy_registry, tmp_path):
    path = _write(tmp_path, "t.yaml", GOOD + "kind: tagging\n")
    assert "appears twice" in _error(toy_registry, path)


def test_unknown_task_selection_suggests(toy_registry):
    with pytest.raises(ConfigError) as err:
        TaskIndex(toy_registry).select("toy_clss")
    assert "did you mean 'toy_cls'" in str(err.value)


def test_selection_by_tag_glob_group_all(toy_registry):
    index = TaskIndex(toy_registry)
    detection = index.select("detection")
    assert "toy_tag" in detection and "toy_cls" not in detection
    assert index.select("toy_*") == ["toy_cls", "toy_tag"]
    assert index.select("toy_all") == ["toy_tag", "toy_cls"]
    assert set(index.select("all")) >= {"toy_cls", "toy_tag"}


def test_config_hash_ignores_tags_and_description_but_not_settings(tmp_path):
    a = parse(read_raw(_write(tmp_path, "a.yaml", GOOD)))
    b = parse(read_raw(_write(tmp_path, "b.yaml", GOOD.replace("tag: [toy]", "tag: [other]") + "metadata: {description: hi}\n")))
    c = parse(read_raw(_write(tmp_path, "c.yaml", GOOD.replace("macro_f1", "f1"))))
    assert config_hash(a) == config_hash(b) != config_hash(c)


def test_an_optional_protocol_section_left_out_keeps_the_hash_committed_runs_have():
    """Adding `protocol.decoder_finetune` to the schema must not change the hash of a task without it: every
    cached answer and every committed run is keyed on the hash (753 committed runs went stale once)."""
    import json

    from metabench.config.index import TaskIndex
    from metabench.plugins import default_registry

    committed = Path(__file__).resolve().parents[2] / "leaderboard" / "runs" / "moh_x_cv_fold0" / "majority" / "results.json"
    task = TaskIndex(default_registry()).load("moh_x_cv_fold0")
    assert task.config.protocol.decoder_finetune is None
    assert task.hash == json.loads(committed.read_text(encoding="utf-8"))["task"]["config_hash"]


def test_docs_page_is_generated_from_schema():
    from metabench.config.docs import schema_markdown

    page = Path(__file__).resolve().parents[2] / "docs" / "task-yaml.md"
    assert page.read_text() == schema_markdown(), "docs/task-yaml.md is stale: run `metabench schema > docs/task-yaml.md`"
