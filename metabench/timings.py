"""Where a job's time goes: consecutive phases that add up to its wall time (``timings`` in results.json).

A :class:`Phases` stopwatch charges each lap to a named phase, so the phases sum to the elapsed time by
construction and nothing a job does goes unaccounted. Writing the run folder is the last phase; sealing the
record (``store.seal``: checked against the record model) adds its own time just before results.json is
encoded, and the files' own writing (on a parallel launcher's driver) goes untimed.

Some work happens inside whichever lap needs it first: hashing data files, hashing a model's files, loading
a model. Each is measured where it happens by a *meter* (a process-wide running total of seconds), and every
lap charges what its meters grew by to their own phases: that is how a GPU run shows the time before its first
forward pass (``model_hash_s``, ``model_load_s``) apart from the forward passes themselves (``predict_s``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

PHASES = ("data_hash_s", "model_hash_s", "model_load_s", "cache_lookup_s", "load_s", "fit_s", "predict_s", "score_s",
          "write_s")


class Phases:
    def __init__(self, meters: dict[str, Callable[[], float]] | None = None) -> None:
        """``meters``: phase -> a running total of seconds (read at every lap; what it grew by is that phase's)."""
        self.started = self._mark = time.perf_counter()
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.meters = meters or {}
        self._readings = {phase: meter() for phase, meter in self.meters.items()}

    def lap(self, phase: str) -> None:
        """Charge the time since the previous lap to ``phase``, less what the meters measured meanwhile."""
        now = time.perf_counter()
        self.seconds[phase] += now - self._mark
        self._mark = now
        for metered, meter in self.meters.items():
            reading = meter()
            self.move(reading - self._readings[metered], phase, metered)
            self._readings[metered] = reading

    def move(self, seconds: float, source: str, target: str) -> None:
        """Re-charge ``seconds`` of a lap from one phase to another (work measured inside a lap)."""
        self.seconds[source] -= seconds
        self.seconds[target] += seconds

    def record(self) -> dict[str, float]:
        return {**self.seconds, "total_s": self._mark - self.started}
