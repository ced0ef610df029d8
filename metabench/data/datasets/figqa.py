"""Fig-QA (Liu, Cui, Zheng & Neubig, NAACL 2022): Winograd-style figurative-language inference.

Each row: a figurative start phrase and two candidate endings with opposite meanings; ``answer`` = index of
the correct ending. Rows come in pairs sharing ``qid`` (group): the same endings, opposite answers.
Splits: train (medium, 1,458), train_s (200), train_xl (8,016), dev (1,094), test (1,146; **labels hidden**
in the public release: answer is None, score on the leaderboard only).
"""

from __future__ import annotations

from ...errors import DataError
from ..readers import read_table
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result, stem

SPLIT_FILES = {s: f"fig_qa/{s}.csv" for s in ("train", "train_s", "train_xl", "dev", "test")}


def load(ctx, split: str):
    from ..items import ChoiceItem  # noqa: PLC0415

    if split not in SPLIT_FILES:
        raise bad_split("fig_qa", split, SPLIT_FILES)
    relpath = SPLIT_FILES[split]
    name = stem(relpath)
    items = []
    for index, (line, row) in enumerate(read_table(ctx.path(relpath), encoding=ctx.encoding(relpath))):
        raw = row["labels"].strip()
        if raw not in ("0", "1", "-1"):
            raise DataError(f"{relpath}:{line}: labels {raw!r} is not 0, 1 or -1 (hidden)")
        items.append(
            ChoiceItem(
                id=f"fig_qa_{name}:{index}",
                context=row["startphrase"],
                choices=(row["ending1"], row["ending2"]),
                answer=None if raw == "-1" else int(raw),
                group=f"{name}:{row['qid']}",
                source="fig_qa",
                meta={"qid": row["qid"], "valid": row["valid"], "split": split, "line": line},
            )
        )
    check_unique_ids(items, f"fig_qa {split}")
    return items


EXPECTED = {"train_s": (200, 100, 100), "train": (1458, 729, 729), "train_xl": (8016, 4008, 4008),
            "dev": (1094, 547, 547)}


def verify(ctx):
    out = []
    for split, expected in EXPECTED.items():
        items = ctx.load(split)
        out.append(result(f"{split} (rows, answer 0, answer 1)", expected,
                          (len(items), sum(i.answer == 0 for i in items), sum(i.answer == 1 for i in items))))
    test = ctx.load("test")
    out.append(result("test (rows, hidden labels)", (1146, 1146), (len(test), sum(i.answer is None for i in test))))
    return out


def specs():
    return [
        DatasetSpec(
            name="fig_qa",
            files=files("fig_qa", *SPLIT_FILES.values()),
            loader="metabench.data.datasets.figqa:load",
            splits=tuple(SPLIT_FILES),
            licence="MIT (repository LICENSE, Copyright (c) 2022 Emmy Liu)",
            citation=(
                "Emmy Liu, Chen Cui, Kenneth Zheng and Graham Neubig. Testing the Ability of Language Models "
                "to Interpret Figurative Language. NAACL 2022."
            ),
            description=(
                "Fig-QA: figurative start phrase + 2 endings, answer = index of the correct one (pairs share "
                "qid). train 1,458 / train_s 200 / train_xl 8,016 / dev 1,094 / test 1,146 (labels hidden)."
            ),
            counts={"items": {"train": 1458, "dev": 1094, "test": 1146},
                    "verify": "metabench.data.datasets.figqa:verify"},
        )
    ]
