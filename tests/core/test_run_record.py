"""The results record defined once (issue 37): docs/results-format.md is generated from `RunRecord`, every
committed run reads through it, the writer is held to it, and its messages name the file, the field and the fix."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from metabench.errors import MetabenchError, RunFileError
from metabench.run_record import SCHEMA_VERSION, RunRecord, Timings, check_written, results_markdown
from metabench.store import COMMITTED_RUNS, RESULTS, _body, read_record, run_folders, seal, write_run

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "results-format.md"
COMMITTED = [*run_folders(ROOT / COMMITTED_RUNS), *run_folders(ROOT / "examples")]


def test_the_results_format_page_is_generated_from_the_record():
    assert PAGE.read_text(encoding="utf-8") == results_markdown(), (
        "docs/results-format.md is stale: run `metabench schema results > docs/results-format.md`")


def test_the_page_documents_every_field():
    page = results_markdown()
    for name, spec in RunRecord.model_fields.items():
        assert f"| `{name}` |" in page and spec.description, name


@pytest.mark.slow
def test_every_committed_run_reads_through_the_record():
    assert len(COMMITTED) > 800  # leaderboard/runs and the CI-gate example
    for folder in COMMITTED:
        record = read_record(folder)
        assert record.schema_version == SCHEMA_VERSION
        assert record.raw == json.loads((folder / RESULTS).read_text(encoding="utf-8"))
        assert record.n_items >= 0 and record.seeds and record.task.name and record.model.spec
    older = [f for f in COMMITTED if read_record(f).n_test_items is None]
    assert older, "the committed runs include runs from before n_test_items: they must still read"


def test_the_writers_bytes_are_those_of_the_committed_runs():
    """The store serialises the typed record: every committed run read as a RunRecord and serialised again is
    its file, byte for byte (a field it did not write stays out, unknown fields and number types are kept)."""
    for folder in COMMITTED:
        raw = (folder / RESULTS).read_bytes()
        record = RunRecord.read(json.loads(raw))
        assert _body(folder, record) == raw, folder
        rebuilt = RunRecord(**{name: getattr(record, name) for name in record.model_fields_set})
        assert _body(folder, rebuilt) == raw, folder  # built field by field, as the writer builds it


def _record() -> dict:
    return copy.deepcopy(read_record(COMMITTED[0]).raw)


@pytest.mark.parametrize(("damage", "message"), [
    (lambda r: r["task"].pop("primary_metric"), "field 'task.primary_metric' must be a str (missing)"),
    (lambda r: r.__setitem__("seeds", [0, "1"]), "field 'seeds.1' must be an integer (a str)"),
    (lambda r: r.__setitem__("seeds", [True]), "field 'seeds.0' must be an integer (a bool)"),
    (lambda r: r.__setitem__("limit", "10"), "field 'limit' must be an integer or null (a str)"),
    (lambda r: r["metrics"]["aggregate"].__setitem__("f1", {"mean": "0.5", "std": 0.0, "n": 1}),
     "field 'metrics.aggregate.f1.mean' must be a number or null (a str)"),
    (lambda r: r["data"]["splits"]["test"].__setitem__("n", -1), "field 'data.splits.test.n' must be greater than or equal to 0 (-1)"),
    (lambda r: r["task"].__setitem__("groups", [{"name": "g", "members": "t", "source": "g.yaml"}]),
     "field 'task.groups.0.members' must be a list (a str)"),
    (lambda r: r["model"].__setitem__("spec", "m\x1b[2K"), "field 'model.spec' holds a control character (m\\x1b[2K)"),
    (lambda r: r.__setitem__("timings", {"fit_s": True}), "field 'timings.fit_s' must be a number or null (a bool)"),
])
def test_a_damaged_field_is_named_with_the_fix(damage, message):
    record = _record()
    damage(record)
    with pytest.raises(RunFileError) as caught:
        RunRecord.read(record, "runs/t/m/results.json")
    assert caught.value.message.startswith(f"runs/t/m/results.json: {message}")
    assert "re-run the evaluation" in caught.value.hint


def test_what_older_runs_and_hand_made_records_lack_reads_with_its_default():
    minimal = {"schema_version": 1, "task": {"name": "t", "primary_metric": "accuracy"}, "model": {"spec": "m"},
               "seeds": [0], "n_items": 3, "metrics": {"per_seed": {"0": {"accuracy": 1}}, "aggregate": {}},
               "from_a_later_metabench": {"kept": True}}
    record = RunRecord.read(minimal)
    assert (record.n_test_items, record.task.groups, record.task.datasets, record.samples_sha256) == (None, [], None, None)
    assert record.metrics.per_seed == {"0": {"accuracy": 1.0}} and not record.partial
    assert record.model_extra == {"from_a_later_metabench": {"kept": True}}  # a field this version does not know


def test_the_writer_is_held_to_the_whole_model(tmp_path):
    record = _record()
    record["timings"].update(model_hash_s=0.0, model_load_s=0.0)  # committed before these phases were timed
    assert check_written(record).task.name == record["task"]["name"]
    with pytest.raises(MetabenchError, match=r"task: the writer wrote shiny, which RunRecord does not declare") as caught:
        check_written({**record, "task": {**record["task"], "shiny": 1}})
    assert "metabench/run_record.py" in caught.value.hint and "metabench schema results" in caught.value.hint
    with pytest.raises(MetabenchError, match="the record: the writer left out n_test_items"):
        check_written({k: v for k, v in record.items() if k != "n_test_items"})
    with pytest.raises(MetabenchError, match="the writer left out"):  # seal: the launchers' writes
        seal(RunRecord.read({k: v for k, v in record.items() if k != "plugins"}), [], where=tmp_path / "t" / "m")
    assert not (tmp_path / "t" / "m").exists()


def test_a_record_readers_would_refuse_is_never_written(tmp_path):
    with pytest.raises(RunFileError, match="field 'seeds' must be a non-empty list of integers"):
        write_run(tmp_path / "t" / "m", {**_record(), "seeds": []}, [])
    assert not (tmp_path / "t").exists() or not any((tmp_path / "t").iterdir())


@pytest.mark.slow
def test_a_fresh_run_is_the_whole_record(toy_registry, tmp_path):
    """Runs written by the launchers pass the writer's check (the outcome is ok) and read back typed."""
    from metabench import evaluate
    from metabench.runs.stored import load_run

    evaluation = evaluate("toy_all", ["majority"], output_dir=tmp_path / "runs", progress=False, registry=toy_registry)
    assert evaluation.results and all(r.ok for r in evaluation), [r.message for r in evaluation]
    for result in evaluation:
        run = load_run(result.run_dir)
        assert (run.record.task, run.record.metrics) == (result.record.task, result.record.metrics)
        assert run.record.raw == result.results  # the record as written, the samples' digest included
        assert set(RunRecord.model_fields) - set(run.record.raw) == {"repeat", "merged_from"}  # written only then
        assert result.metrics[result.primary_metric].mean == run.record.metrics.aggregate[run.record.primary_metric].mean


def test_the_timings_model_names_every_phase():
    from metabench.timings import PHASES

    assert set(Timings.model_fields) == {*PHASES, "total_s", "cached_items", "items_per_s"}


def test_the_job_memo_refreshes_the_fields_the_record_marks_volatile():
    from metabench.job_memo import VOLATILE

    assert set(VOLATILE) == {"created", "environment", "metabench", "plugins", "timings"}


def test_a_limit_larger_than_the_split_is_not_partial_anywhere(toy_registry, tmp_path):
    """`--limit 10000` on a split of fewer items scores every item: the record the writer built says so
    (`RunRecord.partial`, `partial_runs`' one rule), and so do the run folder's name, the stored run the reports
    read, the Python API and the record read back; a limit below the split's size is partial in all of them."""
    from metabench.api import TaskResult
    from metabench.runner import RunOptions, run
    from metabench.runs.stored import load_run

    [big] = run(toy_registry, "toy_cls", ["majority"], RunOptions(output_dir=tmp_path / "big", limit=10000,
                                                                  progress=False))
    assert big.status == "ok", big.message
    record = big.record
    assert isinstance(record, RunRecord) and record.limit == 10000
    assert record.n_items == record.n_test_items < 10000
    assert not record.partial and record.partial_reasons() == [] and record.limit_label == "--limit 10000"
    assert "@limit" not in big.run_dir.name  # the full run's folder
    stored = load_run(big.run_dir)
    assert not stored.partial and stored.partial_reasons == [] and not stored.record.partial
    assert not TaskResult.from_outcome(big).partial and not TaskResult.from_run(stored).partial
    assert read_record(big.run_dir).as_json() == stored.record.raw  # the bytes written are the record's

    n = record.n_items
    [small] = run(toy_registry, "toy_cls", ["majority"], RunOptions(output_dir=tmp_path / "small", limit=n - 1,
                                                                    progress=False))
    assert small.record.partial and small.run_dir.name.endswith(f"@limit={n - 1}")
    assert small.record.partial_reasons() == [f"--limit {n - 1}: {n - 1} of {n} test items"]
    assert load_run(small.run_dir).partial and TaskResult.from_outcome(small).partial
