"""The sense-annotated instances the pipeline reads, and MOH's metaphor label per WordNet sense.

- :func:`semcor_instances`: every SemCor word whose sense key resolves in WordNet 3.0 (SOR training data, and
  part of the mining pool).
- :func:`pool_instances`: SemCor + the five Raganato evaluation sets (``raganato_wsd`` set=ALL). This is our
  stand-in for UFSAC, which the paper mines and which is not in the mirror: UFSAC unifies these corpora and
  more (OMSTI, MASC, WordNet glosses...), so the pool is smaller than the paper's. Raganato instances with more
  than one gold key are dropped, as the authors' code drops ambiguous UFSAC sentences.
- :func:`moh_sense_labels`: MOH's ``term#v#n`` senses mapped to WordNet 3.0 sense keys through the sense number,
  labelled metaphor/literal. MOH covers verbs only; the paper's MWS labels for nouns, adjectives and adverbs
  were never released, so HARD(M) here is verbs only.

A "word" is a lemma and a WordNet part of speech, read from the sense key itself (``absorb%2:...`` is the verb
``absorb``), so SemCor and Raganato agree whatever their own lemma columns say.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from metabench.plugin_api import DataError, LIT, MET

#: sense-key ss_type -> WordNet part of speech (5 = adjective satellite)
SS_TYPE = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}


@dataclass(frozen=True)
class Instance:
    """One sense-annotated word in its sentence; ``words`` are whitespace tokens (multiword units split)."""

    id: str
    words: tuple[str, ...]
    index: int  # first whitespace token of the target
    key: str  # WordNet 3.0 sense key

    @property
    def word(self) -> str:
        """``lemma.pos`` from the sense key, e.g. ``absorb.v``."""
        lemma, _, rest = self.key.partition("%")
        return f"{lemma.lower()}.{SS_TYPE.get(rest[:1], '?')}"

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def span(self) -> tuple[int, int]:
        start = sum(len(w) + 1 for w in self.words[: self.index])
        return start, start + len(self.words[self.index])


def _split_words(words, target: int) -> tuple[tuple[str, ...], int]:
    """Whitespace tokens of a sentence whose words may be multiword units (``take_off``), and the target's index."""
    tokens: list[str] = []
    index = 0
    for i, word in enumerate(words):
        if i == target:
            index = len(tokens)
        parts = [p for p in word.replace("_", " ").split() if p] or [word or "_"]
        tokens.extend(parts)
    return tuple(tokens), index


def _instances(sentences, *, require_single: bool) -> list[Instance]:
    out = []
    for sentence in sentences:
        for position, keys in enumerate(sentence.senses):
            if not keys or (require_single and len(keys) != 1):
                continue
            words, index = _split_words(sentence.words, position)
            ident = sentence.instance_ids[position] if sentence.instance_ids and sentence.instance_ids[position] else (
                f"{sentence.id}:{position}")
            out.append(Instance(id=f"{sentence.source}:{ident}", words=words, index=index, key=keys[0]))
    return out


def files_hash(*file_maps: dict[str, str]) -> str:
    """One hash of the data files (mirror path -> sha256) a result was computed from."""
    merged = {}
    for files in file_maps:
        merged.update(files)
    return hashlib.sha256(json.dumps(merged, sort_keys=True).encode()).hexdigest()


_MEMO: dict = {}


def _memo(name: str, registry, data_dir, build):
    """One parse per process: ``hard mine`` needs SemCor for the SOR key and again for the pool (30 s of XML)."""
    key = (name, id(registry), str(data_dir))
    if key not in _MEMO:
        _MEMO[key] = build()
    return _MEMO[key]


def semcor_instances(registry, data_dir=None) -> tuple[list[Instance], dict[str, str]]:
    """SemCor instances (all 352 documents, keys resolving in WordNet 3.0) and the files they came from."""
    from metabench.plugin_api import load_split  # noqa: PLC0415

    def build():
        loaded = load_split(registry, "semcor", "train", {"part": "all"}, data_dir)
        return _instances(loaded.items, require_single=True), loaded.files

    return _memo("semcor", registry, data_dir, build)


def pool_instances(registry, data_dir=None) -> tuple[list[Instance], dict[str, str]]:
    """SemCor + Raganato ALL instances (single gold key), our stand-in for UFSAC, and their files."""
    from metabench.plugin_api import load_split  # noqa: PLC0415

    semcor, files = semcor_instances(registry, data_dir)
    raganato = load_split(registry, "raganato_wsd", "test", {"set": "ALL"}, data_dir)
    return semcor + _instances(raganato.items, require_single=True), {**files, **raganato.files}


@dataclass(frozen=True)
class SenseLabels:
    """MOH's label per WordNet sense key, the gloss of every sense of the MOH words, and the files read."""

    labels: dict[str, str]  # sense key -> metaphor / literal
    glosses: dict[str, str]  # sense key -> WordNet gloss (for every sense of a MOH word)
    files: dict[str, str]

    @property
    def words(self) -> set[str]:
        return {_word(key) for key in self.labels}

    def metaphorical(self) -> set[str]:
        return {k for k, label in self.labels.items() if label == MET}

    def literal(self) -> set[str]:
        return {k for k, label in self.labels.items() if label == LIT}


def _word(key: str) -> str:
    lemma, _, rest = key.partition("%")
    return f"{lemma.lower()}.{SS_TYPE.get(rest[:1], '?')}"


def moh_sense_labels(registry, data_dir=None) -> SenseLabels:
    """MOH ``term#pos#n`` senses as WordNet 3.0 sense keys (by lemma, part of speech and sense number)."""
    return _memo("moh", registry, data_dir, lambda: _moh_sense_labels(registry, data_dir))


def _moh_sense_labels(registry, data_dir) -> SenseLabels:
    from metabench.plugin_api import load_split  # noqa: PLC0415

    moh = load_split(registry, "moh_raw", "all", {}, data_dir)
    wordnet = load_split(registry, "wordnet", "all", {"pos": "v"}, data_dir)
    by_number = {(s.lemma.lower(), s.pos, s.sense_number): s.id for s in wordnet.items}
    labels = {}
    for item in moh.items:
        sense = item.meta["sense"]
        lemma, pos, number = (sense.split("#") + ["", ""])[:3]
        key = by_number.get((lemma.lower(), pos, int(number) if number.isdigit() else -1))
        if key is None:
            raise DataError(f"moh_raw line {item.meta['line']}: sense {sense!r} has no WordNet 3.0 sense key",
                            hint="MOH senses are 'lemma#v#number' with WordNet 3.0 sense numbers")
        labels[key] = item.label
    words = {_word(k) for k in labels}
    glosses = {s.id: s.gloss for s in wordnet.items if f"{s.lemma.lower()}.{s.pos}" in words}
    return SenseLabels(labels, glosses, {**moh.files, **wordnet.files})
