"""Datasets of Boisson, Espinosa-Anke & Camacho-Collados ("Construction Artifacts in Metaphor Identification
Datasets", EMNLP 2023) that the mirror holds: Tsvetkov et al.'s TSV adjective-noun and SVO sets, and the
Cardiff NLP releases of Cardillo, Jankowiak and SAT* (Boisson et al., CoNLL 2024). The paper's own random and
lexical splits were not found; the Cardiff files carry a frozen 5-fold assignment instead.

- ``tsv_an``: adjective–noun phrases, train (884 metaphor + 879 literal) / test (100 + 100). The PME is the
  adjective (target_index 0); meta adjective/noun.
- ``tsv_svo``: Tsvetkov et al.'s SVO test set, test only (111 + 111). Argument ``form``: ``sentence`` (default)
  = the 222 English sentences of ``Datasets_ACL2014.xlsx`` (sheets MET_SVO_EN / LIT_SVO_EN), which the paper
  tests on, the PME being the verb as it occurs in the sentence; ``triple`` = the bare ``subject verb object``
  lines of ``svo_mets.txt`` / ``svo_nonmets.txt`` (target_index 1).
- ``cardillo``: 512 "A is a B" sentences (256 metaphor / 256 literal) with figurativeness ratings; the span
  is the PME (vehicle), group = the PME word shared by a literal/metaphor pair.
- ``cardillo_choice``: the 260 Cardillo pairs as 2-way choices (which sentence is the metaphor).
- ``jankowiak``: 360 "A is a B" sentences, labels metaphor / literal / anomaly (120 each), group = triple.
- ``jankowiak_choice``: the 120 Jankowiak triples as 3-way choices (which sentence is the metaphor).
- ``sat_star``: 342 SAT analogy questions (stem pair, 5 candidate pairs); labels per candidate: 0 wrong,
  1 literal analogy, 2 metaphorical analogy; answer = the correct candidate.

The Cardiff datasets take ``fold`` (0–4): split ``all`` ignores it, ``train``/``dev``/``test`` select the
items the release's ``5-folds`` field assigns to train/validation/test in that fold.
"""

from __future__ import annotations

import re

from ...errors import DataError
from ..readers import read_jsonl, read_table
from ..spec import DatasetSpec
from .common import LIT, MET, bad_split, check_unique_ids, files, label_counts, noted, result, stem

FAMILY = "boisson_construction_artifacts"
CARDIFF = f"{FAMILY}/cardiff_metaphors_and_analogies"
TSV = f"{FAMILY}/tsv_tsvetkov2014"
CARDILLO_RATINGS = f"{CARDIFF}/Cardillo/cardillo_with_figurativeness_ratings.jsonl"
CARDILLO_SETS = f"{CARDIFF}/Cardillo/cardillo.jsonl"
JANKOWIAK = f"{CARDIFF}/Jankowiak/jankowiak.jsonl"
SAT_STAR = f"{CARDIFF}/SAT_star/sat_star.jsonl"
TSV_AN = {
    "train": ((f"{TSV}/train_adj_noun/training_adj_noun_met_en.txt", MET),
              (f"{TSV}/train_adj_noun/training_adj_noun_nonmet_en.txt", LIT)),
    "test": ((f"{TSV}/test_sets/an_mets.txt", MET), (f"{TSV}/test_sets/an_nonmets.txt", LIT)),
}
TSV_SVO = {"test": ((f"{TSV}/test_sets/svo_mets.txt", MET), (f"{TSV}/test_sets/svo_nonmets.txt", LIT))}
SVO_SENTENCES = f"{TSV}/test_sets/Datasets_ACL2014.xlsx"
SVO_SHEETS = (("MET_SVO_EN.txt", MET, "svo_sentences_met"), ("LIT_SVO_EN", LIT, "svo_sentences_lit"))
SVO_FORMS = ("sentence", "triple")
VERB_EXCEPTIONS = "wordnet/dict/verb.exc"  # WordNet's irregular verb forms (arose -> arise), to find the verb
FOLDS = tuple(range(5))
CV_SPLITS = ("all", "train", "dev", "test")
_FOLD_VALUE = {"train": "train", "dev": "validation", "test": "test"}
_CARDIFF_LABEL = {0: "anomaly", 1: LIT, 2: MET}

CITE_BOISSON = (
    "Joanne Boisson, Luis Espinosa-Anke and Jose Camacho-Collados. Construction Artifacts in Metaphor "
    "Identification Datasets. EMNLP 2023."
)
CITE_CARDIFF = (
    "Joanne Boisson et al. How Are Metaphors Processed by Language Models? The Case of Analogies. CoNLL 2024."
)
CITE_TSV = (
    "Yulia Tsvetkov, Leonid Boytsov, Anatole Gershman, Eric Nyberg and Chris Dyer. Metaphor Detection with "
    "Cross-Lingual Model Transfer. ACL 2014."
)
CITE_CARDILLO = (
    "Eileen R. Cardillo, Gwenda L. Schmidt, Alexander Kranjec and Anjan Chatterjee. Stimulus design is an "
    "obstacle course: 560 matched literal and metaphorical sentences for testing neural hypotheses about "
    "metaphor. Behavior Research Methods 42(3), 2010; Eileen R. Cardillo, Christine Watson and Anjan "
    "Chatterjee. Stimulus needs are a moving target: 240 additional matched literal and metaphorical "
    "sentences. Behavior Research Methods 49(2), 2017. " + CITE_CARDIFF
)
CITE_JANKOWIAK = (
    "Katarzyna Jankowiak. Normative data for novel nominal metaphors, novel similes, literal, and anomalous "
    "utterances in Polish and English. Journal of Psycholinguistic Research 49(4), 2020. " + CITE_CARDIFF
)
CITE_SAT = "Peter D. Turney. Similarity of Semantic Relations. Computational Linguistics 32(3), 2006. " + CITE_CARDIFF


# ------------------------------------------------------------------------------------------------ TSV


def _phrases(ctx, split: str, table: dict, name: str, target: int, roles: tuple[str, ...]):
    from ..items import TextItem  # noqa: PLC0415

    if split not in table:
        raise bad_split(name, split, table)
    items = []
    for relpath, label in table[split]:
        rows = read_table(ctx.path(relpath), encoding=ctx.encoding(relpath), delimiter="\t", header=["phrase"],
                          quotechar=None, skip_blank=True)
        for index, (line, row) in enumerate(rows):
            words = row["phrase"].split()
            if len(words) != len(roles):
                raise DataError(f"{relpath}:{line}: expected {len(roles)} words ({' '.join(roles)}), got {words}")
            text = " ".join(words)
            start = sum(len(w) + 1 for w in words[:target])
            items.append(
                TextItem(
                    id=f"{stem(relpath)}:{index}",
                    text=text,
                    label=label,
                    spans=((start, start + len(words[target])),),
                    target_index=target,
                    lemma=words[target],
                    source=name,
                    meta={**dict(zip(roles, words)), "split": split, "line": line},
                )
            )
    check_unique_ids(items, f"{name} {split}")
    return items


def load_tsv_an(ctx, split: str):
    return _phrases(ctx, split, TSV_AN, "tsv_an", 0, ("adjective", "noun"))


def load_tsv_svo(ctx, split: str, form: str = "sentence"):
    if form == "triple":
        return _phrases(ctx, split, TSV_SVO, "tsv_svo", 1, ("subject", "verb", "object"))
    if split not in TSV_SVO:
        raise bad_split("tsv_svo", split, TSV_SVO)
    from ..items import TextItem  # noqa: PLC0415
    from ..readers import read_xlsx  # noqa: PLC0415

    irregular = _verb_exceptions(ctx)
    items = []
    for sheet, label, prefix in SVO_SHEETS:
        for index, (line, row) in enumerate(read_xlsx(ctx.path(SVO_SENTENCES), sheet)):
            where = f"{SVO_SENTENCES}:{sheet}:{line}"
            text, verb = str(row.get("sentence") or ""), str(row.get("verb") or "").strip().lower()
            start, end = _verb_span(text, verb, irregular, where)
            items.append(TextItem(
                id=f"{prefix}:{index}", text=text, label=label, spans=((start, end),),
                target_index=len(text[:start].split()), lemma=verb, pos="VERB", source="tsv_svo",
                meta={"subject": row.get("subject"), "verb": verb, "object": row.get("object"), "sheet": sheet,
                      "line": line, "judges": [row[k] for k in row if str(k).startswith("Judge")]},
            ))
    check_unique_ids(items, "tsv_svo test")
    return items


def _verb_exceptions(ctx) -> dict[str, set[str]]:
    """inflected form -> its lemmas, from WordNet's verb.exc (``arose arise``)."""
    out: dict[str, set[str]] = {}
    with open(ctx.path(VERB_EXCEPTIONS), encoding=ctx.encoding(VERB_EXCEPTIONS)) as handle:
        for line in handle:
            form, *lemmas = line.split()
            out.setdefault(form, set()).update(lemmas)
    return out


def _inflections(lemma: str) -> set[str]:
    """The regular forms of an English verb (approach -> approaches, approached, approaching)."""
    forms = {lemma, lemma + "s", lemma + "es", lemma + "ed", lemma + "d", lemma + "ing"}
    if lemma.endswith("e"):
        forms |= {lemma[:-1] + "ing", lemma[:-1] + "ed"}
    if lemma.endswith("y"):
        forms |= {lemma[:-1] + "ied", lemma[:-1] + "ies"}
    if re.search(r"[^aeiou][aeiou][bcdfgklmnprstvz]$", lemma):  # stop -> stopped, stopping
        forms |= {lemma + lemma[-1] + "ed", lemma + lemma[-1] + "ing"}
    return forms


def _verb_span(text: str, verb: str, irregular: dict, where: str) -> tuple[int, int]:
    """The character span of the one word of ``text`` that is a form of ``verb``; none or several is an error."""
    regular = _inflections(verb)
    hits = [m.span() for m in re.finditer(r"[\w’'-]+", text)
            if m.group().lower() in regular or verb in irregular.get(m.group().lower(), ())]
    if len(hits) != 1:
        raise DataError(f"{where}: {'no' if not hits else len(hits)} form(s) of the verb {verb!r} in {text!r}",
                        hint="the PME is the sentence's one occurrence of the row's verb")
    return hits[0]


def verify_tsv_an(ctx):
    train, test = ctx.load("train"), ctx.load("test")
    return [
        result("train (metaphor, literal)", {LIT: 879, MET: 884}, label_counts(train)),
        result("test (metaphor, literal)", {LIT: 100, MET: 100}, label_counts(test)),
        result("Boisson Table 1 TSV_AN (total, train, test)", (1963, 1763, 200),
               (len(train) + len(test), len(train), len(test))),
        noted("TSV README: training pairs (metaphor, literal)", (884, 884),
              (sum(i.label == MET for i in train), sum(i.label == LIT for i in train)),
              "the README says 884 + 884; the released literal file has 879 lines"),
    ]


def verify_tsv_svo(ctx):
    test, triples = ctx.load("test"), ctx.load("test", form="triple")
    return [
        result("test sentences (metaphor, literal)", {LIT: 111, MET: 111}, label_counts(test)),
        result("test triples (form=triple: metaphor, literal)", {LIT: 111, MET: 111}, label_counts(triples)),
        result("Boisson Table 1 TSV_V test", 222, len(test)),
    ]


# -------------------------------------------------------------------------------------------- Cardiff


def _in_fold(record: dict, split: str, fold: int, where: str) -> bool:
    if split == "all":
        return True
    folds = record.get("5-folds")
    if not isinstance(folds, list) or len(folds) != len(FOLDS):
        raise DataError(f"{where}: '5-folds' is not a list of {len(FOLDS)} split names")
    return folds[fold] == _FOLD_VALUE[split]


def _records(ctx, relpath: str, split: str, fold: int, name: str):
    if split not in CV_SPLITS:
        raise bad_split(name, split, CV_SPLITS)
    for line, record in read_jsonl(ctx.path(relpath), encoding=ctx.encoding(relpath)):
        where = f"{relpath}:{line}"
        if _in_fold(record, split, fold, where):
            yield line, where, record


def _span(value, where: str) -> tuple[int, int]:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value)):
        raise DataError(f"{where}: expected a [start, end] character span, got {value!r}")
    return value[0], value[1]


def load_cardillo(ctx, split: str, fold: int = 0):
    from ..items import TextItem  # noqa: PLC0415

    items = []
    for line, where, r in _records(ctx, CARDILLO_RATINGS, split, fold, "cardillo"):
        label = {"m": MET, "l": LIT}.get(r["label"])
        if label is None:
            raise DataError(f"{where}: label {r['label']!r} is not m/l")
        span = _span(r["position"], where)
        items.append(
            TextItem(
                id=str(r["id"]),
                text=r["context"],
                label=label,
                spans=(span,),
                lemma=r["expression"],
                group=r["expression"],
                source="cardillo",
                meta={
                    "tenor": r["target_expression"],
                    "tenor_span": _span(r["target_position"], where),
                    "figurativeness": r["score"],
                    "folds": tuple(r["5-folds"]),
                    "line": line,
                },
            )
        )
    check_unique_ids(items, f"cardillo {split}")
    return items


def _sentence_sets(ctx, relpath: str, split: str, fold: int, name: str):
    """(record, where, [(sentence, label, A span, B span, pair id)]) per multiple-choice set."""
    for line, where, r in _records(ctx, relpath, split, fold, name):
        sentences, labels = r["sentences"], r["labels"]
        if not (len(sentences) == len(labels) == len(r["A_positions"]) == len(r["B_positions"]) == len(r["pair_ids"])):
            raise DataError(f"{where}: sentences, labels, positions and pair_ids differ in length")
        rows = []
        for sent, lab, a, b, pid in zip(sentences, labels, r["A_positions"], r["B_positions"], r["pair_ids"]):
            if lab not in _CARDIFF_LABEL:
                raise DataError(f"{where}: label {lab!r} is not 0/1/2")
            rows.append((sent, _CARDIFF_LABEL[lab], _span(a, where), _span(b, where), str(pid)))
        yield line, where, r, rows


def _choice_items(ctx, relpath: str, split: str, fold: int, name: str):
    from ..items import ChoiceItem  # noqa: PLC0415

    items = []
    for line, where, r, rows in _sentence_sets(ctx, relpath, split, fold, name):
        answer = r["answer"]
        if not isinstance(answer, int) or not 0 <= answer < len(rows) or rows[answer][1] != MET:
            raise DataError(f"{where}: answer {answer!r} does not point at the metaphorical sentence")
        items.append(
            ChoiceItem(
                id=f"{name.split('_')[0]}:{r['id']}",
                context=r["stem"],
                choices=tuple(row[0] for row in rows),
                answer=answer,
                labels=tuple(row[1] for row in rows),
                group=r["stem"],
                source=name.split("_")[0],
                meta={"pair_ids": tuple(row[4] for row in rows), "folds": tuple(r["5-folds"]), "line": line},
            )
        )
    check_unique_ids(items, f"{name} {split}")
    return items


def load_cardillo_choice(ctx, split: str, fold: int = 0):
    return _choice_items(ctx, CARDILLO_SETS, split, fold, "cardillo_choice")


def load_jankowiak_choice(ctx, split: str, fold: int = 0):
    return _choice_items(ctx, JANKOWIAK, split, fold, "jankowiak_choice")


def load_jankowiak(ctx, split: str, fold: int = 0):
    from ..items import TextItem  # noqa: PLC0415

    items = []
    for line, where, r, rows in _sentence_sets(ctx, JANKOWIAK, split, fold, "jankowiak"):
        for sentence, label, a, b, pid in rows:
            items.append(
                TextItem(
                    id=f"jankowiak:{pid}",
                    text=sentence,
                    label=label,
                    spans=(b,),
                    lemma=r["stem"],
                    group=f"jankowiak:{r['id']}",
                    source="jankowiak",
                    meta={"tenor_span": a, "folds": tuple(r["5-folds"]), "line": line},
                )
            )
    check_unique_ids(items, f"jankowiak {split}")
    return items


def load_sat_star(ctx, split: str, fold: int = 0):
    from ..items import ChoiceItem  # noqa: PLC0415

    items = []
    for line, where, r in _records(ctx, SAT_STAR, split, fold, "sat_star"):
        pairs, labels = r["pairs"], r["labels"]
        answer = r["answer"]
        if len(pairs) != len(labels) or not 0 <= answer < len(pairs) or labels[answer] not in (1, 2):
            raise DataError(f"{where}: pairs/labels/answer are inconsistent")
        items.append(
            ChoiceItem(
                id=f"sat_star:{r['id']}",
                context=" : ".join(r["stem"]),
                choices=tuple(" : ".join(p) for p in pairs),
                answer=answer,
                labels=tuple(_CARDIFF_LABEL[x] if x else "wrong" for x in labels),
                source="sat_star",
                meta={"stem": tuple(r["stem"]), "pairs": tuple(tuple(p) for p in pairs),
                      "pair_ids": tuple(r["pair_ids"]), "folds": tuple(r["5-folds"]), "line": line},
            )
        )
    check_unique_ids(items, f"sat_star {split}")
    return items


def _folds_partition(ctx) -> bool:
    everything = {i.id for i in ctx.load("all")}
    for fold in FOLDS:
        parts = [{i.id for i in ctx.load(s, fold=fold)} for s in ("train", "dev", "test")]
        if set().union(*parts) != everything or sum(len(p) for p in parts) != len(everything):
            return False
    return True


def verify_cardillo(ctx):
    items = ctx.load("all")
    return [
        result("sentences (metaphor, literal)", {LIT: 256, MET: 256}, label_counts(items)),
        result("Boisson Table 1 CARD_N (total, %met)", (512, 50),
               (len(items), round(100 * sum(i.label == MET for i in items) / len(items)))),
        noted("Boisson Table 1 CARD_V", 280, None,
              "the verbal Cardillo sentences (CARD_V) are not in the Cardiff release"),
        result("every fold partitions the sentences into train/dev/test", True, _folds_partition(ctx)),
    ]


def verify_cardillo_choice(ctx):
    items = ctx.load("all")
    return [
        result("pairs", 260, len(items)),
        result("every fold partitions the pairs into train/dev/test", True, _folds_partition(ctx)),
    ]


def verify_jankowiak(ctx):
    items = ctx.load("all")
    return [
        result("sentences per label", {"anomaly": 120, LIT: 120, MET: 120}, label_counts(items)),
        result("Boisson Table 1 JANK (total, %met)", (360, 33),
               (len(items), round(100 * sum(i.label == MET for i in items) / len(items)))),
        result("triples", 120, len({i.group for i in items})),
        result("every fold partitions the sentences into train/dev/test", True, _folds_partition(ctx)),
    ]


def verify_jankowiak_choice(ctx):
    return [
        result("triples", 120, len(ctx.load("all"))),
        result("every fold partitions the triples into train/dev/test", True, _folds_partition(ctx)),
    ]


def verify_sat_star(ctx):
    items = ctx.load("all")
    kinds = {}
    for i in items:
        kinds[i.labels[i.answer]] = kinds.get(i.labels[i.answer], 0) + 1
    return [
        result("questions", 342, len(items)),
        result("correct answer is a literal / metaphorical analogy", {LIT: 239, MET: 103}, dict(sorted(kinds.items()))),
        result("every fold partitions the questions into train/dev/test", True, _folds_partition(ctx)),
    ]


# ---------------------------------------------------------------------------------------------- specs


def specs():
    cardiff_licence = "{}; Cardiff NLP release (Mionies/Metaphors_and_Analogies, repository README badge CC BY 4.0)"
    cv_args = {"fold": FOLDS}
    cv_note = " Split all = every item; train/dev/test = the release's frozen 5-fold assignment for `fold` (0-4)."
    module = "metabench.data.datasets.boisson"
    return [
        DatasetSpec(
            name="tsv_an",
            files=files(FAMILY, *(p for pairs in TSV_AN.values() for p, _ in pairs)),
            loader=f"{module}:load_tsv_an",
            splits=tuple(TSV_AN),
            licence="ODbL (ytsvetko/metaphor LICENSE.md)",
            citation=CITE_TSV,
            description=(
                "Tsvetkov et al. adjective-noun metaphor phrases: train 884 metaphor + 879 literal, test 100 + "
                "100 (no sentence context). target_index 0 = the adjective."
            ),
            counts={"items": {"train": 1763, "test": 200}, "verify": f"{module}:verify_tsv_an"},
        ),
        DatasetSpec(
            name="tsv_svo",
            files=files(FAMILY, SVO_SENTENCES, *(p for pairs in TSV_SVO.values() for p, _ in pairs))
            + files("wordnet", VERB_EXCEPTIONS),
            loader=f"{module}:load_tsv_svo",
            splits=tuple(TSV_SVO),
            args={"form": SVO_FORMS},
            licence="ODbL (ytsvetko/metaphor LICENSE.md)",
            citation=CITE_TSV,
            description=(
                "Tsvetkov et al. SVO metaphor test set (111 metaphor + 111 literal): form=sentence (default) the "
                "222 English sentences of Datasets_ACL2014.xlsx, PME = the verb in the sentence; form=triple the "
                "bare subject-verb-object lines, target_index 1. (Tsvetkov et al. train on TroFi: see `trofi`.)"
            ),
            counts={"items": {"test": 222}, "verify": f"{module}:verify_tsv_svo"},
        ),
        DatasetSpec(
            name="cardillo",
            files=files(FAMILY, CARDILLO_RATINGS),
            loader=f"{module}:load_cardillo",
            splits=CV_SPLITS,
            args=cv_args,
            licence=cardiff_licence.format("CC BY-NC-SA 4.0 (Cardillo/license.txt)"),
            citation=CITE_CARDILLO + " " + CITE_BOISSON,
            description=(
                "Cardillo 'A is a B' sentences with figurativeness ratings: 512 (256 metaphor / 256 literal, "
                "= Boisson's CARD_N); span = the PME, group = the PME word shared by a literal/metaphor pair."
                + cv_note
            ),
            counts={"items": {"all": 512}, "verify": f"{module}:verify_cardillo"},
        ),
        DatasetSpec(
            name="cardillo_choice",
            files=files(FAMILY, CARDILLO_SETS),
            loader=f"{module}:load_cardillo_choice",
            splits=CV_SPLITS,
            args=cv_args,
            licence=cardiff_licence.format("CC BY-NC-SA 4.0 (Cardillo/license.txt)"),
            citation=CITE_CARDILLO,
            description="Cardillo pairs as 2-way choices: which sentence uses the stem metaphorically (260)." + cv_note,
            counts={"items": {"all": 260}, "verify": f"{module}:verify_cardillo_choice"},
        ),
        DatasetSpec(
            name="jankowiak",
            files=files(FAMILY, JANKOWIAK),
            loader=f"{module}:load_jankowiak",
            splits=CV_SPLITS,
            args=cv_args,
            licence=cardiff_licence.format("CC BY 4.0 (Jankowiak/license.txt)"),
            citation=CITE_JANKOWIAK + " " + CITE_BOISSON,
            description=(
                "Jankowiak 'A is a B' sentences: 360 (120 metaphor / 120 literal / 120 anomaly, = Boisson's "
                "JANK); span = the vehicle, group = the triple." + cv_note
            ),
            counts={"items": {"all": 360}, "verify": f"{module}:verify_jankowiak"},
        ),
        DatasetSpec(
            name="jankowiak_choice",
            files=files(FAMILY, JANKOWIAK),
            loader=f"{module}:load_jankowiak_choice",
            splits=CV_SPLITS,
            args=cv_args,
            licence=cardiff_licence.format("CC BY 4.0 (Jankowiak/license.txt)"),
            citation=CITE_JANKOWIAK,
            description="Jankowiak triples as 3-way choices: which sentence is the metaphor (120)." + cv_note,
            counts={"items": {"all": 120}, "verify": f"{module}:verify_jankowiak_choice"},
        ),
        DatasetSpec(
            name="sat_star",
            files=files(FAMILY, SAT_STAR),
            loader=f"{module}:load_sat_star",
            splits=CV_SPLITS,
            args=cv_args,
            licence=cardiff_licence.format("CC BY-NC-SA 4.0 (SAT_star/license.txt; original SAT questions on demand)"),
            citation=CITE_SAT,
            description=(
                "SAT* analogy questions (342): stem pair and 5 candidate pairs ('a : b'); labels per candidate "
                "wrong / literal / metaphor; answer = the correct analogy (239 literal, 103 metaphorical)." + cv_note
            ),
            counts={"items": {"all": 342}, "verify": f"{module}:verify_sat_star"},
        ),
    ]
