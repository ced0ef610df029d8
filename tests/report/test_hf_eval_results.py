"""`metabench export hf-eval-results` (#39 item 7): runs written as Hugging Face .eval_results files and read back,
with what the format has no field for in notes; rejected and unverified runs refused."""

from __future__ import annotations

import json

import pytest
import yaml

from metabench.errors import MetabenchError
from metabench.export.hf_eval_results import NOTE_KEYS, digest, export, interval, read
from metabench.runs.stored import load_run
from metabench.runs.verify_data import DataVerifier


def test_exported_runs_read_back_with_value_ci_seeds_protocol_and_digest(cli, toy_runs, tmp_path):
    runs = [toy_runs / "toy_cls" / "random", toy_runs / "toy_tag" / "random"]
    out = tmp_path / "model" / ".eval_results"
    code, stdout, err = cli("export", "hf-eval-results", *runs, "-o", out, "--dataset-id", "my-org/metabench",
                            "--source-url", "https://example.org/runs", "--source-name", "metabench runs")
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["toy_cls.yaml", "toy_tag.yaml"] and "2 file(s) written" in stdout
    for folder in runs:
        run = load_run(folder)
        [entry] = read(out / f"{run.record.task.name}.yaml")
        metric = run.record.primary_metric
        assert entry["dataset"] == {"id": "my-org/metabench", "task_id": run.record.task.name}
        assert entry["value"] == pytest.approx(run.record.aggregate(metric).mean, abs=1e-6)
        assert entry["date"] == run.record.raw["created"][:10]
        assert entry["source"] == {"url": "https://example.org/runs", "name": "metabench runs"}
        notes = entry["notes"]
        assert list(notes) == list(NOTE_KEYS)
        assert notes["metric"] == metric and notes["seeds"] == ",".join(map(str, run.record.seeds)) == "0,1"
        assert [float(v) for v in notes["per_seed"].split(",")] == pytest.approx(run.record.per_seed(metric), abs=1e-6)
        low, high, method = interval(None, run, metric)
        assert notes["ci95"] == f"[{low:.6f}, {high:.6f}]" and notes["ci_method"] == method == "t over 2 seeds"
        assert low <= entry["value"] <= high
        assert notes["protocol"] == run.record.raw["protocol"] and notes["partial"] == "no"
        assert notes["verified"] == "checked against the data the task names" and notes["digest"] == digest(run)
    raw = yaml.safe_load((out / "toy_cls.yaml").read_text())  # the Hub's own reading: a list of plain results
    assert set(raw[0]) == {"dataset", "value", "date", "source", "notes"} and isinstance(raw[0]["notes"], str)


def test_a_limit_run_is_named_and_marked_partial_and_one_seed_gets_a_bootstrap_interval(cli, short_runs, tmp_path):
    run_dir = short_runs / "toy_cls" / "lookup@limit=30"
    code, _, err = cli("export", "hf-eval-results", run_dir, "-o", tmp_path / "out", "--dataset-id", "o/m")
    assert code == 0, err
    [entry] = read(tmp_path / "out" / "toy_cls_limit30.yaml")
    total = json.loads((run_dir / "results.json").read_text())["n_test_items"]
    assert entry["notes"]["partial"] == f"--limit 30: 30 of {total} test items" and entry["notes"]["items"] == "30"
    assert entry["notes"]["ci_method"].startswith("percentile bootstrap over 30 items")


def test_rejected_unverified_and_mixed_model_runs_are_refused(report_registry, cli, toy_runs, copy_run, tmp_path,
                                                              monkeypatch):
    broken = copy_run(toy_runs / "toy_cls" / "lookup", "broken")
    results = json.loads((broken / "results.json").read_text())
    results["metrics"]["aggregate"]["accuracy"]["mean"] = 0.99  # a number its samples do not give
    (broken / "results.json").write_text(json.dumps(results))
    with pytest.raises(MetabenchError, match="rejected by verification, never exported"):
        export(report_registry, [load_run(broken)], tmp_path / "a", dataset_id="o/m")
    code, _, err = cli("export", "hf-eval-results", toy_runs / "toy_cls", "-o", tmp_path / "b", "--dataset-id", "o/m")
    assert code == 2 and "an .eval_results folder belongs to one model repo" in err
    monkeypatch.setattr(DataVerifier, "problems", lambda self, results, ids, golds: "not checked against the data: gone")
    lookup = [load_run(toy_runs / "toy_cls" / "lookup")]
    with pytest.raises(MetabenchError, match="not checked against the data") as refused:
        export(report_registry, lookup, tmp_path / "c", dataset_id="o/m")
    assert "--allow-unverified" in refused.value.hint and not (tmp_path / "c").exists()
    [written] = export(report_registry, lookup, tmp_path / "c", dataset_id="o/m", allow_unverified=True)
    assert read(written.path)[0]["notes"]["verified"] == "unverified, not checked against the data: gone"
    with pytest.raises(MetabenchError, match="not a Hub dataset id"):
        export(report_registry, lookup, tmp_path / "d", dataset_id="metabench")
