"""Shared helpers of the dataset modules: manifest lookup, ids, token offsets, count checks.

Kept free of heavy imports: every dataset module imports this at registration time.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from ...errors import DataError
from ..manifests import manifest_files, read_manifest
from ..spec import DataFile

MANIFEST_DIR = Path(__file__).resolve().parent.parent / "manifest"

# Labels shared by the binary detection datasets (TextItem.label).
MET = "metaphor"
LIT = "literal"
MET_TAG = "B-METAPHOR"
LIT_TAG = "O"


@lru_cache(maxsize=None)
def _manifest(family: str) -> dict[str, DataFile]:
    return read_manifest(MANIFEST_DIR / f"{family}.json")


def files(family: str, *paths: str) -> tuple[DataFile, ...]:
    """The manifest entries of ``family`` for the given mirror paths (a path ending in '/' = every file below).

    Raises at registration if a path is not in the manifest, so a spec can never declare an unhashed file.
    """
    return manifest_files(_manifest(family), *paths)


@lru_cache(maxsize=64)
def cached_conll(path: Path, encoding: str, sha256: str, columns: int = 2) -> tuple:
    """(line, words, tags) per sentence of a two-column CoNLL file, parsed once per process.

    Keyed by the file's verified sha256 as well as its path, so a changed file is never served stale.
    """
    from ..readers import read_conll  # noqa: PLC0415

    return tuple(
        (line, tuple(r[0] for r in rows), tuple(r[-1] for r in rows))
        for line, rows in read_conll(path, encoding=encoding, columns=columns)
    )


def stem(relpath: str) -> str:
    """File name without its extension(s): 'a/b/meta4xnli_train.tsv' -> 'meta4xnli_train'."""
    name = relpath.rsplit("/", 1)[-1]
    for suffix in (".gz", ".naf", ".tsv", ".csv", ".jsonl", ".json", ".txt", ".xml"):
        name = name.removesuffix(suffix)
    return name


_TOKEN = re.compile(r"\S+")


def token_spans(text: str) -> list[tuple[int, int]]:
    """Character (start, end) of every whitespace token of ``text`` (the tokenisation of all the CSV/TSV
    datasets whose target index counts whitespace tokens)."""
    return [m.span() for m in _TOKEN.finditer(text)]


def word_spans(text: str, words: list[str], indices) -> tuple[tuple[int, int], ...]:
    """Character (start, end) of the given indices of ``words`` (``text.split()``): by arithmetic where one
    whitespace character separates the words and none surrounds them (a word then starts after the letters and
    separators before it), else from :func:`token_spans`. MAGPIE marks 2-4 tokens of a sentence (5th-95th
    percentile; 23 tokens at the median): locating every token with the regular expression was 28 % of its
    loader's py-spy samples."""
    if len(text) == sum(map(len, words)) + len(words) - 1:
        starts = [sum(map(len, words[:i])) + i for i in indices]
        return tuple((start, start + len(words[i])) for start, i in zip(starts, indices))
    spans = token_spans(text)
    return tuple(spans[i] for i in indices)


def target_span(text: str, index: int, where: str) -> tuple[int, int]:
    spans = token_spans(text)
    if not 0 <= index < len(spans):
        raise DataError(f"{where}: target index {index} is outside the sentence's {len(spans)} tokens")
    return spans[index]


def binary_label(raw: str, where: str, *, positive=("1",), negative=("0",)) -> str:
    value = raw.strip()
    if value in positive:
        return MET
    if value in negative:
        return LIT
    raise DataError(f"{where}: label {raw!r} is not one of {list(positive) + list(negative)}")


def to_int(raw: str, where: str, what: str = "value") -> int:
    try:
        return int(raw.strip())
    except ValueError:
        raise DataError(f"{where}: {what} {raw!r} is not an integer") from None


def check_unique_ids(items: Iterable, where: str) -> None:
    """Ids must be unique within a split (samples.jsonl is keyed by them)."""
    counts = Counter(item.id for item in items)
    dupes = [i for i, n in counts.items() if n > 1]
    if dupes:
        raise DataError(f"{where}: {len(dupes)} duplicate item ids, e.g. {dupes[:3]}")


def bad_split(spec_name: str, split: str, valid: Iterable[str], why: str = "") -> DataError:
    return DataError(
        f"dataset '{spec_name}' has no split '{split}'" + (f" ({why})" if why else ""),
        hint=f"its splits are: {', '.join(valid)}",
    )


def result(name: str, expected, actual, detail: str = ""):
    """A CheckResult (imported lazily: verify.py is only needed when checks run)."""
    from ..verify import expect  # noqa: PLC0415

    return expect(name, expected, actual, detail)


def noted(name: str, expected, actual, detail: str):
    """A known discrepancy: expected = the paper's number, actual = the release's; ok because the reason is
    documented in ``detail`` (never a faked agreement: both numbers are reported)."""
    from ..verify import CheckResult  # noqa: PLC0415

    return CheckResult(name, expected, actual, ok=True, detail=f"KNOWN DISCREPANCY: {detail}")


def conll_items(ctx, relpath: str, *, language: str = "en", source: str = "", meta: dict | None = None) -> list:
    """TaggedSentences of a two-column CoNLL file; ids ``<file stem>:<0-based sentence index>``."""
    from ..items import TaggedSentence  # noqa: PLC0415

    name = stem(relpath)
    sentences = cached_conll(ctx.path(relpath), ctx.encoding(relpath), ctx.declared(relpath).sha256)
    return [
        TaggedSentence(
            id=f"{name}:{index}",
            words=words,
            tags=tags,
            language=language,
            source=source,
            meta={"line": line, **(meta or {})},
        )
        for index, (line, words, tags) in enumerate(sentences)
    ]


def tagging_stats(items) -> tuple[int, int, int]:
    """(sentences, tokens, metaphor tokens = tags other than O) of TaggedSentences."""
    return (
        len(items),
        sum(len(it.words) for it in items),
        sum(t != LIT_TAG for it in items for t in it.tags),
    )


def label_counts(items, attr: str = "label") -> dict:
    counts = Counter(getattr(it, attr) for it in items)
    return dict(sorted(counts.items()))


def target_row_item(row: dict, where: str, *, id: str, index_column: str, source: str, meta: dict, lemma: str = "",
                    pos: str = "", group: str = ""):
    """The TextItem of one row of a Gao et al. (2018)-style table: ``sentence``, a 0/1 ``label`` and the 0-based
    target word in ``index_column`` (the verb CSVs, MelBERT's TSVs, the VUA-Verb WSD files); a bad index or label
    is a DataError naming ``where``."""
    from ..items import TextItem  # noqa: PLC0415

    target = to_int(row[index_column], where, index_column)
    text = row["sentence"]
    return TextItem(id=id, text=text, label=binary_label(row["label"], where), spans=(target_span(text, target, where),),
                    target_index=target, lemma=lemma, pos=pos, group=group, source=source, meta=meta)


def melbert_fold_items(ctx, relpath: str, *, prefix: str, source: str, meta: dict | None = None) -> list:
    """TextItems of a MelBERT classification TSV (``index, label, sentence, pos, v_index``).

    Ids are ``<prefix>:<index column>``: the source's own item number, the same in every fold.
    """
    from ..readers import read_table  # noqa: PLC0415

    rows = read_table(ctx.path(relpath), encoding=ctx.encoding(relpath), delimiter="\t", quotechar=None)
    items = [target_row_item(row, f"{relpath}:{line}", id=f"{prefix}:{row['index'].strip()}", index_column="v_index",
                             pos=row["pos"], source=source, meta={"line": line, **(meta or {})})
             for line, row in rows]
    check_unique_ids(items, relpath)
    return items


def gao_verb_items(ctx, relpath: str, *, source: str, index_column: str = "verb_idx", meta: dict | None = None,
                   extra=(), group=None) -> list:
    """TextItems of a Gao et al. (2018) verb CSV (``verb, sentence, verb_idx, label`` [+ extra columns]).

    Ids are ``<file stem>:<0-based row>``. ``extra``: columns copied into ``meta`` (a dict maps a meta key to
    its column); ``group``: ``row -> str``, the item's group (VUA-Verb: its sentence).
    """
    columns = extra if isinstance(extra, dict) else {k: k for k in extra}
    from ..readers import read_table  # noqa: PLC0415

    name = stem(relpath)
    items = [target_row_item(row, f"{relpath}:{line}", id=f"{name}:{index}", index_column=index_column,
                             lemma=row["verb"], pos="VERB", group=group(row) if group else "", source=source,
                             meta={"line": line, **{k: row[c] for k, c in columns.items()}, **(meta or {})})
             for index, (line, row) in enumerate(read_table(ctx.path(relpath), encoding=ctx.encoding(relpath)))]
    check_unique_ids(items, relpath)
    return items


def fold_counts(ctx, folds: int = 10) -> dict:
    """Per fold (test size, train size), whether train and test are disjoint, and the union of test folds."""
    sizes, disjoint, union, total = [], True, set(), None
    for fold in range(folds):
        test = ctx.load("test", fold=fold)
        train = ctx.load("train", fold=fold)
        sizes.append((len(test), len(train)))
        test_ids, train_ids = {i.id for i in test}, {i.id for i in train}
        disjoint &= not (test_ids & train_ids)
        union |= test_ids
        everything = {i.id: i.label for i in test + train}
        total = everything if total is None else total
        if everything != total:
            total = {"inconsistent": True}
    return {"sizes": sizes, "disjoint": disjoint, "test_union": len(union), "items": total}
