"""metaphor_llm_paraphrases: paraphrases joined to their originals by text, never by row order."""

from __future__ import annotations

import os
from pathlib import Path

from dataclasses import replace

import pytest

from metabench.data import plugin
from metabench.data.context import DataContext
from metabench.data.datasets import llm_paraphrases
from metabench.data.resolve import sha256_of
from metabench.errors import DataError


def mirror_dir() -> Path | None:
    """The data mirror (the root conftest sets METABENCH_DATA_DIR when one exists), if it has metaphor_llm_paraphrases."""
    raw = os.environ.get("METABENCH_DATA_DIR")
    return Path(raw) if raw and (Path(raw) / "metaphor_llm_paraphrases").is_dir() else None

SPEC = llm_paraphrases.specs()[0]
ORIGINAL = llm_paraphrases.ORIGINALS["impli"][0]
MISTRAL = llm_paraphrases.paraphrase_path("impli", "mistral")


def _ctx(root, files: dict[str, str]) -> DataContext:
    for relpath, text in files.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")
    present = tuple(replace(f, sha256=sha256_of(root / f.path, f.compressed)) for f in SPEC.files if f.path in files)
    return DataContext(replace(SPEC, files=present), root, download=False)


ORIGINAL_TSV = (
    "premise\thypothesis\tlabel\n"
    "he absorbed it.\the took it in .\tentailment\n"
    "she devoured the book.\tshe read the book eagerly .\tentailment\n"
    "she devoured the book.\tshe read the book eagerly .\tentailment\n"  # a duplicate key, as IMPLI has 12
    "he absorbed it.\the ignored it .\tnot_entailment\n"
)


def test_rows_join_by_text_not_order(tmp_path):
    paraphrases = (
        "premise\thypothesis\tgold_label\toriginal_premise\n"
        "she read the book quickly.\tshe read the book eagerly .\tentailment\tshe devoured the book.\n"
        "he did not listen.\the ignored it .\tnot_entailment\the absorbed it.\n"
        "she read it all fast.\tshe read the book eagerly .\tentailment\tshe devoured the book.\n"
    )  # shuffled, the first original has no paraphrase (as in the IMPLI Mistral file)
    ctx = _ctx(tmp_path, {ORIGINAL: ORIGINAL_TSV, MISTRAL: paraphrases})
    items = llm_paraphrases.load(ctx, "test", set="impli", variant="mistral")
    originals = {i.id: i for i in llm_paraphrases.load(ctx, "test", set="impli")}
    assert [i.id for i in items] == ["impli:1", "impli:2", "impli:3"]
    assert [i.premise for i in items] == ["she read the book quickly.", "she read it all fast.", "he did not listen."]
    assert all(i.label == originals[i.id].label and i.hypothesis == originals[i.id].hypothesis for i in items)
    assert {i.metaphor for i in items} == {"literal"} and originals["impli:0"].metaphor == "met"


def test_unjoinable_row_names_file_and_line(tmp_path):
    paraphrases = (
        "premise\thypothesis\tgold_label\toriginal_premise\n"
        "x\the took it in .\tnot_entailment\the absorbed it.\n"  # the label differs: no original has this key
    )
    ctx = _ctx(tmp_path, {ORIGINAL: ORIGINAL_TSV, MISTRAL: paraphrases})
    with pytest.raises(DataError, match=r"instruct_15-10-2024_12_03_13\.tsv:2: this paraphrase row joins no original"):
        llm_paraphrases.load(ctx, "test", set="impli", variant="mistral")


def test_empty_paraphrase_dropped(tmp_path):
    paraphrases = "premise\thypothesis\tgold_label\toriginal_premise\n\the took it in .\tentailment\the absorbed it.\n"
    ctx = _ctx(tmp_path, {ORIGINAL: ORIGINAL_TSV, MISTRAL: paraphrases})
    assert llm_paraphrases.load(ctx, "test", set="impli", variant="mistral") == []


@pytest.mark.mirror
@pytest.mark.parametrize("name", llm_paraphrases.SETS)
def test_every_paraphrase_joins_exactly_one_original_with_its_label(name):
    if mirror_dir() is None:
        pytest.skip("data mirror not found (set METABENCH_DATA_DIR)")
    spec = next(s for s in plugin.all_specs() if s.name == "metaphor_llm_paraphrases")
    ctx = DataContext(spec, mirror_dir(), download=False)
    originals = {i.id: i for i in ctx.load("test", set=name)}
    for variant in llm_paraphrases.GENERATORS:
        items = ctx.load("test", set=name, variant=variant)
        ids = [i.id for i in items]
        assert len(ids) == len(set(ids)), "two paraphrases joined the same original"
        assert set(ids) <= originals.keys()
        assert all(i.label == originals[i.id].label for i in items)
        side = llm_paraphrases.ORIGINALS[name][1]
        kept = ("hypothesis",) if side == ("premise",) else ("premise",) if side == ("hypothesis",) else ()
        assert all(getattr(i, s) == getattr(originals[i.id], s) for i in items for s in kept)


@pytest.mark.parametrize("field", [
    '"If we can\'t make the right choice have power," as Pascal stated, we could stop.',  # the Meta4XNLI row
    'plain text with "quotes" inside', '"fully quoted"', '"a ""doubled"" quote" and more', 'x',
])
def test_a_field_is_read_as_the_authors_pandas_reads_it(tmp_path, field):
    """The paraphrase files are read as metaphorLLM's zero_shot.py reads them (pandas.read_csv, sep='\\t')."""
    import pandas as pd

    from metabench.data.datasets.llm_paraphrases import as_pandas_reads

    path = tmp_path / "f.tsv"
    path.write_text(f"premise\thypothesis\n{field}\tx\n", encoding="utf-8")
    expected = pd.read_csv(path, sep="\t", keep_default_na=False)["premise"][0]
    assert as_pandas_reads(field) == expected
