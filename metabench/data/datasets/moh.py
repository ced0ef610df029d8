"""MOH (Mohammad, Shutova & Turney 2016) verb metaphors and its MOH-X subset.

- ``moh_x``: MOH-X (647 verb-object / subject-verb sentences, Shutova et al. 2016) in Gao et al.'s cleaned
  format; split ``all``. meta arg1/arg2 = the verb's arguments.
- ``moh_x_10fold``: MOH-X 10-fold CV in MelBERT's own layout (``fold`` 0–9; train/test).
- ``moh``: full MOH in Gao et al.'s format with their train/dev/test split (1,283/160/160; all = 1,603).
- ``moh_raw``: the original MOH release (1,639 term–sense instances, ``class`` metaphorical/literal with a
  confidence, WordNet sense ``term#pos#n``), the version Boisson et al. count (1,632 after their clean-up);
  split ``all``. The target is the word the release marks with ``<b>…</b>`` (markers removed from text).
"""

from __future__ import annotations

import re

from ...errors import DataError
from ..readers import open_text
from ..spec import DatasetSpec
from .common import (
    LIT,
    MET,
    bad_split,
    check_unique_ids,
    files,
    fold_counts,
    gao_verb_items,
    melbert_fold_items,
    noted,
    result,
)

MOHX_FILE = "moh_x/MOH-X_formatted_svo_cleaned.csv"
MOH_FILES = {
    "train": "moh_x/moh_full_gao2018/MOH_formatted_train.csv",
    "dev": "moh_x/moh_full_gao2018/MOH_formatted_val.csv",
    "test": "moh_x/moh_full_gao2018/MOH_formatted_test.csv",
    "all": "moh_x/moh_full_gao2018/MOH_formatted.csv",
}
RAW_FILE = "moh_x/moh_full_gao2018/raw_Data-metaphoric-or-literal.txt"
FOLDS = tuple(range(10))
LICENCE = (
    "None stated (no LICENSE in gao-g/metaphor-in-context or jin530/MelBERT); the original MOH data is "
    "distributed by the NRC: check its terms before redistribution."
)
CITATION = (
    "Saif M. Mohammad, Ekaterina Shutova and Peter D. Turney. Metaphor as a Medium for Emotion: An Empirical "
    "Study. *SEM 2016."
)
CITE_MOHX = (
    CITATION + " Ekaterina Shutova, Douwe Kiela and Jean Maillard. Black Holes and White Rabbits: Metaphor "
    "Identification with Visual Features. NAACL 2016."
)


def _fold_file(split: str, fold: int) -> str:
    return f"moh_x/melbert_10fold/{split}{fold}.tsv"


def load_moh_x(ctx, split: str):
    if split != "all":
        raise bad_split("moh_x", split, ("all",))
    return gao_verb_items(ctx, MOHX_FILE, source="moh_x", extra=("arg1", "arg2"))


def load_moh_x_10fold(ctx, split: str, fold: int = 0):
    if split not in ("train", "test"):
        raise bad_split("moh_x_10fold", split, ("train", "test"))
    return melbert_fold_items(ctx, _fold_file(split, fold), prefix="moh_x", source="moh_x",
                              meta={"fold": fold, "split": split})


def load_moh(ctx, split: str):
    if split not in MOH_FILES:
        raise bad_split("moh", split, MOH_FILES)
    return gao_verb_items(ctx, MOH_FILES[split], source="moh", meta={"split": split})


_BOLD = re.compile(r"<b>(.*?)</b>")


def load_moh_raw(ctx, split: str):
    from ..items import TextItem  # noqa: PLC0415

    if split != "all":
        raise bad_split("moh_raw", split, ("all",))
    items = []
    header = ("term", "sense", "sentence", "class", "confidence")
    with open_text(ctx.path(RAW_FILE), encoding=ctx.encoding(RAW_FILE)) as handle:
        for line, text in enumerate(handle, start=1):
            text = text.rstrip("\r\n")
            if line <= 2 or not text:  # two preamble lines ("Number of terms: 440", ...)
                continue
            fields = text.split("\t")
            where = f"{RAW_FILE}:{line}"
            if len(fields) != len(header):
                raise DataError(f"{where}: expected {len(header)} TAB-separated fields, got {len(fields)}")
            if line == 3:
                if tuple(fields) != header:
                    raise DataError(f"{where}: expected the header {header}, got {fields}")
                continue
            row = dict(zip(header, fields))
            marked = list(_BOLD.finditer(row["sentence"]))
            if len(marked) != 1:
                raise DataError(f"{where}: expected one <b>…</b> target, found {len(marked)}")
            m = marked[0]
            plain = row["sentence"][: m.start()] + m.group(1) + row["sentence"][m.end():]
            start = m.start()
            label = {"metaphorical": MET, "literal": LIT}.get(row["class"])
            if label is None:
                raise DataError(f"{where}: class {row['class']!r} is not metaphorical/literal")
            items.append(
                TextItem(
                    id=f"moh_raw:{row['sense']}",
                    text=plain,
                    label=label,
                    spans=((start, start + len(m.group(1))),),
                    target_index=len(plain[:start].split()),
                    lemma=row["term"],
                    source="moh",
                    meta={"sense": row["sense"], "confidence": float(row["confidence"]), "line": line},
                )
            )
    check_unique_ids(items, "moh_raw all")
    return items


def _met_lit(items):
    met = sum(i.label == MET for i in items)
    return len(items), met, len(items) - met


def verify_moh_x(ctx):
    items = ctx.load("all")
    return [
        result("items (all, metaphorical, literal)", (647, 315, 332), _met_lit(items)),
        result("Meta4XNLI Table 1 MOH-X sentences", 647, len(items)),
    ]


def verify_moh_x_10fold(ctx):
    folds = fold_counts(ctx)
    items = folds["items"]
    return [
        result("every fold (test, train) sizes", [(64, 583)] * 10, folds["sizes"]),
        result("train and test disjoint in every fold", True, folds["disjoint"]),
        result("union of the test folds (items 640-646 always in train)", 640, folds["test_union"]),
        result("items and labels identical across folds (metaphorical, literal)", (315, 332),
               (sum(v == MET for v in items.values()), sum(v != MET for v in items.values()))
               if "inconsistent" not in items else "inconsistent"),
    ]


def verify_moh(ctx):
    expected = {"train": (1283, 315), "dev": (160, 40), "test": (160, 44), "all": (1603, 399)}
    out = [result(f"{split} (items, metaphorical)", exp, _met_lit(ctx.load(split))[:2]) for split, exp in expected.items()]
    return out


def verify_moh_raw(ctx):
    items = ctx.load("all")
    total, met, lit = _met_lit(items)
    return [
        result("instances (all, metaphorical, literal)", (1639, 410, 1229), (total, met, lit)),
        result("terms", 440, len({i.lemma for i in items})),
        noted("Boisson Table 1 MOH total", 1632, total,
              "Boisson et al. count 1,632 (their clean-up of 1,639 instances is not described); %met 25 "
              f"= {round(100 * met / total)} here"),
    ]


def specs():
    return [
        DatasetSpec(
            name="moh_x",
            files=files("moh_x", MOHX_FILE),
            loader="metabench.data.datasets.moh:load_moh_x",
            splits=("all",),
            licence=LICENCE,
            citation=CITE_MOHX,
            description="MOH-X (647 verbs in context, 315 metaphor / 332 literal), Gao et al.'s cleaned file; split all.",
            counts={"items": {"all": 647}, "verify": "metabench.data.datasets.moh:verify_moh_x"},
        ),
        DatasetSpec(
            name="moh_x_10fold",
            files=files("moh_x", "moh_x/melbert_10fold/"),
            loader="metabench.data.datasets.moh:load_moh_x_10fold",
            splits=("train", "test"),
            args={"fold": FOLDS},
            licence=LICENCE,
            citation=CITE_MOHX + " 10-fold split: Choi et al., MelBERT, NAACL 2021 (jin530/MelBERT data_sample).",
            description="MOH-X 10-fold CV as in MelBERT (fold 0-9: test 64 / train 583); ids = MelBERT item index.",
            counts={"items": {**{f"test:fold={f}": 64 for f in FOLDS}, **{f"train:fold={f}": 583 for f in FOLDS}},
                    "verify": "metabench.data.datasets.moh:verify_moh_x_10fold"},
        ),
        DatasetSpec(
            name="moh",
            files=files("moh_x", *MOH_FILES.values()),
            loader="metabench.data.datasets.moh:load_moh",
            splits=tuple(MOH_FILES),
            licence=LICENCE,
            citation=CITATION + " Split: Gao et al., EMNLP 2018.",
            description="Full MOH in Gao et al.'s format: train/dev/test 1,283/160/160 (all 1,603; 399 metaphor).",
            counts={"items": {"train": 1283, "dev": 160, "test": 160, "all": 1603},
                    "verify": "metabench.data.datasets.moh:verify_moh"},
        ),
        DatasetSpec(
            name="moh_raw",
            files=files("moh_x", RAW_FILE),
            loader="metabench.data.datasets.moh:load_moh_raw",
            splits=("all",),
            licence=LICENCE,
            citation=CITATION,
            description=(
                "The original MOH release: 1,639 term-sense instances (410 metaphor / 1,229 literal) with "
                "WordNet sense (meta sense) and confidence; target = the word marked <b>..</b>. Split all."
            ),
            counts={"items": {"all": 1639}, "verify": "metabench.data.datasets.moh:verify_moh_raw"},
        ),
    ]
