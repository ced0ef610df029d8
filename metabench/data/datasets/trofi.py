"""TroFi (Birke & Sarkar 2006): literal vs non-literal verb usage in WSJ sentences.

- ``trofi``: Gao et al. (2018)'s formatted TroFi (3,737 target verbs; label metaphor = non-literal), split
  ``all`` (no official split).
- ``trofi_10fold``: the MelBERT-format 10-fold cross-validation split (argument ``fold`` 0–9; splits
  train/test). Ids are the MelBERT item index, identical across folds.
"""

from __future__ import annotations

from ..spec import DatasetSpec
from ._common import MET, bad_split, files, fold_counts, gao_verb_items, melbert_fold_items, noted, result

GAO_FILE = "trofi/TroFi_formatted_all3737.csv"
FOLDS = tuple(range(10))
LICENCE = (
    "None stated (no LICENSE in gao-g/metaphor-in-context or Pruthvik-Reddy/conceptnet_injected_adapter). "
    "TroFi is built on WSJ text (Penn Treebank / ACL-DCI): check terms before redistribution."
)
CITATION = (
    "Julia Birke and Anoop Sarkar. A Clustering Approach for Nearly Unsupervised Recognition of Nonliteral "
    "Language. EACL 2006. Formatted by Ge Gao, Eunsol Choi, Yejin Choi and Luke Zettlemoyer, Neural Metaphor "
    "Detection in Context, EMNLP 2018."
)


def _fold_file(split: str, fold: int) -> str:
    return f"trofi/melbert_10fold/{split}{fold}.tsv"


def load(ctx, split: str):
    if split != "all":
        raise bad_split("trofi", split, ("all",))
    return gao_verb_items(ctx, GAO_FILE, source="trofi")


def load_10fold(ctx, split: str, fold: int = 0):
    if split not in ("train", "test"):
        raise bad_split("trofi_10fold", split, ("train", "test"))
    return melbert_fold_items(ctx, _fold_file(split, fold), prefix="trofi", source="trofi",
                              meta={"fold": fold, "split": split})


def verify(ctx):
    items = ctx.load("all")
    met = sum(i.label == MET for i in items)
    return [
        result("items (all, metaphorical, literal)", (3737, 1627, 2110), (len(items), met, len(items) - met)),
        result("Boisson Table 1 TroFi total", 3737, len(items)),
        noted("Boisson Table 1 TroFi %met", 57, round(100 * met / len(items)),
              "the release labels 1,627 of 3,737 (43.5%) non-literal; 57% matches its literal share (2,110 = 56.5%), "
              "so Boisson et al. may count the other class; "
              "construction_artifacts.md §1.3 finds Boisson's Table 4 consistent with p_met = 0.576"),
        noted("Boisson Table 1 TroFi original split train/test", (1772, 1965), None,
              "the Birke & Sarkar train/test split used by Boisson et al. is not in the mirror"),
    ]


def verify_10fold(ctx):
    folds = fold_counts(ctx)
    items = folds["items"]
    return [
        result("every fold (test, train) sizes", [(373, 3364)] * 10, folds["sizes"]),
        result("train and test disjoint in every fold", True, folds["disjoint"]),
        result("union of the test folds (7 items always in train)", 3730, folds["test_union"]),
        result("items and labels identical across folds (metaphorical, literal)", (1627, 2110),
               (sum(v == MET for v in items.values()), sum(v != MET for v in items.values()))
               if "inconsistent" not in items else "inconsistent"),
    ]


def specs():
    return [
        DatasetSpec(
            name="trofi",
            files=files("trofi", GAO_FILE),
            loader="metabench.data.datasets.trofi:load",
            splits=("all",),
            licence=LICENCE,
            citation=CITATION,
            description=(
                "TroFi verb literal/non-literal classification (Gao et al. 2018 format): 3,737 target verbs "
                "(1,627 metaphor / 2,110 literal), target_index = 0-based whitespace token. Split all only."
            ),
            counts={"items": {"all": 3737}, "verify": "metabench.data.datasets.trofi:verify"},
        ),
        DatasetSpec(
            name="trofi_10fold",
            files=files("trofi", "trofi/melbert_10fold/"),
            loader="metabench.data.datasets.trofi:load_10fold",
            splits=("train", "test"),
            args={"fold": FOLDS},
            licence=LICENCE,
            citation=CITATION + " 10-fold split in MelBERT format (Choi et al., NAACL 2021).",
            description=(
                "TroFi 10-fold cross-validation in MelBERT format (fold 0-9: test 373 / train 3,364). Ids = "
                "MelBERT item index, the same in every fold."
            ),
            counts={"items": {"test:fold=0": 373, "train:fold=0": 3364},
                    "verify": "metabench.data.datasets.trofi:verify_10fold"},
        ),
    ]
