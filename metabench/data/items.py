"""Typed items: the units a task scores, each with a stable id.

Ids are stable across releases and machines (built from the source file's own ids or from the file name and
row/sentence number), because samples.jsonl stores ids, not text: runs can be published and compared
without redistributing the data. Items are frozen; ``meta`` holds whatever else a source carries.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TaggedSentence:
    """A sentence with one label per whitespace word (BIO tags for token-level metaphor detection)."""

    id: str
    words: tuple[str, ...]
    tags: tuple[str, ...]
    language: str = "en"
    source: str = ""
    meta: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class TextItem:
    """A text with a labelled expression: expression-level detection, headlines, judgement items.

    ``spans`` are character offsets (start, end) into ``text``; several for a discontinuous expression.
    ``target_index`` is the word index of the target where the source gives one instead of spans.
    """

    id: str
    text: str
    label: str
    spans: tuple[tuple[int, int], ...] = ()
    target_index: int | None = None
    lemma: str = ""
    pos: str = ""
    group: str = ""
    language: str = "en"
    source: str = ""
    meta: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class NLIPair:
    """A premise–hypothesis pair with its NLI gold label and metaphor class (met / no_met / nonrelevant)."""

    id: str
    premise: str
    hypothesis: str
    label: str
    metaphor: str = ""
    language: str = "en"
    source: str = ""
    genre: str = ""
    meta: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class ParaphraseJudgement:
    """A MUNCH paraphrase-judgement triple: a sentence with a metaphorical word and two candidate paraphrases.

    ``sentence`` is the reference sentence as the task file shows it (``*word*`` highlighted for the word
    setup and the M-Word condition, plain for Implicit/M-Sent sentence judgement); ``plain`` is it without
    highlight. ``options`` are the two candidates as shown (words for the word setup, full sentences for the
    sentence setup), ``words`` the two substitute words, ``labels`` their ``apt``/``inapt`` status, and
    ``answer_type`` one of ``apt_inapt``, ``inapt_inapt``, ``apt_apt`` (gold C for apt+apt, D for
    inapt+inapt, else the letter of the apt option once the task has shuffled them).
    """

    id: str
    sentence: str
    plain: str
    word: str
    span: tuple[int, int]
    options: tuple[str, str]
    words: tuple[str, str]
    labels: tuple[str, str]
    answer_type: str
    setup: str = "word"
    condition: str = "implicit"
    genre: str = ""
    language: str = "en"
    source: str = "munch"
    meta: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class ParaphraseGeneration:
    """A MUNCH generation item: a sentence, its metaphorical word (``span`` into ``sentence``) and the
    crowd's apt single-word substitutes (``answers``, surface forms, as released)."""

    id: str
    sentence: str
    word: str
    span: tuple[int, int]
    answers: tuple[str, ...]
    genre: str = ""
    novelty: float | None = None
    language: str = "en"
    source: str = "munch"
    meta: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class SenseExample:
    """A word in context with a WordNet(-style) sense, its gloss and a metaphorical/literal label (HMD).

    ``overlap`` is the paper's overlap ratio phi (None where the source has none, e.g. literal rows);
    ``target_index`` is the whitespace-token index of the target in ``context`` (the source's brackets
    around the target are removed; ``span`` locates it).
    """

    id: str
    word: str
    sense: str
    gloss: str
    label: str
    context: str
    target_index: int
    span: tuple[int, int]
    overlap: float | None = None
    language: str = "en"
    source: str = ""
    meta: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class ParaphraseSet:
    """A reference sentence with candidate paraphrases, each with a human score (higher = better)."""

    id: str
    reference: str
    candidates: tuple[str, ...]
    scores: tuple[float, ...]
    direction: str = ""
    language: str = "en"
    source: str = ""
    meta: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class ChoiceItem:
    """A multiple-choice item: a context (or stem) and candidate continuations, ``answer`` = index of the
    correct one (None where the gold is hidden, e.g. Fig-QA test). ``labels`` optionally gives each choice's
    class (e.g. SAT* analogy pairs: 0 wrong, 1 literal, 2 metaphorical)."""

    id: str
    context: str
    choices: tuple[str, ...]
    answer: int | None
    labels: tuple[str, ...] = ()
    group: str = ""
    language: str = "en"
    source: str = ""
    meta: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class SenseTaggedSentence:
    """A sentence with WordNet 3.0 sense keys on its annotated words (SemCor, Raganato WSD sets).

    Parallel tuples, one entry per word: ``lemmas``, ``pos`` and ``senses`` (the gold keys of that word, ()
    where it is not annotated; Raganato instances may have several). ``instance_ids`` gives the source's
    instance id per word ('' where none).
    """

    id: str
    words: tuple[str, ...]
    lemmas: tuple[str, ...]
    pos: tuple[str, ...]
    senses: tuple[tuple[str, ...], ...]
    instance_ids: tuple[str, ...] = ()
    language: str = "en"
    source: str = ""
    meta: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class WordNetSense:
    """One WordNet 3.0 sense: its sense key, synset (offset + pos), sense number, SemCor tag count, gloss."""

    id: str  # the sense key, e.g. "dog%1:05:00::"
    lemma: str
    pos: str
    synset: str  # e.g. "02084071-n"
    sense_number: int
    tag_count: int
    gloss: str
    lexname: str = ""
    meta: dict = field(default_factory=dict, compare=False)
