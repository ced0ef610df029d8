"""Target-verb loaders on fixtures: Gao et al. (2018) CSVs and MelBERT TSVs (10-fold CV and VUA-20 test)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from metabench.data.context import DataContext
from metabench.data.datasets import moh, trofi, vua
from metabench.errors import DataError
from metabench.data.resolve import sha256_of

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_ctx(spec, root: Path) -> DataContext:
    """The spec re-pinned to the fixture files present under ``root`` (hashes computed here)."""
    present = tuple(
        replace(f, sha256=sha256_of(root / f.path, f.compressed)) for f in spec.files if (root / f.path).is_file()
    )
    return DataContext(replace(spec, files=present), root, download=False)


def spec(module, name: str):
    return next(s for s in module.specs() if s.name == name)


def target(item) -> str:
    (start, end), = item.spans
    return item.text[start:end]


def test_gao_csv_trofi():
    items = fixture_ctx(spec(trofi, "trofi"), FIXTURES).load("all")
    assert [i.id for i in items] == ["TroFi_formatted_all3737:0", "TroFi_formatted_all3737:1", "TroFi_formatted_all3737:2"]
    assert [i.label for i in items] == ["literal", "metaphor", "metaphor"]
    assert [(i.target_index, target(i), i.lemma) for i in items] == [
        (6, "absorb", "absorb"), (1, "absorbed", "absorb"), (1, "attacked", "attack"),
    ]
    assert items[0].text.endswith("is cheap ")  # quoted field with commas, CRLF line ends
    assert items[2].text == 'She attacked the "proposal" fiercely .'


def test_gao_csv_cp1252_vua_verb():
    declared = next(f for f in spec(vua, "vua_verb").files if f.path.endswith("VUA_formatted_val.csv"))
    assert declared.encoding == "cp1252"  # from the manifest, detected by tools/make_manifest.py
    items = fixture_ctx(spec(vua, "vua_verb"), FIXTURES).load("dev")
    assert [i.id for i in items] == ["VUA_formatted_val:0", "VUA_formatted_val:1"]
    assert "n\u2019t" in items[1].text
    assert [target(i) for i in items] == ["listed", "gone"]
    assert (items[0].group, items[0].meta["txt_id"]) == ("acj-fragment01_148", "acj-fragment01")


def test_gao_csv_errors_name_file_and_line(tmp_path):
    (tmp_path / "trofi").mkdir()
    bad = tmp_path / "trofi/TroFi_formatted_all3737.csv"
    bad.write_text("verb,sentence,verb_idx,label\nabsorb,He absorbed it .,1,1\nabsorb,He absorbed it .,9,1\n")
    ctx = fixture_ctx(spec(trofi, "trofi"), tmp_path)
    with pytest.raises(DataError, match=r"TroFi_formatted_all3737.csv:3: target index 9 is outside"):
        ctx.load("all")
    bad.write_text("verb,sentence,verb_idx,label\nabsorb,He absorbed it .,1,M\n")
    ctx = fixture_ctx(spec(trofi, "trofi"), tmp_path)
    with pytest.raises(DataError, match=r"TroFi_formatted_all3737.csv:2: label 'M'"):
        ctx.load("all")


def test_trofi_cluster_labels_and_mismatch(tmp_path):
    """labels=cluster reads TroFi's clusters (N non-literal, L literal) from TroFi_annotated.csv, row by row
    with Gao et al.'s file; a row that is not the same sentence's is an error naming both files' lines."""
    (tmp_path / "trofi").mkdir()
    (tmp_path / "trofi/TroFi_formatted_all3737.csv").write_text(
        "verb,sentence,verb_idx,label\nabsorb,He absorbed it .,1,0\nabsorb,It absorbed him .,1,1\n")
    annotated = tmp_path / "trofi/raw_TroFi_annotated.csv"
    annotated.write_text("verb,sentence,human_label,cluster_label\n"
                         "absorb,He absorbed it .,literal,N\nabsorb,It absorbed him .,metaphorical,L\n")
    ctx = fixture_ctx(spec(trofi, "trofi"), tmp_path)
    assert [i.label for i in ctx.load("all")] == ["literal", "metaphor"]  # human, the default
    clustered = ctx.load("all", labels="cluster")
    assert [i.label for i in clustered] == ["metaphor", "literal"]
    assert [i.id for i in clustered] == [i.id for i in ctx.load("all")]
    annotated.write_text("verb,sentence,human_label,cluster_label\n"
                         "absorb,He absorbed it .,literal,N\nattack,It absorbed him .,metaphorical,L\n")
    ctx = fixture_ctx(spec(trofi, "trofi"), tmp_path)
    with pytest.raises(DataError, match=r"raw_TroFi_annotated.csv:3: row does not match trofi/TroFi_formatted_all3737.csv:3"):
        ctx.load("all", labels="cluster")


def test_melbert_fold_tsv():
    ctx = fixture_ctx(spec(moh, "moh_x_10fold"), FIXTURES)
    test, train = ctx.load("test", fold=0), ctx.load("train", fold=0)
    assert [i.id for i in test] == ["moh_x:0", "moh_x:1"]  # the MelBERT index column: the same in every fold
    assert [i.id for i in train] == ["moh_x:2", "moh_x:646"]
    assert [target(i) for i in test] == ["spread", "said"]
    assert test[1].text == 'He said "stop" and left.'  # bare quotes are text
    assert [i.label for i in test] == ["metaphor", "literal"]
    assert (test[0].pos, test[0].meta["fold"], test[0].meta["split"]) == ("VERB", 0, "test")
    with pytest.raises(KeyError, match="does not declare"):
        ctx.load("test", fold=10)


def test_melbert_vua20_test_space_header():
    ctx = fixture_ctx(spec(vua, "vua20_test_melbert"), FIXTURES)
    items = ctx.load("test")
    assert [i.id for i in items] == ["a3m-fragment02_45_1", "a3m-fragment02_45_3"]  # ETS token ids
    assert [(target(i), i.pos, i.meta["fgpos"]) for i in items] == [("Design", "NOUN", "NN"), ("Crossed", "VERB", "VBN")]
    assert items[0].group == "a3m-fragment02_45"


def test_shared_task_every_word_is_a_target_labelled_by_its_marker():
    """track=allwords (MelBERT's VUA-20 training targets): every token with a letter or digit, ETS-style ids,
    label from the M_ marker, which is stripped from the text; empty and punctuation-only sentences give none."""
    items = fixture_ctx(spec(vua, "vua_shared_task"), FIXTURES).load("train", track="allwords")
    assert [i.id for i in items] == [f"a1e-fragment01_1_{k}" for k in (1, 2, 3, 4, 5, 6, 8, 9)]
    assert [(target(i), i.label) for i in items][2:6] == [
        ("unbundler", "literal"), ("reveals", "metaphor"), ("laid-back", "literal"), ("approach", "metaphor"),
    ]
    assert items[0].text == "Latest corporate unbundler reveals laid-back approach : Roland Franklin"
    assert {i.group for i in items} == {"a1e-fragment01_1"}
    # a sentence's targets share its text, group and source objects: the item cache then pickles each once
    assert len({id(v) for i in items for v in (i.text, i.group, i.source)}) == 3
    with pytest.raises(DataError, match="track=allwords"):
        fixture_ctx(spec(vua, "vua_shared_task"), FIXTURES).load("train", track="allpos")


@pytest.mark.parametrize("token, word", [
    ("approach", True), ("laid-back", True), ("19", True), ("Rí©my", True), ("Œ£697m", True), ("1980äóñ1", True),
    (",", False), ("'s", True), ("--", False), ("äóÖ", False), ("äó»", False), ("äóî", False), ("äó_", False),
    ("í„", False),
])
def test_mis_encoded_quotation_marks_are_punctuation_not_words(token, word):
    """#48 item 7: the ETS train file's quotation marks mis-encoded as letters ('äóÖ' = ‘, ...) are punctuation,
    not allwords targets; a word with a mis-encoded letter or dash in it stays a word."""
    assert vua.is_word(token) is word
