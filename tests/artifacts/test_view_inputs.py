"""A model, baseline or not, receives the view's input and nothing the view hides.

Each view of real Boisson tasks is rendered; every field of every request is checked against what the view
shows, and each baseline is run on the masked view: one that keys on the hidden expression is skipped with
the reason, the others score what the masked text allows.
"""

from __future__ import annotations

import dataclasses

import pytest

from metabench.kinds.views import expression_key, render
from metabench.config.index import TaskIndex
from metabench.data.load import load_split

VIEWS = ("default", "pme_only", "masked")
#: a small dataset with sentences (CARD_N), and one whose text is the pair itself (TSV_AN)
TASKS = ("boisson_card_n_random_f0", "boisson_tsv_an_random_f0")


def _requests(registry, task_name: str, view: str):
    task = TaskIndex(registry).load(f"{task_name}@{view}")
    config = task.config
    items = load_split(registry, config.dataset, "test", dict(config.dataset_args)).items
    kind = registry.resolve("kind", "classification")(config, {})
    return items, [kind.request(item) for item in items], config.kind_args


@pytest.mark.parametrize("task_name", TASKS)
@pytest.mark.parametrize("view", VIEWS)
def test_a_request_carries_what_its_view_shows_and_nothing_else(registry, task_name, view):
    items, requests, kind_args = _requests(registry, task_name, view)
    for item, request in zip(items, requests):
        fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(request)}
        assert fields.pop("labels") == ("literal", "metaphor") and fields.pop("text_pair") is None
        assert fields.pop("text") == render(item, item.text, view, kind_args.get("mask", "<masked>"))
        expression = fields.pop("expression")
        assert not fields  # a new request field must be added to this check
        if view == "masked":
            assert expression is None  # the key of what the view hides is not sent
        else:
            assert expression == expression_key(item, item.text)


def _run(registry, tmp_path, task: str, models: list[str]):
    from metabench.runner import RunOptions, run

    return {o.model: o for o in run(registry, task, models, RunOptions(output_dir=tmp_path, progress=False, use_cache=False))}


def test_baselines_on_the_masked_view_read_only_the_masked_text(registry, tmp_path):
    models = ["majority", "lookup", "lookup:key=expression"]
    masked = _run(registry, tmp_path / "m", "boisson_card_n_random_f0@masked", models)
    default = _run(registry, tmp_path / "d", "boisson_card_n_random_f0@default", models)
    skipped = masked["lookup:key=expression"]
    assert skipped.status == "skipped" and skipped.reason == "the input hides the target expression"
    assert "masked" in skipped.message
    assert default["lookup:key=expression"].status == "ok"
    assert masked["lookup"].status == masked["majority"].status == "ok"  # they read the masked text (or nothing)
