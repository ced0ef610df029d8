"""``metabench merge-seeds``: runs of one recipe over disjoint seeds merged into the run of all of them.

The reference is a run of all the seeds in one command: the merge of its seed-by-seed halves must give its
folder name, its samples and its metrics, and every way the parts can fail to be one recipe is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from metabench.errors import MetabenchError
from metabench.runner import RunOptions, run
from metabench.runs.merge import merge_runs
from metabench.runs.stored import find_runs
from metabench.runs.verify import verify_runs
from metabench.store import RESULTS, read_samples


def _registry():
    import enc_toy_plugin
    import toy_plugin

    from metabench import plugins

    return plugins.load(extra_plugins=(toy_plugin, enc_toy_plugin))


@pytest.fixture
def registry(monkeypatch, tmp_path):
    import toy_plugin

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return _registry()


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_bert) -> Path:
    """The run of seeds 0,1 in one command (``whole``), its seed-0 half (``first``) and its seed-1 half
    (``second``), each in its own output folder and trained with its own cache (as on three machines: no answer
    or checkpoint is shared). Built once; each test gets a copy (``runs``)."""
    import toy_plugin

    root = tmp_path_factory.mktemp("merge-seeds")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
        registry = _registry()
        for name, seeds in (("whole", None), ("first", [0]), ("second", [1])):
            patch.setenv("METABENCH_CACHE_DIR", str(root / f"cache-{name}"))
            [outcome] = run(registry, "enc_toy_tag", [f"hf:pretrained={tiny_bert}"],
                            RunOptions(output_dir=root / name, progress=False, seeds=seeds))
            assert outcome.status == "ok", outcome.message
    return root


@pytest.fixture
def runs(trained, tmp_path) -> list[Path]:
    """Copies of (whole, first, second) that a test may edit."""
    out = []
    for name in ("whole", "first", "second"):
        shutil.copytree(trained / name, tmp_path / name)
        [folder] = (tmp_path / name).glob("*/*")
        out.append(folder)
    return out


def test_merge_of_halves_is_the_whole_run(registry, tmp_path, runs):
    whole, first, second = runs
    [merged] = merge_runs(registry, [second, first], tmp_path / "merged")
    assert merged.path == tmp_path / "merged" / whole.parent.name / whole.name  # the folder a 2-seed run gets
    assert [p.path for p in merged.parts] == [first, second]  # lowest seeds first, whatever the order given
    record = json.loads((merged.path / RESULTS).read_text())
    reference = json.loads((whole / RESULTS).read_text())
    assert record["seeds"] == reference["seeds"] == [0, 1]
    assert record["metrics"] == reference["metrics"]
    assert read_samples(merged.path) == read_samples(whole)
    assert [part["seeds"] for part in record["merged_from"]] == [[0], [1]]
    assert [part["folder"] for part in record["merged_from"]] == [f"{p.parent.name}/{p.name}" for p in (first, second)]
    checkpoints = record["model"]["info"]["checkpoints"]  # the seed-keyed entries joined; each trained afresh
    assert {seed: c["cached"] for seed, c in checkpoints.items()} == {"0": False, "1": False}
    whole_checkpoints = reference["model"]["info"]["checkpoints"]
    assert {s: c["key"] for s, c in checkpoints.items()} == {s: c["key"] for s, c in whole_checkpoints.items()}
    _, rejected, verdicts = verify_runs(registry, find_runs([merged.path]))
    assert not rejected and not verdicts[next(iter(verdicts))].unverified


def test_dry_run_writes_nothing(registry, tmp_path, runs):
    _, first, second = runs
    [planned] = merge_runs(registry, [first, second], tmp_path / "merged", dry_run=True)
    assert planned.record.seeds == [0, 1] and not (tmp_path / "merged").exists()


def test_overlapping_seeds_are_refused(registry, tmp_path, runs):
    whole, first, _ = runs
    with pytest.raises(MetabenchError, match="seed 0 is in both"):
        merge_runs(registry, [whole, first], tmp_path / "merged")


def test_another_recipe_is_refused(registry, tmp_path, runs, tiny_bert):
    """The same task and model, another --limit: not the same items, so not one run."""
    _, first, _ = runs
    [other] = run(registry, "enc_toy_tag", [f"hf:pretrained={tiny_bert}"],
                  RunOptions(output_dir=tmp_path / "other", progress=False, seeds=[1], limit=3))
    assert other.status == "ok", other.message
    with pytest.raises(MetabenchError, match="not one recipe: their limit differ"):
        merge_runs(registry, [first, other.run_dir], tmp_path / "merged")


def test_output_folders_are_given_whole(registry, tmp_path, runs, tiny_bert):
    """Two output folders: each task and model with a run in both is merged; one with a single run (another model
    here) is left out and named, not an error."""
    _, first, second = runs
    [other] = run(registry, "enc_toy_tag", [f"hf:pretrained={tiny_bert},lr=1e-3"],
                  RunOptions(output_dir=tmp_path / "first", progress=False, seeds=[1]))
    assert other.status == "ok", other.message
    skipped: list[str] = []
    [merged] = merge_runs(registry, [tmp_path / "first", tmp_path / "second"], tmp_path / "merged", skipped=skipped)
    assert [p.path for p in merged.parts] == [first, second]
    assert len(skipped) == 1 and "lr=1e-3" in skipped[0] and "nothing to merge" in skipped[0]


def test_a_part_that_fails_verification_is_refused(registry, tmp_path, runs):
    _, first, second = runs
    path = second / RESULTS
    record = json.loads(path.read_text())
    record["metrics"]["per_seed"]["1"]["span_f1"] = 0.999  # an edited number: its samples give another
    path.write_text(json.dumps(record, indent=2, sort_keys=True))
    with pytest.raises(MetabenchError, match="does not pass verification") as caught:
        merge_runs(registry, [first, second], tmp_path / "merged")
    assert str(second) in caught.value.message and not (tmp_path / "merged").exists()


def test_other_package_versions_need_the_flag(registry, tmp_path, runs):
    _, first, second = runs
    path = second / RESULTS
    record = json.loads(path.read_text())
    record["environment"]["packages"]["torch"] = "0.0.1"
    path.write_text(json.dumps(record, indent=2, sort_keys=True))
    with pytest.raises(MetabenchError, match=r"other package versions \(torch .* and 0\.0\.1\)") as caught:
        merge_runs(registry, [first, second], tmp_path / "merged")
    assert "--mixed-environments" in caught.value.hint
    [merged] = merge_runs(registry, [first, second], tmp_path / "merged", mixed_environments=True)
    kept = json.loads((merged.path / RESULTS).read_text())["merged_from"]
    assert kept[1]["environment"]["packages"]["torch"] == "0.0.1"


def test_a_merge_under_two_versions_names_both_with_their_seeds(registry, tmp_path, runs):
    """#58 item 13: the merged record's top-level environment names every version a package was computed under,
    with the seeds, not only the newest part's; the record still reads (a field with a default, kept by older
    readers as an unknown key), and a merge under one set of versions writes no such field."""
    from metabench.run_record import RunRecord

    _, first, second = runs
    [same] = merge_runs(registry, [first, second], tmp_path / "same")
    assert "mixed_packages" not in json.loads((same.path / RESULTS).read_text())["environment"]
    path = second / RESULTS
    record = json.loads(path.read_text())
    record["environment"]["packages"]["torch"] = "0.0.1"
    path.write_text(json.dumps(record, indent=2, sort_keys=True))
    old = json.loads((first / RESULTS).read_text())["environment"]["packages"]["torch"]
    [merged] = merge_runs(registry, [first, second], tmp_path / "merged", mixed_environments=True)
    written = json.loads((merged.path / RESULTS).read_text())
    seeds = [json.loads((part / RESULTS).read_text())["seeds"] for part in (first, second)]
    text = lambda s: ("seeds " if len(s) > 1 else "seed ") + ",".join(map(str, s))  # noqa: E731
    assert written["environment"]["mixed_packages"] == {"torch": f"{old} ({text(seeds[0])}) / 0.0.1 ({text(seeds[1])})"}
    assert set(written["environment"]["mixed_packages"]) == {"torch"}  # only the package that differs
    assert RunRecord.model_validate(written).environment.mixed_packages["torch"].endswith(f"({text(seeds[1])})")


def test_one_run_of_a_task_has_nothing_to_merge_with(registry, tmp_path, runs):
    _, first, _ = runs
    with pytest.raises(MetabenchError, match="nothing to merge: one run only of enc_toy_tag"):
        merge_runs(registry, [first], tmp_path / "merged")


def test_a_part_from_an_older_metabench_merges_with_the_newest_record(registry, tmp_path, runs):
    """A record older than `n_test_items` and the split digests lacks them (unknown, not another recipe); the merged
    record describes the recipe as the newest part recorded it."""
    whole, first, second = runs
    path = first / RESULTS
    record = json.loads(path.read_text())
    del record["n_test_items"], record["data"]["splits"]
    record["created"] = "2026-01-01T00:00:00+00:00"
    path.write_text(json.dumps(record, indent=2, sort_keys=True))
    [merged] = merge_runs(registry, [first, second], tmp_path / "merged")
    written = json.loads((merged.path / RESULTS).read_text())
    reference = json.loads((whole / RESULTS).read_text())
    assert written["n_test_items"] == reference["n_test_items"] and written["data"] == reference["data"]
    assert written["merged_from"][0]["created"] == "2026-01-01T00:00:00+00:00"
