"""VU Amsterdam Metaphor Corpus (VUAMC) benchmark versions, each as released by a public repository.

- ``vua18``: VUA-18 sequence labelling (Gao et al. 2018; the MelBERT "VUA-18"), TaggedSentence with
  B-METAPHOR/O per whitespace token, POS and genre in meta. Splits train/dev/test.
- ``vua_verb``: VUA-Verb classification (Gao et al. 2018 / NAACL-2018 shared-task verb split), one TextItem per
  target verb. Splits train/dev/test, plus train_noval and all (the release's other two files).
- ``vua_verb_wsd``: VUA-Verb in MelBERT format with WordNet sense and definition columns (ContrastWSD-style;
  student repository, weaker provenance). Splits train/test.
- ``vua20``: VUA-20 (2020 shared task, all POS) as used by Meta4XNLI, CoNLL B-METAPHOR/O. Splits train/dev/test.
- ``vua20_test_melbert``: the VUA-20 test set in MelBERT format, one TextItem per target token (ids are the
  ETS token ids). Split test.
- ``vua_shared_task``: the official ETS FigLang 2018/2020 token lists joined with the VUAMC sentences, one
  TextItem per target token, ids = ETS token ids. ``track`` verb (train 17,240 / test 5,873), allpos
  (test 22,196 only: the all-POS train token list is not in the mirror) or allwords (every word labelled by its
  ``M_`` marker, punctuation and mis-encoded quotation marks left out: MelBERT's VUA-20 training targets,
  train 157,481).
- ``vua_shared_task_sequence``: the ETS VUAMC sentences with every ``M_``-marked token tagged B-METAPHOR.
  Splits train/test.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from ...errors import DataError
from ..readers import read_table
from ..spec import DatasetSpec
from .common import (
    LIT,
    LIT_TAG,
    MET,
    MET_TAG,
    bad_split,
    binary_label,
    check_unique_ids,
    conll_items,
    files,
    gao_verb_items,
    noted,
    result,
    stem,
    tagging_stats,
    target_row_item,
    target_span,
    to_int,
    token_spans,
)

LICENCE = (
    "VUAMC: free for non-commercial use under the BNC Licence terms (Oxford Text Archive 2541 TEI header); "
    "the repositories carrying these files state no licence of their own."
)
CITE_STEEN = (
    "Gerard J. Steen, Aletta G. Dorst, J. Berenike Herrmann, Anna Kaal, Tina Krennmayr and Trijntje Pasma. "
    "A Method for Linguistic Metaphor Identification: From MIP to MIPVU. John Benjamins, 2010."
)
CITE_GAO = (
    "Ge Gao, Eunsol Choi, Yejin Choi and Luke Zettlemoyer. Neural Metaphor Detection in Context. EMNLP 2018. "
    + CITE_STEEN
)
CITE_ETS = (
    "Chee Wee Leong, Beata Beigman Klebanov and Ekaterina Shutova. A Report on the 2018 VUA Metaphor Detection "
    "Shared Task. FigLang 2018; Chee Wee Leong et al. A Report on the 2020 VUA and TOEFL Metaphor Detection "
    "Shared Task. FigLang 2020. " + CITE_STEEN
)
CITE_MELBERT = (
    "Minjoon Choi, Sungjin Lee, Eunseong Choi, Heesoo Park, Junhyuk Lee, Dongwon Lee and Jongwuk Lee. MelBERT: "
    "Metaphor Detection via Contextualized Late Interaction using Metaphorical Identification Theories. NAACL "
    "2021. " + CITE_STEEN
)

SEQ = "vua/vua18_sequence_gao2018"
VERB = "vua/vua_verb_gao2018"
ETS = "vua/vua_shared_task_ets_2018_2020"
M4X = "vua/vua20_meta4xnli_format"
MELBERT_TEST = "vua/vua20_melbert_format/test.tsv"
WSD = "vua/vua_verb_melbert_wsd_format"

SEQ_FILES = {s: f"{SEQ}/VUA_seq_formatted_{f}.csv" for s, f in (("train", "train"), ("dev", "val"), ("test", "test"))}
VERB_FILES = {
    "train": f"{VERB}/VUA_formatted_train.csv",
    "dev": f"{VERB}/VUA_formatted_val.csv",
    "test": f"{VERB}/VUA_formatted_test.csv",
    "train_noval": f"{VERB}/VUA_formatted_train_noVAL.csv",
    "all": f"{VERB}/VUA_formatted.csv",
}
M4X_FILES = {s: f"{M4X}/vua_{s}.tsv" for s in ("train", "dev", "test")}
WSD_FILES = {s: f"{WSD}/{s}.tsv" for s in ("train", "test")}
ETS_SENTENCES = {s: f"{ETS}/vuamc_corpus_{s}.csv" for s in ("train", "test")}
ETS_LABELS = {
    ("verb", "train"): f"{ETS}/verb_tokens.csv",
    ("verb", "test"): f"{ETS}/verb_tokens_test_gold_labels.csv",
    ("allpos", "test"): f"{ETS}/all_pos_tokens_test_gold_labels.csv",
}
ETS_EXTRA = {
    "verb_test_2018": f"{ETS}/verb_tokens_test_labels.csv",
    "verb_test_ids": f"{ETS}/verb_tokens_test.csv",
    "deepmet_allpos": f"{ETS}/VUA_allpos_test.csv",
    "deepmet_verb": f"{ETS}/VUA_verb_test.csv",
}

_QUOTED = re.compile(r"'([^']*)'")


def _rows(ctx, relpath: str, **kwargs):
    return read_table(ctx.path(relpath), encoding=ctx.encoding(relpath), **kwargs)


# ------------------------------------------------------------------------------------------------ vua18


def load_vua18(ctx, split: str):
    from ..items import TaggedSentence  # noqa: PLC0415

    if split not in SEQ_FILES:
        raise bad_split("vua18", split, SEQ_FILES)
    relpath = SEQ_FILES[split]
    items = []
    for line, row in _rows(ctx, relpath):
        where = f"{relpath}:{line}"
        words = tuple(row["sentence"].split())
        try:
            labels = json.loads(row["label_seq"])
        except json.JSONDecodeError:
            raise DataError(f"{where}: label_seq is not a list: {row['label_seq'][:80]!r}") from None
        pos = tuple(_QUOTED.findall(row["pos_seq"]))
        if not len(words) == len(labels) == len(pos):
            raise DataError(f"{where}: {len(words)} words, {len(labels)} labels and {len(pos)} POS tags")
        tags = tuple(MET_TAG if label == 1 else LIT_TAG for label in labels)
        items.append(
            TaggedSentence(
                id=f"{row['txt_id']}_{row['sen_ix']}",
                words=words,
                tags=tags,
                source="vua18",
                meta={"pos": pos, "genre": row["genre"], "split": split, "line": line},
            )
        )
    check_unique_ids(items, f"vua18 {split}")
    return items


VUA18_EXPECTED = {
    # SOURCE.md = the MelBERT README's VUA-18 table: sentences, tokens, metaphor tokens; genres.
    "train": ((6323, 116622, 13051), {"academic": 1458, "conversation": 2085, "fiction": 1697, "news": 1083}),
    "dev": ((1550, 38628, 4487), {"academic": 439, "conversation": 378, "fiction": 411, "news": 322}),
    "test": ((2694, 50175, 6243), {"academic": 459, "conversation": 1023, "fiction": 729, "news": 483}),
}


def verify_vua18(ctx):
    out = []
    for split, (expected, genres) in VUA18_EXPECTED.items():
        items = ctx.load(split)
        out.append(result(f"{split} (sentences, tokens, metaphor tokens)", expected, tagging_stats(items)))
        out.append(result(f"{split} sentences per genre", genres, dict(sorted(Counter(i.meta["genre"] for i in items).items()))))
    return out


# --------------------------------------------------------------------------------------------- vua_verb


def load_vua_verb(ctx, split: str):
    """Gao et al.'s VUA-Verb CSVs (their verb format), grouped by sentence (``<text_idx>_<sentence_idx>``)."""
    if split not in VERB_FILES:
        raise bad_split("vua_verb", split, VERB_FILES)
    return gao_verb_items(ctx, VERB_FILES[split], source="vua_verb", meta={"split": split},
                          extra={"txt_id": "text_idx", "sentence_id": "sentence_idx"},
                          group=lambda row: f"{row['text_idx']}_{row['sentence_idx']}")


VERB_EXPECTED = {  # SOURCE.md: rows, metaphorical rows
    "train": (15516, 4329), "dev": (1724, 464), "test": (5873, 1761),
}


def verify_vua_verb(ctx):
    out = []
    for split, expected in VERB_EXPECTED.items():
        items = ctx.load(split)
        out.append(result(f"{split} (targets, metaphorical)", expected, (len(items), sum(i.label == MET for i in items))))
    out.append(result("train_noval rows", 12541, len(ctx.load("train_noval"))))
    everything = ctx.load("all")
    out.append(result("all rows (Boisson Table 1 VUAC_ST1 total)", 23113, len(everything)))
    out.append(result("Boisson Table 1 VUAC_ST1 %met (rounded)", 28, round(100 * sum(i.label == MET for i in everything) / len(everything))))
    out.append(result("train + dev = ETS verb train (17,240)", 17240, len(ctx.load("train")) + len(ctx.load("dev"))))
    return out


# ----------------------------------------------------------------------------------------- vua_verb_wsd


def load_vua_verb_wsd(ctx, split: str):
    if split not in WSD_FILES:
        raise bad_split("vua_verb_wsd", split, WSD_FILES)
    relpath = WSD_FILES[split]
    name = stem(relpath)
    items = [target_row_item(row, f"{relpath}:{line}", id=f"vua_verb_wsd_{name}:{index}", index_column="v_index",
                             lemma=row["target"], pos=row["pos"], group=row["index"].replace(" ", "_"),
                             source="vua_verb_wsd", meta={"word_sense": row["word_sense"], "definition": row["definition"],
                                                          "split": split, "line": line})
             for index, (line, row) in enumerate(_rows(ctx, relpath, delimiter="\t", quotechar=None))]
    check_unique_ids(items, f"vua_verb_wsd {split}")
    return items


def verify_vua_verb_wsd(ctx):
    out = []
    for split, expected in (("train", (15516, 4329)), ("test", (5873, 1761))):
        items = ctx.load(split)
        out.append(result(f"{split} (targets, metaphorical)", expected, (len(items), sum(i.label == MET for i in items))))
    return out


# ------------------------------------------------------------------------------------------------ vua20


def load_vua20(ctx, split: str):
    if split not in M4X_FILES:
        raise bad_split("vua20", split, M4X_FILES)
    items = conll_items(ctx, M4X_FILES[split], source="vua20", meta={"split": split})
    check_unique_ids(items, f"vua20 {split}")
    return items


VUA20_EXPECTED = {"train": (9632, 144564, 8668), "dev": (2409, 36669, 2372), "test": (4066, 58329, 3982)}


def verify_vua20(ctx):
    out = [result(f"{split} (sentences, tokens, metaphor tokens)", expected, tagging_stats(ctx.load(split)))
           for split, expected in VUA20_EXPECTED.items()]
    total = sum(len(ctx.load(s)) for s in M4X_FILES)
    out.append(noted("Meta4XNLI Table 1: VUAM sentences", 16202, total,
                     "Table 1 counts the 12,122 + 4,080 sentences of the ETS VUAMC files (see "
                     "vua_shared_task_sequence, which reproduces 16,202); Meta4XNLI's CoNLL release has "
                     "9,632 + 2,409 + 4,066 = 16,107 sentences"))
    out.append(result("test metaphor tokens = VUA-20 test metaphorical targets (3,982)", 3982,
                      tagging_stats(ctx.load("test"))[2]))
    return out


# ------------------------------------------------------------------------------------ vua20_test_melbert


def _ets_id(index_field: str, offset: int, where: str) -> str:
    parts = index_field.split()
    if len(parts) != 2:
        raise DataError(f"{where}: index {index_field!r} is not '<txt_id> <sentence_id>'")
    return f"{parts[0]}_{parts[1]}_{offset}"


def load_vua20_test_melbert(ctx, split: str):
    from ..items import TextItem  # noqa: PLC0415

    if split != "test":
        raise bad_split("vua20_test_melbert", split, ("test",))
    items = []
    for line, row in _rows(ctx, MELBERT_TEST, delimiter="\t", header="space", quotechar=None):
        where = f"{MELBERT_TEST}:{line}"
        target = to_int(row["w_index"], where, "w_index")
        text = row["sentence"]
        items.append(
            TextItem(
                id=_ets_id(row["index"], target + 1, where),
                text=text,
                label=binary_label(row["label"], where),
                spans=(target_span(text, target, where),),
                target_index=target,
                pos=row["POS"],
                group=row["index"].replace(" ", "_"),
                source="vua20_test_melbert",
                meta={"fgpos": row["FGPOS"], "line": line},
            )
        )
    check_unique_ids(items, "vua20_test_melbert test")
    return items


def verify_vua20_test_melbert(ctx):
    items = ctx.load("test")
    out = [
        result("test (targets, metaphorical, sentences)", (22196, 3982, 3698),
               (len(items), sum(i.label == MET for i in items), len({i.group for i in items}))),
    ]
    gold = {}
    for line, row in _rows(ctx, ETS_LABELS["allpos", "test"]):
        gold[row["id"]] = MET if row["label"].strip() == "1" else LIT
    out.append(result("targets and labels equal the ETS 2020 all-POS test gold", True,
                      {i.id: i.label for i in items} == gold))
    return out


# ------------------------------------------------------------------------------------- ETS shared task


def _ets_sentences(ctx, split: str) -> dict[tuple[str, str], tuple[tuple[str, ...], tuple[bool, ...], int]]:
    relpath = ETS_SENTENCES[split]
    out = {}
    for line, row in _rows(ctx, relpath):
        raw = row["sentence_txt"].split()
        marked = tuple(w.startswith("M_") for w in raw)
        words = tuple(w[2:] if m else w for w, m in zip(raw, marked))
        key = (row["txt_id"], row["sentence_id"])
        if key in out:
            raise DataError(f"{relpath}:{line}: sentence {key} appears twice")
        out[key] = (words, marked, line)
    return out


def load_shared_task(ctx, split: str, track: str = "verb"):
    from ..items import TextItem  # noqa: PLC0415

    if track == "allwords":
        return _every_word(ctx, split)
    key = (track, split)
    if key not in ETS_LABELS:
        raise bad_split(
            "vua_shared_task", split, ("train", "test"),
            "the all-POS train token list (all_pos_tokens.csv, 72,611 ids) is not in the mirror; use "
            "track=allwords (MelBERT's VUA-20 training targets), or track=verb" if key == ("allpos", "train") else "",
        )
    sentences = _ets_sentences(ctx, split)
    relpath = ETS_LABELS[key]
    header = True if split == "test" else ["id", "label"]
    items, texts, source = [], _Texts(), f"vua_shared_task_{track}"
    for line, row in _rows(ctx, relpath, header=header):
        where = f"{relpath}:{line}"
        txt_id, sentence_id, offset = _split_token_id(row["id"], where)
        found = sentences.get((txt_id, sentence_id))
        if found is None:
            raise DataError(f"{where}: token {row['id']} names a sentence absent from {ETS_SENTENCES[split]}")
        words, marked, _ = found
        if not 1 <= offset <= len(words):
            raise DataError(f"{where}: token offset {offset} outside the sentence's {len(words)} words")
        items.append(_target_item(TextItem, texts.of((txt_id, sentence_id), words), marked, offset,
                                  label=binary_label(row["label"], where), source=source, split=split, line=line))
    check_unique_ids(items, f"vua_shared_task {track}/{split}")
    return items


class _Texts:
    """Each sentence's text, token spans and group name, made once: a sentence is the context of every one of
    its targets (all of its words under ``track=allwords``, 157k targets), and re-tokenising it per target was
    most of the load. Its targets share these objects, so the parsed-item cache stores each once (pickle writes
    an object once however often it is referred to): the allwords train slice pickles to 17.4 MB, 23.8 MB
    with a group and a source string per target."""

    def __init__(self):
        self._made: dict[tuple, tuple[str, list[tuple[int, int]], str]] = {}

    def of(self, sentence: tuple, words: list[str]) -> tuple[str, list[tuple[int, int]], str]:
        if sentence not in self._made:
            text = " ".join(words)
            self._made[sentence] = (text, token_spans(text), f"{sentence[0]}_{sentence[1]}")
        return self._made[sentence]


def _target_item(cls, made: tuple[str, list[tuple[int, int]], str], marked, offset: int, *, label: str,
                 source: str, split: str, line: int):
    """One target token as a TextItem; ids are the ETS token ids '<txt>_<sentence>_<1-based offset>'."""
    text, spans, group = made
    return cls(
        id=f"{group}_{offset}",
        text=text,
        label=label,
        spans=(spans[offset - 1],),
        target_index=offset - 1,
        group=group,
        source=source,
        meta={"m_marker": marked[offset - 1], "split": split, "line": line},
    )


_WORD = re.compile(r"\w")
#: Quotation marks (and one multiplication sign) the ETS train file carries mis-encoded: the UTF-8 bytes E2 80 xx
#: of a General Punctuation character (U+2000-U+203F: no letter or digit, whatever the third byte) written as
#: the cp1252 letters 'äó' + one character. The other releases of the same VUAMC sentences (Gao et al.'s VUA-18
#: and VUA-Verb files) have no token there. 'äóÖ' = ‘ (1,232 train tokens), 'äó»' = ’ (1,199), 'äóî' = “ (309),
#: 'äó_' = a closing mark whose third byte was lost (85), 'äóñ' = – (inside 12 tokens such as '1980äóñ1'),
#: 'í„' = × (1: '1.6 í„ 10 -19 C'). The test file has none.
_PUNCT_MOJIBAKE = re.compile("äó[Ö»î_ñ]|í„")


def is_word(token: str) -> bool:
    """Whether an ETS token is a word (an ``allwords`` target): a letter or digit once its mis-encoded
    punctuation is read as punctuation."""
    return bool(_WORD.search(_PUNCT_MOJIBAKE.sub("", token)))


def _every_word(ctx, split: str):
    """Every word of the shared task's sentences as a target, labelled by its ``M_`` marker: MelBERT's VUA-20
    training set. The ETS all-POS train id list (72,611 content-word targets) is not public any more; MelBERT
    trained on every token of the 12,109 non-empty training sentences (its README: 160,154 tokens), which the
    marker labels. Punctuation is not a target: a token without a letter or digit, or whose only letters are a
    mis-encoded quotation mark (``_PUNCT_MOJIBAKE``: 2,826 train tokens, none M_-marked). Train 157,481 targets
    (160,307 before the mis-encoded marks were excluded), test 50,731; MelBERT's count is 2,673 above, and its
    token filter is unpublished."""
    from ..items import TextItem  # noqa: PLC0415

    if split not in ETS_SENTENCES:
        raise bad_split("vua_shared_task", split, ETS_SENTENCES)
    texts = _Texts()
    items = [
        _target_item(TextItem, texts.of(sentence, words), marked, offset, label=MET if marked[offset - 1] else LIT,
                     source="vua_shared_task_allwords", split=split, line=line)
        for sentence, (words, marked, line) in _ets_sentences(ctx, split).items()
        for offset in range(1, len(words) + 1)
        if is_word(words[offset - 1])
    ]
    check_unique_ids(items, f"vua_shared_task allwords/{split}")
    return items


_ASCII_WORD = re.compile("[A-Za-z0-9]")


def _mojibake_tokens(ctx, split: str) -> tuple[int, int]:
    """(tokens, M_-marked ones) of a split that only the mis-encoded punctuation rule keeps from being targets."""
    found = [m for words, marked, _ in _ets_sentences(ctx, split).values() for w, m in zip(words, marked)
             if _WORD.search(w) and not is_word(w)]
    return len(found), sum(found)


def _split_token_id(token_id: str, where: str) -> tuple[str, str, int]:
    parts = token_id.rsplit("_", 2)
    if len(parts) != 3 or not parts[2].isdigit():
        raise DataError(f"{where}: token id {token_id!r} is not '<txt_id>_<sentence_id>_<offset>'")
    return parts[0], parts[1], int(parts[2])


def verify_shared_task(ctx):
    out = []
    for (track, split), expected in {
        ("verb", "train"): (17240, None),
        ("verb", "test"): (5873, 1761),
        ("allpos", "test"): (22196, 3982),
    }.items():
        items = ctx.load(split, track=track)
        met = sum(i.label == MET for i in items)
        out.append(result(f"{track}/{split} targets", expected[0], len(items)))
        if expected[1] is not None:
            out.append(result(f"{track}/{split} metaphorical targets", expected[1], met))
        out.append(result(f"{track}/{split}: label 1 exactly on M_-marked tokens", 0,
                          sum((i.label == MET) != i.meta["m_marker"] for i in items)))
    out.append(result("Boisson Table 1 VUAC_ST2 test", 22196, len(ctx.load("test", track="allpos"))))
    every = ctx.load("train", track="allwords")
    out.append(result("train: non-empty sentences (MelBERT README: VUA-20 train sentences)", 12109,
                      sum(1 for words, _, _ in _ets_sentences(ctx, "train").values() if words)))
    out.append(noted("MelBERT README: VUA-20 train targets", 160154, len(every),
                     "allwords: every token with a letter or digit (in 12,093 sentences; 16 hold punctuation only), "
                     "less 2,826 mis-encoded quotation marks ('äóÖ', 'äó»', ...; 160,307 with them); MelBERT's "
                     "exact token filter is unpublished"))
    out.append(result("allwords train: mis-encoded punctuation tokens left out (none M_-marked)", (2826, 0),
                      _mojibake_tokens(ctx, "train")))
    out.append(result("allwords train (targets, metaphorical)", (157481, 19168),
                      (len(every), sum(i.label == MET for i in every))))
    out.append(result("allwords: every target has an ASCII letter or digit", 0,
                      sum(not _ASCII_WORD.search(i.text[slice(*i.spans[0])]) for i in every)))
    out.append(noted("Boisson Table 1 VUAC_ST2 train", 72611, None,
                     "the ETS all-POS train token list is not in the mirror (not found in any stored repository)"))
    gold_2020 = [(i.id, i.label) for i in ctx.load("test", track="verb")]
    legacy = [(row["id"], MET if row["label"] == "1" else LIT)
              for _, row in _rows(ctx, ETS_EXTRA["verb_test_2018"], header=["id", "label"])]
    out.append(result("2018 verb test labels (corpora/VUA) equal the 2020 gold file", True, legacy == gold_2020))
    ids = [row["id"] for _, row in _rows(ctx, ETS_EXTRA["verb_test_ids"], header=["id"])]
    out.append(result("verb_tokens_test.csv lists the gold ids in order", True, ids == [i for i, _ in gold_2020]))
    for track, key in (("allpos", "deepmet_allpos"), ("verb", "deepmet_verb")):
        items = {i.id: i for i in ctx.load("test", track=track)}
        agree = 0
        rows = 0
        for _, row in _rows(ctx, ETS_EXTRA[key]):
            rows += 1
            item = items.get(row["id"])
            if item is not None and item.text[slice(*item.spans[0])] == row["word"] and (
                (row["label"] == "1") == (item.label == MET)
            ):
                agree += 1
        out.append(result(f"DeepMet's joined {track} test file agrees (word and label) on every row", rows, agree))
    return out


def load_shared_task_sequence(ctx, split: str):
    from ..items import TaggedSentence  # noqa: PLC0415

    if split not in ETS_SENTENCES:
        raise bad_split("vua_shared_task_sequence", split, ETS_SENTENCES)
    items = [
        TaggedSentence(
            id=f"{txt_id}_{sentence_id}",
            words=words,
            tags=tuple(MET_TAG if m else LIT_TAG for m in marked),
            source="vua_shared_task",
            meta={"split": split, "line": line},
        )
        for (txt_id, sentence_id), (words, marked, line) in _ets_sentences(ctx, split).items()
    ]
    check_unique_ids(items, f"vua_shared_task_sequence {split}")
    return items


def verify_shared_task_sequence(ctx):
    out = [
        result("train (sentences, tokens, M_ tokens)", (12122, 181488, 19168), tagging_stats(ctx.load("train"))),
        result("test (sentences, tokens, M_ tokens)", (4080, 58359, 6815), tagging_stats(ctx.load("test"))),
        result("Meta4XNLI Table 1: VUAM sentences", 16202, len(ctx.load("train")) + len(ctx.load("test"))),
    ]
    return out


# ------------------------------------------------------------------------------------------------ specs


def specs():
    return [
        DatasetSpec(
            name="vua18",
            files=files("vua", *SEQ_FILES.values()),
            loader="metabench.data.datasets.vua:load_vua18",
            splits=tuple(SEQ_FILES),
            licence=LICENCE + " gao-g/metaphor-in-context has no LICENSE file.",
            citation=CITE_GAO,
            description=(
                "VUA-18 sequence labelling (Gao et al. 2018, MelBERT's VUA-18): every whitespace token tagged "
                "B-METAPHOR/O, UPOS in meta['pos'], genre in meta['genre']. train/dev/test = 6,323/1,550/2,694 "
                "sentences."
            ),
            counts={"items": {"train": 6323, "dev": 1550, "test": 2694},
                    "verify": "metabench.data.datasets.vua:verify_vua18"},
        ),
        DatasetSpec(
            name="vua_verb",
            files=files("vua", *VERB_FILES.values()),
            loader="metabench.data.datasets.vua:load_vua_verb",
            splits=tuple(VERB_FILES),
            licence=LICENCE + " gao-g/metaphor-in-context has no LICENSE file.",
            citation=CITE_GAO,
            description=(
                "VUA-Verb classification (Gao et al. 2018; MelBERT's VUA-Verb): one item per target verb, "
                "label metaphor/literal, target_index = 0-based whitespace token, lemma = verb. train/dev/test "
                "= 15,516/1,724/5,873; train_noval (12,541) and all (23,113) are the release's other files."
            ),
            counts={"items": {"train": 15516, "dev": 1724, "test": 5873},
                    "verify": "metabench.data.datasets.vua:verify_vua_verb"},
        ),
        DatasetSpec(
            name="vua_verb_wsd",
            files=files("vua", *WSD_FILES.values()),
            loader="metabench.data.datasets.vua:load_vua_verb_wsd",
            splits=tuple(WSD_FILES),
            licence=LICENCE + " tharunikal/capstone-kpriet has no LICENSE file.",
            citation="ContrastWSD-style WSD-augmented VUA-Verb (via tharunikal/capstone-kpriet). " + CITE_MELBERT,
            description=(
                "VUA-Verb in MelBERT format with the target's WordNet sense and dictionary definition in "
                "meta (word_sense, definition). train 15,516 / test 5,873; no dev file (use vua_verb dev). "
                "Provenance is a student repository."
            ),
            counts={"items": {"train": 15516, "test": 5873},
                    "verify": "metabench.data.datasets.vua:verify_vua_verb_wsd"},
        ),
        DatasetSpec(
            name="vua20",
            files=files("vua", *M4X_FILES.values()),
            loader="metabench.data.datasets.vua:load_vua20",
            splits=tuple(M4X_FILES),
            licence=LICENCE + " Released in elisanchez-beep/meta4xnli (Apache-2.0 repository licence).",
            citation=CITE_ETS + " Split as released by Sanchez-Bayona & Agerri (Meta4XNLI).",
            description=(
                "VUA-20 (2020 shared task, all POS) in CoNLL format as used by Meta4XNLI (B-METAPHOR/O). "
                "train/dev/test = 9,632/2,409/4,066 sentences."
            ),
            counts={"items": {"train": 9632, "dev": 2409, "test": 4066},
                    "verify": "metabench.data.datasets.vua:verify_vua20"},
        ),
        DatasetSpec(
            name="vua20_test_melbert",
            files=files("vua", MELBERT_TEST, ETS_LABELS["allpos", "test"]),
            loader="metabench.data.datasets.vua:load_vua20_test_melbert",
            splits=("test",),
            licence=LICENCE + " Pruthvik-Reddy/conceptnet_injected_adapter has no LICENSE file.",
            citation=CITE_MELBERT,
            description=(
                "VUA-20 test in MelBERT format: one item per target token (22,196; 3,982 metaphorical), "
                "ids = ETS token ids '<txt>_<sentence>_<1-based offset>'. The MelBERT-format train set is "
                "not in the mirror."
            ),
            counts={"items": {"test": 22196}, "verify": "metabench.data.datasets.vua:verify_vua20_test_melbert"},
        ),
        DatasetSpec(
            name="vua_shared_task",
            files=files("vua", *ETS_SENTENCES.values(), *ETS_LABELS.values(), *ETS_EXTRA.values()),
            loader="metabench.data.datasets.vua:load_shared_task",
            splits=("train", "test"),
            args={"track": ("verb", "allpos", "allwords")},
            licence=LICENCE + " YU-NLPLab/DeepMet has no LICENSE file.",
            citation=CITE_ETS,
            description=(
                "Official ETS VUA shared-task (FigLang 2018/2020) targets joined with the VUAMC sentences: "
                "one item per target token, ids = ETS token ids. track=verb: train 17,240 / test 5,873; "
                "track=allpos: test 22,196 (the all-POS train list is not in the mirror). track=allwords: every "
                "word of the sentences labelled by its M_ marker, punctuation (2,826 mis-encoded quotation marks "
                "included) left out (train 157,481: MelBERT's VUA-20 training targets). The 2018 and 2020 test "
                "gold labels are identical for verbs; the all-POS gold is the 2020 release."
            ),
            counts={"items": {"train:track=verb": 17240, "test:track=verb": 5873, "test:track=allpos": 22196,
                              "train:track=allwords": 157481},
                    "verify": "metabench.data.datasets.vua:verify_shared_task"},
        ),
        DatasetSpec(
            name="vua_shared_task_sequence",
            files=files("vua", *ETS_SENTENCES.values()),
            loader="metabench.data.datasets.vua:load_shared_task_sequence",
            splits=("train", "test"),
            licence=LICENCE + " YU-NLPLab/DeepMet has no LICENSE file.",
            citation=CITE_ETS,
            description=(
                "The ETS shared-task VUAMC sentences (train 12,122 / test 4,080) with every M_-marked token "
                "tagged B-METAPHOR (all tokens, not only the shared task's targets)."
            ),
            counts={"items": {"train": 12122, "test": 4080},
                    "verify": "metabench.data.datasets.vua:verify_shared_task_sequence"},
        ),
    ]
