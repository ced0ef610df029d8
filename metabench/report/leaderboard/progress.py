"""What a leaderboard build is doing, on stderr, while it does it.

A build over hundreds of runs takes a while; silence reads as a hang. Each phase (verifying runs, ranking
tasks, the gaps page...) is a bar on a terminal (tqdm) and, where stderr is a file or a pipe (CI logs, ``2>
log``), one plain line when the phase ends: a bar's carriage returns and cursor codes would fill a log with
redrawn lines; there the phase says when it starts and, every progress interval, how far it has come.
``enabled=False`` (``--no-progress``) prints nothing. Never written into a generated file.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import IO, Callable, Iterator


class Progress:
    """Phases of one build, shown on ``stream`` (stderr)."""

    def __init__(self, enabled: bool = True, stream: IO[str] | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and self.stream is not None  # stderr closed: print(file=None) would go to stdout
        self.terminal = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()

    @classmethod
    def off(cls) -> "Progress":
        """Shows nothing: what library callers get unless they ask."""
        return cls(enabled=False)

    @contextmanager
    def phase(self, label: str, total: int, unit: str) -> Iterator[Callable[[], None]]:
        """A phase of ``total`` steps; yields the function that marks one step done."""
        started = time.perf_counter()
        if self.terminal:
            from tqdm import tqdm  # noqa: PLC0415 - only for a build shown on a terminal

            with tqdm(total=total, desc=f"leaderboard: {label}", unit=unit, file=self.stream, leave=False) as bar:
                yield lambda: bar.update(1)
        elif self.enabled:
            yield self._lines(label, total, unit, started)
        else:
            yield lambda: None
        if self.enabled:
            print(f"leaderboard: {label}: {total} {unit}(s) in {time.perf_counter() - started:.1f} s",
                  file=self.stream, flush=True)

    def _lines(self, label: str, total: int, unit: str, started: float) -> Callable[[], None]:
        """Where stderr is a log: a line when a long phase starts and one every progress interval with its count
        (``METABENCH_PROGRESS_INTERVAL``, as runs print), so a build of minutes never reads as a hang."""
        from ...progress import duration, interval  # noqa: PLC0415

        state = {"done": 0, "last": started}
        print(f"leaderboard: {label}: {total} {unit}(s) to do", file=self.stream, flush=True)

        def step() -> None:
            state["done"] += 1
            now = time.perf_counter()
            if now - state["last"] >= interval():
                state["last"] = now
                print(f"leaderboard: {label}: {state['done']}/{total} {unit}(s), {duration(now - started)} elapsed",
                      file=self.stream, flush=True)

        return step
