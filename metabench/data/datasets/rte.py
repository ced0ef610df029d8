"""PASCAL RTE 1-3 (as packaged in NLTK data): 2-way English entailment, a small fallback NLI set.

Splits dev/test; ``version`` 1, 2, 3 or all. Labels entailment / non-entailment (RTE1's value TRUE/FALSE and
RTE2-3's entailment YES/NO). NLTK's rte2_dev holds 400 of the official 800 pairs. Ids
``rte<version>_<split>:<pair id>``; meta task (IE/IR/QA/SUM/...) and length.
"""

from __future__ import annotations

from collections import Counter
from xml.etree import ElementTree

from ...errors import DataError
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result

VERSIONS = (1, 2, 3)
SPLITS = ("dev", "test")
_VALUES = {"YES": "entailment", "TRUE": "entailment", "NO": "non-entailment", "FALSE": "non-entailment"}


def _file(version: int, split: str) -> str:
    return f"rte/rte{version}_{split}.xml"


def load(ctx, split: str, version="all"):
    from ..items import NLIPair  # noqa: PLC0415

    if split not in SPLITS:
        raise bad_split("rte", split, SPLITS)
    items = []
    for v in VERSIONS if version == "all" else (int(version),):
        relpath = _file(v, split)
        try:
            root = ElementTree.parse(ctx.path(relpath)).getroot()
        except ElementTree.ParseError as exc:
            raise DataError(f"{relpath}:{exc.position[0]}: malformed XML ({exc})") from None
        for pair in root.iter("pair"):
            raw = pair.get("entailment") or pair.get("value")
            label = _VALUES.get((raw or "").upper())
            text, hypothesis = pair.find("t"), pair.find("h")
            if label is None or text is None or hypothesis is None:
                raise DataError(f"{relpath}: pair {pair.get('id')} lacks a YES/NO/TRUE/FALSE label, <t> or <h>")
            items.append(
                NLIPair(
                    id=f"rte{v}_{split}:{pair.get('id')}",
                    premise=(text.text or "").strip(),
                    hypothesis=(hypothesis.text or "").strip(),
                    label=label,
                    source=f"rte{v}",
                    genre=pair.get("task", ""),
                    meta={"task": pair.get("task", ""), "length": pair.get("length", "")},
                )
            )
    check_unique_ids(items, f"rte {split}/{version}")
    return items


EXPECTED = {  # SOURCE.md: pairs, YES/TRUE, NO/FALSE
    (1, "dev"): (567, 283, 284), (1, "test"): (800, 400, 400),
    (2, "dev"): (400, 210, 190), (2, "test"): (800, 400, 400),
    (3, "dev"): (800, 412, 388), (3, "test"): (800, 410, 390),
}


def verify(ctx):
    out = []
    for (version, split), expected in EXPECTED.items():
        c = Counter(i.label for i in ctx.load(split, version=version))
        out.append(result(f"rte{version} {split} (pairs, yes, no)", expected,
                          (sum(c.values()), c["entailment"], c["non-entailment"])))
    out.append(result("pairs", 4167, len(ctx.load("dev")) + len(ctx.load("test"))))
    return out


def specs():
    return [
        DatasetSpec(
            name="rte",
            files=files("rte", *(_file(v, s) for v in VERSIONS for s in SPLITS)),
            loader="metabench.data.datasets.rte:load",
            splits=SPLITS,
            args={"version": VERSIONS + ("all",)},
            licence="None stated (nltk_data rte package; PASCAL RTE data released for research use)",
            citation=(
                "Ido Dagan, Oren Glickman and Bernardo Magnini. The PASCAL Recognising Textual Entailment "
                "Challenge. 2006; Roy Bar-Haim et al. The Second PASCAL RTE Challenge. 2006; Danilo Giampiccolo "
                "et al. The Third PASCAL Recognizing Textual Entailment Challenge. 2007."
            ),
            description=(
                "PASCAL RTE 1-3 (NLTK packaging), 2-way entailment / non-entailment: dev 1,767 / test 2,400 "
                "pairs over the three versions (version 1|2|3|all)."
            ),
            counts={"items": {"dev": 1767, "test": 2400}, "verify": "metabench.data.datasets.rte:verify"},
        )
    ]
