"""TroFi (Birke & Sarkar 2006): literal vs non-literal verb usage in WSJ sentences.

- ``trofi``: Gao et al. (2018)'s formatted TroFi (3,737 target verbs; label metaphor = non-literal), split
  ``all`` (no official split). Argument ``labels``: ``human`` (default; Gao et al.'s human annotation, 43.5 %
  non-literal, which MelBERT-style work uses) or ``cluster`` (TroFi's own nonliteral/literal *cluster* of each
  sentence, from the same release's ``TroFi_annotated.csv``, 57.4 % non-literal; the reading that gives
  Boisson et al.'s Table 1 57 % and Maj 57.6 after their de-duplication). Same items and ids either way.
- ``trofi_10fold``: the MelBERT-format 10-fold cross-validation split (argument ``fold`` 0–9; splits
  train/test). Ids are the MelBERT item index, identical across folds.
"""

from __future__ import annotations

import dataclasses

from ...errors import DataError
from ..spec import DatasetSpec
from .common import LIT, MET, bad_split, files, fold_counts, gao_verb_items, melbert_fold_items, noted, result

GAO_FILE = "trofi/TroFi_formatted_all3737.csv"
ANNOTATED_FILE = "trofi/raw_TroFi_annotated.csv"
#: the label sources of ``trofi`` (argument ``labels``); the first is the default
LABEL_SOURCES = ("human", "cluster")
_CLUSTER = {"N": MET, "L": LIT}
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


def load(ctx, split: str, labels: str = "human"):
    if split != "all":
        raise bad_split("trofi", split, ("all",))
    items = gao_verb_items(ctx, GAO_FILE, source="trofi")
    return _cluster_labelled(ctx, items) if labels == "cluster" else items


def _cluster_labelled(ctx, items: list) -> list:
    """The items with TroFi's cluster labels: ``TroFi_annotated.csv`` lists the same 3,737 sentences in the same
    order as Gao et al.'s file (its ``human_label`` is their label), with the cluster (N non-literal, L literal)."""
    from ..readers import read_table  # noqa: PLC0415

    rows = list(read_table(ctx.path(ANNOTATED_FILE), encoding=ctx.encoding(ANNOTATED_FILE)))
    if len(rows) != len(items):
        raise DataError(f"{ANNOTATED_FILE}: {len(rows)} rows for the {len(items)} of {GAO_FILE}",
                        hint="the two files of gao-g/metaphor-in-context must come from the same commit")
    out = []
    for item, (line, row) in zip(items, rows):
        where = f"{ANNOTATED_FILE}:{line}"
        human = MET if row["human_label"] == "metaphorical" else LIT
        if row["verb"] != item.lemma or human != item.label:
            raise DataError(f"{where}: row does not match {GAO_FILE}:{item.meta['line']} (verb {row['verb']!r} vs "
                            f"{item.lemma!r}, human label {row['human_label']!r} vs {item.label!r})")
        if row["cluster_label"] not in _CLUSTER:
            raise DataError(f"{where}: cluster_label {row['cluster_label']!r}: expected N or L")
        out.append(dataclasses.replace(item, label=_CLUSTER[row["cluster_label"]]))
    return out


def load_10fold(ctx, split: str, fold: int = 0):
    if split not in ("train", "test"):
        raise bad_split("trofi_10fold", split, ("train", "test"))
    return melbert_fold_items(ctx, _fold_file(split, fold), prefix="trofi", source="trofi",
                              meta={"fold": fold, "split": split})


def verify(ctx):
    items = ctx.load("all")
    met = sum(i.label == MET for i in items)
    cluster = sum(i.label == MET for i in ctx.load("all", labels="cluster"))
    return [
        result("items (all, metaphorical, literal)", (3737, 1627, 2110), (len(items), met, len(items) - met)),
        result("cluster labels (labels=cluster: non-literal, literal)", (2145, 1592), (cluster, len(items) - cluster)),
        result("Boisson Table 1 TroFi total", 3737, len(items)),
        result("Boisson Table 1 TroFi %met (labels=cluster, the paper's labels)", 57, round(100 * cluster / len(items))),
        noted("Boisson Table 1 TroFi %met with labels=human", 57, round(100 * met / len(items)),
              "Gao et al.'s human annotation (this dataset's default, the MelBERT-style trofi_cv tasks' labels) gives "
              "43.5%; Boisson et al. used TroFi's cluster labels (57.4%; 2,097 / 3,642 = 57.6% after their "
              "de-duplication, their Maj), which boisson_trofi and boisson_tsv_svo read by default"),
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
            files=files("trofi", GAO_FILE, ANNOTATED_FILE),
            loader="metabench.data.datasets.trofi:load",
            splits=("all",),
            args={"labels": LABEL_SOURCES},
            licence=LICENCE,
            citation=CITATION,
            description=(
                "TroFi verb literal/non-literal classification (Gao et al. 2018 format): 3,737 target verbs "
                "(1,627 metaphor / 2,110 literal with labels=human, the default; 2,145 / 1,592 with labels=cluster, "
                "TroFi's own clusters), target_index = 0-based whitespace token. Split all only."
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
            counts={"items": {**{f"test:fold={f}": 373 for f in FOLDS}, **{f"train:fold={f}": 3364 for f in FOLDS}},
                    "verify": "metabench.data.datasets.trofi:verify_10fold"},
        ),
    ]
