"""Metaphor paraphrase corpus (Bizzoni & Lappin, 2018): human-ranked paraphrase candidates.

Plain-text blocks separated by blank lines: a reference sentence, then candidates each ending in ``#<score>``
(1-4, 4 = best paraphrase). ``direction`` met2lit (``metaphor_paraphrase_corpus.txt``: metaphorical
reference, literal candidates) or lit2met (``lit2met_corpus.txt``: the reverse). Single split ``all`` (the
paper cross-validates). One met2lit block has no scores at all (line 1290, "here is no point ...") and the
file ends with a ``###*###`` marker: both are skipped, and counted by the integrity check.
"""

from __future__ import annotations

import re

from ...errors import DataError
from ..readers import open_text
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result

FILES = {
    "met2lit": "metaphor_paraphrase_bizzoni/metaphor_paraphrase_corpus.txt",
    "lit2met": "metaphor_paraphrase_bizzoni/lit2met_corpus.txt",
}
_SCORED = re.compile(r"^(?P<text>.*?)\s*#\s*(?P<score>\d+)\s*$")
_END = "###*###"


def _blocks(ctx, relpath: str):
    """(line of the reference, [lines]) per block; stops at the end marker."""
    block: list[tuple[int, str]] = []
    with open_text(ctx.path(relpath), encoding=ctx.encoding(relpath)) as handle:
        for number, text in enumerate(handle, start=1):
            text = text.rstrip("\r\n")
            if text.strip() == _END:
                break
            if not text.strip():
                if block:
                    yield block
                block = []
                continue
            block.append((number, text))
    if block:
        yield block


def parse(ctx, relpath: str) -> tuple[list[tuple[int, str, list[tuple[str, int]]]], list[int]]:
    """(scored sets as (line, reference, [(candidate, score)]), lines of unscored blocks)."""
    sets, unscored = [], []
    for block in _blocks(ctx, relpath):
        (line, reference), rest = block[0], block[1:]
        matches = [(n, _SCORED.match(t)) for n, t in rest]
        if not rest or _SCORED.match(reference):
            raise DataError(f"{relpath}:{line}: a block must start with an unscored reference and have candidates")
        if not any(m for _, m in matches):
            unscored.append(line)
            continue
        missing = [n for n, m in matches if not m]
        if missing:
            raise DataError(f"{relpath}:{missing[0]}: candidate without a '#<score>' ending")
        sets.append((line, reference.strip(), [(m["text"].strip(), int(m["score"])) for _, m in matches]))
    return sets, unscored


def load(ctx, split: str, direction: str = "met2lit"):
    from ..items import ParaphraseSet  # noqa: PLC0415

    if split != "all":
        raise bad_split("bizzoni_paraphrase", split, ("all",))
    relpath = FILES[direction]
    sets, _ = parse(ctx, relpath)
    items = [
        ParaphraseSet(
            id=f"{direction}:{line}",
            reference=reference,
            candidates=tuple(c for c, _ in candidates),
            scores=tuple(float(s) for _, s in candidates),
            direction=direction,
            source="bizzoni",
            meta={"line": line},
        )
        for line, reference, candidates in sets
    ]
    check_unique_ids(items, f"bizzoni_paraphrase {direction}")
    return items


def verify(ctx):
    out = []
    met, unscored = parse(ctx, FILES["met2lit"])
    out.append(result("met2lit (sets, scored candidates, sets with 4 candidates)", (186, 744, 186),
                      (len(met), sum(len(c) for _, _, c in met), sum(len(c) == 4 for _, _, c in met)),
                      "SOURCE.md's 745 '#' lines include the ###*### end marker"))
    out.append(result("met2lit blocks without scores (skipped)", [1290], unscored))
    lit, unscored = parse(ctx, FILES["lit2met"])
    out.append(result("lit2met (sets, scored candidates, sets with 8 candidates)", (178, 720, 2),
                      (len(lit), sum(len(c) for _, _, c in lit), sum(len(c) == 8 for _, _, c in lit))))
    out.append(result("lit2met blocks without scores", [], unscored))
    out.append(result("scores within 1-4", True, all(1 <= s <= 4 for _, _, c in met + lit for _, s in c)))
    return out


def specs():
    return [
        DatasetSpec(
            name="bizzoni_paraphrase",
            files=files("metaphor_paraphrase_bizzoni", *FILES.values()),
            loader="metabench.data.datasets.bizzoni:load",
            splits=("all",),
            args={"direction": tuple(FILES)},
            licence="CC BY 4.0 (LICENSE-CC-BY.txt)",
            citation=(
                "Yuri Bizzoni and Shalom Lappin. Predicting Human Metaphor Paraphrase Judgments with Deep "
                "Neural Networks. Workshop on Figurative Language Processing (FigLang) 2018."
            ),
            description=(
                "Metaphor paraphrase ranking: a reference and candidates with human scores 1-4 (4 = best). "
                "direction met2lit (186 sets of 4) or lit2met (178 sets, 2 with 8 candidates). Split all."
            ),
            counts={"items": {"all:direction=met2lit": 186, "all:direction=lit2met": 178},
                    "verify": "metabench.data.datasets.bizzoni:verify"},
        )
    ]
