"""A kind's declared request type is what its items really become: the runner turns models away on the
declaration alone, before loading data, so a wrong one would skip jobs a model could serve (or run ones
it cannot). Checked on one real task of each built-in kind and mode, and on every toy task."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metabench import plugins
from metabench.config.index import TaskIndex
from metabench.jobs import prepare
from metabench.requests import ChoiceRequest, ClassifyRequest, GenerateRequest, RankRequest, TagRequest

REAL = {
    "boisson_card_n_random_f0@pme_only": ClassifyRequest,
    "figqa_endings_dev": ChoiceRequest,
    "m4x_det_en_mono": TagRequest,
    "mlp_flute_original_nli_zero": GenerateRequest,
    "munch_generation_p1": RankRequest,
}


def _mirror() -> bool:
    """Whether the real data mirror is there (the top-level conftest points METABENCH_DATA_DIR at it)."""
    return (Path(os.environ.get("METABENCH_DATA_DIR", "/nonexistent")) / "meta4xnli").is_dir()


def _declared_and_rendered(registry, name: str) -> tuple[type, type]:
    data = prepare(registry, TaskIndex(registry).load(name), limit=1)
    return data.kind.request_type(), type(data.kind.request(data.test.items[0]))


@pytest.mark.slow
@pytest.mark.skipif(not _mirror(), reason="needs the data mirror (METABENCH_DATA_DIR or ../shared/data)")
@pytest.mark.parametrize("name", sorted(REAL))
def test_built_in_kinds_declare_the_request_their_items_become(name):
    declared, rendered = _declared_and_rendered(plugins.load(), name)
    assert declared is rendered is REAL[name]


@pytest.mark.parametrize("name", ["toy_cls", "toy_tag"])
def test_toy_kinds_declare_the_request_their_items_become(toy_registry, name):
    declared, rendered = _declared_and_rendered(toy_registry, name)
    assert declared is rendered
