"""FLUTE (Chakrabarty, Saakyan, Ghosh & Muresan, EMNLP 2022): figurative NLI with textual explanations.

Premise = a literal sentence, hypothesis = a figurative one (metaphor, simile, idiom or sarcasm); label
entailment / contradiction; the gold explanation is in ``meta["explanation"]``.

- ``train`` / ``dev``: the authors' seq2seq files ``FLUTEfinal{train,val}.json`` (premise and hypothesis read
  back from the instruction text). Their figurative type comes from joining each pair to the per-type files
  (``train_by_type``, which hold train+val together).
- ``test``: the gold per-type test files ``testgolddata/*`` (1,498 of the 1,500 test pairs; the public test
  file has no labels), ids = the leaderboard's ``codalab_id``.

``type`` filters by phenomenon (metaphor / simile / idiom / sarcasm / all).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from ...errors import DataError
from ..readers import read_jsonl
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result

TYPES = ("metaphor", "simile", "idiom", "sarcasm")
FINAL = {"train": "flute/FLUTEfinaltrain.json", "dev": "flute/FLUTEfinalval.json"}
FINAL_TEST = "flute/FLUTEfinaltest.json"
BY_TYPE = {
    "metaphor": "flute/train_by_type/metaphorNLI/metaphor_train.jsonl",
    "simile": "flute/train_by_type/simileNLI/simile_train.jsonl",
    "idiom": "flute/train_by_type/idiomNLI/idiom_train.jsonl",
    "sarcasm": "flute/train_by_type/SarcasmNLI/sarcasm_train.jsonl",
}
GOLD_TEST = {t: f"flute/testgolddata/{t}_test.jsonl" for t in TYPES}
_LABELS = {"Entailment": "entailment", "Contradiction": "contradiction", "Entails": "entailment",
           "Contradicts": "contradiction"}
_INSTRUCTION = re.compile(
    r'^Does the sentence "(?P<premise>.*)" entail or contradict the sentence "(?P<hypothesis>.*)"\? Please answer '
    r'between "Entails" or "Contradicts" and explain your decision in a sentence\.$',
    re.S,
)
_ANSWER = re.compile(r"^(?P<label>Entails|Contradicts)\.\s*(?P<explanation>.*)$", re.S)


def _label(raw: str, where: str) -> str:
    try:
        return _LABELS[raw]
    except KeyError:
        raise DataError(f"{where}: label {raw!r} is not Entailment/Contradiction") from None


def _by_type(ctx) -> dict[tuple[str, str], list[tuple[str, dict]]]:
    pairs: dict[tuple[str, str], list] = defaultdict(list)
    for kind, relpath in BY_TYPE.items():
        for line, record in read_jsonl(ctx.path(relpath), encoding=ctx.encoding(relpath)):
            pairs[record["premise"], record["hypothesis"]].append((kind, record))
    return pairs


def load(ctx, split: str, type: str = "all"):  # noqa: A002 - the argument's public name
    from ..items import NLIPair  # noqa: PLC0415

    kinds = TYPES if type == "all" else (type,)
    items = []
    if split in FINAL:
        typed = _by_type(ctx)
        relpath = FINAL[split]
        for index, (line, record) in enumerate(read_jsonl(ctx.path(relpath), encoding=ctx.encoding(relpath))):
            where = f"{relpath}:{line}"
            pair = record.get("translation") or {}
            question = _INSTRUCTION.match(pair.get("en1", ""))
            answer = _ANSWER.match(pair.get("en2", ""))
            if not question or not answer:
                raise DataError(f"{where}: not the FLUTE seq2seq instruction/answer format")
            key = (question["premise"], question["hypothesis"])
            candidates = typed.get(key)
            if not candidates:
                raise DataError(f"{where}: pair not found in the per-type files", hint="mixed releases?")
            # A few pairs occur twice in the per-type files (once with each label for one idiom pair): take
            # the first unused copy with the same label.
            label = _label(answer["label"], where)
            same = [n for n, (_, rec) in enumerate(candidates) if _label(rec["label"], where) == label]
            if not same:
                raise DataError(f"{where}: label {label} differs from the per-type file's")
            kind, source_record = candidates.pop(same[0]) if len(candidates) > 1 else candidates[0]
            if kind not in kinds:
                continue
            items.append(
                NLIPair(
                    id=f"{relpath.rsplit('/', 1)[-1].removesuffix('.json')}:{index}",
                    premise=key[0],
                    hypothesis=key[1],
                    label=label,
                    source="flute",
                    meta={"type": kind, "explanation": answer["explanation"], "type_id": source_record.get("id"),
                          "idiom": source_record.get("idiom", ""), "split": split, "line": line},
                )
            )
    elif split == "test":
        codalab = {}
        for line, record in read_jsonl(ctx.path(FINAL_TEST), encoding=ctx.encoding(FINAL_TEST)):
            codalab.setdefault((record["premise"], record["hypothesis"]), []).append(record["codalab_id"])
        for kind in kinds:
            relpath = GOLD_TEST[kind]
            for line, record in read_jsonl(ctx.path(relpath), encoding=ctx.encoding(relpath)):
                where = f"{relpath}:{line}"
                ids = codalab.get((record["premise"], record["hypothesis"]))
                if not ids:
                    raise DataError(f"{where}: gold pair not in {FINAL_TEST}")
                items.append(
                    NLIPair(
                        id=f"flute_test:{ids.pop(0)}",
                        premise=record["premise"],
                        hypothesis=record["hypothesis"],
                        label=_label(record["label"], where),
                        source="flute",
                        meta={"type": kind, "explanation": record.get("explanation", ""), "type_id": record.get("id"),
                              "idiom": record.get("idiom", ""), "split": split, "line": line},
                    )
                )
        items.sort(key=lambda it: int(it.id.rsplit(":", 1)[1]))
    else:
        raise bad_split("flute", split, (*FINAL, "test"))
    check_unique_ids(items, f"flute {split}/{type}")
    return items


def verify(ctx):
    out = []
    for split, expected in (("train", (7035, 2981, 4054)), ("dev", (499, 203, 296))):
        items = ctx.load(split)
        c = Counter(i.label for i in items)
        out.append(result(f"{split} (pairs, entailment, contradiction)", expected,
                          (len(items), c["entailment"], c["contradiction"])))
    both = Counter(i.meta["type"] for s in ("train", "dev") for i in ctx.load(s))
    out.append(result("train + dev per type (= the per-type train files)",
                      {"idiom": 1768, "metaphor": 1250, "sarcasm": 3266, "simile": 1250}, dict(sorted(both.items()))))
    test = ctx.load("test")
    per = Counter((i.meta["type"], i.label) for i in test)
    out.append(result("test gold per type (entailment, contradiction)",
                      {"metaphor": (124, 124), "simile": (125, 125), "idiom": (125, 125), "sarcasm": (289, 461)},
                      {t: (per[t, "entailment"], per[t, "contradiction"]) for t in TYPES}))
    out.append(result("test gold pairs (of the 1,500 test pairs)", 1498, len(test)))
    return out


def specs():
    return [
        DatasetSpec(
            name="flute",
            files=files("flute", *FINAL.values(), FINAL_TEST, *BY_TYPE.values(), *GOLD_TEST.values()),
            loader="metabench.data.datasets.flute:load",
            splits=("train", "dev", "test"),
            args={"type": TYPES + ("all",)},
            licence="None stated (tuhinjubcse/model-in-the-loop-fig-lang has no LICENSE file; README asks to cite)",
            citation=(
                "Tuhin Chakrabarty, Arkadiy Saakyan, Debanjan Ghosh and Smaranda Muresan. FLUTE: Figurative "
                "Language Understanding through Textual Explanations. EMNLP 2022."
            ),
            description=(
                "FLUTE figurative NLI (entailment/contradiction) with gold explanations (meta explanation). "
                "train 7,035 / dev 499 (authors' seq2seq files) / test 1,498 (gold per-type files; ids = "
                "codalab_id). type metaphor|simile|idiom|sarcasm|all."
            ),
            counts={"items": {"train": 7035, "dev": 499, "test": 1498, "test:type=metaphor": 248},
                    "verify": "metabench.data.datasets.flute:verify"},
        )
    ]
