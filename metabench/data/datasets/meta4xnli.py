"""Meta4XNLI (Sanchez-Bayona & Agerri): EN/ES token-level metaphor detection and metaphor-aware NLI.

Two datasets:

- ``meta4xnli_detection``: CoNLL ``word<TAB>tag`` sentences (tags B-METAPHOR / I-METAPHOR / O; ES has no
  I- tags). Splits ``train``/``dev``/``test`` are the released fine-tuning splits (EN and ES index-aligned:
  sentence i of EN test translates sentence i of ES test); ``all`` is the release's ``source_datasets``
  files (13,320 sentences per language). Every sentence carries its origin (``source`` = xnli_dev /
  xnli_test / esxnli, ``meta["subset"]`` = premise / hypothesis), for split sentences recovered by matching
  them (words and tags) against the source files; the ``source`` and ``subset`` arguments filter on them.
- ``meta4xnli_interpretation``: NLI pairs with the metaphor class of the pair (met / no_met / nonrelevant).
  Splits ``train``/``dev``/``test`` from ``interpretation/splits``, ``all`` from
  ``interpretation/source_datasets``. The paper never evaluates on ``nonrelevant`` pairs: use
  ``metaphor=met_no_met`` (met + no_met) for the paper's pool.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from functools import lru_cache

from ...errors import DataError
from ..readers import read_table
from ..spec import DatasetSpec
from .common import (
    bad_split,
    cached_conll,
    check_unique_ids,
    files,
    noted,
    result,
)

ROOT = "meta4xnli"
LANGUAGES = ("en", "es")
SOURCES = ("xnli_dev", "xnli_test", "esxnli")
SUBSETS = {"premises": "premise", "hypotheses": "hypothesis"}
_FILE_SUBSET = {"prem": "premise", "hyp": "hypothesis"}
SPLITS = ("train", "dev", "test")
CLASSES = ("met", "no_met", "nonrelevant")
_SOURCE_NAME = {"xnli.dev": "xnli_dev", "xnli.test": "xnli_test", "esxnli": "esxnli"}

LICENCE = (
    "Apache-2.0 (repository LICENSE; HF card apache-2.0). The sentences come from XNLI (CC BY-NC 4.0) and "
    "esXNLI (no licence stated): check before redistribution."
)
CITATION = (
    "Elisa Sanchez-Bayona and Rodrigo Agerri. Meta4XNLI: A Crosslingual Parallel Corpus for Metaphor "
    "Detection and Interpretation. Computational Linguistics, 2025 (arXiv:2404.07053)."
)


def _split_file(language: str, split: str) -> str:
    return f"{ROOT}/detection/splits/{language}/meta4xnli_{split}.tsv"


def _source_file(language: str, source: str, part: str) -> str:
    return f"{ROOT}/detection/source_datasets/{language}/{source}_{part}.tsv"


# --------------------------------------------------------------------------------------------- detection


def _sentences(ctx, relpath: str):
    return cached_conll(ctx.path(relpath), ctx.encoding(relpath), ctx.declared(relpath).sha256)


def _source_sentences(ctx, language: str, sources, parts) -> list:
    """The sentences of the source files of one language (every file resolved and recorded in ``ctx``). Each
    train/dev/test slice reads all of them to find its sentences' origin, as does ``all``: built once per
    process for the six slices and two pools of ``--tasks all`` (keyed by the files' verified hashes)."""
    files = []
    for source in sources:
        for part in parts:
            relpath = _source_file(language, source, part)
            files.append((source, part, ctx.path(relpath), ctx.encoding(relpath), ctx.declared(relpath).sha256))
    return list(_source_items(language, tuple(files)))


@lru_cache(maxsize=8)
def _source_items(language: str, files: tuple) -> tuple:
    from ..items import TaggedSentence  # noqa: PLC0415

    out = []
    for source, part, path, encoding, sha256 in files:
        name = f"{source}_{part}"
        for index, (line, words, tags) in enumerate(cached_conll(path, encoding, sha256)):
            out.append(
                TaggedSentence(
                    id=f"{language}/{name}:{index}",
                    words=words,
                    tags=tags,
                    language=language,
                    source=source,
                    meta={"subset": _FILE_SUBSET[part], "line": line, "file": name, "index": index},
                )
            )
    return tuple(out)


def load_detection(ctx, split: str, language: str = "en", source: str = "all", subset: str = "all"):
    """Sentences of one split (train/dev/test or all), filtered by origin source and premise/hypothesis."""
    from ..items import TaggedSentence  # noqa: PLC0415

    sources = SOURCES if source == "all" else (source,)
    parts = tuple(_FILE_SUBSET) if subset == "all" else tuple(k for k, v in _FILE_SUBSET.items() if v == SUBSETS[subset])
    if split == "all":
        items = _source_sentences(ctx, language, sources, parts)
        check_unique_ids(items, f"meta4xnli_detection all/{language}")
        return items
    if split not in SPLITS:
        raise bad_split("meta4xnli_detection", split, SPLITS + ("all",))

    # Where each sentence comes from: match (words, tags) against the source files; duplicates are taken in
    # file order (the 4 duplicated sentences per language lie within one source file each).
    origin: dict[tuple, list] = defaultdict(list)
    for item in _source_sentences(ctx, language, SOURCES, tuple(_FILE_SUBSET)):
        origin[(item.words, item.tags)].append(item)
    name = f"meta4xnli_{split}"
    items = []
    for index, (line, words, tags) in enumerate(_sentences(ctx, _split_file(language, split))):
        candidates = origin.get((words, tags))
        if not candidates:
            raise DataError(
                f"{_split_file(language, split)}:{line}: sentence not found in the source_datasets files",
                hint="the split and source files are from different releases",
            )
        ambiguous = len({(c.source, c.meta["subset"]) for c in candidates}) > 1  # never in the release
        found = candidates.pop(0) if len(candidates) > 1 else candidates[0]
        if found.source not in sources or found.meta["subset"] not in {_FILE_SUBSET[p] for p in parts}:
            continue
        items.append(
            TaggedSentence(
                id=f"{language}/{name}:{index}",
                words=words,
                tags=tags,
                language=language,
                source=found.source,
                meta={
                    "subset": found.meta["subset"],
                    "split": split,
                    "line": line,
                    "index": index,  # EN and ES sentences with the same split and index are translations
                    "source_id": found.id,
                    **({"origin_ambiguous": True} if ambiguous else {}),
                },
            )
        )
    check_unique_ids(items, f"meta4xnli_detection {split}/{language}")
    return items


# ---------------------------------------------------------------------------------------- interpretation


def _pairs_file(split: str, source: str, cls: str) -> str:
    if split == "all":
        return f"{ROOT}/interpretation/source_datasets/{source}_{cls}.tsv"
    return f"{ROOT}/interpretation/splits/{split}_{cls}.tsv"


def _classes(metaphor: str) -> tuple[str, ...]:
    return {"all": CLASSES, "met_no_met": ("met", "no_met")}.get(metaphor, (metaphor,))


def load_interpretation(ctx, split: str, language: str = "en", source: str = "all", metaphor: str = "all"):
    """NLI pairs of one split in one language, filtered by origin source and metaphor class."""
    from ..items import NLIPair  # noqa: PLC0415

    if split not in SPLITS + ("all",):
        raise bad_split("meta4xnli_interpretation", split, SPLITS + ("all",))
    sources = SOURCES if source == "all" else (source,)
    relpaths = []
    for cls in _classes(metaphor):
        if split == "all":
            relpaths += [(cls, _pairs_file(split, s, cls)) for s in sources]
        else:
            relpaths.append((cls, _pairs_file(split, "", cls)))
    items = []
    for cls, relpath in relpaths:
        for line, row in read_table(ctx.path(relpath), encoding=ctx.encoding(relpath), delimiter="\t", quotechar=None):
            if row["language"] != language:
                continue
            origin = _SOURCE_NAME.get(row["source_dataset"], row["source_dataset"])
            if origin not in sources:
                continue
            items.append(
                NLIPair(
                    id=f"{language}:{row['pairID']}",
                    premise=row["sentence1"],
                    hypothesis=row["sentence2"],
                    label=row["gold_label"],
                    metaphor=cls,
                    language=language,
                    source=origin,
                    genre=row["genre"],
                    meta={
                        "pair_id": row["pairID"],
                        "prompt_id": row["promptID"],
                        "file": relpath.rsplit("/", 1)[-1],
                        "line": line,
                        "split": split,
                    },
                )
            )
    check_unique_ids(items, f"meta4xnli_interpretation {split}/{language}")
    return items


# ------------------------------------------------------------------------------------------------ checks

# Tables 3 (ES) and 4 (EN): (metaphor tokens incl. I- tags, tokens, metaphor sentences, sentences).
TABLE_3_4 = {
    "es": {
        ("xnli_dev", "hypothesis"): (276, 24347, 252, 2490),
        ("xnli_dev", "premise"): (276, 16146, 203, 830),
        ("xnli_test", "hypothesis"): (551, 48703, 508, 5010),
        ("xnli_test", "premise"): (476, 32808, 356, 1670),
        ("esxnli", "hypothesis"): (312, 23261, 278, 2490),
        ("esxnli", "premise"): (403, 19374, 276, 830),
        ("xnli_dev", "all"): (552, 40493, 455, 3320),
        ("xnli_test", "all"): (1027, 81511, 864, 6680),
        ("esxnli", "all"): (715, 42635, 554, 3320),
        ("all", "all"): (2294, 164639, 1873, 13320),
    },
    "en": {
        ("xnli_dev", "hypothesis"): (442, 23271, 388, 2490),
        ("xnli_dev", "premise"): (384, 15098, 290, 830),
        ("xnli_test", "hypothesis"): (864, 46578, 769, 5010),
        ("xnli_test", "premise"): (679, 30412, 532, 1670),
        ("esxnli", "hypothesis"): (411, 22540, 361, 2490),
        ("esxnli", "premise"): (550, 18922, 396, 830),
        ("xnli_dev", "all"): (826, 38369, 678, 3320),
        ("xnli_test", "all"): (1543, 76990, 1301, 6680),
        ("esxnli", "all"): (961, 41462, 757, 3320),
        ("all", "all"): (3330, 156821, 2736, 13320),
    },
}
# Tables A.1 (ES) and A.2 (EN), per split: (metaphor tokens, tokens, metaphor sentences, sentences).
TABLE_A = {
    "es": {"train": (1053, 79462, 893, 7259), "dev": (474, 32285, 364, 2431), "test": (767, 52892, 616, 3630)},
    "en": {"train": (1527, 75935, 1285, 7287), "dev": (697, 30733, 553, 2422), "test": (1106, 50153, 898, 3611)},
}
RELEASED_EN_SENTENCES = {"train": 7259, "dev": 2431, "test": 3630}
# Table 7: distinct metaphor word types ("once-occurring metaphor tokens"), sentences with >= 2 metaphor
# tokens, average sentence length.
TABLE_7 = {
    "es": {"train": (722, 126, 10.94), "dev": (387, 80, 13.28), "test": (596, 116, 14.57)},
    "en": {"train": (962, 198, 10.46), "dev": (536, 110, 12.64), "test": (802, 161, 13.81)},
}
I_TAGS_EN = {"train": 36, "dev": 9, "test": 17}
# Train-test overlap (Figures 4/5): |train metaphor types & test metaphor types| / test metaphor tokens.
OVERLAP = {"en": (248, 1106), "es": (144, 767)}


def _is_met(tag: str) -> bool:
    return tag != "O"


def _stats(items) -> tuple[int, int, int, int]:
    met = sum(_is_met(t) for it in items for t in it.tags)
    tokens = sum(len(it.words) for it in items)
    met_sents = sum(any(_is_met(t) for t in it.tags) for it in items)
    return met, tokens, met_sents, len(items)


def _met_words(items) -> list[str]:
    return [w for it in items for w, t in zip(it.words, it.tags) if _is_met(t)]


def verify_detection(ctx):
    out = []
    loaded = {}
    for language in LANGUAGES:
        everything = ctx.load("all", language=language)
        for (source, subset), expected in TABLE_3_4[language].items():
            chosen = [
                it for it in everything
                if source in ("all", it.source) and subset in ("all", it.meta["subset"])
            ]
            table = "Table 3" if language == "es" else "Table 4"
            out.append(result(f"{table} {language} {source}/{subset} (met tok, tok, met sent, sent)",
                              expected, _stats(chosen)))
        for split in SPLITS:
            loaded[language, split] = ctx.load(split, language=language)
        for split in SPLITS:
            items = loaded[language, split]
            stats = _stats(items)
            expected = TABLE_A[language][split]
            table = "Table A.1" if language == "es" else "Table A.2"
            name = f"{table} {language} {split} (met tok, tok, met sent, sent)"
            if language == "en":
                out.append(noted(name, expected, stats,
                                 "A.2 prints 7287/2422/3611 sentences; the release (and Table 7's average lengths) "
                                 "give 7259/2431/3630 — a typo in A.2 (meta4xnli.md §1.8, §7.5)"))
                out.append(result(f"released EN {split} (met tok, tok, met sent, sent)",
                                  expected[:3] + (RELEASED_EN_SENTENCES[split],), stats))
            else:
                out.append(result(name, expected, stats))
            types = len(set(_met_words(items)))
            multi = sum(sum(_is_met(t) for t in it.tags) >= 2 for it in items)
            avg = math.floor(100 * stats[1] / stats[3]) / 100 if stats[3] else 0.0  # the paper truncates
            out.append(result(f"Table 7 {language} {split} (metaphor types, sentences >=2 met, avg length)",
                              TABLE_7[language][split], (types, multi, avg)))
        train_types = set(_met_words(loaded[language, "train"]))
        test_words = _met_words(loaded[language, "test"])
        out.append(result(f"Figures 4/5 {language} train-test overlap (shared types, test met tokens)",
                          OVERLAP[language], (len(train_types & set(test_words)), len(test_words))))
        source_sum = Counter()
        for split in SPLITS:
            for it in loaded[language, split]:
                source_sum[it.source, it.meta["subset"]] += 1
        expected_sum = Counter((it.source, it.meta["subset"]) for it in everything)
        out.append(result(f"{language} splits cover the source files exactly (sentences per source/subset)",
                          dict(expected_sum), dict(source_sum)))
    out.append(result("EN I-METAPHOR tags per split", I_TAGS_EN,
                      {s: sum(t.startswith("I-") for it in loaded["en", s] for t in it.tags) for s in SPLITS}))
    out.append(result("ES I-METAPHOR tags", 0,
                      sum(t.startswith("I-") for s in SPLITS for it in loaded["es", s] for t in it.tags)))
    out.append(result("EN/ES splits index-aligned (same sentence count and origin per index)", True, all(
        len(loaded["en", s]) == len(loaded["es", s])
        and all((a.source, a.meta["subset"]) == (b.source, b.meta["subset"])
                for a, b in zip(loaded["en", s], loaded["es", s]))
        for s in SPLITS
    )))
    return out


# Table 5: per source x gold label: (met, nonrelevant, no_met); same in both languages.
TABLE_5 = {
    "xnli_dev": {"entailment": (101, 136, 593), "neutral": (96, 153, 581), "contradiction": (92, 160, 578)},
    "xnli_test": {"entailment": (190, 236, 1244), "neutral": (188, 270, 1212), "contradiction": (202, 252, 1216)},
    "esxnli": {"entailment": (134, 168, 528), "neutral": (116, 183, 531), "contradiction": (128, 177, 525)},
}
TABLE_5_TOTAL = (1247, 1735, 7008)
# Table A.3 per split: (met, nonrelevant, no_met) as printed, and as released.
TABLE_A3 = {"train": (796, 1109, 4481), "dev": (201, 278, 1123), "test": (251, 348, 1403)}
RELEASED_A3 = {"train": (796, 1108, 4482), "dev": (201, 279, 1123), "test": (250, 348, 1403)}


def verify_interpretation(ctx):
    out = []
    for language in LANGUAGES:
        pairs = ctx.load("all", language=language)
        counts = Counter((p.source, p.label, p.metaphor) for p in pairs)
        for source, rows in TABLE_5.items():
            for label, expected in rows.items():
                actual = tuple(counts[source, label, c] for c in ("met", "nonrelevant", "no_met"))
                out.append(result(f"Table 5 {language} {source}/{label} (met, non-rel, no met)", expected, actual))
        totals = Counter(p.metaphor for p in pairs)
        out.append(result(f"Table 5 {language} total (met, non-rel, no met)", TABLE_5_TOTAL,
                          (totals["met"], totals["nonrelevant"], totals["no_met"])))
        split_ids = set()
        for split in SPLITS:
            items = ctx.load(split, language=language)
            split_ids |= {p.id for p in items}
            c = Counter(p.metaphor for p in items)
            actual = (c["met"], c["nonrelevant"], c["no_met"])
            name = f"Table A.3 {language} {split} (met, non-rel, no met)"
            if actual != TABLE_A3[split] and actual == RELEASED_A3[split]:
                out.append(noted(name, TABLE_A3[split], actual,
                                 "A.3 is off by one in a few cells against Table 5 and the release "
                                 "(meta4xnli.md §1.8: released train 796/1108/4482, dev 201/279/1123, "
                                 "test 250/348/1403)"))
            else:
                out.append(result(name, TABLE_A3[split], actual))
        out.append(result(f"{language} splits partition the source pairs (same pair ids)", True,
                          split_ids == {p.id for p in pairs}))
    return out


# ------------------------------------------------------------------------------------------------- specs


def specs() -> list[DatasetSpec]:
    detection_files = files(
        ROOT,
        *[_split_file(lang, s) for lang in LANGUAGES for s in SPLITS],
        *[_source_file(lang, src, part) for lang in LANGUAGES for src in SOURCES for part in _FILE_SUBSET],
    )
    interpretation_files = files(
        ROOT,
        *[_pairs_file(s, "", c) for s in SPLITS for c in CLASSES],
        *[_pairs_file("all", src, c) for src in SOURCES for c in CLASSES],
    )
    return [
        DatasetSpec(
            name="meta4xnli_detection",
            files=detection_files,
            loader="metabench.data.datasets.meta4xnli:load_detection",
            splits=SPLITS + ("all",),
            args={
                "language": LANGUAGES,
                "source": SOURCES + ("all",),
                "subset": tuple(SUBSETS) + ("all",),
            },
            licence=LICENCE,
            citation=CITATION,
            description=(
                "Meta4XNLI token-level metaphor detection (EN/ES, B-/I-METAPHOR/O tags on whitespace words "
                "with punctuation attached). train/dev/test = released splits (7259/2431/3630 sentences, EN "
                "and ES index-aligned); all = the 13,320 source sentences per language. Filters: source "
                "xnli_dev|xnli_test|esxnli, subset premises|hypotheses."
            ),
            counts={
                "items": {
                    "train:language=en": 7259, "dev:language=en": 2431, "test:language=en": 3630,
                    "train:language=es": 7259, "dev:language=es": 2431, "test:language=es": 3630,
                    "all:language=en": 13320, "all:language=es": 13320,
                },
                "verify": "metabench.data.datasets.meta4xnli:verify_detection",
            },
        ),
        DatasetSpec(
            name="meta4xnli_interpretation",
            files=interpretation_files,
            loader="metabench.data.datasets.meta4xnli:load_interpretation",
            splits=SPLITS + ("all",),
            args={
                "language": LANGUAGES,
                "source": SOURCES + ("all",),
                "metaphor": CLASSES + ("met_no_met", "all"),
            },
            licence=LICENCE,
            citation=CITATION,
            description=(
                "Meta4XNLI metaphor-aware NLI pairs (entailment/neutral/contradiction) with the pair's "
                "metaphor class met/no_met/nonrelevant. train/dev/test = released splits (6386/1603/2001 "
                "pairs per language); all = the 9,990 source pairs. EN labels are silver (transferred from "
                "ES). The paper never evaluates nonrelevant pairs: metaphor=met_no_met is its pool."
            ),
            counts={
                "items": {
                    "train:language=en": 6386, "dev:language=en": 1603, "test:language=en": 2001,
                    "all:language=en": 9990, "all:language=es": 9990,
                },
                "verify": "metabench.data.datasets.meta4xnli:verify_interpretation",
            },
        ),
    ]
