"""CoMeta (Sanchez-Bayona & Agerri 2022): Spanish token-level metaphor detection (MIPVU), shipped in the
Meta4XNLI repository. CoNLL ``word<TAB>tag`` with tags B-METAPHOR / O; splits train/test (no dev)."""

from __future__ import annotations

from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, conll_items, files, result, tagging_stats

SPLITS = ("train", "test")


def _file(split: str) -> str:
    return f"cometa/cometa_{split}.tsv"


def load(ctx, split: str):
    if split not in SPLITS:
        raise bad_split("cometa", split, SPLITS)
    items = conll_items(ctx, _file(split), language="es", source="cometa", meta={"split": split})
    check_unique_ids(items, f"cometa {split}")
    return items


# SOURCE.md (and meta4xnli.md §1.10): sentences, tokens, metaphor tokens.
EXPECTED = {"train": (2906, 93341, 1713), "test": (727, 23774, 432)}


def verify(ctx):
    out = [result(f"{split} (sentences, tokens, metaphor tokens)", expected, tagging_stats(ctx.load(split)))
           for split, expected in EXPECTED.items()]
    out.append(result("Meta4XNLI Table 1: CoMeta sentences", 3633,
                      sum(len(ctx.load(s)) for s in SPLITS)))
    return out


def specs():
    return [
        DatasetSpec(
            name="cometa",
            files=files("cometa", *(_file(s) for s in SPLITS)),
            loader="metabench.data.datasets.cometa:load",
            splits=SPLITS,
            licence="Apache-2.0 (repository-level LICENSE of elisanchez-beep/meta4xnli; no CoMeta-specific licence)",
            citation=(
                "Elisa Sanchez-Bayona and Rodrigo Agerri. Leveraging a New Spanish Corpus for Multilingual and "
                "Crosslingual Metaphor Detection. CoNLL 2022."
            ),
            description=(
                "CoMeta: Spanish token-level metaphor detection (B-METAPHOR/O, MIPVU). Splits train (2,906 "
                "sentences) / test (727); no dev split."
            ),
            counts={"items": {"train": 2906, "test": 727}, "verify": "metabench.data.datasets.cometa:verify"},
        )
    ]
