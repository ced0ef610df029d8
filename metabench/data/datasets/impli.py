"""IMPLI (Stowe, Utama & Gurevych, ACL 2022): NLI pairs probing idioms and metaphors (evaluation set).

Each file holds pairs of one relation (suffix ``_e`` entailment, ``_ne`` non-entailment) built by one method
(manual, manual_antonyms, replacement, fig_context, lit_context, adversarial_definition) from one origin
(MAGPIE, PIE, SemEval-2013 Task 5, Common Crawl, Tsvetkov et al.). Single split ``test``; ``subset``
metaphors / idioms / all and ``method`` filter the files. Labels: entailment / non-entailment. A third
column (source-dataset score, idioms only) is kept as ``meta["score"]``.
"""

from __future__ import annotations

from collections import Counter

from ..readers import read_table
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result

FILES = {
    "metaphors": (
        "manual_e", "manual_ne", "replacement_cc_e", "replacement_tsvetkov_e",
    ),
    "idioms": (
        "manual_e", "manual_ne", "manual_antonyms_ne",
        "fig_context_magpie_e", "fig_context_pie_e", "fig_context_semeval_e",
        "lit_context_magpie_ne", "lit_context_pie_ne", "lit_context_semeval_ne",
        "adversarial_definition_ne_magpie", "adversarial_definition_ne_pie", "adversarial_definition_ne_semeval",
    ),
}
METHODS = ("manual", "manual_antonyms", "replacement", "fig_context", "lit_context", "adversarial_definition")


def _describe(name: str) -> tuple[str, str, str]:
    """(method, label, origin) of a file stem."""
    parts = name.split("_")
    label = "non-entailment" if "ne" in parts else "entailment"
    rest = [p for p in parts if p not in ("e", "ne")]
    for method in sorted(METHODS, key=len, reverse=True):
        if "_".join(rest).startswith(method):
            origin = "_".join(rest)[len(method):].strip("_")
            return method, label, origin
    raise ValueError(name)


def _relpath(subset: str, name: str) -> str:
    return f"impli/{subset}/{name}.tsv"


ORIGINS = ("magpie", "pie", "semeval", "cc", "tsvetkov")


def load(ctx, split: str, subset: str = "all", method: str = "all", origin: str = "all"):
    from ..items import NLIPair  # noqa: PLC0415

    if split != "test":
        raise bad_split("impli", split, ("test",))
    items = []
    for part in (FILES if subset == "all" else (subset,)):
        for name in FILES[part]:
            kind, label, source_origin = _describe(name)
            if method not in ("all", kind) or origin not in ("all", source_origin):
                continue
            relpath = _relpath(part, name)
            columns = ["premise", "hypothesis"] + ([] if kind in ("manual", "manual_antonyms", "replacement") else ["score"])
            rows = read_table(ctx.path(relpath), encoding=ctx.encoding(relpath), delimiter="\t", header=columns,
                              quotechar=None)
            for index, (line, row) in enumerate(rows):
                meta = {"subset": part, "method": kind, "origin": source_origin, "file": name, "line": line}
                if "score" in row:
                    meta["score"] = row["score"]
                items.append(
                    NLIPair(
                        id=f"{part}/{name}:{index}",
                        premise=row["premise"],
                        hypothesis=row["hypothesis"],
                        label=label,
                        source="impli",
                        genre=part,
                        meta=meta,
                    )
                )
    check_unique_ids(items, f"impli {subset}/{method}")
    return items


ROWS = {  # SOURCE.md, rows per file
    "metaphors/manual_e": 387, "metaphors/manual_ne": 281, "metaphors/replacement_cc_e": 545,
    "metaphors/replacement_tsvetkov_e": 100, "idioms/manual_e": 528, "idioms/manual_ne": 254,
    "idioms/manual_antonyms_ne": 375, "idioms/fig_context_magpie_e": 15431, "idioms/fig_context_pie_e": 634,
    "idioms/fig_context_semeval_e": 587, "idioms/lit_context_magpie_ne": 687, "idioms/lit_context_pie_ne": 57,
    "idioms/lit_context_semeval_ne": 142, "idioms/adversarial_definition_ne_magpie": 5965,
    "idioms/adversarial_definition_ne_pie": 92, "idioms/adversarial_definition_ne_semeval": 59,
}


def verify(ctx):
    items = ctx.load("test")
    per_file = Counter(f"{i.meta['subset']}/{i.meta['file']}" for i in items)
    met = Counter(i.label for i in items if i.meta["subset"] == "metaphors")
    return [
        result("rows per file", dict(sorted(ROWS.items())), dict(sorted(per_file.items()))),
        result("metaphor subset (pairs, entailment, non-entailment)", (1313, 1032, 281),
               (sum(met.values()), met["entailment"], met["non-entailment"])),
        result("idiom subset pairs", 24811, sum(1 for i in items if i.meta["subset"] == "idioms")),
    ]


def specs():
    return [
        DatasetSpec(
            name="impli",
            files=files("impli", *(_relpath(p, n) for p, names in FILES.items() for n in names)),
            loader="metabench.data.datasets.impli:load",
            splits=("test",),
            args={"subset": ("metaphors", "idioms", "all"), "method": METHODS + ("all",), "origin": ORIGINS + ("all",)},
            licence=(
                "Apache-2.0 (repository LICENSE; NOTICE: Copyright 2022 UKP Lab, TU Darmstadt). Idiom contexts "
                "partly from MAGPIE (CC BY 4.0), PIE and SemEval-2013 Task 5."
            ),
            citation=(
                "Kevin Stowe, Prasetya Ajie Utama and Iryna Gurevych. IMPLI: Investigating NLI Models' "
                "Performance on Figurative Language. ACL 2022."
            ),
            description=(
                "IMPLI figurative NLI (entailment / non-entailment), evaluation only: metaphors 1,313 pairs, "
                "idioms 24,811. subset metaphors|idioms|all; method manual|manual_antonyms|replacement|"
                "fig_context|lit_context|adversarial_definition|all; origin magpie|pie|semeval|cc|tsvetkov|all (the source corpus)."
            ),
            counts={"items": {"test:subset=metaphors": 1313, "test:subset=idioms": 24811},
                    "verify": "metabench.data.datasets.impli:verify"},
        )
    ]
