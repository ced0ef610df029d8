"""esXNLI (Artetxe, Labaka & Agirre, EMNLP 2020): Spanish-original NLI pairs and their English translations.

The NLI test set under Meta4XNLI's esXNLI part. ``language`` = es (the originals), en (professional
translations) or en_mt (machine translations; the release's ``language`` column still says es). Single
split ``test``. Ids ``<language>:<pairID>``; ``meta["meta4xnli_pair_id"]`` gives the matching
Meta4XNLI pair id (``<pairID>_esxnli``).
"""

from __future__ import annotations

from collections import Counter

from ...errors import DataError
from ..readers import read_table
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result

HUMAN = "esxnli/esxnli.tsv"
MACHINE = "esxnli/esxnli.mt.tsv"
LANGUAGES = ("es", "en", "en_mt")
LABELS = ("entailment", "neutral", "contradiction")


def load(ctx, split: str, language: str = "es"):
    from ..items import NLIPair  # noqa: PLC0415

    if split != "test":
        raise bad_split("esxnli", split, ("test",))
    relpath = MACHINE if language == "en_mt" else HUMAN
    items = []
    rows = read_table(ctx.path(relpath), encoding=ctx.encoding(relpath), delimiter="\t", quotechar=None)
    for line, row in rows:
        if relpath == HUMAN and row["language"] != language:
            continue
        if row["gold_label"] not in LABELS:
            raise DataError(f"{relpath}:{line}: gold_label {row['gold_label']!r} is not one of {LABELS}")
        items.append(
            NLIPair(
                id=f"{language}:{row['pairID']}",
                premise=row["sentence1"],
                hypothesis=row["sentence2"],
                label=row["gold_label"],
                language="en" if language == "en_mt" else language,
                source="esxnli",
                genre=row["genre"],
                meta={"prompt_id": row["promptID"], "pair_id": row["pairID"],
                      "meta4xnli_pair_id": f"{row['pairID']}_esxnli",
                      "annotator_labels": tuple(row[f"label{k}"] for k in range(1, 6)),
                      "translation": {"es": "original", "en": "human", "en_mt": "machine"}[language],
                      "line": line},
            )
        )
    check_unique_ids(items, f"esxnli {language}")
    return items


def verify(ctx):
    out = []
    for language in LANGUAGES:
        items = ctx.load("test", language=language)
        out.append(result(f"{language} pairs per label", {"contradiction": 830, "entailment": 830, "neutral": 830},
                          dict(sorted(Counter(i.label for i in items).items()))))
        out.append(result(f"{language} genres (498 pairs each)", {g: 498 for g in
                          ("celebrity", "consumer", "economy", "literature", "newspaper")},
                          dict(sorted(Counter(i.genre for i in items).items()))))
    es = {i.meta["pair_id"]: i.label for i in ctx.load("test", language="es")}
    en = {i.meta["pair_id"]: i.label for i in ctx.load("test", language="en")}
    out.append(result("EN translations pair with the ES originals (same pair ids and labels)", True, es == en))
    return out


def specs():
    return [
        DatasetSpec(
            name="esxnli",
            files=files("esxnli", HUMAN, MACHINE),
            loader="metabench.data.datasets.esxnli:load",
            splits=("test",),
            args={"language": LANGUAGES},
            licence="None stated (artetxem/esxnli has no LICENSE file; README asks to cite)",
            citation=(
                "Mikel Artetxe, Gorka Labaka and Eneko Agirre. Translation Artifacts in Cross-lingual Transfer "
                "Learning. EMNLP 2020."
            ),
            description=(
                "esXNLI: 2,490 Spanish-original NLI pairs (5 genres) with professional (en) and machine (en_mt) "
                "English translations; split test."
            ),
            counts={"items": {"test:language=es": 2490, "test:language=en": 2490, "test:language=en_mt": 2490},
                    "verify": "metabench.data.datasets.esxnli:verify"},
        )
    ]
