"""Schema additions for encoder tasks: lists of training slices, select_metric checks, the PME marker."""

from __future__ import annotations

import textwrap

import pytest

from metabench.config.index import validate_paths
from metabench.data.items import TextItem
from metabench.errors import DataError
from metabench.kinds.views import render


@pytest.fixture
def registry(monkeypatch):
    import toy_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    return plugins.load(extra_plugins=(toy_plugin,))


def _validate(tmp_path, registry, body: str):
    path = tmp_path / "task.yaml"
    path.write_text(textwrap.dedent(body))
    ((_, error),) = validate_paths([path], registry)
    return error


BASE = """\
task: t
kind: tagging
dataset: toy_tagging
labels: {positive: METAPHOR}
metrics: [span_f1, token_f1]
"""


def test_train_list_and_select_metric(tmp_path, registry):
    ok = BASE + "splits: {train: [train, {dataset: toy_tagging, split: train}], test: test}\n"
    assert _validate(tmp_path, registry, ok) is None
    bad_split = BASE + "splits: {train: [train, {dataset: toy_tagging, split: trian}], test: test}\n"
    error = _validate(tmp_path, registry, bad_split)
    assert "task.yaml:6" in error and "trian" in error
    bad_select = ok + "protocol: {encoder: {finetune: {select_metric: span_f2}}}\n"
    assert "select_metric 'span_f2' is not among the task's metrics (did you mean 'span_f1'?)" in _validate(tmp_path, registry, bad_select)
    for good in ("span_f1", "loss"):
        assert _validate(tmp_path, registry, ok + f"protocol: {{encoder: {{finetune: {{select_metric: {good}}}}}}}\n") is None


def test_pme_marker_from_spans_or_target_index():
    text = "The latest developments move us closer to a dark age."
    start = text.index("dark")
    item = TextItem(id="a", text=text, label="metaphor", spans=((start, start + 4),))
    assert render(item, text) == "The latest developments move us closer to a <PME>dark</PME> age."
    two = TextItem(id="b", text="rock the political boat", label="metaphor", spans=((0, 4), (19, 23)))
    assert render(two, two.text) == "<PME>rock the political boat</PME>"
    indexed = TextItem(id="c", text="He  grasped the idea", label="literal", target_index=1)
    assert render(indexed, indexed.text) == "He  <PME>grasped</PME> the idea"
    with pytest.raises(DataError, match="needs the item's target"):
        render(TextItem(id="d", text="no target", label="literal"), "no target")
