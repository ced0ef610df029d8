"""Text from runs, tasks and plugins made safe to print where CI reads it.

Task names, model specs, folder names and messages come from files anyone can commit. Printed raw, a newline
followed by ``::error::`` or ``::add-mask::`` becomes a GitHub Actions workflow command (the runner reads a
line that starts with ``::``, leading spaces trimmed, as one), an ANSI escape rewrites the terminal, and a
control character makes a JUnit file invalid XML. :func:`escape` turns one value into a single visible line;
:func:`safe_lines` guards a whole text whose own line breaks are meant, so that no line of it can start a
workflow command and no other control character reaches the log.
"""

from __future__ import annotations

import io
import re

#: What never reaches a log raw: C0 and C1 controls, DEL, the Unicode line and paragraph separators, the
#: bidirectional overrides that reorder what a reader sees, and lone surrogates (a file name in another
#: encoding), which are not text at all and are illegal in XML. U+FFFE and U+FFFF are not characters either.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
_UNSAFE_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: A workflow command: ``::name`` at the start of a line, after any spaces (as the runner trims them).
_COMMAND = re.compile(r"^(\s*):(?=:)", re.MULTILINE)


def _visible(match: re.Match) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def escape(value: object) -> str:
    """``value`` as one printable line: control characters as ``\\n``, ``\\x1b``, ``\\u2028``...; a value that
    would start a workflow command (``::error``) has its first colon written ``\\x3a``."""
    text = _UNSAFE.sub(_visible, str(value))
    return _COMMAND.sub(r"\1\\x3a", text)


def safe_lines(text: str) -> str:
    """A whole report, its own newlines kept: every other control character escaped, and a line that would
    start a workflow command (a name at the start of a table row) has its first colon written ``\\x3a``."""
    return _COMMAND.sub(r"\1\\x3a", _UNSAFE_BUT_NEWLINE.sub(_visible, text))


def is_printable(value: str) -> bool:
    """Whether ``value`` holds none of the characters :func:`escape` would rewrite (for names a run file
    records: a task or model name with a control character in it is refused where it is read)."""
    return _UNSAFE.search(value) is None


class GuardedStream(io.TextIOBase):
    """A text stream that passes everything written through :func:`safe_lines` (``gate`` and ``compare`` print
    through one, so that no report line, whichever module formats it, reaches a CI log raw). It knows whether
    the next write starts a line, so a value printed after other text on its line is not taken for a line start."""

    def __init__(self, stream):
        super().__init__()
        self._stream = stream
        self._at_line_start = True

    def write(self, text: str) -> int:
        if not text:
            return 0
        guarded = safe_lines(text if self._at_line_start else "-" + text)
        self._stream.write(guarded if self._at_line_start else guarded[1:])
        self._at_line_start = text.endswith("\n")
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def writable(self) -> bool:
        return True
