"""Readers for the file formats the datasets come in: CoNLL word/tag, CSV/TSV, JSON/JSONL, xlsx.

Every row reader yields ``(line_number, record)``, where ``line_number`` is the 1-based *physical* line of the
record's first line in the file, so that a loader can build stable ids and point at the exact place of a
problem. A malformed row raises ``DataError("path:line: problem", hint=...)``; nothing is skipped silently
(a model scored on a silently shortened dataset gives numbers nobody can compare).

Files are read as bytes and split on ``\\n`` only, then decoded line by line: line numbers match what an
editor shows, CRLF endings are tolerated, a byte-order mark is dropped, and an undecodable byte is reported
with its line (a text-mode reader would report it at the start of a later 8 KiB chunk). Multi-byte encodings
without ASCII newlines (UTF-16/32) are therefore not supported; none of the datasets uses them.
"""

from __future__ import annotations

import csv
import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from ..errors import DataError

_BOM = "\ufeff"


def open_text(path, *, encoding: str = "utf-8", compressed: str = "") -> TextIO:
    """A text handle on a file, transparently gunzipping mirror copies stored with ``compressed="gzip"``."""
    if compressed == "gzip" or (not compressed and str(path).endswith(".gz")):
        return gzip.open(path, "rt", encoding=encoding)
    if compressed:
        raise DataError(f"{path}: unknown compression '{compressed}'", hint="use compressed='gzip' or ''")
    return open(path, encoding=encoding)


def _open_binary(path, compressed: str):
    if compressed == "gzip" or (not compressed and str(path).endswith(".gz")):
        return gzip.open(path, "rb")
    return open(path, "rb")


def _lines(path, encoding: str, compressed: str = "", *, keep_ends: bool = False) -> Iterator[tuple[int, str]]:
    """(line number, decoded line) for each physical line (split on LF); CR LF ends stripped unless ``keep_ends``.

    The file is decoded in one go (the per-line work dominates loading otherwise); a byte that does not
    decode is reported with its line and column.
    """
    try:
        with _open_binary(path, compressed) as handle:
            data = handle.read()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        number = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise DataError(
            f"{path}:{number}: cannot decode byte {data[exc.start:exc.start + 1]!r} at column {column} as {encoding}",
            hint="declare the file's encoding (several VUA files are cp1252/latin-1) in the spec",
        ) from None
    if text.startswith(_BOM):
        text = text[1:]
    lines = text.split("\n")
    last_has_end = lines[-1] == ""
    if last_has_end:
        lines.pop()
    final = len(lines)
    for number, line in enumerate(lines, start=1):
        if keep_ends:
            yield number, line + "\n" if (number < final or last_has_end) else line
        else:
            yield number, line[:-1] if line.endswith("\r") else line


def read_conll(
    path,
    *,
    encoding: str = "utf-8",
    columns: int = 2,
    sep: str | None = "\t",
    skip_docstart: bool = True,
    compressed: str = "",
) -> Iterator[tuple[int, list[tuple[str, ...]]]]:
    """Sentences of a CoNLL-style file: blank-line separated lines of ``word<sep>tag`` (``columns`` fields).

    Words are kept exactly as written (punctuation attached to a word stays attached: the gold tags were
    assigned to those tokens). ``-DOCSTART-`` lines are skipped. ``sep=None`` splits on any whitespace.
    Yields (line of the sentence's first token, [fields per token]).

    Fields are interned: a corpus repeats its tags and most of its words, and one string object per value
    instead of per token is what the parsed-item cache then pickles and unpickles (pickle writes each
    distinct object once): VUA-20's, Meta4XNLI's and CoMeta's sentences pickle 18-25 % smaller.
    """
    sentence: list[tuple[str, ...]] = []
    start = 0
    for number, line in _lines(path, encoding, compressed):
        if not line.strip():
            if sentence:
                yield start, sentence
                sentence = []
            continue
        if skip_docstart and line.startswith("-DOCSTART-"):
            continue
        fields = tuple(map(sys.intern, line.split(sep)))
        if len(fields) != columns:
            shown = "TAB" if sep == "\t" else repr(sep) if sep else "whitespace"
            raise DataError(
                f"{path}:{number}: expected {columns} {shown}-separated fields, got {len(fields)}: {line!r}",
                hint="the row is malformed; fix the file or declare the right column count/separator",
            )
        if not sentence:
            start = number
        sentence.append(fields)
    if sentence:
        yield start, sentence


def read_table(
    path,
    *,
    encoding: str = "utf-8",
    delimiter: str = ",",
    header: bool | list[str] | str = True,
    quotechar: str | None = '"',
    skip_blank: bool = False,
    compressed: str = "",
) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows of a CSV/TSV file as dicts, each with the physical line its record starts on.

    ``header``: ``True`` reads names from the first row; a list names the columns of a header-less file;
    ``"space"`` reads a header row separated by whitespace while data rows use ``delimiter`` (some VUA
    files). ``quotechar=None`` turns quoting off (for TSVs whose text contains bare double quotes, where a
    quote-aware parser would swallow the following lines). A row with the wrong number of fields is an error
    naming the file and line; so is a blank line unless ``skip_blank``.
    """
    csv.field_size_limit(sys.maxsize)
    physical = _lines(path, encoding, compressed, keep_ends=True)
    names: list[str] | None = None
    first_line = 1
    if header == "space":
        first = next(physical, None)
        if first is None:
            raise DataError(f"{path}:1: empty file, expected a header row")
        names = first[1].split()
        first_line = 2
    elif isinstance(header, (list, tuple)):
        names = list(header)
    elif header is not True:
        raise ValueError(f"header must be True, a list of column names or 'space', not {header!r}")

    options = {"delimiter": delimiter}
    if quotechar is None:
        options["quoting"] = csv.QUOTE_NONE
    else:
        options["quotechar"] = quotechar
    reader = csv.reader((text for _, text in physical), strict=True, **options)
    previous_end = first_line - 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise DataError(
                f"{path}:{previous_end + 1}: malformed CSV record ({exc})",
                hint="check the delimiter/quotechar: quotechar=None reads bare quotes in TSV text literally",
            ) from None
        number = previous_end + 1
        previous_end = first_line - 1 + reader.line_num
        if not row or row == [""] and (names is None or len(names) != 1):
            if skip_blank:
                continue
            raise DataError(f"{path}:{number}: blank line", hint="pass skip_blank=True if blank lines are expected")
        if names is None:
            names = row
            if len(set(names)) != len(names):
                raise DataError(f"{path}:{number}: duplicate column names in header {names}")
            continue
        if len(row) != len(names):
            raise DataError(
                f"{path}:{number}: expected {len(names)} fields ({', '.join(names)}), got {len(row)}: "
                f"{_preview(row)}",
                hint="the row is malformed, or the delimiter/quotechar/header declared for this file is wrong",
            )
        yield number, dict(zip(names, row))


def read_jsonl(path, *, encoding: str = "utf-8", compressed: str = "") -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each JSON object, one per line (numbered from 1, as the errors number them);
    whitespace-only lines are skipped, anything else that does not parse, or is not an object, is an error."""
    for number, line in _lines(path, encoding, compressed):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{number}: invalid JSON at column {exc.colno}: {exc.msg}") from None
        if not isinstance(record, dict):
            raise DataError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
        yield number, record


def read_json(path, *, encoding: str = "utf-8", compressed: str = "") -> Any:
    """A whole JSON document; a syntax error names the file, line and column."""
    try:
        with _open_binary(path, compressed) as handle:
            text = handle.read().decode(encoding)
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: cannot decode as {encoding} at byte {exc.start}") from None
    try:
        return json.loads(text.lstrip(_BOM))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON at column {exc.colno}: {exc.msg}") from None


def read_xlsx(path, sheet: str | None = None) -> Iterator[tuple[int, dict]]:
    """Rows of a spreadsheet (first row = header) as dicts keyed by the header; needs ``openpyxl``.

    Cell values keep their spreadsheet type (int, float, str, None); an unnamed header cell is named
    ``col<N>`` (1-based column). Entirely empty rows are skipped (spreadsheets pad with them); the line
    number is the sheet's row number.
    """
    try:
        import openpyxl  # noqa: PLC0415 - optional and heavy: only imported when an xlsx is read
    except ImportError:
        raise DataError(f"{path}: reading .xlsx files needs openpyxl", hint="pip install openpyxl") from None
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        if sheet is not None and sheet not in book.sheetnames:
            raise DataError(f"{path}: no sheet '{sheet}'", hint=f"its sheets are: {', '.join(book.sheetnames)}")
        rows = (book[sheet] if sheet is not None else book.worksheets[0]).iter_rows(min_row=1, values_only=True)
        header = next(rows, None)
        if header is None:
            return
        names = [f"col{i + 1}" if h is None or str(h).strip() == "" else str(h) for i, h in enumerate(header)]
        for number, row in enumerate(rows, start=2):
            if all(cell is None for cell in row):
                continue
            if len(row) > len(names) and any(cell is not None for cell in row[len(names):]):
                raise DataError(f"{path}:{number}: {len(row)} cells but the header has {len(names)} columns")
            yield number, dict(zip(names, row))
    finally:
        book.close()


def _preview(row: list[str], limit: int = 160) -> str:
    text = repr(row)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["open_text", "read_conll", "read_table", "read_jsonl", "read_json", "read_xlsx"]
