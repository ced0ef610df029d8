"""Parsers: model text → an answer the task can score. They never raise on model output.

Every parser returns a :class:`Parsed` — the value, whether the output could be read (``ok``) and a short
``status`` saying how. An output that cannot be read gets a value that is always wrong (the label
``"invalid"``, an all-``O`` tag sequence, an empty word), so it counts against the model, and the kind
records ``parse_ok`` per item and logs the item id.

- ``label``: the first label (or alias) mentioned, case-insensitively, as a whole word
  (``"Entailment."``, ``"‘neutral’"``, ``"The answer is contradiction"``). A first word that is an
  unambiguous prefix of one label of at least 4 characters also counts (``"entail"``: outputs are cut at 5
  tokens in Meta4XNLI), with status ``prefix``.
- ``label_token``: the paraphrase-control paper's own reading (``map_labels`` in metaphorLLM's
  ``zero_shot/zero_shot.py``): the output lower-cased and split on whitespace, each token stripped of ``.``
  and ``,`` at its ends, and the first token that *is* a label (or alias) is the answer; anything else is
  the authors' ``unk`` (``"Entailment:"``, ``"'entailment'"`` and prefixes are not read).
- ``letter``: an option letter at the start (``"A"``, ``" (B)"``, ``"Option C"``), after ``answer``/``option``
  later on, or else the first standalone capital letter among the choices.
- ``word``: the first word (letters and digits, inner hyphens and apostrophes kept).
- ``word_list``: the model lists the metaphorical words (``"bright, fell apart"``, bullets, quotes,
  ``"None"``); each listed word marks every occurrence of its form in the sentence, a listed phrase (at
  most 4 words; longer items are prose, e.g. the sentence copied back, and match nothing) marks a run of
  consecutive words (B- then I-).
- ``marked``: the model copies the sentence with the metaphorical words between markers (``*fell*``,
  ``<m>fell apart</m>``); the output is aligned back to the input words with ``difflib`` (a model that drops,
  adds or changes words still gets its marks placed where the words match); a marked run becomes B- I-.

Word matching for the tagging parsers uses Unicode NFKC, lower case and edge punctuation stripped (the
Meta4XNLI words carry punctuation: ``apart.``).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ..requests import first_word

INVALID = "invalid"
_MAX_CHARS = 4000  # longer outputs are cut before parsing (a runaway generation must not cost time)
MAX_PHRASE_WORDS = 4  # a listed item longer than this is prose (e.g. the sentence copied back), not a phrase


@dataclass(frozen=True)
class Parsed:
    value: Any
    ok: bool
    status: str


# ------------------------------------------------------------------------------------------------ words


def _strip_edges(text: str) -> str:
    start, end = 0, len(text)

    def junk(ch: str) -> bool:
        return ch.isspace() or unicodedata.category(ch)[0] in "PS"

    while start < end and junk(text[start]):
        start += 1
    while end > start and junk(text[end - 1]):
        end -= 1
    return text[start:end]


def norm_word(text: str) -> str:
    """NFKC, lower case, surrounding whitespace, punctuation and symbols removed."""
    return _strip_edges(unicodedata.normalize("NFKC", text).casefold())


def parse_word(text: str) -> Parsed:
    if not isinstance(text, str) or not text.strip():
        return Parsed("", False, "empty")
    word = first_word(text)
    return Parsed(word, bool(word), "ok" if word else "no_word")


# ----------------------------------------------------------------------------------------------- labels


def parse_label(text: str, labels, aliases: dict[str, str] | None = None) -> Parsed:
    """The first label mentioned in ``text``; aliases map other words to labels."""
    if not isinstance(text, str) or not text.strip():
        return Parsed(INVALID, False, "empty")
    text = unicodedata.normalize("NFKC", text[:_MAX_CHARS])
    names = {str(label).casefold(): str(label) for label in labels}
    for alias, label in (aliases or {}).items():
        names.setdefault(str(alias).casefold(), str(label))
    folded = text.casefold()
    best: tuple[int, int, str] | None = None
    for name, label in names.items():
        match = re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", folded)
        if match and (best is None or (match.start(), -len(name)) < (best[0], best[1])):
            best = (match.start(), -len(name), label)
    if best is not None:
        return Parsed(best[2], True, "ok")
    first = first_word(folded)
    if len(first) >= 4:
        hits = {label for name, label in names.items() if name.startswith(first)}
        if len(hits) == 1:
            return Parsed(hits.pop(), True, "prefix")
    return Parsed(INVALID, False, "no_label")


def parse_label_strict(text: str, labels, aliases: dict[str, str] | None = None) -> Parsed:
    """The whole answer is one label (or alias): case, surrounding whitespace, quotes, markdown emphasis and one
    closing period aside. ``"Metaphorical."`` reads; ``"The answer is metaphorical"`` does not (``parse=lenient``
    reads it with :func:`parse_label`)."""
    if not isinstance(text, str) or not text.strip():
        return Parsed(INVALID, False, "empty")
    core = _STRICT_EDGES.sub("", unicodedata.normalize("NFKC", text[:_MAX_CHARS])).casefold()
    names = {str(label).casefold(): str(label) for label in labels}
    for alias, label in (aliases or {}).items():
        names.setdefault(str(alias).casefold(), str(label))
    label = names.get(core)
    return Parsed(label, True, "ok") if label is not None else Parsed(INVALID, False, "not_one_label")


def parse_letter_strict(text: str, letters: str = "ABCD") -> Parsed:
    """The whole answer is one option letter (``A``, ``(B)``, ``C.``, ``D)``, ``Option A``)."""
    if not isinstance(text, str) or not text.strip():
        return Parsed(INVALID, False, "empty")
    core = _STRICT_EDGES.sub("", text[:_MAX_CHARS])
    match = re.fullmatch(r"(?:option\s+)?\(?([" + re.escape(letters) + r"])\)?", core, flags=re.IGNORECASE)
    return Parsed(match.group(1).upper(), True, "ok") if match else Parsed(INVALID, False, "not_one_letter")


#: What a strict parser strips from both ends of an answer: whitespace, quotes, markdown emphasis, a final period.
_STRICT_EDGES = re.compile(r"^[\s\"'‘’“”*_`]+|[\s\"'‘’“”*_`]*\.?[\s\"'‘’“”*_`]*$")


def parse_label_token(text: str, labels, aliases: dict[str, str] | None = None) -> Parsed:
    """The first whitespace token that is a label or alias once '.' and ',' are stripped from its ends (the
    authors' map_labels); no such token is ``invalid`` (their ``unk``)."""
    if not isinstance(text, str) or not text.strip():
        return Parsed(INVALID, False, "empty")
    names = {str(label).lower(): str(label) for label in labels}
    for alias, label in (aliases or {}).items():
        names.setdefault(str(alias).lower(), str(label))
    for token in text[:_MAX_CHARS].lower().split():
        label = names.get(token.strip(".,"))
        if label is not None:
            return Parsed(label, True, "ok")
    return Parsed(INVALID, False, "no_label")


def parse_letter(text: str, letters: str = "ABCD") -> Parsed:
    if not isinstance(text, str) or not text.strip():
        return Parsed(INVALID, False, "empty")
    text = text[:_MAX_CHARS]
    cls = "[" + re.escape(letters) + "]"
    start = re.match(r"^[\s\"'(\[*]*(?:option\s*)?(" + cls + r")(?![A-Za-z])", text, flags=re.IGNORECASE)
    if start and (start.group(1).isupper() or len(text.strip()) <= 3 or "option" in start.group(0).lower()):
        return Parsed(start.group(1).upper(), True, "ok")
    later = re.search(r"\b(?:option|answer)\s*(?:is\s*)?[:\s(]*(" + cls + r")(?![A-Za-z])", text, flags=re.IGNORECASE)
    if later:
        return Parsed(later.group(1).upper(), True, "ok")
    loose = re.search(r"(?<![A-Za-z])(" + cls + r")(?![A-Za-z])", text)
    if loose:
        return Parsed(loose.group(1), True, "found_later")
    return Parsed(INVALID, False, "no_letter")


# ----------------------------------------------------------------------------------------------- tagging


def _bio(words, runs: list[list[int]], positive: str) -> tuple[str, ...]:
    """Tags from runs of word indices: the first index of a run gets B-, the rest I- (if consecutive)."""
    tags = ["O"] * len(words)
    for run in runs:
        previous = None
        for index in sorted(set(run)):
            if not 0 <= index < len(words):
                continue
            inside = previous is not None and index == previous + 1 and tags[previous] != "O"
            if tags[index] == "O":
                tags[index] = f"I-{positive}" if inside else f"B-{positive}"
            previous = index
    return tuple(tags)


_BULLET = re.compile(r"^\s*(?:[-*•·]+|\d+[.)]|[a-z][.)])\s+")
_LEADING = re.compile(r"^\s*(?:and|or|y|o)\s+", re.IGNORECASE)
_NONE = re.compile(r"^\W*(?:none|no\b|nothing|n/?a\b|ninguna|ninguno|no hay)", re.IGNORECASE)


def parse_word_list(text: str, words, positive: str = "METAPHOR") -> Parsed:
    """The model lists metaphorical words; each maps to every occurrence of its form in ``words``."""
    words = tuple(words)
    empty = tuple("O" for _ in words)
    if not isinstance(text, str) or not text.strip():
        return Parsed(empty, False, "empty")
    text = text[:_MAX_CHARS]
    if _NONE.match(text):
        return Parsed(empty, True, "none")
    normed = [norm_word(w) for w in words]
    runs: list[list[int]] = []
    listed = matched = 0
    for piece in re.split(r"[,;\n|]+", text)[:64]:
        piece = _BULLET.sub("", piece.rsplit(":", 1)[-1])  # "The metaphorical words are: fell" -> "fell"
        piece = _LEADING.sub("", piece)
        tokens = [norm_word(t) for t in piece.split()]
        tokens = [t for t in tokens if t]
        if not tokens:
            continue
        listed += 1
        if len(tokens) > MAX_PHRASE_WORDS:  # a sentence, not a listed word or phrase: matches nothing
            continue
        found = False
        n = len(tokens)
        for start in range(len(normed) - n + 1):
            if normed[start : start + n] == tokens:
                runs.append(list(range(start, start + n)))
                found = True
        matched += found
    if listed == 0:
        return Parsed(empty, False, "no_words")
    if matched == 0:
        return Parsed(empty, False, "no_match")
    return Parsed(_bio(words, runs, positive), True, "ok" if matched == listed else "partial")


def parse_word_list_strict(text: str, words, positive: str = "METAPHOR") -> Parsed:
    """:func:`parse_word_list` held to the format asked for: ``none``, or a list every item of which is a word or
    phrase of the sentence, with nothing before it (``"The metaphorical words are: fell"`` and a sentence copied
    back are format failures; ``parse=lenient`` reads them with :func:`parse_word_list`)."""
    parsed = parse_word_list(text, words, positive)
    first_line = text.strip().split("\n", 1)[0] if isinstance(text, str) else ""
    if parsed.ok and (parsed.status == "partial" or ":" in first_line):
        return Parsed(tuple("O" for _ in words), False, "not_a_list")
    return parsed


def _marked_tokens(text: str, open_mark: str, close_mark: str) -> tuple[list[tuple[str, int | None]], bool, bool]:
    """Split ``text`` into whitespace tokens with the id of the marked run each lies in (None: unmarked)."""
    chars: list[tuple[str, int | None]] = []
    inside, run, found, i = False, -1, False, 0
    while i < len(text):
        if inside and text.startswith(close_mark, i):
            inside, i, found = False, i + len(close_mark), True
            continue
        if not inside and text.startswith(open_mark, i):
            inside, run, i, found = True, run + 1, i + len(open_mark), True
            continue
        chars.append((text[i], run if inside else None))
        i += 1
    tokens: list[tuple[str, int | None]] = []
    current, current_run = "", None
    for ch, r in chars + [(" ", None)]:
        if ch.isspace():
            if current:
                tokens.append((current, current_run))
            current, current_run = "", None
        else:
            current += ch
            if r is not None and current_run is None:
                current_run = r
    return tokens, found, inside


def parse_marked(text: str, words, positive: str = "METAPHOR", mark: str = "*", close: str | None = None) -> Parsed:
    """The model copies the sentence marking metaphorical words; marks are aligned back to ``words``."""
    words = tuple(words)
    empty = tuple("O" for _ in words)
    if not isinstance(text, str) or not text.strip():
        return Parsed(empty, False, "empty")
    text = text[:_MAX_CHARS].split("\n\n")[0]
    tokens, found, unclosed = _marked_tokens(text, mark, close if close is not None else mark)
    normed = [norm_word(w) for w in words]
    out_normed = [norm_word(t) for t, _ in tokens]
    matcher = difflib.SequenceMatcher(None, normed, out_normed, autojunk=False)
    aligned: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            aligned[block.b + offset] = block.a + offset
    ratio = matcher.ratio()
    if not found:
        return Parsed(empty, ratio >= 0.5, "no_marks" if ratio >= 0.5 else "not_a_copy")
    runs: dict[int, list[int]] = {}
    used = set(aligned.values())
    unplaced = 0
    for position, (token, run) in enumerate(tokens):
        if run is None or not norm_word(token):
            continue
        index = aligned.get(position)
        if index is None:  # the model changed the word: place it on an unaligned input word of the same form
            candidates = [i for i, w in enumerate(normed) if w == norm_word(token) and i not in used]
            index = candidates[0] if candidates else None
        if index is None:
            unplaced += 1
            continue
        used.add(index)
        runs.setdefault(run, []).append(index)
    if not runs:
        return Parsed(empty, False, "marks_unaligned")
    status = "ok" if not unplaced and not unclosed else ("unclosed" if unclosed else "partial")
    return Parsed(_bio(words, list(runs.values()), positive), True, status)


# ----------------------------------------------------------------------------------------------- ranking


def rank_candidates(answer) -> list[str]:
    """Ranked candidate words from a RankRequest answer ``[[token, word_or_None], ...]``.

    A token that was not completed (it begins no acceptable answer) keeps its place with a placeholder that
    matches nothing, so ranks are positions in the model's next-token order (after de-duplication of equal
    completed words by the ranking metrics).
    """
    out = []
    for position, entry in enumerate(answer or []):
        word = None
        if isinstance(entry, (list, tuple)) and len(entry) == 2:
            word = entry[1]
        elif isinstance(entry, str):
            word = entry
        out.append(word if isinstance(word, str) and word else f"\x00{position}")
    return out
