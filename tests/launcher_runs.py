"""What two launchers' runs are compared on (the test modules of the process and Ray launchers share it)."""

from __future__ import annotations

from metabench.store import read_results, read_samples


def ok_runs(outcomes) -> dict:
    """(task, model) -> (results without the keys that differ between any two runs, samples) of the ok jobs."""
    out = {}
    for outcome in outcomes:
        if outcome.status == "ok":
            results = read_results(outcome.run_dir)
            del results["created"], results["timings"]
            out[(outcome.task, outcome.model)] = (results, read_samples(outcome.run_dir))
    return out
