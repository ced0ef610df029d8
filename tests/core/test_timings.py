"""A job's recorded phases add up to its wall time, writing included."""

from __future__ import annotations

import json
import time

import pytest

from metabench.store import RESULTS, write_run


def test_write_run_adds_the_time_it_spent_to_the_timings_it_writes(tmp_path):
    timings = {"total_s": 1.0, "write_s": 0.25}
    started = time.perf_counter() - 0.5  # half a second of writing already behind us
    write_run(tmp_path / "run", {"schema_version": 1, "timings": timings}, [{"id": "a", "seed": 0}], started=started)
    written = json.loads((tmp_path / "run" / RESULTS).read_text())["timings"]
    assert written == timings  # the caller's dict was updated and is what the file holds
    assert timings["write_s"] >= 0.75 and timings["total_s"] >= 1.5
    assert timings["total_s"] - timings["write_s"] == pytest.approx(0.75)
