"""How far a run has come, on stderr: bars on a terminal, plain lines in a log, nothing under ``--no-progress``.

A tqdm bar redraws itself with carriage returns and cursor codes, which a log file (``2> log``, ``nohup``, a CI
job) keeps as one unreadable line, so bars are for terminals. Where stderr is not a terminal a run prints plain
lines instead: every :data:`DEFAULT_INTERVAL` seconds (``METABENCH_PROGRESS_INTERVAL``, default 30, held to 1 s-1 day), one line saying
what the innermost running phase has done of how much (job k/n, task, model, seed; fine-tune epoch, step and
examples; items predicted), the time spent and an ETA, and a closing line for every phase that was running when
a line was printed. A phase shorter than the interval prints nothing, so a run of many quick jobs does not fill
the log.

The styles (:func:`style`): ``"bars"``, ``"lines"``, ``"off"``. A run's style is resolved once, in the process
that starts it (``RunOptions``), and set for the code that computes its jobs with :func:`run_style`; code that
shows progress asks :func:`meter` for one, passing whether its caller wants a bar (an adapter's ``progress``,
which is true only in the ``bars`` style), and gets a tqdm bar, a line printer or a silent stand-in.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from .printable import escape

BARS, LINES, OFF = "bars", "lines", "off"
#: seconds between two progress lines (``METABENCH_PROGRESS_INTERVAL``)
DEFAULT_INTERVAL = 30.0


def stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        return False


def style(progress: bool | str) -> str:
    """``True``: bars on a terminal, lines elsewhere; ``False``: off; ``"bars"`` / ``"lines"`` / ``"off"`` as named."""
    if progress is True:
        return BARS if stderr_is_terminal() else LINES
    if progress is False or progress == OFF:
        return OFF
    if progress in (BARS, LINES):
        return progress
    return OFF  # not a style: `runner.check_options` refuses it, naming the flag


#: the shortest interval ``METABENCH_PROGRESS_INTERVAL`` may set: below it a log fills with thousands of lines a
#: second (``1e-9``); the longest: a day (``inf`` would never print)
MIN_INTERVAL, MAX_INTERVAL = 1.0, 86_400.0
_WARNED: set[str] = set()


def interval() -> float:
    """``METABENCH_PROGRESS_INTERVAL`` in seconds, held to [:data:`MIN_INTERVAL`, :data:`MAX_INTERVAL`]: a value
    outside is clamped, and one that is not a number gives the default, each with a warning (once)."""
    raw = os.environ.get("METABENCH_PROGRESS_INTERVAL")
    if raw is None or not raw.strip():
        return DEFAULT_INTERVAL
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if math.isnan(value):
        _warn_once(raw, f"not a number of seconds; using the default, {DEFAULT_INTERVAL:g} s")
        return DEFAULT_INTERVAL
    clamped = min(max(value, MIN_INTERVAL), MAX_INTERVAL)
    if clamped != value:
        _warn_once(raw, f"outside {MIN_INTERVAL:g}-{MAX_INTERVAL:g} s; using {clamped:g} s")
    return clamped


def _warn_once(raw: str, what: str) -> None:
    if raw not in _WARNED:
        _WARNED.add(raw)
        _emit(f"metabench: METABENCH_PROGRESS_INTERVAL={escape(raw)}: {what}")


#: The process's run style and the scopes open now (a process runs one run's jobs at a time; the ticker thread
#: reads them, so they are not thread-local).
_STATE: dict = {"style": OFF, "scopes": []}


def current_style() -> str:
    """The style :func:`run_style` set (``off`` outside a run)."""
    return _STATE["style"]


@contextmanager
def run_style(value: str) -> Iterator[None]:
    """Progress in ``value``'s style for the code run inside (the jobs of one run)."""
    before = _STATE["style"]
    _STATE["style"] = value
    try:
        yield
    finally:
        _STATE["style"] = before


@contextmanager
def scope(text: str) -> Iterator[None]:
    """What the lines printed inside are about (``job 3/12 | vua_verb | hf:minilm-l6``): their prefix."""
    _STATE["scopes"].append(text)
    try:
        yield
    finally:
        _STATE["scopes"].pop()


def _scope_text() -> str:
    return " | ".join(_STATE["scopes"])


def meter(total: int, desc: str, unit: str, *, bars: bool | None = None, initial: int = 0, leave: bool = False):
    """A progress meter of ``total`` ``unit``s: ``update(n)``, ``set_postfix(**values)``, ``close()``, a context
    manager. ``bars``: whether the caller shows a bar (None: when the run's style is ``bars``); without one, the
    run's ``lines`` style prints lines, else nothing is shown."""
    if bars is None:
        bars = current_style() == BARS
    if bars:
        from tqdm.auto import tqdm  # noqa: PLC0415 - only where a bar is drawn: a later import reads TQDM_DISABLE

        return tqdm(total=total, initial=initial, desc=desc, unit=unit, leave=leave)
    if current_style() == LINES:
        return _Lines(total, desc, unit, initial, _scope_text())
    return _Silent(total)


def count_jobs(bar, outcomes, planned: int) -> None:
    """Count finished jobs on a run's meter of ``planned`` jobs: a skipped job leaves the total instead of
    counting as done, so the share and the ETA describe the jobs that run (27 planned, 25 skipped in an instant:
    "1/2 jobs", not "93 %, ETA 12 s" while the last one loads its model). The skips shown are what the total
    lost (``planned - total``): the meter keeps no count of its own."""
    skipped = sum(getattr(o, "status", None) == "skipped" for o in outcomes)
    if skipped:
        bar.total -= skipped
        bar.set_postfix(skipped=planned - bar.total)
        getattr(bar, "refresh", lambda: None)()
    if len(outcomes) > skipped:
        bar.update(len(outcomes) - skipped)


class _Silent:
    """A meter that shows nothing (it still counts, as the others do)."""

    def __init__(self, total: int = 0):
        self.n, self.total = 0, total

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, **values) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class _Lines(_Silent):
    """A phase shown as plain lines by the process's ticker (:class:`_Ticker`)."""

    def __init__(self, total: int, desc: str, unit: str, initial: int, prefix: str):
        self.total, self.desc, self.unit, self.n, self.initial = total, desc, unit, initial, initial
        self.prefix = prefix
        self.postfix: dict = {}
        self.started = time.monotonic()
        self.closed = False
        self.ticks = _ticker().push(self)  # lines printed before this phase opened

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, **values) -> None:
        self.postfix = {k: v for k, v in values.items() if v is not None}

    def line(self, final: bool = False) -> str:
        elapsed = time.monotonic() - self.started
        head = f"{self.prefix} | {self.desc}" if self.prefix else self.desc
        done = f"{self.n:,}/{self.total:,} {self.unit}s" if self.total else f"{self.n:,} {self.unit}s"
        if self.total:
            done += f" ({100 * self.n / self.total:.0f} %)"
        extras = "".join(f", {key} {value}" for key, value in self.postfix.items())
        if final:
            return f"[{time.strftime('%H:%M:%S')}] {head}: done, {done}{extras}, in {duration(elapsed)}"
        rate = (self.n - self.initial) / elapsed if elapsed > 0 else 0
        eta = f", ETA {duration((self.total - self.n) / rate)}" if rate > 0 and self.total else ""
        now = _scope_text()
        now = f"; now {now}" if now and not self.prefix else ""  # an outer phase (the run) shown while a job loads
        return f"[{time.strftime('%H:%M:%S')}] {head}: {done}{extras}, {duration(elapsed)} elapsed{eta}{now}"

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            _ticker().pop(self)


class _Ticker:
    """One thread per process that prints the innermost open phase every :func:`interval` seconds."""

    def __init__(self):
        self.pid = os.getpid()
        self.open: list[_Lines] = []
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None
        self.ticks = 0  # lines printed so far
        self.last = time.monotonic()  # when the last line was printed, or the first phase opened

    def push(self, phase: _Lines) -> int:
        with self.lock:
            if not self.open:  # the first line comes one interval after a phase opens, not at once
                self.last = time.monotonic()
            self.open.append(phase)
            self.wake.set()  # a sleeping ticker reads the interval again (a test's, or a changed one)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="metabench-progress", daemon=True)
                self.thread.start()
            return self.ticks

    def pop(self, phase: _Lines) -> None:
        with self.lock:
            if phase in self.open:
                self.open.remove(phase)
            heard = self.ticks > phase.ticks
        if heard:  # a phase that was running while the log was told something says that it ended
            _emit(phase.line(final=True))

    def _run(self) -> None:
        while True:  # wakes when a phase opens and at least every second, so a changed interval applies
            remaining = interval() - (time.monotonic() - self.last)
            if remaining > 0:
                self.wake.wait(min(remaining, 1.0))
                self.wake.clear()
                continue
            self.last = time.monotonic()
            with self.lock:
                phase = self.open[-1] if self.open else None
                if phase is not None:
                    self.ticks += 1
            if phase is not None and not phase.closed:
                _emit(phase.line())


def _emit(text: str) -> None:
    """One progress line on stderr, never elsewhere: with stderr closed (None) it is dropped, not printed on
    stdout (where ``print`` would send it). Names in it are escaped (`printable.escape`): one line each."""
    if sys.stderr is None:
        return
    try:
        print(escape(text), file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed (a daemon whose log went away): progress is not worth a crash
        pass


_TICKER: _Ticker | None = None
_TICKER_LOCK = threading.Lock()


def _ticker() -> _Ticker:
    """The process's ticker (a forked worker starts its own: threads are not copied by fork)."""
    global _TICKER
    with _TICKER_LOCK:
        if _TICKER is None or _TICKER.pid != os.getpid():
            _TICKER = _Ticker()
        return _TICKER
