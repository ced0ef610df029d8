"""HMD proxy: the "ChalMC" (challenging metaphor corpus) outputs of Li, Guerin & Lin's pipeline ("Finding
Challenging Metaphors that Confuse Pretrained Language Models", arXiv:2401.16012).

**Not the official 21k HMD release** (not in the mirror): these are the authors' earlier (2022) pipeline
files with the same columns. One item per row: a target word in a SemCor / Senseval-3 context, its sense
(WordNet sense key for SemCor, Senseval-3 sense id), gloss, label metaphor/literal and the overlap ratio
phi (None on literal rows, where the file has ``_``). ``file`` selects semcor, semcor_instances, senseval3 or
senseval3_instances; split ``all``.

The context marks the target as ``[word]``; the brackets are removed and ``target_index``/``span`` point at
the target in the cleaned context. The file's own ``target_index`` (kept in meta) disagrees with the
bracket position on about a fifth of the SemCor rows (it counts SemCor's tokenisation, e.g. multiword units,
not the context's words); the integrity check counts those rows.
"""

from __future__ import annotations

import re

from ...errors import DataError
from ..readers import read_table
from ..spec import DatasetSpec
from .common import LIT, MET, bad_split, check_unique_ids, files, label_counts, result, to_int

FILES = {name: f"hard_metaphor_hmd/{name}_ChalMC.tsv"
         for name in ("semcor", "semcor_instances", "senseval3", "senseval3_instances")}
_BRACKETED = re.compile(r"^\[(\S+)\]$")


def load(ctx, split: str, file: str = "semcor"):
    from ..items import SenseExample  # noqa: PLC0415

    if split != "all":
        raise bad_split("hmd_proxy", split, ("all",))
    relpath = FILES[file]
    items = []
    rows = read_table(ctx.path(relpath), encoding=ctx.encoding(relpath), delimiter="\t", quotechar=None)
    for index, (line, row) in enumerate(rows):
        where = f"{relpath}:{line}"
        tokens = row["context"].split()
        marked = [i for i, t in enumerate(tokens) if _BRACKETED.match(t)]
        if len(marked) != 1:
            raise DataError(f"{where}: expected one [target] token in the context, found {len(marked)}")
        target = marked[0]
        tokens[target] = _BRACKETED.match(tokens[target]).group(1)
        context = " ".join(tokens)
        start = sum(len(t) + 1 for t in tokens[:target])
        label = {"metaphorical": MET, "literal": LIT}.get(row["label"])
        if label is None:
            raise DataError(f"{where}: label {row['label']!r} is not metaphorical/literal")
        raw_overlap = row["overlap_score"].strip()
        try:
            overlap = None if raw_overlap == "_" else float(raw_overlap)
        except ValueError:
            raise DataError(f"{where}: overlap_score {raw_overlap!r} is neither a number nor '_'") from None
        items.append(
            SenseExample(
                id=f"{file}:{index}",
                word=row["word"],
                sense=row["lemma"].lstrip("*"),
                gloss=row["gloss"],
                label=label,
                context=context,
                target_index=target,
                span=(start, start + len(tokens[target])),
                overlap=overlap,
                source=f"hmd_proxy_{file}",
                meta={"source_target_index": to_int(row["target_index"], where, "target_index"),
                      "metaphorical_sense": row["lemma"].startswith("*"), "line": line},
            )
        )
    check_unique_ids(items, f"hmd_proxy {file}")
    return items


EXPECTED = {  # SOURCE.md: rows, metaphorical, literal, distinct words
    "semcor": (706, 419, 287, 23),
    "semcor_instances": (552, 285, 267, 25),
    "senseval3": (337, 177, 160, 5),
    "senseval3_instances": (980, 496, 484, 23),
}
SHIFTED = {"semcor": 137, "semcor_instances": 109, "senseval3": 0, "senseval3_instances": 0}


def verify(ctx):
    out = []
    for file, expected in EXPECTED.items():
        items = ctx.load("all", file=file)
        labels = label_counts(items)
        out.append(result(f"{file} (rows, metaphorical, literal, words)", expected,
                          (len(items), labels.get(MET, 0), labels.get(LIT, 0), len({i.word for i in items}))))
        out.append(result(f"{file}: '*' sense prefix exactly on metaphorical rows, phi exactly on them", True,
                          all(i.meta["metaphorical_sense"] == (i.label == MET) == (i.overlap is not None) for i in items)))
        out.append(result(f"{file}: rows whose own target_index differs from the [target] position", SHIFTED[file],
                          sum(i.meta["source_target_index"] != i.target_index for i in items)))
    return out


def specs():
    return [
        DatasetSpec(
            name="hmd_proxy",
            files=files("hard_metaphor_hmd", *FILES.values()),
            loader="metabench.data.datasets.hmd:load",
            splits=("all",),
            args={"file": tuple(FILES)},
            licence=(
                "None stated (liyucheng09/Metaphor_Processing_analysis has no LICENSE file); contexts from "
                "SemCor (Princeton WordNet licence) and Senseval-3"
            ),
            citation=(
                "Yucheng Li, Frank Guerin and Chenghua Lin. Finding Challenging Metaphors that Confuse "
                "Pretrained Language Models. arXiv:2401.16012, 2024."
            ),
            description=(
                "Proxy for the Hard Metaphor Dataset (NOT the 21k release): the authors' ChalMC pipeline rows "
                "(word, sense, gloss, metaphor/literal, overlap phi, context, target). file semcor (706) | "
                "semcor_instances (552) | senseval3 (337) | senseval3_instances (980); split all."
            ),
            counts={"items": {"all:file=semcor": 706, "all:file=senseval3_instances": 980},
                    "verify": "metabench.data.datasets.hmd:verify"},
        )
    ]
