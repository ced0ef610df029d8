"""Every kind reports per-group breakdowns (kind_args.breakdown), not only the prompted ones, and the
metrics of a group equal the metrics computed on that group alone."""

from __future__ import annotations

import dataclasses

import pytest

from metabench.config.index import TaskIndex
from metabench.jobs import prepare
from metabench.metrics.classification import accuracy, f1
from metabench.metrics.tagging import span_f1


def _with_breakdown(registry, name: str, **kind_args):
    task = TaskIndex(registry).load(name)
    config = task.config.model_copy(update={"kind_args": {**task.config.kind_args, **kind_args}})
    return dataclasses.replace(task, config=config)


def test_classification_breaks_down_by_an_item_field(toy_registry):
    task = _with_breakdown(toy_registry, "toy_cls", breakdown=["label"], breakdown_metrics=["accuracy", "f1"])
    data = prepare(toy_registry, task)
    items = data.test.items
    golds = [data.kind.gold(i) for i in items]
    preds = ["metaphorical" if n % 3 else "literal" for n in range(len(items))]
    out = data.kind.aggregate(items, golds, preds)
    assert out["accuracy"] == pytest.approx(accuracy(golds, preds))
    for label in ("literal", "metaphorical"):
        part = [n for n, g in enumerate(golds) if g == label]
        assert out[f"n@label={label}"] == len(part)
        assert out[f"accuracy@label={label}"] == pytest.approx(accuracy([golds[n] for n in part], [preds[n] for n in part]))
        assert out[f"f1@label={label}"] == pytest.approx(
            f1([golds[n] for n in part], [preds[n] for n in part], positive="metaphorical"))
    assert not any(k.startswith("macro_f1@") for k in out)  # only breakdown_metrics


def test_tagging_breaks_down_by_a_meta_key_with_the_primary_metric(toy_registry):
    task = _with_breakdown(toy_registry, "toy_tag", breakdown=["length"])
    data = prepare(toy_registry, task)
    items = [dataclasses.replace(i, meta={"length": "long" if len(i.words) > 5 else "short"}) for i in data.test.items]
    golds = [data.kind.gold(i) for i in items]
    preds = [tuple("O" if n % 2 else t for t in g) for n, g in enumerate(golds)]
    out = data.kind.aggregate(items, golds, preds)
    long = [n for n, i in enumerate(items) if i.meta["length"] == "long"]
    assert out["n@length=long"] == len(long) > 0
    assert out["span_f1@length=long"] == pytest.approx(
        span_f1([golds[n] for n in long], [preds[n] for n in long], positive="METAPHOR"))
    assert "token_f1@length=long" not in out  # the primary metric only, by default


def test_an_unknown_breakdown_field_names_the_item(toy_registry):
    from metabench.errors import MetabenchError

    task = _with_breakdown(toy_registry, "toy_cls", breakdown=["genre"])
    data = prepare(toy_registry, task)
    items = data.test.items
    with pytest.raises(MetabenchError, match=f"item '{items[0].id}' has no field 'genre'"):
        data.kind.aggregate(items, [data.kind.gold(i) for i in items], [data.kind.gold(i) for i in items])
