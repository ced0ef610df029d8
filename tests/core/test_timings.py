"""A job's recorded phases add up to its wall time, writing included."""

from __future__ import annotations

import json
import time

import pytest

from metabench.store import RESULTS, write_run


def test_write_run_adds_the_time_it_spent_to_the_timings_it_writes(tmp_path):
    timings = {"total_s": 1.0, "write_s": 0.25}
    started = time.perf_counter() - 0.5  # half a second of writing already behind us
    record = {"schema_version": 1, "task": {"name": "t", "primary_metric": "accuracy"}, "model": {"spec": "m"},
              "seeds": [0], "n_items": 1, "metrics": {"per_seed": {}, "aggregate": {}}, "timings": timings}
    returned = write_run(tmp_path / "run", record, [{"id": "a", "seed": 0}], started=started)
    written = json.loads((tmp_path / "run" / RESULTS).read_text())["timings"]
    assert written == returned.timings.as_json()  # the record returned is what the file holds
    assert written["write_s"] >= 0.75 and written["total_s"] >= 1.5
    assert written["total_s"] - written["write_s"] == pytest.approx(0.75)
    assert timings == {"total_s": 1.0, "write_s": 0.25}  # the caller's dict is left as it was


def test_a_jobs_phases_add_up_to_its_wall_time(toy_registry, tmp_path):
    from metabench.runner import RunOptions, run
    from metabench.store import read_results
    from metabench.timings import PHASES

    outcomes = run(toy_registry, "toy_all", ["majority"], RunOptions(output_dir=tmp_path / "runs", progress=False))
    for outcome in outcomes:
        timings = read_results(outcome.run_dir)["timings"]
        assert set(PHASES) <= set(timings) and timings["write_s"] > 0 and timings["load_s"] > 0
        assert sum(timings[p] for p in PHASES) == pytest.approx(timings["total_s"], rel=1e-9)


def test_ray_flags_without_the_ray_launcher_are_an_error(toy_registry, tmp_path):
    from metabench.errors import MetabenchError
    from metabench.runner import RunOptions, run

    with pytest.raises(MetabenchError, match="--workers only applies to --launcher processes or ray"):
        run(toy_registry, "toy_all", ["majority"], RunOptions(output_dir=tmp_path, workers=2))
    with pytest.raises(MetabenchError, match="--ray-address only applies to --launcher ray"):
        run(toy_registry, "toy_all", ["majority"], RunOptions(output_dir=tmp_path, launcher="processes", ray_address="h:1"))
    with pytest.raises(MetabenchError, match="unknown launcher 'thread'"):
        run(toy_registry, "toy_all", ["majority"], RunOptions(output_dir=tmp_path, launcher="thread"))


def test_metered_work_is_charged_to_its_own_phase_whichever_lap_it_falls_in():
    from metabench.timings import PHASES, Phases

    loading = [0.0]
    phases = Phases({"model_load_s": lambda: loading[0]})
    time.sleep(0.02)
    loading[0] += 0.015  # a model loaded lazily inside the first forward pass: 15 ms of the lap
    phases.lap("predict_s")
    seconds = phases.record()
    assert seconds["model_load_s"] == pytest.approx(0.015)
    assert seconds["predict_s"] == pytest.approx(seconds["total_s"] - 0.015)
    assert sum(seconds[p] for p in PHASES) == pytest.approx(seconds["total_s"], rel=1e-9)

