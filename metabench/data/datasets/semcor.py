"""Word-sense data: SemCor 3.0 (NAF), Princeton WordNet 3.0 and the Raganato et al. (2017) WSD evaluation sets.

- ``semcor``: SemCor 3.0 mapped to WordNet 3.0 (Mihalcea), all 352 Brown documents, one SenseTaggedSentence per
  sentence. A word's sense key is ``<term lemma>%<lexical_key>``; ``keys=wordnet`` (default) keeps only keys
  that resolve in WordNet 3.0 (the term has a synset reference: 224,716 of 234,136), ``keys=all`` keeps the
  SemCor-3.0 quirks too (``n't%4:02:00::``, ``(a)`` satellite markers...). ``part`` = brown1 / brown2 (all
  open-class words tagged) / brownv (verbs only) / all; ``doc`` = one document name (e.g. ``br-a01``) or
  None. Split ``train``. meta: doc, part, para, synsets per word (``eng30-<offset>-<pos>`` or '').
  Multiword units are single words joined by ``_`` as in SemCor.
- ``wordnet``: one WordNetSense per sense key of ``index.sense`` (206,941) with synset, sense number, SemCor
  tag count, gloss and lexicographer file; ``pos`` n / v / a (incl. satellites) / r / all. Split ``all``.
- ``raganato_wsd``: the unified all-words evaluation sets, one SenseTaggedSentence per sentence with the gold
  keys (several for 340 ALL instances) on instance words. ``set`` = senseval2 / senseval3 / semeval2007 /
  semeval2013 / semeval2015 / ALL. Split ``test``.

The Raganato-format SemCor training files are not in the mirror (see semcor/SOURCE.md).
"""

from __future__ import annotations

import gzip
from xml.etree import ElementTree

from ...errors import DataError
from ..readers import open_text, read_table
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result

PARTS = ("brown1", "brown2", "brownv")
NAF_DIR = "semcor/semcor3.0_naf"
RAGANATO = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "ALL")
WN = "wordnet/dict"
INDEX_SENSE = f"{WN}/index.sense"
DATA_FILES = {"n": f"{WN}/data.noun", "v": f"{WN}/data.verb", "a": f"{WN}/data.adj", "r": f"{WN}/data.adv"}
LEXNAMES = f"{WN}/lexnames"
_SS_TYPE = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}  # sense-key ss_type -> data file (5 = satellite)

WN_LICENCE = (
    "Princeton WordNet 3.0 licence: free use, copy, modification and distribution provided the copyright "
    "notice ('WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.') and disclaimer "
    "appear on all copies"
)
CITE_WN = "Christiane Fellbaum (ed.). WordNet: An Electronic Lexical Database. MIT Press, 1998. WordNet 3.0, 2006."
CITE_SEMCOR = (
    "George A. Miller, Claudia Leacock, Randee Tengi and Ross T. Bunker. A Semantic Concordance. HLT 1993; "
    "SemCor 3.0 mapping to WordNet 3.0 by Rada Mihalcea; NAF conversion by Ruben Izquierdo and Marten Postma "
    "(rubenIzquierdo/wsd_corpora)."
)
CITE_RAGANATO = (
    "Alessandro Raganato, Jose Camacho-Collados and Roberto Navigli. Word Sense Disambiguation: A Unified "
    "Evaluation Framework and Empirical Comparison. EACL 2017."
)


# ------------------------------------------------------------------------------------------------ SemCor


def _naf_relpath(manifest_path: str) -> tuple[str, str]:
    """(part, doc) of 'semcor/semcor3.0_naf/<part>/<doc>.naf.gz'."""
    part, name = manifest_path.split("/")[-2:]
    return part, name.removesuffix(".naf.gz")


def parse_naf(path, where: str) -> list[dict]:
    """Sentences of one NAF document: dicts with sent, para, words, lemmas, pos, keys, synsets (per word)."""
    try:
        with gzip.open(path, "rb") as handle:
            root = ElementTree.fromstring(handle.read())
    except (ElementTree.ParseError, OSError) as exc:
        raise DataError(f"{where}: unreadable NAF ({exc})") from None
    text, terms = root.find("text"), root.find("terms")
    if text is None or terms is None:
        raise DataError(f"{where}: NAF without <text> or <terms>")
    by_wf: dict[str, tuple[str, str, str, str]] = {}
    for term in terms:
        targets = [t.get("id") for t in term.iter("target")]
        key = synset = ""
        refs = term.find("externalReferences")
        if refs is not None:
            for ref in refs:
                kind = ref.get("reftype")
                if kind == "lexical_key":
                    key = f"{term.get('lemma')}%{ref.get('reference')}"
                elif kind == "synset":
                    synset = ref.get("reference", "")
        if len(targets) != 1:
            raise DataError(f"{where}: term {term.get('id')} spans {len(targets)} words, expected 1")
        by_wf[targets[0]] = (term.get("lemma", ""), term.get("pos", ""), key, synset)
    sentences: dict[str, dict] = {}
    for wf in text:
        sent = wf.get("sent")
        record = sentences.get(sent)
        if record is None:
            record = sentences[sent] = {"sent": sent, "para": wf.get("para"), "words": [], "lemmas": [], "pos": [],
                                        "keys": [], "synsets": []}
        lemma, pos, key, synset = by_wf.get(wf.get("id"), ("", "", "", ""))
        record["words"].append(wf.text or "")
        record["lemmas"].append(lemma)
        record["pos"].append(pos)
        record["keys"].append(key)
        record["synsets"].append(synset)
    return list(sentences.values())


def _semcor_docs(ctx, part: str, doc):
    for declared in ctx.spec.files:
        if not declared.path.startswith(NAF_DIR + "/"):
            continue
        this_part, name = _naf_relpath(declared.path)
        if part not in ("all", this_part) or doc not in (None, name):
            continue
        yield this_part, name, declared.path


def load_semcor(ctx, split: str, part: str = "all", keys: str = "wordnet", doc=None):
    from ..items import SenseTaggedSentence  # noqa: PLC0415

    if split != "train":
        raise bad_split("semcor", split, ("train",))
    items = []
    found = False
    for this_part, name, relpath in _semcor_docs(ctx, part, doc):
        found = True
        for record in parse_naf(ctx.path(relpath), relpath):
            senses = tuple(
                (key,) if key and (synset or keys == "all") else ()
                for key, synset in zip(record["keys"], record["synsets"])
            )
            items.append(
                SenseTaggedSentence(
                    id=f"{this_part}/{name}:{record['sent']}",
                    words=tuple(record["words"]),
                    lemmas=tuple(record["lemmas"]),
                    pos=tuple(record["pos"]),
                    senses=senses,
                    source="semcor",
                    meta={"doc": name, "part": this_part, "para": record["para"],
                          "synsets": tuple(record["synsets"])},
                )
            )
    if doc is not None and not found:
        raise DataError(f"semcor has no document '{doc}' in part '{part}'", hint="documents are named like br-a01")
    check_unique_ids(items, f"semcor {part}")
    return items


def _index_sense(ctx) -> dict[str, tuple[str, str, str]]:
    """sense key -> (synset offset, sense number, tag count)."""
    out = {}
    with open_text(ctx.path(INDEX_SENSE), encoding=ctx.encoding(INDEX_SENSE)) as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 4:
                raise DataError(f"{INDEX_SENSE}:{number}: expected 'key offset sense_number tag_count'")
            out[fields[0]] = (fields[1], fields[2], fields[3])
    return out


# SOURCE.md: docs, sentences, words, annotations, annotations whose key resolves in WordNet 3.0.
SEMCOR_EXPECTED = {
    "brown1": (103, 11182, 229358, 106639, 102396),
    "brown2": (83, 8956, 184930, 86000, 81590),
    "brownv": (166, 17038, 364299, 41497, 40730),
}


def verify_semcor(ctx, parts: tuple[str, ...] = PARTS):
    """One streaming pass over the documents of ``parts`` (the parse is the loader's own ``parse_naf``).

    ``metabench data verify`` checks all 352 documents (about 7 s of XML parsing); the mirror test checks one
    part to stay fast.
    """
    index = _index_sense(ctx)
    per_part = {p: [0, 0, 0, 0, 0] for p in parts}
    in_index = [0, 0]  # resolved keys found in index.sense; unresolved keys absent from it
    for part, name, relpath in _semcor_docs(ctx, "all", None):
        if part not in per_part:
            continue
        stats = per_part[part]
        stats[0] += 1
        for record in parse_naf(ctx.path(relpath), relpath):
            stats[1] += 1
            stats[2] += len(record["words"])
            for key, synset in zip(record["keys"], record["synsets"]):
                if key:
                    stats[3] += 1
                    stats[4] += bool(synset)
                    in_index[0] += bool(synset) and key in index
                    in_index[1] += not synset and key not in index
    out = [result(f"{part} (docs, sentences, words, sense keys, keys resolving in WN 3.0)", SEMCOR_EXPECTED[part],
                  tuple(per_part[part])) for part in parts]
    resolved = sum(SEMCOR_EXPECTED[p][4] for p in parts)
    unresolved = sum(SEMCOR_EXPECTED[p][3] - SEMCOR_EXPECTED[p][4] for p in parts)
    out.append(result(f"{'+'.join(parts)}: keys with a NAF synset are in index.sense; keys without one are not",
                      (resolved, unresolved), tuple(in_index)))
    if set(parts) == set(PARTS):
        totals = tuple(sum(per_part[p][i] for p in PARTS) for i in range(5))
        out.append(result("total (docs, sentences, words, sense keys, resolving)",
                          (352, 37176, 778587, 234136, 224716), totals))
        out.append(result("Raganato SemCor sentences", 37176, totals[1]))
    return out


# ------------------------------------------------------------------------------------------------ WordNet


def _lexnames(ctx) -> dict[str, str]:
    rows = read_table(ctx.path(LEXNAMES), encoding=ctx.encoding(LEXNAMES), delimiter="\t",
                      header=["number", "name", "pos"], quotechar=None)
    return {row["number"]: row["name"].strip() for _, row in rows}


def _synsets(ctx, pos: str) -> dict[str, tuple[str, str]]:
    """offset -> (lex_filenum, gloss) of one data.<pos> file (the 29-line licence header is skipped)."""
    relpath = DATA_FILES[pos]
    out = {}
    with open_text(ctx.path(relpath), encoding=ctx.encoding(relpath)) as handle:
        for number, line in enumerate(handle, start=1):
            if line.startswith("  ") or not line.strip():
                continue
            head, sep, gloss = line.partition(" | ")
            fields = head.split(" ", 2)
            if len(fields) < 3:
                raise DataError(f"{relpath}:{number}: not a WordNet data line")
            out[fields[0]] = (fields[1], gloss.strip() if sep else "")
    return out


def load_wordnet(ctx, split: str, pos: str = "all"):
    from ..items import WordNetSense  # noqa: PLC0415

    if split != "all":
        raise bad_split("wordnet", split, ("all",))
    lexnames = _lexnames(ctx)
    wanted = tuple(DATA_FILES) if pos == "all" else (pos,)
    synsets = {p: _synsets(ctx, p) for p in wanted}
    items = []
    for key, (offset, sense_number, tag_count) in _index_sense(ctx).items():
        lemma, _, lex_sense = key.partition("%")
        ss_type = lex_sense[:1]
        file_pos = _SS_TYPE.get(ss_type)
        if file_pos is None:
            raise DataError(f"{INDEX_SENSE}: sense key {key!r} has no valid ss_type")
        if file_pos not in synsets:
            continue
        found = synsets[file_pos].get(offset)
        if found is None:
            raise DataError(f"{INDEX_SENSE}: {key} points at synset {offset}, absent from {DATA_FILES[file_pos]}")
        lex_file, gloss = found
        items.append(
            WordNetSense(
                id=key,
                lemma=lemma,
                pos=file_pos,
                synset=f"{offset}-{file_pos}",
                sense_number=int(sense_number),
                tag_count=int(tag_count),
                gloss=gloss,
                lexname=lexnames.get(lex_file, ""),
                meta={"satellite": ss_type == "5"},
            )
        )
    return items


def verify_wordnet(ctx):
    senses = ctx.load("all")
    synsets = {p: len(_synsets(ctx, p)) for p in DATA_FILES}
    return [
        result("sense keys in index.sense", 206941, len(senses)),
        result("synsets per data file (noun, verb, adj, adv)", (82115, 13767, 18156, 3621),
               tuple(synsets[p] for p in DATA_FILES)),
        result("synsets reached from index.sense", 117659, len({s.synset for s in senses})),
        result("dog%1:05:00:: is synset 02084071-n, tag count 42", ("02084071-n", 42),
               next(((s.synset, s.tag_count) for s in senses if s.id == "dog%1:05:00::"), None)),
    ]


# ----------------------------------------------------------------------------------------------- Raganato


def _raganato_files(name: str) -> tuple[str, str]:
    return f"semcor/raganato_eval/{name}/{name}.data.xml", f"semcor/raganato_eval/{name}/{name}.gold.key.txt"


def load_raganato(ctx, split: str, set: str = "ALL"):  # noqa: A002 - the argument's public name
    from ..items import SenseTaggedSentence  # noqa: PLC0415

    if split != "test":
        raise bad_split("raganato_wsd", split, ("test",))
    data, gold_file = _raganato_files(set)
    gold: dict[str, tuple[str, ...]] = {}
    with open_text(ctx.path(gold_file), encoding=ctx.encoding(gold_file)) as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 2 or fields[0] in gold:
                raise DataError(f"{gold_file}:{number}: expected '<instance id> <key> [<key> ...]' once per instance")
            gold[fields[0]] = tuple(fields[1:])
    try:
        root = ElementTree.parse(ctx.path(data)).getroot()
    except ElementTree.ParseError as exc:
        raise DataError(f"{data}:{exc.position[0]}: malformed XML ({exc})") from None
    items = []
    for text in root.iter("text"):
        for sentence in text.iter("sentence"):
            words, lemmas, pos, senses, ids = [], [], [], [], []
            for token in sentence:
                words.append(token.text or "")
                lemmas.append(token.get("lemma", ""))
                pos.append(token.get("pos", ""))
                if token.tag == "instance":
                    instance = token.get("id")
                    if instance not in gold:
                        raise DataError(f"{data}: instance {instance} has no gold key in {gold_file}")
                    senses.append(gold.pop(instance))
                    ids.append(instance)
                else:
                    senses.append(())
                    ids.append("")
            items.append(
                SenseTaggedSentence(
                    id=sentence.get("id"),
                    words=tuple(words),
                    lemmas=tuple(lemmas),
                    pos=tuple(pos),
                    senses=tuple(senses),
                    instance_ids=tuple(ids),
                    source=f"raganato_{set}",
                    meta={"text": text.get("id"), "source": root.get("source", "")},
                )
            )
    if gold:
        raise DataError(f"{gold_file}: {len(gold)} gold keys name instances absent from {data}")
    check_unique_ids(items, f"raganato_wsd {set}")
    return items


RAGANATO_EXPECTED = {  # instances, sentences (SOURCE.md; they match the paper)
    "senseval2": (2282, 242), "senseval3": (1850, 352), "semeval2007": (455, 135),
    "semeval2013": (1644, 306), "semeval2015": (1022, 138), "ALL": (7253, 1173),
}


def verify_raganato(ctx):
    out = []
    instances = {}
    for name, expected in RAGANATO_EXPECTED.items():
        items = ctx.load("test", set=name)
        keys = {i: k for it in items for i, k in zip(it.instance_ids, it.senses) if i}
        instances[name] = keys
        out.append(result(f"{name} (instances, sentences)", expected, (len(keys), len(items))))
    out.append(result("ALL instances with more than one gold key", 340, sum(len(k) > 1 for k in instances["ALL"].values())))
    merged = {f"{name}.{i}": k for name in RAGANATO[:-1] for i, k in instances[name].items()}
    out.append(result("ALL = the five sets (ids '<set>.<id>', same gold keys)", True, merged == instances["ALL"]))
    index = _index_sense(ctx)
    out.append(result("ALL gold keys missing from WordNet 3.0 index.sense", 0,
                      sum(k not in index for keys in instances["ALL"].values() for k in keys)))
    return out


# -------------------------------------------------------------------------------------------------- specs


def specs():
    raganato_files = [p for name in RAGANATO for p in _raganato_files(name)]
    return [
        DatasetSpec(
            name="semcor",
            files=files("semcor", f"{NAF_DIR}/") + files("wordnet", INDEX_SENSE),
            loader="metabench.data.datasets.semcor:load_semcor",
            splits=("train",),
            args={"part": PARTS + ("all",), "keys": ("wordnet", "all"), "doc": None},
            licence="SemCor 3.0: Princeton WordNet licence; rubenIzquierdo/wsd_corpora repository: Apache-2.0. "
                    + WN_LICENCE,
            citation=CITE_SEMCOR,
            description=(
                "SemCor 3.0 (WordNet 3.0 sense keys) from NAF: 352 Brown documents, 37,176 sentences, 224,716 "
                "keys resolving in WN 3.0 (keys=all: 234,136). part brown1|brown2|brownv|all, doc <name>."
            ),
            counts={"verify": "metabench.data.datasets.semcor:verify_semcor"},
        ),
        DatasetSpec(
            name="wordnet",
            files=files("wordnet", INDEX_SENSE, LEXNAMES, *DATA_FILES.values()),
            loader="metabench.data.datasets.semcor:load_wordnet",
            splits=("all",),
            args={"pos": tuple(DATA_FILES) + ("all",)},
            licence=WN_LICENCE,
            citation=CITE_WN,
            description=(
                "Princeton WordNet 3.0 senses: one item per sense key (206,941) with synset '<offset>-<pos>', "
                "sense number, SemCor tag count, gloss and lexicographer file. pos n|v|a|r|all."
            ),
            counts={"items": {"all": 206941}, "verify": "metabench.data.datasets.semcor:verify_wordnet"},
        ),
        DatasetSpec(
            name="raganato_wsd",
            files=files("semcor", *raganato_files) + files("wordnet", INDEX_SENSE),
            loader="metabench.data.datasets.semcor:load_raganato",
            splits=("test",),
            args={"set": RAGANATO},
            licence="None stated for the Raganato evaluation data (HSLCY/GlossBERT repository: MIT); sense "
                    "annotations are WordNet 3.0. " + WN_LICENCE,
            citation=CITE_RAGANATO,
            description=(
                "Raganato et al. all-words WSD evaluation sets (WordNet 3.0 keys): senseval2 2,282 / senseval3 "
                "1,850 / semeval2007 455 / semeval2013 1,644 / semeval2015 1,022 instances; ALL 7,253."
            ),
            counts={"items": {"test:set=ALL": 1173}, "verify": "metabench.data.datasets.semcor:verify_raganato"},
        ),
    ]


def verify_semcor_brown2(ctx):
    """The SemCor check on brown2 only (83 documents): what the mirror test runs."""
    return verify_semcor(ctx, ("brown2",))
