"""The loader of ``hf_dataset`` sources: one split read with ``datasets``, its rows made into typed items.

The task's ``columns`` map item fields to columns; the fields given choose the item type (:data:`TYPES`).
Class-label columns (``ClassLabel``, or a sequence of them for tags) give their names, as a task's labels
are names. A row that does not fit (a missing value, words and tags of different lengths) is a DataError
naming the task file, the split and the row, never a skipped row. ``datasets`` is imported here only, when a
split is actually parsed (the parsed-item cache serves later runs without it).
"""

from __future__ import annotations

from pathlib import Path

from ..cache import cache_root
from ..errors import DataError, did_you_mean
from ..extras import missing_extra
from .items import NLIPair, TaggedSentence, TextItem

#: Item type -> (fields that choose it, optional fields).
TYPES = {
    TaggedSentence: (("words", "tags"), ("id", "language")),
    NLIPair: (("premise", "hypothesis", "label"), ("id", "language", "genre")),
    TextItem: (("text", "label"), ("id", "spans", "target_index", "lemma", "pos", "group", "language")),
}
FIELDS = tuple(dict.fromkeys(f for required, optional in TYPES.values() for f in (*required, *optional)))


def item_type(columns: dict) -> type:
    """The item type a ``columns`` mapping makes (ValueError saying what is missing or unknown)."""
    unknown = [f for f in columns if f not in FIELDS]
    if unknown:
        raise ValueError(f"unknown item field '{unknown[0]}'{did_you_mean(unknown[0], FIELDS)}")
    for cls, (required, optional) in TYPES.items():
        if all(f in columns for f in required):
            extra = [f for f in columns if f not in (*required, *optional)]
            if extra:
                raise ValueError(f"field '{extra[0]}' is not one of {cls.__name__}'s ({', '.join((*required, *optional))})")
            return cls
    shapes = "; ".join(f"{' + '.join(required)} ({cls.__name__})" for cls, (required, _) in TYPES.items())
    raise ValueError(f"fields {', '.join(columns)} make no item: give {shapes}")


def load(ctx, split: str) -> list:
    """Items of one split of the context's ``datasets`` source (every file of the spec verified first)."""
    spec = ctx.spec
    for declared in spec.files:
        ctx.path(declared.path)
    dataset = _open(spec, split)
    return to_items(dataset, spec.source["columns"], split, f"{spec.source['where']}: hf_dataset '{spec.source['path']}'")


def verify(ctx) -> list:
    """``metabench data verify``'s check of a source: every split it lists read whole, each row an item (a
    column or row that does not fit fails the check with its message). Rows its card declares are
    ``counts["items"]``, checked beside."""
    from .verify import expect  # noqa: PLC0415 - verify imports the loaders' context, not the reverse

    return [expect(f"rows read as items {split}", _open(ctx.spec, split).num_rows, len(ctx.load(split)))
            for split in ctx.spec.splits]


def _open(spec, split: str):
    """The split as a ``datasets.Dataset``: ``load_from_disk`` for a save_to_disk folder, else ``load_dataset``
    with metabench's own cache folder."""
    source, root = spec.source, spec.root
    try:
        import datasets  # noqa: PLC0415 - heavy, and only for tasks that read a datasets source
    except ImportError as exc:
        raise missing_extra(exc, f"{source['where']}: hf_dataset '{source['path']}'") or exc from None
    was_on = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        dataset = _read(datasets, spec, split)
        json_text = _json_encoded_column(dataset, source["columns"])
        if json_text is not None:  # a list's JSON among the texts: the files' own types say whether it was one
            mixed = _types_across_files(datasets, spec)
            if mixed is not None or json_text[3]:
                raise mixed or _json_text_error(source, split, *json_text[:3])
        return dataset
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - datasets raises many types for a source it cannot read (a card
        # whose splits disagree, a corrupt arrow file, a missing config): each is the source's problem, named
        if "Unknown split" in str(exc):
            raise _unknown_split(source, split, _splits_in(str(exc))) from None
        mixed = _types_across_files(datasets, spec) if _cast_failed(exc) else None
        if mixed is not None:
            raise mixed from None
        raise DataError(f"{source['where']}: hf_dataset '{source['path']}' split '{split}': "
                        f"{type(exc).__name__}: {exc}{_root_cause(exc)}",
                        hint=f"`metabench data verify --tasks {spec.name.removeprefix('hf.')}` reads every split") from None
    finally:
        if was_on:
            datasets.enable_progress_bars()


def _read(datasets, spec, split: str):
    """One split from where the source lives: a save_to_disk folder, or files through ``load_dataset``."""
    source, root = spec.source, spec.root
    if source["place"] == "local" and any(f.path in ("dataset_dict.json", "state.json") for f in spec.files):
        loaded = datasets.load_from_disk(root)
        if isinstance(loaded, datasets.Dataset):
            loaded = datasets.DatasetDict({spec.splits[0]: loaded})
        if split not in loaded:
            raise _unknown_split(source, split, list(loaded))
        return loaded[split]
    path = source["path"] if source["place"] == "builder" else root
    return datasets.load_dataset(path, source["name"], data_files=_absolute(root, source["data_files"]), split=split,
                                 cache_dir=str(cache_root() / "hf-datasets"))


#: Suffixes of the files ``datasets`` reads rows from (a source's card and other files are not probed).
DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".parquet", ".arrow", ".txt")
#: At most this many files are read one by one to find the column whose type differs between them.
MAX_PROBED_FILES = 64


def _causes(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _root_cause(exc: BaseException) -> str:
    """`` (from ArrowInvalid: ...)``: what a wrapper such as ``DatasetGenerationError`` ("An error occurred
    while generating the dataset") was raised from, or nothing."""
    *_, last = _causes(exc)
    return "" if last is exc else f" (from {type(last).__name__}: {str(last)[:300]})"


def _json_encoded_column(dataset, columns: dict) -> tuple[str, str, list[str], bool] | None:
    """(field, column, examples, every value JSON) of a mapped text column holding a value that is the JSON text
    of a list or an object: what ``datasets`` makes of a column holding lists in one file and strings in another
    (that file's values come back JSON-encoded, ``'"a sentence"'`` and ``'["w"]'``, and would reach the model
    quoted). One pass over the column; past the first value that is not JSON, only values that start with ``[``
    or ``{`` are parsed."""
    import json  # noqa: PLC0415

    for item_field, column in columns.items():
        feature = dataset.features.get(column)
        if type(feature).__name__ != "Value" or getattr(feature, "dtype", None) not in ("string", "large_string"):
            continue
        shown, every = [], True
        for value in dataset[column]:
            if not isinstance(value, str):
                continue
            if not (every or value[:1] in ("[", "{") and len(shown) < 2):
                continue
            try:
                decoded = json.loads(value)
            except ValueError:
                every = False
                continue
            every = every and isinstance(decoded, (str, list, dict))
            if isinstance(decoded, (list, dict)) and len(shown) < 2:
                shown.append(value[:40])
        if shown:
            return item_field, column, shown, every
    return None


def _json_text_error(source: dict, split: str, item_field: str, column: str, shown: list[str]) -> DataError:
    return DataError(f"{source['where']}: hf_dataset '{source['path']}' split '{split}': columns.{item_field}: column "
                     f"'{column}' mixes lists and strings, so datasets read every value as JSON text "
                     f"({', '.join(repr(v) for v in shown)}): the texts would reach the model quoted",
                     hint=f"make '{column}' one type in every row of every file (all text, or all lists)")


def _cast_failed(exc: BaseException) -> bool:
    """Whether ``datasets`` failed to give a file's rows the types it had fixed for the source (pyarrow's
    ``Failed to parse string ... as a scalar of type int64``, datasets' ``CastError``)."""
    return any(type(e).__name__ in ("ArrowInvalid", "ArrowTypeError", "ArrowNotImplementedError", "CastError")
               or (isinstance(e, TypeError) and str(e).startswith("Couldn't cast")) for e in _causes(exc))


def _types_across_files(datasets, spec) -> DataError | None:
    """A column whose type differs between the source's files, named with each file's type; None when reading
    the files one by one shows none (or they cannot be read alone).

    ``datasets`` reads every file of a source (all splits) with the column types it found first: ``label``
    holding 0/1 in train.jsonl and names in test.jsonl fails as "An error occurred while generating the
    dataset", naming neither the column nor the file. (Values that do convert are converted: a number after
    text becomes its text, which a label then fails ``labels.names`` with.)"""
    source, root = spec.source, spec.root
    files = [f.path for f in spec.files if any(suffix in DATA_SUFFIXES for suffix in Path(f.path).suffixes)]
    path = source["path"] if source["place"] == "builder" else root
    types: dict[str, dict[str, str]] = {}
    for rel in files[:MAX_PROBED_FILES]:
        try:
            alone = datasets.load_dataset(path, source["name"], data_files={"train": f"{root}/{rel}"}, split="train",
                                          cache_dir=str(cache_root() / "hf-datasets"))
        except Exception:  # noqa: BLE001 - a file that cannot be read alone tells nothing about the others
            continue
        types[rel] = {column: _type_name(feature) for column, feature in alone.features.items()}
    mapped = list(source["columns"].values())
    columns = sorted({c for found in types.values() for c in found}, key=lambda c: (c not in mapped, c))
    for column in columns:
        held = {rel: found.get(column) for rel, found in types.items()}
        if len(set(held.values())) > 1:
            where = f"{source['where']}: hf_dataset '{source['path']}'"
            shown = ", ".join(f"{kind or 'no such column'} in {rel}" for rel, kind in list(held.items())[:6])
            more = f" (and {len(held) - 6} more files)" if len(held) > 6 else ""
            return DataError(
                f"{where}: column '{column}' has different types in the source's files: {shown}{more}; datasets "
                "reads every file with the types it found first, so the others fail to convert",
                hint=f"make '{column}' one type in every file (all text, or all numbers), or the same columns in each")
    return None


def _type_name(feature) -> str:
    """``int64``, ``string``, ``ClassLabel(names=[...])``, ``List(string)``...: a column's type as shown."""
    dtype = getattr(feature, "dtype", None)
    return dtype if type(feature).__name__ == "Value" and dtype else str(feature)


def _absolute(root: str, data_files):
    """``data_files`` made absolute under the source's folder (``datasets`` resolves them against its cwd)."""
    if data_files is None:
        return None
    if isinstance(data_files, str):
        return f"{root}/{data_files}"
    if isinstance(data_files, list):
        return [f"{root}/{f}" for f in data_files]
    return {split: _absolute(root, files) for split, files in data_files.items()}


def _splits_in(message: str) -> list[str]:
    """The split names a ``datasets`` 'Unknown split' message lists (``Should be one of ['train', 'test']``)."""
    import ast  # noqa: PLC0415

    start = message.find("[")
    try:
        return [str(s) for s in ast.literal_eval(message[start: message.index("]", start) + 1])]
    except (ValueError, SyntaxError):
        return []


def _unknown_split(source: dict, split: str, known: list[str]) -> DataError:
    return DataError(
        f"{source['where']}: hf_dataset '{source['path']}' has no split '{split}'{did_you_mean(split, known)}",
        hint=f"its splits are: {', '.join(known) or '(unknown)'}; the task's splits name them",
    )


def to_items(dataset, columns: dict, split: str, where: str) -> list:
    """Rows to items: mapped columns to fields (class labels to names), the other columns to ``meta``."""
    cls = item_type(columns)
    names = list(dataset.column_names)
    for item_field, column in columns.items():
        if column not in names:
            raise DataError(f"{where}: columns.{item_field}: split '{split}' has no column '{column}'"
                            f"{did_you_mean(column, names)}", hint=f"its columns are: {', '.join(names)}")
    for item_field, column in columns.items():
        _check_feature(dataset.features[column], item_field, column, where)
    decode = {column: _decoder(dataset.features[column]) for column in columns.values()}
    rest = [c for c in names if c not in columns.values()]
    table = dataset.to_dict()
    items = []
    for row in range(dataset.num_rows):
        try:  # a class id outside the names (-1: an unlabelled test split on the Hub) fails its row too
            values = {f: decode[c](table[c][row]) for f, c in columns.items()}
            items.append(_item(cls, values, split, row, {c: table[c][row] for c in rest}))
        except (TypeError, ValueError) as exc:
            raise DataError(f"{where}: split '{split}' row {row}: {exc}") from None
    return items


def _check_feature(feature, item_field: str, column: str, where: str) -> None:
    """A column's type fits its field: one value for a text field, a sequence of values for words and tags.
    ``datasets`` reads a json column of mixed types as ``Json``, rows JSON-encoded: text no model should see."""
    kind = type(feature).__name__
    inner = type(getattr(feature, "feature", None)).__name__
    if item_field in ("words", "tags"):
        fits = kind in ("Sequence", "List", "LargeList") and inner in ("Value", "ClassLabel")
    else:
        fits = item_field == "spans" or kind in ("Value", "ClassLabel")
    if not fits:
        shape = "a list of strings" if item_field in ("words", "tags") else "one value per row"
        raise DataError(f"{where}: columns.{item_field}: column '{column}' holds {feature}, not {shape}",
                        hint="a json column of mixed types is read as Json: make every row's value the same type")


def _decoder(feature):
    """Class-label ids to names (a ClassLabel, or a sequence of them); anything else as it is."""
    if getattr(feature, "names", None) is not None:
        return lambda value: _name(feature.names, value)
    inner = getattr(feature, "feature", None)
    if inner is not None and getattr(inner, "names", None) is not None:
        return lambda values: None if values is None else [_name(inner.names, v) for v in values]
    return lambda value: value


def _name(names: list[str], value):
    """A class id's name; an id outside the names (-1 marks an unlabelled row on the Hub) is an error."""
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    if not 0 <= value < len(names):
        raise ValueError(f"class id {value} is none of the column's {len(names)} names: a split without gold "
                         "labels cannot be scored")
    return names[value]


def _item(cls, values: dict, split: str, row: int, meta: dict):
    """One item from its field values, each checked for the type the item holds."""
    missing = [f for f, v in values.items() if v is None and f not in ("spans", "target_index")]
    if missing:
        raise ValueError(f"{missing[0]} is empty")
    fields = {f: v for f, v in values.items() if f not in ("id", "spans", "words", "tags", "target_index")}
    for name, value in fields.items():
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise TypeError(f"{name} is a {type(value).__name__}, not text")
        fields[name] = str(value)
    item_id = str(values.get("id", f"{split}:{row}"))
    if cls is TaggedSentence:
        words, tags = _strings(values["words"], "words"), _strings(values["tags"], "tags")
        if len(words) != len(tags):
            raise ValueError(f"{len(words)} words but {len(tags)} tags")
        return TaggedSentence(id=item_id, words=words, tags=tags, meta=meta, **fields)
    if cls is TextItem:
        if values.get("spans") is not None:
            fields["spans"] = _spans(values["spans"])
        if values.get("target_index") is not None:
            fields["target_index"] = int(values["target_index"])
    return cls(id=item_id, meta=meta, **fields)


def _strings(value, name: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a list of strings, not {value!r:.60}")
    return tuple(value)


def _spans(value) -> tuple[tuple[int, int], ...]:
    """Character spans: [start, end] or a list of them."""
    pairs = [value] if len(value) == 2 and all(isinstance(v, int) for v in value) else value
    if not all(isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(v, int) for v in p) for p in pairs):
        raise TypeError(f"spans must be [start, end] or a list of them, not {value!r:.60}")
    return tuple((int(a), int(b)) for a, b in pairs)
