"""Meta4XNLI loaders on tiny fixtures laid out like the mirror (tests/data/fixtures/meta4xnli)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from metabench.data.context import DataContext
from metabench.data.datasets import meta4xnli
from metabench.data.load import check_args
from metabench.data.resolve import sha256_of
from metabench.errors import ConfigError, DataError

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_ctx(spec, root: Path) -> DataContext:
    """The spec re-pinned to the fixture files present under ``root`` (hashes computed here)."""
    present = tuple(
        replace(f, sha256=sha256_of(root / f.path, f.compressed)) for f in spec.files if (root / f.path).is_file()
    )
    return DataContext(replace(spec, files=present), root, download=False)


def spec(name: str):
    return next(s for s in meta4xnli.specs() if s.name == name)


@pytest.fixture()
def det():
    return fixture_ctx(spec("meta4xnli_detection"), FIXTURES)


@pytest.fixture()
def nli():
    return fixture_ctx(spec("meta4xnli_interpretation"), FIXTURES)


def test_detection_split_keeps_words_tags_and_recovers_origin(det):
    items = det.load("train", language="en")
    assert [i.id for i in items] == [f"en/meta4xnli_train:{n}" for n in range(4)]
    first = items[0]
    assert first.words == ("The", "prices", "rose.")  # punctuation stays attached
    assert first.tags == ("O", "O", "B-METAPHOR")
    assert (first.source, first.meta["subset"], first.meta["index"]) == ("xnli_dev", "premise", 0)
    assert [(i.source, i.meta["subset"]) for i in items] == [
        ("xnli_dev", "premise"), ("xnli_test", "hypothesis"), ("esxnli", "hypothesis"), ("xnli_dev", "hypothesis"),
    ]
    assert all(i.language == "en" and i.meta["split"] == "train" for i in items)


def test_detection_keeps_i_tags_and_duplicate_sentences(det):
    dev = det.load("dev", language="en")
    assert dev[0].tags == ("O", "B-METAPHOR", "I-METAPHOR")
    # "He ran." occurs twice in xnli_test_hyp: both copies map to that source file
    assert (dev[3].source, dev[3].meta["subset"]) == ("xnli_test", "hypothesis")
    assert "origin_ambiguous" not in dev[3].meta


def test_detection_filters_by_source_and_subset(det):
    hyps = det.load("train", language="en", source="xnli_dev", subset="hypotheses")
    assert [(i.id, i.words) for i in hyps] == [("en/meta4xnli_train:3", ("She", "sang."))]
    prem = det.load("all", language="en", subset="premises")
    assert {i.meta["subset"] for i in prem} == {"premise"}
    assert len(prem) == 4
    esxnli = det.load("all", language="es", source="esxnli")
    assert [i.id for i in esxnli] == ["es/esxnli_prem:0", "es/esxnli_hyp:0"]


def test_detection_all_split_reads_source_files_with_stable_ids(det):
    items = det.load("all", language="en")
    assert len(items) == 10  # = train 4 + dev 4 + test 2
    assert items[0].id == "en/xnli_dev_prem:0"
    assert len({i.id for i in items}) == len(items)


def test_detection_en_es_index_aligned(det):
    for split in ("train", "dev", "test"):
        en, es = det.load(split, language="en"), det.load(split, language="es")
        assert len(en) == len(es)
        assert [(a.source, a.meta["subset"]) for a in en] == [(b.source, b.meta["subset"]) for b in es]


def test_detection_sentence_missing_from_sources_is_an_error(tmp_path):
    shutil.copytree(FIXTURES / "meta4xnli", tmp_path / "meta4xnli")
    bad = tmp_path / "meta4xnli/detection/splits/en/meta4xnli_test.tsv"
    bad.write_text(bad.read_text(encoding="utf-8") + "\nUnknown\tO\nsentence.\tO\n", encoding="utf-8")
    ctx = fixture_ctx(spec("meta4xnli_detection"), tmp_path)
    with pytest.raises(DataError, match=r"meta4xnli_test.tsv:\d+: sentence not found"):
        ctx.load("test", language="en")


def test_detection_args_are_validated():
    s = spec("meta4xnli_detection")
    check_args(s, "train", {"language": "es", "source": "esxnli", "subset": "premises"})
    with pytest.raises(ConfigError):
        check_args(s, "train", {"language": "fr"})
    with pytest.raises(ConfigError):
        check_args(s, "validation", {})


def test_interpretation_pairs(nli):
    items = nli.load("train", language="en")
    assert [(i.id, i.label, i.metaphor, i.source) for i in items] == [
        ("en:3_xnli.dev", "entailment", "met", "xnli_dev"),
        ("en:20_esxnli", "contradiction", "met", "esxnli"),
        ("en:5_xnli.test", "neutral", "no_met", "xnli_test"),
        ("en:11_esxnli", "entailment", "nonrelevant", "esxnli"),
    ]
    assert items[0].premise == 'The prices "rose".'  # quotes are text, not CSV quoting
    assert items[0].genre == "fiction"
    assert items[0].meta["pair_id"] == "3_xnli.dev"


def test_interpretation_filters(nli):
    assert [i.metaphor for i in nli.load("train", language="es", metaphor="met_no_met")] == ["met", "met", "no_met"]
    assert [i.id for i in nli.load("train", language="en", source="esxnli")] == ["en:20_esxnli", "en:11_esxnli"]
    assert [i.language for i in nli.load("train", language="es")] == ["es"] * 4
    everything = nli.load("all", language="en", source="esxnli")
    assert [(i.id, i.metaphor) for i in everything] == [("en:20_esxnli", "met"), ("en:11_esxnli", "nonrelevant")]
