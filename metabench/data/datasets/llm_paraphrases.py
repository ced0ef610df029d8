"""Metaphor and LLMs (Sanchez-Bayona & Agerri, Findings of ACL 2025): five NLI/QA sets with metaphors and the
literal paraphrases two LLMs (Command-R+, Mistral-7B-Instruct) wrote of their metaphorical sentence.

The point of the release is a *paired* design: the same item with and without the metaphor, same gold label.
So an original and its paraphrases share one stable id, ``<set>:<row>`` (the 0-based data row of the
original file), and ``compare --paired-variants`` pairs runs on them by that id.

The paraphrase files have no id column, and the IMPLI Mistral file has 2 rows fewer than its original
(row order is not a key there), so every paraphrase row is joined to its original **by text**, on the key
SOURCE.md gives: ``(original premise, hypothesis, label)`` where the premise was paraphrased (Fig-QA,
Figurative-NLI, IMPLI), ``(premise, original hypothesis, label)`` for FLUTE and ``(original premise,
original hypothesis, label)`` for Meta4XNLI; duplicate keys (12 in IMPLI) are matched in order of
appearance. A row that joins no original is an error naming its file and line.

Labels are binary (``entailment`` / ``not_entailment``) as the authors evaluated them. Flags in ``meta``:
``paraphrased`` (which side was rewritten), ``unchanged`` (a paraphrase identical to its original: ~22
Meta4XNLI pairs; kept, they are real items of the release). Empty paraphrases (3 in IMPLI Mistral) are
dropped: a model would see an empty premise. ``metaphor`` is ``met`` for originals, ``literal`` for
paraphrases.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict, deque

from ...errors import DataError
from ..readers import read_table
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result

ROOT = "metaphor_llm_paraphrases/data"
#: set -> (original file, side(s) holding the metaphor)
ORIGINALS = {
    "fig_qa": (f"{ROOT}/interpretation/Fig-QA/dev_binary_labels.tsv", ("premise",)),
    "flute": (f"{ROOT}/interpretation/FLUTE/metaphor_test_binary_labels.tsv", ("hypothesis",)),
    "impli": (f"{ROOT}/interpretation/IMPLI/manual_all.tsv", ("premise",)),
    "figurative_nli": (f"{ROOT}/interpretation/Figurative-NLI/metaphor-entail.json", ("premise",)),
    "meta4xnli": (f"{ROOT}/interpretation/meta4xnli/test_met_binary_labels.tsv", ("premise", "hypothesis")),
}
_FOLDER = {"fig_qa": "fig-qa", "flute": "flute", "impli": "impli", "figurative_nli": "figurative-nli",
           "meta4xnli": "meta4xnli"}
_FILES = {
    ("fig_qa", "commandr"): "15-10-2024_09_53_49.tsv",
    ("fig_qa", "mistral"): "instruct_15-10-2024_12_24_05.tsv",
    ("figurative_nli", "commandr"): "15-10-2024_10_00_01.tsv",
    ("figurative_nli", "mistral"): "instruct_15-10-2024_12_08_20.tsv",
    ("flute", "commandr"): "15-10-2024_10_03_13.tsv",
    ("flute", "mistral"): "instruct_15-10-2024_12_03_11.tsv",
    ("impli", "commandr"): "15-11-2024_11_10_23.tsv",
    ("impli", "mistral"): "instruct_15-10-2024_12_03_13.tsv",
    ("meta4xnli", "commandr"): "15-10-2024_10_13_19.tsv",
    ("meta4xnli", "mistral"): "instruct_15-10-2024_11_14_41.tsv",
}
GENERATORS = {"commandr": "commandr", "mistral": "mistralinstruct"}  # variant -> upstream folder
SETS = tuple(ORIGINALS)
VARIANTS = ("original", *GENERATORS)
LABELS = ("entailment", "not_entailment")


def paraphrase_path(name: str, variant: str) -> str:
    return f"{ROOT}/paraphrases/{_FOLDER[name]}/{GENERATORS[variant]}/{_FILES[name, variant]}"


def _label(raw: str, where: str) -> str:
    label = raw.strip().lower()
    if label not in LABELS:
        raise DataError(f"{where}: label {raw!r} is not one of {list(LABELS)}")
    return label


def _original_rows(ctx, name: str) -> list[tuple[str, str, str, str]]:
    """(where, premise, hypothesis, label) of every original item, in file order."""
    relpath = ORIGINALS[name][0]
    if relpath.endswith(".json"):
        with open(ctx.path(relpath), encoding=ctx.encoding(relpath)) as handle:
            records = json.load(handle)
        return [(f"{relpath}[{i}]", r["premise"], r["hypothesis"], _label(r["label"], f"{relpath}[{i}]"))
                for i, r in enumerate(records)]
    premise, hypothesis, label = ("sentence1", "sentence2", "gold_label") if name == "meta4xnli" else (
        "premise", "hypothesis", "label")
    rows = read_table(ctx.path(relpath), encoding=ctx.encoding(relpath), delimiter="\t")
    return [(f"{relpath}:{line}", r[premise], r[hypothesis], _label(r[label], f"{relpath}:{line}"))
            for line, r in rows]


def _join_key(premise: str, hypothesis: str, label: str) -> tuple:
    """The text key an original shares with its paraphrases (SOURCE.md), whitespace-trimmed."""
    return premise.strip(), hypothesis.strip(), label


def load(ctx, split: str, set: str = "impli", variant: str = "original"):  # noqa: A002 - public argument name
    from ..items import NLIPair  # noqa: PLC0415

    if split != "test":
        raise bad_split("metaphor_llm_paraphrases", split, ("test",))
    originals = _original_rows(ctx, set)
    ids = [f"{set}:{index}" for index in range(len(originals))]
    if variant == "original":
        items = [
            NLIPair(id=item_id, premise=p, hypothesis=h, label=label, metaphor="met", source=set,
                    meta={"where": where, "variant": variant})
            for item_id, (where, p, h, label) in zip(ids, originals)
        ]
    else:
        items = _paraphrases(ctx, set, variant, originals, ids, NLIPair)
    check_unique_ids(items, f"metaphor_llm_paraphrases {set}/{variant}")
    return items


def as_pandas_reads(field: str) -> str:
    """A TSV field as pandas' C parser reads it with the default quoting: a field that starts with '"' is
    quoted up to the next lone '"' ('""' inside is one quote), and what follows the closing quote is kept as
    is; any other field is literal."""
    if not field.startswith('"'):
        return field
    out, i = [], 1
    while i < len(field):
        if field[i] == '"':
            if field[i + 1:i + 2] == '"':
                out.append('"')
                i += 2
                continue
            return "".join(out) + field[i + 1:]
        out.append(field[i])
        i += 1
    return "".join(out)


def _paraphrases(ctx, name: str, variant: str, originals, ids, item_type) -> list:
    """The paraphrase file's rows as items carrying the id of the original each one joins (by text)."""
    waiting: dict[tuple, deque] = defaultdict(deque)
    for index, (_, p, h, label) in enumerate(originals):
        waiting[_join_key(p, h, label)].append(index)
    relpath = paraphrase_path(name, variant)
    sides = ORIGINALS[name][1]
    items = []
    # Read as the authors' zero_shot.py reads every file (pandas read_csv, sep="\t", default quoting): the
    # paraphrase files were written without CSV quoting, so a field that starts with a bare '"' (one
    # Meta4XNLI Command-R premise: '"If we can't ... have power," as Pascal ...') loses that quote pair there,
    # and the models were prompted with the text pandas gave.
    rows = read_table(ctx.path(relpath), encoding=ctx.encoding(relpath), delimiter="\t", quotechar=None)
    for line, raw in rows:
        row = {key: as_pandas_reads(value) for key, value in raw.items()}
        where = f"{relpath}:{line}"
        label = _label(row["gold_label"], where)
        premise = row["original_premise"] if "premise" in sides else row["premise"]
        hypothesis = row["original_hypothesis"] if "hypothesis" in sides else row["hypothesis"]
        queue = waiting.get(_join_key(premise, hypothesis, label))
        if not queue:
            raise DataError(
                f"{where}: this paraphrase row joins no original of '{name}' that is not already taken "
                f"(key: original text and label)",
                hint="the paraphrase file and the original file come from different releases; re-mirror both",
            )
        index = queue.popleft()
        if not row["premise"].strip() or not row["hypothesis"].strip():
            continue  # an empty paraphrase (3 in IMPLI Mistral): nothing to evaluate
        changed = tuple(s for s in sides if row[s].strip() != row[f"original_{s}"].strip())
        items.append(item_type(
            id=ids[index], premise=row["premise"], hypothesis=row["hypothesis"], label=label, metaphor="literal",
            source=name, meta={"where": where, "variant": variant, "paraphrased": sides, "unchanged": not changed},
        ))
    items.sort(key=lambda item: int(item.id.rsplit(":", 1)[1]))
    return items


# SOURCE.md / the extraction §6: data rows of each file; paraphrase items after the 3 empty IMPLI-Mistral
# paraphrases are dropped.
EXPECTED = {
    ("fig_qa", "original"): 2188, ("fig_qa", "commandr"): 2188, ("fig_qa", "mistral"): 2188,
    ("flute", "original"): 248, ("flute", "commandr"): 248, ("flute", "mistral"): 248,
    ("impli", "original"): 668, ("impli", "commandr"): 668, ("impli", "mistral"): 663,
    ("figurative_nli", "original"): 613, ("figurative_nli", "commandr"): 613, ("figurative_nli", "mistral"): 613,
    ("meta4xnli", "original"): 598, ("meta4xnli", "commandr"): 598, ("meta4xnli", "mistral"): 598,
}
EXPECTED_LABELS = {"fig_qa": (1094, 1094), "flute": (124, 124), "impli": (387, 281), "figurative_nli": (307, 306),
                   "meta4xnli": (198, 400)}

UNCHANGED = {"commandr": 22, "mistral": 21}  # the extraction, §2 "Artefacts"


def verify(ctx):
    out = []
    for name in SETS:
        original = ctx.load("test", set=name)
        counts = Counter(i.label for i in original)
        out.append(result(f"{name} original (entailment, not_entailment)", EXPECTED_LABELS[name],
                          (counts["entailment"], counts["not_entailment"])))
        gold = {i.id: i.label for i in original}
        for variant in VARIANTS:
            items = original if variant == "original" else ctx.load("test", set=name, variant=variant)
            out.append(result(f"{name} {variant} items", EXPECTED[name, variant], len(items)))
            if variant != "original":
                same = sum(gold.get(i.id) == i.label for i in items)
                out.append(result(f"{name} {variant}: paraphrases joined to an original with its gold label",
                                  len(items), same))
                if name == "meta4xnli":
                    out.append(result(f"meta4xnli {variant}: pairs with neither sentence changed",
                                      UNCHANGED[variant], sum(i.meta["unchanged"] for i in items)))
    return out


def specs():
    return [
        DatasetSpec(
            name="metaphor_llm_paraphrases",
            files=files("metaphor_llm_paraphrases", *(p for p, _ in ORIGINALS.values()),
                        *(paraphrase_path(n, v) for n, v in _FILES)),
            loader="metabench.data.datasets.llm_paraphrases:load",
            splits=("test",),
            args={"set": SETS, "variant": VARIANTS},
            licence=(
                "None stated (the metaphorLLM repository has no LICENSE). The underlying sets keep their own "
                "licences: Fig-QA (MIT), FLUTE, IMPLI (Apache-2.0), Figurative-NLI, Meta4XNLI (CC BY-NC-SA 4.0). "
                "Paraphrases generated by Command-R+ and Mistral-7B-Instruct-v0.2."
            ),
            citation=(
                "Elisa Sanchez-Bayona and Rodrigo Agerri. Metaphor and Large Language Models: When Surface "
                "Features Matter More than Deep Understanding. Findings of ACL 2025 (arXiv:2507.15357)."
            ),
            description=(
                "Five binary NLI/QA sets with metaphors (Fig-QA dev, FLUTE metaphor test, IMPLI manual, "
                "Figurative-NLI, Meta4XNLI EN met test) and literal LLM paraphrases of the metaphorical sentence; "
                "set fig_qa|flute|impli|figurative_nli|meta4xnli, variant original|commandr|mistral; an original "
                "and its paraphrases share the id <set>:<row> (joined by text)."
            ),
            counts={"items": {f"test:set={n},variant={v}": c for (n, v), c in EXPECTED.items()},
                    "verify": "metabench.data.datasets.llm_paraphrases:verify"},
        )
    ]
