"""MUNCH loaders on fixtures (tests/data/fixtures/munch): judgement tasks joined to the answers by text."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from metabench.data.context import DataContext
from metabench.data.datasets import munch
from metabench.data.resolve import sha256_of
from metabench.errors import DataError

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_ctx(spec, root: Path) -> DataContext:
    """The spec re-pinned to the fixture files present under ``root`` (hashes computed here)."""
    present = tuple(
        replace(f, sha256=sha256_of(root / f.path, f.compressed)) for f in spec.files if (root / f.path).is_file()
    )
    return DataContext(replace(spec, files=present), root, download=False)


def spec(name: str):
    return next(s for s in munch.specs() if s.name == name)


@pytest.fixture()
def judge():
    return fixture_ctx(spec("munch_judgement"), FIXTURES)


def test_word_judgement_joined_by_text_not_by_dataset_index(judge):
    items = judge.load("test", setup="word", condition="implicit")
    assert [i.id for i in items] == ["munch:0", "munch:1", "munch:2", "munch:3"]
    hold = items[0]
    assert hold.sentence == 'Leaders put all business on *hold*, as "planned".'
    assert hold.plain == 'Leaders put all business on hold, as "planned".'
    assert hold.word == "hold" and hold.plain[slice(*hold.span)] == "hold"
    assert hold.options == ("pause", "grip") and hold.labels == ("apt", "inapt")
    assert hold.answer_type == "apt_inapt"
    assert hold.genre == "NEWS" and hold.meta["novelty"] == pytest.approx(0.1)
    assert hold.meta["dataset_index"] == 1462  # the task file's own index, which is not i0
    assert [i.answer_type for i in items] == ["apt_inapt", "apt_inapt", "inapt_inapt", "apt_apt"]


def test_same_word_pair_with_conflicting_labels_is_kept_apart(judge):
    items = {i.id: i for i in judge.load("test", setup="word")}
    assert (items["munch:1"].words, items["munch:1"].labels) == (("create", "make"), ("apt", "inapt"))
    assert (items["munch:2"].words, items["munch:2"].labels) == (("make", "create"), ("inapt", "inapt"))


@pytest.mark.parametrize("condition, highlighted", [("implicit", False), ("msent", False), ("mword", True)])
def test_sentence_judgement_conditions(judge, condition, highlighted):
    items = judge.load("test", setup="sentence", condition=condition)
    words = judge.load("test", setup="word")
    assert [(i.id, i.words, i.labels) for i in items] == [(w.id, w.words, w.labels) for w in words]
    ladder = items[3]
    assert ladder.options == ("Mark climbed the company hierarchy.", "Mark climbed the company steps.")
    assert ladder.sentence == ("Mark climbed the company *ladder*." if highlighted else ladder.plain)
    assert (ladder.setup, ladder.condition) == ("sentence", condition)


def test_unmatched_task_record_is_an_error(tmp_path):
    shutil.copytree(FIXTURES / "munch", tmp_path / "munch")
    path = tmp_path / "munch/tasks/word_judge.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    records[0]["options"][0]["text"] = "fabricate"
    path.write_text(json.dumps(records), encoding="utf-8")
    ctx = fixture_ctx(spec("munch_judgement"), tmp_path)
    with pytest.raises(DataError, match=r"word_judge.json\[0\]: no row of .*for_judgement.csv"):
        ctx.load("test", setup="word")


def test_generation_items():
    ctx = fixture_ctx(spec("munch_generation"), FIXTURES)
    items = ctx.load("test")
    assert [i.id for i in items] == ["munch_generation:0", "munch_generation:1", "munch_generation:2"]
    first = items[0]
    assert first.sentence == 'Leaders put all business on hold, as "planned".'
    assert first.sentence[slice(*first.span)] == first.word == "hold"
    assert first.answers == ("pause", "suspension", "wait")
    assert items[2].answers == ("hierarchy", "Hierarchy")  # surface forms kept as released
    assert (first.genre, first.novelty, first.meta["sid"]) == ("NEWS", 0.1, "a1e-fragment01-1")
