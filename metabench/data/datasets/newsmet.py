"""NewsMet (Joseph, Liu, Ng, See & Rai, Findings of ACL 2023): metaphorical vs literal news headlines.

Headline-level binary labels (1 = metaphorical). Splits train/dev/test are the release's gold+ splits
(``sample_type`` gold or gold_plus, in meta: gold_plus rows are verb-substituted variants of gold headlines
and inherit their parent's label when the substitution was rejected); ``custom_test_1`` (sentences sampled from
the source datasets) and ``custom_test_2`` (FakeNewsCorpus headlines) are the two 50-item custom test sets.
The raw ``newsmet.csv`` (200 candidate verbs per headline) is not in the mirror.
"""

from __future__ import annotations

from collections import Counter

from ..readers import read_table
from ..spec import DatasetSpec
from .common import LIT, MET, bad_split, binary_label, check_unique_ids, files, label_counts, result, stem

SPLIT_FILES = {
    "train": "newsmet/train_val_test_gold_plus/train_goldplus.csv",
    "dev": "newsmet/train_val_test_gold_plus/val_goldplus.csv",
    "test": "newsmet/train_val_test_gold_plus/test_goldplus.csv",
    "custom_test_1": "newsmet/custom_test_sets/test_set_1.csv",
    "custom_test_2": "newsmet/custom_test_sets/test_set_2.csv",
}
_ID_COLUMN = {"custom_test_1": "Unnamed: 0", "custom_test_2": "id"}


def load(ctx, split: str):
    from ..items import TextItem  # noqa: PLC0415

    if split not in SPLIT_FILES:
        raise bad_split("newsmet", split, SPLIT_FILES)
    relpath = SPLIT_FILES[split]
    name = stem(relpath)
    items = []
    for index, (line, row) in enumerate(read_table(ctx.path(relpath), encoding=ctx.encoding(relpath))):
        where = f"{relpath}:{line}"
        meta = {"split": split, "line": line}
        if split in _ID_COLUMN:
            meta["source_id"] = row[_ID_COLUMN[split]]
        else:
            meta["sample_type"] = row["sample_type"]
        items.append(
            TextItem(
                id=f"{name}:{index}",
                text=row["Text"],
                label=binary_label(row["label"], where),
                source="newsmet",
                meta=meta,
            )
        )
    check_unique_ids(items, f"newsmet {split}")
    return items


# SOURCE.md / newsmet.md §1.5-1.6: rows, label 1, label 0, gold, gold_plus.
EXPECTED = {
    "train": (4371, 2144, 2227, 963, 3408),
    "dev": (554, 290, 264, 122, 432),
    "test": (546, 310, 236, 120, 426),
    "custom_test_1": (50, 26, 24, 0, 0),
    "custom_test_2": (50, 25, 25, 0, 0),
}


def verify(ctx):
    out = []
    for split, expected in EXPECTED.items():
        items = ctx.load(split)
        labels = label_counts(items)
        kinds = Counter(i.meta.get("sample_type") for i in items)
        out.append(result(f"{split} (rows, metaphorical, literal, gold, gold_plus)", expected,
                          (len(items), labels.get(MET, 0), labels.get(LIT, 0), kinds["gold"], kinds["gold_plus"])))
    gold = [i for s in ("train", "dev", "test") for i in ctx.load(s) if i.meta["sample_type"] == "gold"]
    out.append(result("gold rows (Dgold: 594 metaphorical / 611 literal)", {LIT: 611, MET: 594}, label_counts(gold)))
    return out


def specs():
    return [
        DatasetSpec(
            name="newsmet",
            files=files("newsmet", *SPLIT_FILES.values()),
            loader="metabench.data.datasets.newsmet:load",
            splits=tuple(SPLIT_FILES),
            licence="Apache-2.0 (repository LICENSE); headlines from FakeNewsCorpus and other news sources",
            citation=(
                "Joseph, Liu, Ng, See and Rai. NewsMet: A 'Do It All' Dataset of Contemporary Metaphors in News "
                "Headlines. Findings of ACL 2023, pp. 10090-10104."
            ),
            description=(
                "NewsMet headline-level metaphor detection (metaphor/literal). train/dev/test = gold+ splits "
                "4,371/554/546 (test 310 metaphor / 236 literal; meta sample_type gold|gold_plus); "
                "custom_test_1/custom_test_2 = the 50-item custom sets (26/24, 25/25)."
            ),
            counts={"items": {"train": 4371, "dev": 554, "test": 546, "custom_test_1": 50, "custom_test_2": 50},
                    "verify": "metabench.data.datasets.newsmet:verify"},
        )
    ]
