"""SICK (Marelli et al., LREC 2014; SemEval-2014 Task 1): English NLI pairs with 3-way labels and relatedness.

A fallback English NLI set (MultiNLI/SNLI are not in the mirror). Splits from ``SemEval_set``: train
(TRAIN), dev (TRIAL), test (TEST). Labels entailment / neutral / contradiction; relatedness (1-5) and the
directional labels in meta. Ids ``sick:<pair_ID>``.
"""

from __future__ import annotations

from collections import Counter

from ...errors import DataError
from ..readers import read_table
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result

FILE = "sick/SICK.txt"
SPLITS = {"train": "TRAIN", "dev": "TRIAL", "test": "TEST"}
LABELS = {"ENTAILMENT": "entailment", "NEUTRAL": "neutral", "CONTRADICTION": "contradiction"}


def load(ctx, split: str):
    from ..items import NLIPair  # noqa: PLC0415

    if split not in SPLITS:
        raise bad_split("sick", split, SPLITS)
    items = []
    for line, row in read_table(ctx.path(FILE), encoding=ctx.encoding(FILE), delimiter="\t", quotechar=None):
        if row["SemEval_set"] != SPLITS[split]:
            continue
        label = LABELS.get(row["entailment_label"])
        if label is None:
            raise DataError(f"{FILE}:{line}: entailment_label {row['entailment_label']!r} is not one of {list(LABELS)}")
        items.append(
            NLIPair(
                id=f"sick:{row['pair_ID']}",
                premise=row["sentence_A"],
                hypothesis=row["sentence_B"],
                label=label,
                source="sick",
                genre=row["sentence_A_dataset"],
                meta={"relatedness": float(row["relatedness_score"]), "entailment_AB": row["entailment_AB"],
                      "entailment_BA": row["entailment_BA"], "line": line},
            )
        )
    check_unique_ids(items, f"sick {split}")
    return items


EXPECTED = {  # SOURCE.md: neutral, entailment, contradiction
    "train": (2524, 1274, 641), "dev": (281, 143, 71), "test": (2790, 1404, 712),
}


def verify(ctx):
    out = []
    for split, expected in EXPECTED.items():
        c = Counter(i.label for i in ctx.load(split))
        out.append(result(f"{split} (neutral, entailment, contradiction)", expected,
                          (c["neutral"], c["entailment"], c["contradiction"])))
    out.append(result("pairs", 9840, sum(len(ctx.load(s)) for s in SPLITS)))
    return out


def specs():
    return [
        DatasetSpec(
            name="sick",
            files=files("sick", FILE),
            loader="metabench.data.datasets.sick:load",
            splits=tuple(SPLITS),
            licence="None in kkalouli/SICK-processing; the upstream SICK release is CC BY-NC-SA 3.0",
            citation=(
                "Marco Marelli, Stefano Menini, Marco Baroni, Luisa Bentivogli, Raffaella Bernardi and Roberto "
                "Zamparelli. A SICK cure for the evaluation of compositional distributional semantic models. "
                "LREC 2014."
            ),
            description=(
                "SICK English NLI (entailment/neutral/contradiction + relatedness), fallback NLI training set: "
                "train 4,439 / dev (TRIAL) 495 / test 4,906."
            ),
            counts={"items": {"train": 4439, "dev": 495, "test": 4906}, "verify": "metabench.data.datasets.sick:verify"},
        )
    ]
