"""Where a job's time goes: consecutive phases that add up to its wall time (``timings`` in results.json).

A :class:`Phases` stopwatch charges each lap to a named phase, so the phases sum to the elapsed time by
construction and nothing a job does goes unaccounted. Writing the run folder is the last phase; the store
adds its own time (``store.write_run(started=...)``) just before it writes results.json.
"""

from __future__ import annotations

import time

PHASES = ("data_hash_s", "cache_lookup_s", "load_s", "fit_s", "predict_s", "score_s", "write_s")


class Phases:
    def __init__(self) -> None:
        self.started = self._mark = time.perf_counter()
        self.seconds = dict.fromkeys(PHASES, 0.0)

    def lap(self, phase: str) -> None:
        """Charge the time since the previous lap to ``phase``."""
        now = time.perf_counter()
        self.seconds[phase] += now - self._mark
        self._mark = now

    def move(self, seconds: float, source: str, target: str) -> None:
        """Re-charge ``seconds`` of a lap from one phase to another (work measured inside a lap)."""
        self.seconds[source] -= seconds
        self.seconds[target] += seconds

    def record(self) -> dict[str, float]:
        return {**self.seconds, "total_s": self._mark - self.started}
