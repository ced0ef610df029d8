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


#: What a log guard rewrites: every C0 control but the newline and the tab (a carriage return lets a line
#: overwrite itself; ESC starts a terminal sequence), DEL, the C1 controls and the Unicode line and paragraph
#: separators (line breaks to some log viewers).
_LOG_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _json_safe(match: re.Match) -> str:
    return "\\r" if match.group() == "\r" else f"\\u{ord(match.group()):04x}"


def shell_word(value: object) -> str:
    """``value`` as one shell word on one line (a folder a user may paste back): quoted as `shlex.quote` does,
    or, where it holds a control character, in bash's ``$'...'`` form with each one escaped."""
    import shlex

    text = str(value)
    if is_printable(text):
        return shlex.quote(text)
    return "$'" + escape(text.replace("\\", "\\\\").replace("'", "\\'")) + "'"


class LogGuard:
    """A stream that no user text written to it can forge a line of a CI log through: each write has its
    control characters escaped (``\\r``, ``\\u001b``: the forms JSON reads back, so ``--json`` output stays
    valid) and a line that would start a GitHub workflow command (``::error``) has its first colon written
    ``\\x3a``. Every other attribute (``fileno``, ``isatty``, ``buffer``) is the stream's. A line that is meant
    as a workflow command (the gate's annotations) is written to :func:`unguarded`."""

    def __init__(self, stream):
        self._guarded = stream
        self._at_line_start = True

    def write(self, text: str) -> int:
        if not text:
            return 0
        safe = _LOG_UNSAFE.sub(_json_safe, text)
        safe = _COMMAND.sub(r"\1\\x3a", safe if self._at_line_start else "-" + safe)
        self._guarded.write(safe if self._at_line_start else safe[1:])
        self._at_line_start = text.endswith("\n")
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._guarded, name)


def guard(stream):
    """``stream`` behind a :class:`LogGuard`, unless it is a terminal (a bar redraws itself with carriage
    returns there, and no CI runner reads a terminal), None (closed) or already guarded."""
    try:
        if stream is None or isinstance(stream, LogGuard) or stream.isatty():
            return stream
    except (AttributeError, ValueError):  # closed, or an object without isatty
        return stream
    return LogGuard(stream)


def unguarded(stream):
    """The stream a :class:`LogGuard` writes to (``stream`` itself when it is not one)."""
    return stream._guarded if isinstance(stream, LogGuard) else stream
