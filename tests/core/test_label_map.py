"""Gold-label mapping of the classification kind, and the IMPLI origin filter the gap tasks use."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metabench.data.context import DataContext
from metabench.data.datasets import impli
from metabench.data.items import NLIPair
from metabench.errors import MetabenchError
from metabench.kinds.classification import Classification


def mirror_dir() -> Path | None:
    """The data mirror (the root conftest sets METABENCH_DATA_DIR when one exists), if it has impli."""
    raw = os.environ.get("METABENCH_DATA_DIR")
    return Path(raw) if raw and (Path(raw) / "impli").is_dir() else None


class _Config:
    task = "rte_like"
    kind_args = {"text_field": "premise", "pair_field": "hypothesis",
                 "label_map": {"neutral": "not_entailment", "contradiction": "not_entailment"}}

    class labels:  # noqa: N801 - the shape of TaskConfig.labels
        names = ["entailment", "not_entailment"]


def test_label_map_binarises_three_way_gold():
    kind = Classification.__new__(Classification)
    kind.config, kind.args = _Config, Classification.Args.model_validate(_Config.kind_args)
    items = [NLIPair(id=str(i), premise="p", hypothesis="h", label=label)
             for i, label in enumerate(["entailment", "neutral", "contradiction"])]
    golds = [kind.gold(item) for item in items]
    assert golds == ["entailment", "not_entailment", "not_entailment"]
    assert kind.golds(items) == golds  # the one-pass reading the runner uses
    unmapped = NLIPair(id="x", premise="p", hypothesis="h", label="unknown")
    for read in (lambda: kind.gold(unmapped), lambda: kind.golds([*items, unmapped])):
        with pytest.raises(MetabenchError, match="item 'x': gold label 'unknown' is not in labels.names"):
            read()


@pytest.mark.mirror
def test_impli_origin_filter():
    if mirror_dir() is None:
        pytest.skip("data mirror not found (set METABENCH_DATA_DIR)")
    ctx = DataContext(impli.specs()[0], mirror_dir(), download=False)
    figurative = ctx.load("test", subset="idioms", method="fig_context", origin="semeval")
    literal = ctx.load("test", subset="idioms", method="lit_context", origin="semeval")
    assert (len(figurative), len(literal)) == (impli.ROWS["idioms/fig_context_semeval_e"],
                                               impli.ROWS["idioms/lit_context_semeval_ne"])
    assert {i.meta["origin"] for i in figurative + literal} == {"semeval"}
