"""Readers on small hand-made fixtures: exact records, physical line numbers, and file:line errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from metabench.data.readers import open_text, read_conll, read_json, read_jsonl, read_table, read_xlsx
from metabench.errors import DataError

FIX = Path(__file__).parent / "fixtures"


def test_conll_sentences_docstart_punctuation_crlf():
    sentences = list(read_conll(FIX / "conll_ok.tsv"))
    assert [line for line, _ in sentences] == [4, 10, 15]
    words = [[tok[0] for tok in sent] for _, sent in sentences]
    assert words == [["In", "eVect,", "it", "grows."], ["Time", "flies", "by"], ["End"]]
    assert sentences[1][1] == [("Time", "O"), ("flies", "B-METAPHOR"), ("by", "I-METAPHOR")]  # no stray \r


def test_conll_fields_are_one_object_per_value():
    """Tags and repeated words come back as one string object each (interned), which is what lets the parsed-item
    cache pickle a corpus's tags once instead of once per token."""
    fields = [tok for _, sent in read_conll(FIX / "conll_ok.tsv") for tok in sent]
    tags = [tag for _, tag in fields]
    assert len({id(t) for t in tags}) == len(set(tags)) < len(tags)


def test_conll_docstart_kept_when_asked():
    first = next(read_conll(FIX / "conll_ok.tsv", skip_docstart=False))
    assert first == (2, [("-DOCSTART-", "O")])


def test_conll_wrong_column_count_names_file_and_line():
    reader = read_conll(FIX / "conll_bad.tsv")
    assert next(reader)[0] == 1  # the good sentence before the bad one is still yielded
    with pytest.raises(DataError) as err:
        next(reader)
    assert f"{FIX / 'conll_bad.tsv'}:5:" in err.value.message
    assert "expected 2" in err.value.message and "got 3" in err.value.message


def test_conll_undecodable_byte_names_line_and_encoding():
    with pytest.raises(DataError, match=r"latin1_bad_utf8\.tsv:2: cannot decode .* as utf-8"):
        list(read_conll(FIX / "latin1_bad_utf8.tsv"))
    assert list(read_conll(FIX / "latin1_bad_utf8.tsv", encoding="latin-1"))[0][1][1] == ("naïve", "O")


def test_table_cp1252_crlf():
    rows = list(read_table(FIX / "table_cp1252_crlf.csv", encoding="cp1252"))
    assert rows == [
        (2, {"id": "1", "sentence": "café society", "label": "0"}),
        (3, {"id": "2", "sentence": "it’s a M_jungle", "label": "1"}),
    ]


def test_table_space_separated_header_with_tab_rows_and_bare_quotes():
    rows = list(read_table(FIX / "table_space_header.tsv", delimiter="\t", header="space", quotechar=None))
    assert [line for line, _ in rows] == [2, 3]
    assert rows[0][1] == {"index": "v1", "label": "1", "sentence": 'He "throws" a spanner', "POS": "VERB"}


def test_table_bom_is_stripped():
    rows = list(read_table(FIX / "table_bom.csv"))
    assert list(rows[0][1]) == ["id", "text"]


def test_table_quoted_newline_keeps_physical_line_numbers():
    rows = list(read_table(FIX / "table_quoted_newline.csv"))
    assert [line for line, _ in rows] == [2, 4, 5]
    assert rows[0][1]["text"] == "first line\nsecond line"
    assert rows[2][1]["text"] == 'a "quoted" word'


def test_table_wrong_field_count_names_file_line_expected_and_got():
    with pytest.raises(DataError) as err:
        list(read_table(FIX / "table_bad.csv"))
    message = err.value.message
    assert message.startswith(f"{FIX / 'table_bad.csv'}:3:")
    assert "expected 3 fields" in message and "got 4" in message


def test_table_without_header_uses_given_names():
    rows = list(read_table(FIX / "table_noheader.csv", header=["id", "label"]))
    assert rows == [(1, {"id": "a1_1_3", "label": "1"}), (2, {"id": "a1_1_4", "label": "0"})]


def test_table_blank_line_is_an_error_unless_skipped():
    with pytest.raises(DataError, match=r"table_blank\.csv:3: blank line"):
        list(read_table(FIX / "table_blank.csv"))
    rows = list(read_table(FIX / "table_blank.csv", skip_blank=True))
    assert [line for line, _ in rows] == [2, 4]


def test_table_missing_file():
    with pytest.raises(DataError, match="file not found"):
        list(read_table(FIX / "nope.csv"))


def test_jsonl_rows_and_bad_line():
    assert [(n, r["id"]) for n, r in read_jsonl(FIX / "rows.jsonl")] == [(1, 1), (3, 2)]
    with pytest.raises(DataError, match=r"bad\.jsonl:2: invalid JSON"):
        list(read_jsonl(FIX / "bad.jsonl"))


def test_json_error_names_line():
    with pytest.raises(DataError, match=r"bad\.json:4: invalid JSON"):
        read_json(FIX / "bad.json")


def test_gzip_text_and_readers(tmp_path):
    target = tmp_path / "sample.tsv.gz"
    target.write_bytes(gzip.compress((FIX / "conll_ok.tsv").read_bytes()))
    assert len(list(read_conll(target, compressed="gzip"))) == 3
    with open_text(target, compressed="gzip") as handle:
        assert "eVect," in handle.read()


def test_xlsx_needs_openpyxl_or_reads(tmp_path):
    try:
        import openpyxl
    except ImportError:
        with pytest.raises(DataError, match="openpyxl"):
            list(read_xlsx(tmp_path / "x.xlsx"))
        return
    book = openpyxl.Workbook()
    book.active.append(["id", "text"])
    book.active.append([1, "a"])
    book.save(tmp_path / "x.xlsx")
    assert list(read_xlsx(tmp_path / "x.xlsx")) == [(2, {"id": 1, "text": "a"})]


# --- the real files, when a mirror is there --------------------------------------------------------------

def _mirror() -> Path | None:
    import os

    for candidate in (os.environ.get("METABENCH_DATA_DIR"), Path(__file__).parents[2].parent / "shared" / "data"):
        if candidate and (Path(candidate) / "vua" / "SOURCE.md").is_file():
            return Path(candidate)
    return None


MIRROR = _mirror()
needs_mirror = pytest.mark.skipif(MIRROR is None, reason="no data mirror (set METABENCH_DATA_DIR or put shared/data beside the repo)")


@pytest.mark.slow
@needs_mirror
def test_mirror_meta4xnli_conll_counts_match_source_md():
    sentences = [s for _, s in read_conll(MIRROR / "meta4xnli/detection/splits/en/meta4xnli_train.tsv")]
    tags = [tok[1] for s in sentences for tok in s]
    assert (len(sentences), len(tags), sum(t != "O" for t in tags)) == (7259, 75935, 1527)


@needs_mirror
def test_mirror_vua_cp1252_crlf_and_space_header_files():
    vua = MIRROR / "vua"
    assert len(list(read_table(vua / "vua_shared_task_ets_2018_2020/vuamc_corpus_train.csv", encoding="cp1252"))) == 12122
    rows = list(read_table(vua / "vua20_melbert_format/test.tsv", delimiter="\t", header="space", quotechar=None))
    assert len(rows) == 22196 and rows[0][0] == 2
