"""Check 4's verdicts kept between builds (metabench/runs/verified_metrics.py): the same verdict from the cache,
and a run edited after it was cached checked again in full."""

from __future__ import annotations

import json
import shutil

from metabench.runs.stored import load_run
from metabench.runs.verified_metrics import FILE, VerifiedMetrics
from metabench.runs.verify import verify_run, verify_runs


def test_a_remembered_verdict_is_the_computed_one_and_an_edit_is_checked_again(report_registry, toy_runs, tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    target = tmp_path / "lookup"
    shutil.copytree(toy_runs / "toy_tag" / "lookup", target)
    computed = verify_run(report_registry, load_run(target))
    verify_runs(report_registry, [load_run(target)], remember=True)
    assert (tmp_path / "cache" / FILE).is_file()
    remembered = VerifiedMetrics(report_registry)
    assert remembered.get(load_run(target)) == ([], computed.checked, computed.unchecked)
    again = verify_run(report_registry, load_run(target), remembered)
    assert (again.problems, again.checked, again.unchecked) == (computed.problems, computed.checked, computed.unchecked)
    results = json.loads((target / "results.json").read_text())
    for values in results["metrics"]["per_seed"].values():  # every seed and the mean alike: only check 4 sees it
        values["span_f1"] += 0.1
    results["metrics"]["aggregate"]["span_f1"]["mean"] += 0.1
    (target / "results.json").write_text(json.dumps(results))
    assert remembered.get(load_run(target)) is None
    forged = verify_run(report_registry, load_run(target), remembered)
    assert "rebuilt from samples.jsonl" in " ".join(forged.problems)
