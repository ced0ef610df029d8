"""MAGPIE (Haagsma, Bos & Nissim, LREC 2020) as used by Dankers, Lucas & Titov (ACL 2022): 44,451 BNC
sentences containing one of 1,727 potentially idiomatic expressions, labelled figurative or literal.

One item per sentence: ``spans`` = the character spans of the idiom's lexicalised component tokens (from the
release's 0/1 token mask; discontinuous where the idiom is), ``label`` figurative / literal (MAGPIE i / l),
``lemma`` = the idiom's dictionary form, ``group`` = the idiom's number (one file per idiom). meta: variant
type, spaCy UPOS tags, the idiom's content-word keywords. Split ``all`` (the MAGPIE split column and the
authors' folds are not in the mirror); argument ``idiom`` (an idiom number 0-1726, or None) selects one idiom.
Ids ``magpie:<idiom>:<row>``.

Values that repeat (POS tags, variant types, an idiom's name, number and keywords) are one string object each,
shared by the items: the parsed-item cache pickles an object once however often it is referred to, and
1.4 million separate copies made this slice and VUA's all-words targets the two slowest of ``--tasks all`` to
cache and to read back.
"""

from __future__ import annotations

from collections import Counter
from sys import intern

from ...errors import DataError
from ..readers import read_table
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result, word_spans

IDIOMS = 1727
KEYWORDS = "magpie/idiom_keywords.tsv"
COLUMNS = ["sentence", "annotation", "idiom", "label", "variant", "tags"]
LABELS = ("figurative", "literal")


def _input(index: int) -> str:
    return f"magpie/mt_idioms_inputs/{index}.tsv"


def _keywords(ctx) -> list[dict]:
    rows = read_table(ctx.path(KEYWORDS), encoding=ctx.encoding(KEYWORDS), delimiter="\t",
                      header=["idiom", "flag", "tagged", "keywords", "extra"], quotechar=None)
    return [row for _, row in rows]


def load(ctx, split: str, idiom=None):
    from ..items import TextItem  # noqa: PLC0415

    if split != "all":
        raise bad_split("magpie", split, ("all",))
    keywords = _keywords(ctx)
    if len(keywords) != IDIOMS:
        raise DataError(f"{KEYWORDS}: {len(keywords)} idioms, expected {IDIOMS} (row i names file i.tsv)")
    indices = range(IDIOMS) if idiom is None else (int(idiom),)
    items = []
    for index in indices:
        relpath = _input(index)
        name, group = keywords[index]["idiom"], str(index)  # one object per idiom, shared by its sentences
        rows = read_table(ctx.path(relpath), encoding=ctx.encoding(relpath), delimiter="\t", header=COLUMNS,
                          quotechar=None, skip_blank=True)
        for row_index, (line, row) in enumerate(rows):
            where = f"{relpath}:{line}"
            text = row["sentence"]
            words = text.split()
            mask = row["annotation"].split()
            tags = tuple(map(intern, row["tags"].split()))  # one string per tag: see the module docstring
            if len(mask) != len(words) or len(tags) != len(words) or set(mask) - {"0", "1"}:
                raise DataError(f"{where}: {len(words)} tokens, {len(mask)} mask values, {len(tags)} POS tags")
            if row["label"] not in LABELS:
                raise DataError(f"{where}: label {row['label']!r} is not figurative/literal")
            if row["idiom"] != name:
                raise DataError(f"{where}: idiom {row['idiom']!r} differs from row {index} of {KEYWORDS}")
            items.append(
                TextItem(
                    id=f"magpie:{index}:{row_index}",
                    text=text,
                    label=intern(row["label"]),
                    spans=word_spans(text, words, [i for i, m in enumerate(mask) if m == "1"]),
                    lemma=name,
                    group=group,
                    source="magpie",
                    meta={"variant": intern(row["variant"]), "pos": tags, "keywords": keywords[index]["keywords"],
                          "mask": tuple(map(int, mask)), "line": line},
                )
            )
    check_unique_ids(items, "magpie all")
    return items


def verify(ctx):
    items = ctx.load("all")
    variants = Counter(i.meta["variant"] for i in items)
    return [
        result("sentences", 44451, len(items)),
        result("idioms", IDIOMS, len({i.group for i in items})),
        result("labels", {"figurative": 34138, "literal": 10313}, dict(sorted(Counter(i.label for i in items).items()))),
        result("variant types (identical, inflection, combined-inflection, dashes, case)",
               (21901, 7616, 4493, 3017, 1516),
               tuple(variants[v] for v in ("identical", "inflection", "combined-inflection", "dashes", "case"))),
        result("sentences with at least one idiom token marked", len(items), sum(bool(i.spans) for i in items)),
    ]


def specs():
    return [
        DatasetSpec(
            name="magpie",
            files=files("magpie", KEYWORDS, "magpie/mt_idioms_inputs/"),
            loader="metabench.data.datasets.magpie:load",
            splits=("all",),
            args={"idiom": None},
            licence=(
                "MAGPIE: CC BY 4.0 (hslh/magpie-corpus LICENSE); vernadankers/mt_idioms has no LICENSE file; "
                "sentences from the British National Corpus (BNC terms apply)"
            ),
            citation=(
                "Hessel Haagsma, Johan Bos and Malvina Nissim. MAGPIE: A Large Corpus of Potentially Idiomatic "
                "Expressions. LREC 2020. Subset: Verna Dankers, Christopher Lucas and Ivan Titov. Can "
                "Transformer be Too Compositional? Analysing Idiom Processing in Neural Machine Translation. "
                "ACL 2022."
            ),
            description=(
                "MAGPIE (Dankers et al. 2022 subset): 44,451 sentences, 1,727 idioms, figurative 34,138 / "
                "literal 10,313; spans = the idiom's component tokens. Split all; idiom=<0-1726> for one idiom."
            ),
            counts={"items": {"all": 44451}, "verify": "metabench.data.datasets.magpie:verify"},
        )
    ]
