"""Decoding a run file's JSON (results.json, samples rows): values a report can use, or one error saying what is not.

Python's ``json`` accepts what no file metabench writes holds, and some of it fails later, far from the file:
``NaN`` and ``Infinity`` (and ``1e400``, which reads as infinity); an object holding one key twice (the last one
wins, silently: a second ``samples_sha256``); an integer of thousands of digits (``int`` refuses 4,300 digits
with a ``ValueError`` that is no ``JSONDecodeError``, and ``n_test_items: 10**300`` bounds nothing); nesting deep
enough to exhaust the recursion limit (``RecursionError``, an internal error). Every one is a :class:`BadJson`
here, raised where the value enters, for the caller to name the file and the fix.

Samples rows are not checked for repeated keys: their bytes are bound to results.json by its digest, and the
check costs more than the numbers' (the largest committed samples file, 12,198 rows, decoded in 0.050 CPU s
before, 0.061 s with the numbers checked, 0.072 s with the keys too); results.json is read whole and small.
"""

from __future__ import annotations

import json
import math

#: Digits of the longest integer a run file may hold: every count, seed and size fits in 64 bits (19 digits).
MAX_INT_DIGITS = 19
#: Nesting a results.json may have: the record is a few levels deep (metrics per seed per breakdown).
MAX_DEPTH = 32


class BadJson(ValueError):
    """What a JSON text holds that a run file may not, in words (the caller adds the file and the fix)."""


def _number(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BadJson(f"an integer of {len(text.lstrip('-')):,} digits (more than the {MAX_INT_DIGITS} any count, "
                      "seed or size has)")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadJson(f"{text[:40]}, beyond the range of a number a report can use")
    return value


def _constant(name: str):
    raise BadJson(f"{name}, which is not a number a report can use")


def _object(pairs: list[tuple[str, object]]) -> dict:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise BadJson(f"the key {twice!r} twice in one object (a reader would see only the last)")
    return value


#: For samples rows: numbers checked, keys not (see the module's docstring).
_ROW_DECODER = json.JSONDecoder(parse_int=_number, parse_float=_float, parse_constant=_constant)
_RECORD_DECODER = json.JSONDecoder(parse_int=_number, parse_float=_float, parse_constant=_constant,
                                   object_pairs_hook=_object)


def decode_row(text: str) -> object:
    """One samples row, or several as one array: numbers checked, nesting bounded by the recursion limit."""
    try:
        return _ROW_DECODER.decode(text)
    except RecursionError:
        raise BadJson("values nested deeper than any run file has") from None


def decode_record(text: str, *, max_depth: int = MAX_DEPTH) -> object:
    """A results.json: numbers and keys checked, nested at most ``max_depth`` levels."""
    try:
        value = _RECORD_DECODER.decode(text)
    except RecursionError:
        raise BadJson(f"values nested deeper than {max_depth} levels") from None
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                raise BadJson(f"values nested deeper than {max_depth} levels")
            todo += [(child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)]
    return value
