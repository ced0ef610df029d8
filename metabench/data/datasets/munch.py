"""MUNCH, the Metaphor Understanding Challenge Dataset (Tong, Choenni, Lewis & Shutova, ACL 2024).

An evaluation set (single split ``test``), two datasets:

- ``munch_judgement``: 1,492 paraphrase-judgement triples (a sentence with a metaphorical word and two candidate
  substitutes: 1,072 apt+inapt, 375 inapt+inapt, 45 apt+apt). ``setup`` = ``word`` (options are the two
  words, ``tasks/word_judge.json``) or ``sentence`` (options are the two full paraphrase sentences,
  ``tasks/sent_judge_<condition>.json``); ``condition`` = implicit / msent / mword (for the sentence setup it
  selects the task file: Implicit and M-Sent show the reference sentence without highlight, M-Word with
  ``*word*``; for the word setup the data is the same and the condition is only a prompt choice).
  The task files' ``dataset_index`` does not line up with ``correct_answers/for_judgement.csv``, so every
  task record is joined to its CSV row **by text** (sentence and the two options with their apt/inapt
  labels: one sentence has the words {create, make} in two triples with contradictory labels for
  "create"); the join must be one-to-one or loading fails. Ids are ``munch:<i0 of for_judgement.csv>``, the same in every setup and
  condition. Genre, novelty and VUA sentence id come from ``for_generation.csv`` via ``s0_idx``.
  The task files list the apt option first: a task must shuffle the options (README), with a logged seed.
- ``munch_generation``: 2,953 sentences with their metaphorical word and the crowd's apt single-word
  substitutes (10,261 in total, surface forms as released: mixed case, 1-7 per sentence).
"""

from __future__ import annotations

import re
from collections import Counter

from ...errors import DataError
from ..readers import read_json, read_table
from ..spec import DatasetSpec
from .common import bad_split, check_unique_ids, files, result

FOR_JUDGEMENT = "munch/correct_answers/for_judgement.csv"
FOR_GENERATION = "munch/correct_answers/for_generation.csv"
GENERATION_TASK = "munch/tasks/generation.json"
WORD_TASK = "munch/tasks/word_judge.json"
SENT_TASKS = {c: f"munch/tasks/sent_judge_{c}.json" for c in ("implicit", "msent", "mword")}
SETUPS = ("word", "sentence")
CONDITIONS = tuple(SENT_TASKS)

LICENCE = (
    "CC BY 4.0 (repository LICENSE). The sentences come from the VU Amsterdam Metaphor Corpus (BNC-Baby): "
    "VUAMC terms (non-commercial, BNC Licence) apply to the text."
)
CITATION = (
    "Xiaoyu Tong, Rochelle Choenni, Martha Lewis and Ekaterina Shutova. Metaphor Understanding Challenge "
    "Dataset for LLMs. ACL 2024 (arXiv:2403.11810)."
)

_BOLD = re.compile(r"<b>(.*?)</b>")


def _marked(text: str, where: str) -> tuple[str, str, tuple[int, int]]:
    """(plain text, word, its span in the plain text) of a sentence with one ``<b>word</b>``."""
    found = list(_BOLD.finditer(text))
    if len(found) != 1:
        raise DataError(f"{where}: expected one <b>…</b> word, found {len(found)}")
    m = found[0]
    plain = text[: m.start()] + m.group(1) + text[m.end():]
    return plain, m.group(1), (m.start(), m.start() + len(m.group(1)))


def _starred(text: str) -> str:
    return _BOLD.sub(lambda m: f"*{m.group(1)}*", text)


def _generation_rows(ctx) -> dict[str, tuple[int, dict]]:
    """for_generation.csv rows keyed by ``idx`` (what for_judgement's ``s0_idx`` points at)."""
    rows = {}
    for line, row in read_table(ctx.path(FOR_GENERATION), encoding=ctx.encoding(FOR_GENERATION)):
        if row["idx"] in rows:
            raise DataError(f"{FOR_GENERATION}:{line}: duplicate idx {row['idx']}")
        rows[row["idx"]] = (line, row)
    return rows


def _float(raw: str, where: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise DataError(f"{where}: {raw!r} is not a number") from None


# --------------------------------------------------------------------------------------------- judgement


def load_judgement(ctx, split: str, setup: str = "word", condition: str = "implicit"):
    from ..items import ParaphraseJudgement  # noqa: PLC0415

    if split != "test":
        raise bad_split("munch_judgement", split, ("test",))
    task_file = WORD_TASK if setup == "word" else SENT_TASKS[condition]
    highlighted = setup == "word" or condition == "mword"
    generation = _generation_rows(ctx)

    # The CSV rows, keyed by how the task file shows them: (reference sentence, the two options, unordered).
    by_text: dict[tuple, dict] = {}
    for line, row in read_table(ctx.path(FOR_JUDGEMENT), encoding=ctx.encoding(FOR_JUDGEMENT)):
        where = f"{FOR_JUDGEMENT}:{line}"
        plain, word, span = _marked(row["s0"], where)
        candidates = []
        for column in ("s1", "s2"):
            option_plain, option_word, _ = _marked(row[column], where)
            label = row[f"{column}_label"]
            if label not in ("apt", "inapt"):
                raise DataError(f"{where}: {column}_label {label!r} is not apt/inapt")
            candidates.append((option_word if setup == "word" else option_plain, option_word, label))
        reference = _starred(row["s0"]) if highlighted else plain
        key = (reference, frozenset((c[0], c[2]) for c in candidates))
        if key in by_text:
            raise DataError(f"{where}: two rows show the same sentence and options; the text join is ambiguous")
        found = generation.get(row["s0_idx"])
        if found is None or found[1]["s0"] != row["s0"]:
            raise DataError(f"{where}: s0_idx {row['s0_idx']} does not point at the same sentence in {FOR_GENERATION}")
        by_text[key] = {"row": row, "line": line, "plain": plain, "word": word, "span": span,
                        "candidates": candidates, "generation": found[1]}

    items = []
    for position, record in enumerate(read_json(ctx.path(task_file), encoding=ctx.encoding(task_file))):
        where = f"{task_file}[{position}]"
        options = tuple(o["text"] for o in record["options"])
        if len(options) != 2:
            raise DataError(f"{where}: expected 2 options, got {len(options)}")
        key = (record["s0"], frozenset((o["text"], o["label"]) for o in record["options"]))
        match = by_text.pop(key, None)
        if match is None:
            raise DataError(f"{where}: no row of {FOR_JUDGEMENT} has this sentence and these two options",
                            hint="the task and answer files are from different releases")
        by_option = {(c[0], c[2]): c for c in match["candidates"]}
        words = tuple(by_option[o["text"], o["label"]][1] for o in record["options"])
        labels = tuple(o["label"] for o in record["options"])
        answer_type = {
            frozenset({"apt", "inapt"}): "apt_inapt",
            frozenset({"inapt"}): "inapt_inapt",
            frozenset({"apt"}): "apt_apt",
        }[frozenset(labels)]
        row, gen = match["row"], match["generation"]
        items.append(
            ParaphraseJudgement(
                id=f"munch:{row['i0']}",
                sentence=record["s0"],
                plain=match["plain"],
                word=match["word"],
                span=match["span"],
                options=options,
                words=words,
                labels=labels,
                answer_type=answer_type,
                setup=setup,
                condition=condition,
                genre=gen["genre"],
                meta={
                    "i0": int(row["i0"]),
                    "s0_idx": row["s0_idx"],
                    "dataset_index": record.get("dataset_index"),
                    "sid": gen["sid"],
                    "novelty": _float(gen["novelty"], f"{FOR_GENERATION} idx {row['s0_idx']}"),
                    "task_position": position,
                },
            )
        )
    if by_text:
        raise DataError(f"{task_file}: {len(by_text)} rows of {FOR_JUDGEMENT} have no task record")
    items.sort(key=lambda it: it.meta["i0"])
    check_unique_ids(items, f"munch_judgement {setup}/{condition}")
    return items


def verify_judgement(ctx):
    out = []
    reference = None
    for setup, conditions in (("word", ("implicit",)), ("sentence", CONDITIONS)):
        for condition in conditions:
            items = ctx.load("test", setup=setup, condition=condition)
            tag = f"{setup}/{condition}"
            out.append(result(f"{tag} triples joined by text", 1492, len(items)))
            out.append(result(f"{tag} answer types", {"apt_apt": 45, "apt_inapt": 1072, "inapt_inapt": 375},
                              dict(sorted(Counter(i.answer_type for i in items).items()))))
            pairs = [(i.id, i.words, i.labels) for i in items]
            if reference is None:
                reference = pairs
                out.append(result("distinct sentences (sentence + target word)", 728, len({i.meta["s0_idx"] for i in items})))
                out.append(result("genres of the judgement sentences' triples",
                                  {"ACPROSE": 618, "FICTION": 243, "NEWS": 631},
                                  dict(sorted(Counter(i.genre for i in items).items()))))
                out.append(result("distinct (sentence, inapt word) pairs", 1017,
                                  len({(i.meta["s0_idx"], w) for i in items for w, lab in zip(i.words, i.labels) if lab == "inapt"})))
                conflicts = Counter((i.meta["s0_idx"], frozenset(i.words)) for i in items)
                out.append(result("triples repeating a sentence's word pair with other labels (create/make)", 1,
                                  sum(n - 1 for n in conflicts.values())))
                out.append(result("distinct (sentence, apt word) pairs", 773,
                                  len({(i.meta["s0_idx"], w) for i in items for w, lab in zip(i.words, i.labels) if lab == "apt"})))
            else:
                out.append(result(f"{tag} joins to the same triples as word/implicit", True, pairs == reference))
    return out


# -------------------------------------------------------------------------------------------- generation


def load_generation(ctx, split: str):
    from ..items import ParaphraseGeneration  # noqa: PLC0415

    if split != "test":
        raise bad_split("munch_generation", split, ("test",))
    task = {}
    for position, record in enumerate(read_json(ctx.path(GENERATION_TASK), encoding=ctx.encoding(GENERATION_TASK))):
        task[str(record["dataset_index"])] = (position, record["s0"])
    items = []
    for line, row in read_table(ctx.path(FOR_GENERATION), encoding=ctx.encoding(FOR_GENERATION)):
        where = f"{FOR_GENERATION}:{line}"
        plain, word, span = _marked(row["s0"], where)
        found = task.pop(row["i0"], None)
        if found is None or found[1] != row["s0"]:
            raise DataError(f"{where}: {GENERATION_TASK} has no record with dataset_index {row['i0']} and this sentence")
        answers = tuple(row["human_ans"].split())
        if not answers:
            raise DataError(f"{where}: no human answer")
        items.append(
            ParaphraseGeneration(
                id=f"munch_generation:{row['i0']}",
                sentence=plain,
                word=word,
                span=span,
                answers=answers,
                genre=row["genre"],
                novelty=_float(row["novelty"], where),
                meta={"marked": row["s0"], "idx": row["idx"], "sid": row["sid"], "task_position": found[0],
                      "line": line},
            )
        )
    if task:
        raise DataError(f"{GENERATION_TASK}: {len(task)} records have no row in {FOR_GENERATION}")
    check_unique_ids(items, "munch_generation test")
    return items


def verify_generation(ctx):
    items = ctx.load("test")
    per_row = [len(i.answers) for i in items]
    lengths = [len(i.sentence.split()) for i in items]
    mean = sum(lengths) / len(lengths)
    return [
        result("generation items", 2953, len(items)),
        result("human answers (Table 4)", 10261, sum(per_row)),
        result("Table 1 genres", {"ACPROSE": 1061, "CONVRSN": 377, "FICTION": 593, "NEWS": 922},
               dict(sorted(Counter(i.genre for i in items).items()))),
        result("answers per sentence (min, max)", (1, 7), (min(per_row), max(per_row))),
        result("Table 4 mean sentence length in words (rounded)", 26, round(mean)),
        result("novelty range (min >= -0.3)", True, min(i.novelty for i in items) >= -0.3),
    ]


def specs():
    task_files = (WORD_TASK, *SENT_TASKS.values())
    return [
        DatasetSpec(
            name="munch_judgement",
            files=files("munch", *task_files, FOR_JUDGEMENT, FOR_GENERATION),
            loader="metabench.data.datasets.munch:load_judgement",
            splits=("test",),
            args={"setup": SETUPS, "condition": CONDITIONS},
            licence=LICENCE,
            citation=CITATION,
            description=(
                "MUNCH paraphrase judgement: 1,492 triples (sentence + 2 candidates; 1,072 apt+inapt / 375 "
                "inapt+inapt / 45 apt+apt), joined to the answers by text. setup word|sentence, condition "
                "implicit|msent|mword. Options are listed apt first as released: shuffle them in the task."
            ),
            counts={"items": {"test": 1492}, "verify": "metabench.data.datasets.munch:verify_judgement"},
        ),
        DatasetSpec(
            name="munch_generation",
            files=files("munch", GENERATION_TASK, FOR_GENERATION),
            loader="metabench.data.datasets.munch:load_generation",
            splits=("test",),
            licence=LICENCE,
            citation=CITATION,
            description=(
                "MUNCH paraphrase generation: 2,953 sentences with the metaphorical word's span and the "
                "crowd's apt substitutes (10,261 answers), genre ACPROSE/NEWS/FICTION/CONVRSN and novelty."
            ),
            counts={"items": {"test": 2953}, "verify": "metabench.data.datasets.munch:verify_generation"},
        ),
    ]
