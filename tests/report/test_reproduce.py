"""Reproducing runs (#48 item 5): what no check of files can catch — predictions altered with everything recomputed,
a run relabelled as another model, a claimed seed — fails when the run's model is rerun here on its items; an
honest run reproduces; a run whose model is not here is "not reproducible here"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metabench.launch.reproduce import FAILED, NOT_REPRODUCIBLE, REPRODUCED, draw, reproduce, reproduce_runs
from metabench.runs.stored import find_runs, load_run
from metabench.runs.verify import verify_runs
from metabench.store import read_samples

from forgery import forge_consistently
from mirror import REPO, mirror_dir

#: More than any toy run's items: every item is rerun.
ALL = 10_000


def _model(run_dir: Path) -> dict:
    return json.loads((run_dir / "results.json").read_text())["model"]


def _passes_every_check(registry, run_dir: Path) -> None:
    """What a forger aims at: the run's files and the data agree with it (verification keeps it, verified)."""
    kept, rejected, verdicts = verify_runs(registry, [load_run(run_dir)])
    assert not rejected and len(kept) == 1, [v.problems for v in rejected]
    assert next(iter(verdicts.values())).unverified is None


def test_every_honest_toy_run_reproduces(report_registry, toy_runs):
    runs = find_runs([toy_runs])
    found = reproduce_runs(report_registry, runs, ALL)
    assert {r.status for r in found.values()} == {REPRODUCED}, [r.line for r in found.values()]
    for run in runs:
        result = found[id(run)]
        assert len(result.items) == run.record.n_items and result.seeds == run.record.seeds and not result.mismatches
        assert result.mark == f"reproduced on {run.record.n_items} items" and result.cpu_s >= 0
    seeded = next(r for r in runs if r.record.task.name == "toy_cls" and r.record.model.spec == "random")
    assert found[id(seeded)].seeds == [0, 1]


def test_altered_predictions_with_everything_recomputed_fail(report_registry, toy_runs, copy_run):
    """lookup's wrong answers replaced by the golds, scores, metrics and digests recomputed by metabench's own
    code: every check of files and data passes; the rerun gives lookup's answers."""
    target = copy_run(toy_runs / "toy_cls" / "lookup", "altered")
    wrong = {r["id"]: r["gold"] for r in read_samples(target) if r["prediction"] != r["gold"]}
    assert wrong
    forge_consistently(report_registry, target, predictions=wrong)
    _passes_every_check(report_registry, target)
    result = reproduce(report_registry, load_run(target), ALL)
    assert result.status == FAILED and result.mark == "failed reproduction"
    assert result.n_mismatches == len(wrong) and {m.item for m in result.mismatches} <= set(wrong)
    assert f"{len(wrong)} of {load_run(target).record.n_items} rerun answers at seed 0 differ" in result.reason
    assert "prediction is " in str(result.mismatches[0])


def test_a_baseline_relabelled_as_another_baseline_fails(report_registry, toy_runs, copy_run):
    """majority's tagging run under lookup's name, its fingerprint made lookup's: the record is consistent, the
    answers are majority's (lookup tags the words it saw in training by their own majority)."""
    lookup = _model(toy_runs / "toy_tag" / "lookup")
    target = copy_run(toy_runs / "toy_tag" / "majority", "relabelled")
    answers = {r["id"]: r["prediction"] for r in read_samples(toy_runs / "toy_tag" / "lookup")}
    assert any(r["prediction"] != answers[r["id"]] for r in read_samples(target))
    forge_consistently(report_registry, target, model={k: lookup[k] for k in ("spec", "adapter", "fingerprint", "args")})
    _passes_every_check(report_registry, target)
    run = load_run(target)
    assert run.record.model.spec == "lookup"
    result = reproduce(report_registry, run, ALL)
    assert result.status == FAILED and result.n_mismatches > 0, result.line


def test_a_relabelled_baseline_keeping_its_fingerprint_fails(report_registry, toy_runs, copy_run):
    target = copy_run(toy_runs / "toy_cls" / "majority", "renamed")
    forge_consistently(report_registry, target, model={"spec": "lookup", "adapter": "lookup"})
    result = reproduce(report_registry, load_run(target), ALL)
    assert result.status == FAILED and "recorded model fingerprint is not the one 'lookup' has" in result.reason


def test_a_claimed_seed_fails(report_registry, toy_runs, copy_run):
    """random's seed-1 answers claimed as seed 7's."""
    target = copy_run(toy_runs / "toy_cls" / "random", "seed")
    forge_consistently(report_registry, target, seeds={1: 7})
    _passes_every_check(report_registry, target)
    result = reproduce(report_registry, load_run(target), ALL)
    assert result.status == FAILED and result.seeds == [0, 7]
    assert {m.seed for m in result.mismatches} == {7}


def test_a_run_whose_model_is_not_here_is_not_reproducible(report_registry, toy_runs, copy_run):
    folder = copy_run(toy_runs / "toy_cls" / "majority", "absent-folder")
    forge_consistently(report_registry, folder, model={"spec": "hf:/nonexistent/model-folder", "adapter": "hf-encoder",
                                                       "family": "encoder", "fingerprint": "0" * 64})
    result = reproduce(report_registry, load_run(folder), 5)
    assert result.status == NOT_REPRODUCIBLE and result.mark == "not reproducible here"
    assert "model 'hf:/nonexistent/model-folder' cannot be built here" in result.reason
    plugin = copy_run(toy_runs / "toy_cls" / "lookup", "absent-plugin")
    forge_consistently(report_registry, plugin, model={"spec": "someones-model:size=xl", "adapter": "someones-model"})
    result = reproduce(report_registry, load_run(plugin), 5)
    assert result.status == NOT_REPRODUCIBLE
    assert result.reason.startswith("model adapter 'someones-model' is not installed here")


def test_the_draw_is_the_same_at_every_seed_and_keyed(report_registry, toy_runs):
    """The draw's key is made when the reproduction starts (never the run's own digest) and recorded; a baseline,
    cheap to rerun, is rerun on every item whatever K."""
    run = load_run(toy_runs / "toy_cls" / "random")
    result = reproduce(report_registry, run, 7)
    ids = sorted({r["id"] for r in read_samples(run.path)})
    assert sorted(result.items) == ids and result.seeds == [0, 1] and len(result.key) == 32
    assert "every item: a baseline's rerun is cheap" in result.reason
    assert reproduce(report_registry, run, 7).key != result.key
    assert draw(list(reversed(ids)), 7, "k") == draw(ids, 7, "k") != draw(ids, 7, "other key")
    assert len(draw(ids, 7, "k")) == 7


def test_verify_run_prints_the_verdicts_and_fails_on_a_failed_reproduction(cli, report_registry, toy_runs, copy_run):
    honest = toy_runs / "toy_cls" / "lookup"
    code, out, _ = cli("verify-run", honest)
    assert code == 0 and f"{honest}: verified (files and data)" in out and "reproduc" not in out
    code, out, _ = cli("verify-run", "--reproduce", "5", honest)
    n = load_run(honest).record.n_items  # a baseline is rerun on every item
    assert code == 0 and f"reproduced on {n} items: model 'lookup' rerun here gives the recorded predictions" in out
    assert "reproduction on 5 item(s): 1 reproduced, 0 not reproducible here, 0 failed" in out
    assert out.startswith("reproduction key: ")
    target = copy_run(honest, "cli")
    forge_consistently(report_registry, target,
                       predictions={r["id"]: r["gold"] for r in read_samples(target) if r["prediction"] != r["gold"]})
    code, out, err = cli("verify-run", "--reproduce", str(ALL), target, honest)
    assert code == 1 and "failed reproduction: " in out and "1 run(s) failed reproduction (exit status 1)" in err
    code, out, _ = cli("verify-run", "--reproduce", "3", "--json", honest)
    found = json.loads(out)
    assert found["verification"]["status"] == "verified" and found["reproduction"]["status"] == REPRODUCED
    assert cli("verify-run", "--reproduce", "0", honest)[0] == 2
    assert cli("verify-run", "--reproduce-key", "x", honest)[0] == 2


@pytest.mark.skipif(mirror_dir() is None, reason="needs the data mirror (METABENCH_DATA_DIR or ../shared/data)")
def test_committed_runs_of_one_task(tmp_path):
    """A committed task's baselines reproduce on the real data; its MiniLM run, fine-tuned in-suite, is not
    reproducible with no checkpoint cached (the test's cache is empty)."""
    from metabench import plugins

    runs = find_runs([REPO / "leaderboard" / "runs" / "boisson_card_n_authors_f0@default"])
    found = reproduce_runs(plugins.load(), runs, 50)
    status = {run.record.model.spec: found[id(run)].status for run in runs}
    assert status == {"hf:minilm-l6": NOT_REPRODUCIBLE, "lookup": REPRODUCED, "lookup:key=expression": REPRODUCED,
                      "majority": REPRODUCED}, [r.line for r in found.values()]
    assert all(len(r.items) == r.run.record.n_items for r in found.values() if r.reproduced)  # baselines: every item


def test_the_board_marks_reproduced_runs_and_rejects_a_failed_reproduction(report_registry, toy_runs, copy_run,
                                                                          tmp_path):
    """``leaderboard build --reproduce K``: the honest runs are marked reproduced on K items in leaderboard.json and
    leaderboard.md; a forgery every check of files passes (lookup's wrong answers replaced by the golds, everything
    recomputed) is rejected with its failed reproduction, and the honest lookup run is not ranked in its place."""
    import shutil

    from metabench.report.leaderboard import build_site

    runs = tmp_path / "runs"
    shutil.copytree(toy_runs / "toy_cls", runs / "toy_cls")
    target = runs / "toy_cls" / "lookup"
    wrong = {r["id"]: r["gold"] for r in read_samples(target) if r["prediction"] != r["gold"]}
    forge_consistently(report_registry, target, predictions=wrong)
    built = build_site(report_registry, [runs], tmp_path / "out", formats=["json", "markdown"], n_resamples=50,
                       jobs=1, reproduce=ALL)
    assert [r.run for r in built.rejected] == ["toy_cls/lookup"]
    assert built.rejected[0].reasons[-1].startswith("failed reproduction: ")
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    (task,) = board["tasks"]
    assert "lookup" not in {e["model"] for e in task["entries"]}
    marks = {e["model"]: e["verified"]["reproduction"] for e in task["entries"]}
    assert marks and all(m["status"] == REPRODUCED and m["mark"].startswith("reproduced on ") for m in marks.values())
    assert f"({marks['majority']['mark']})" in (tmp_path / "out" / "leaderboard.md").read_text()
    # without --reproduce the board says nothing of reproduction (its bytes as before)
    build_site(report_registry, [runs / "toy_cls" / "majority"], tmp_path / "plain", formats=["json"], n_resamples=50,
               jobs=1)
    plain = json.loads((tmp_path / "plain" / "leaderboard.json").read_text())
    assert "reproduction" not in plain["tasks"][0]["entries"][0]["verified"]
