"""Trust, sixth round (#58 items 1-4): nothing a run writes about itself decides how it is ranked or which of its
items a reproduction reruns. Each forgery is built with metabench's own code (`forgery.forge_consistently`, the
store's writers) so that every check of files and data passes; each test fails on 1a714c35 and passes now."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from metabench.launch import reproduce as reproduction
from metabench.launch.reproduce import FAILED, NOT_REPRODUCIBLE, REPRODUCED, draw, reproduce_runs
from metabench.runs.stored import find_runs, load_run
from metabench.runs.verify import verify_runs
from metabench.store import read_samples, samples_text, write_run

from forgery import forge_consistently

#: More than any toy run's items: every item is rerun.
ALL = 10_000


def _steer(run_dir: Path, altered: set[str], k: int) -> int:
    """The forger's search of #58 item 1: an extra field on one sample row, varied until the draw keyed by the
    samples digest picks none of the ``altered`` items (verification accepts extra sample fields). Returns the
    tries it took."""
    rows = read_samples(run_dir)
    ids = sorted({r["id"] for r in rows})
    results = json.loads((run_dir / "results.json").read_text())
    for tries in range(1, 100_000):
        rows[0]["comment"] = f"v{tries}"
        text = samples_text(rows).encode()
        digest = hashlib.sha256(text).hexdigest()
        if not set(draw(ids, k, digest)) & altered:
            (run_dir / "samples.jsonl").write_bytes(text)
            results["samples_sha256"] = digest
            (run_dir / "results.json").write_text(json.dumps(results))
            return tries
    raise AssertionError("no steering found")


def _passes_every_check(registry, run_dir: Path) -> None:
    kept, rejected, verdicts = verify_runs(registry, [load_run(run_dir)])
    assert not rejected and len(kept) == 1, [v.problems for v in rejected]
    assert next(iter(verdicts.values())).unverified is None


# ---- door 1: the draw is not the author's


def test_a_draw_steered_by_the_samples_digest_does_not_escape(report_registry, toy_runs, copy_run, tmp_path):
    """lookup's wrong answers set to the golds, then one byte of an extra sample field varied until the draw of 5
    that the run's own digest would key misses every altered item: the reproduction still fails (its key is made
    now; a baseline is rerun on every item), verify-run exits 1, and a board built with --reproduce rejects the run
    and records the key it drew with, which redoes the same draw."""
    target = copy_run(toy_runs / "toy_cls" / "lookup", "steered")
    wrong = {r["id"]: r["gold"] for r in read_samples(target) if r["prediction"] != r["gold"]}
    forge_consistently(report_registry, target, predictions=wrong)
    assert _steer(target, set(wrong), 5) >= 1
    _passes_every_check(report_registry, target)
    (found,) = reproduce_runs(report_registry, [load_run(target)], 5).values()
    assert found.status == FAILED and found.n_mismatches == len(wrong), found.line
    assert found.key and found.key != load_run(target).record.samples_sha256

    from metabench.report.leaderboard import build_site

    runs = tmp_path / "board-runs"
    shutil.copytree(toy_runs / "toy_cls", runs / "toy_cls")
    shutil.rmtree(runs / "toy_cls" / "lookup")
    shutil.copytree(target, runs / "toy_cls" / "lookup")
    built = build_site(report_registry, [runs], tmp_path / "out", formats=["json", "markdown"], n_resamples=50,
                       jobs=1, reproduce=5)
    assert [r.run for r in built.rejected] == ["toy_cls/lookup"]
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    recorded = board["reproduction"]
    assert recorded["tried"] and recorded["k"] == 5 and len(recorded["key"]) == 32
    assert f"--reproduce-key {recorded['key']}" in (tmp_path / "out" / "leaderboard.md").read_text()
    again = reproduce_runs(report_registry, [load_run(runs / "toy_cls" / "majority")], 5, key=recorded["key"])
    assert {r.key for r in again.values()} == {recorded["key"]}


def test_the_draw_of_a_costly_model_is_keyed_by_no_run(report_registry, toy_runs, monkeypatch):
    """Where only K items are rerun (no baseline counted as cheap here), two runs with other samples digests draw
    the same items under one key, and a reproduction without a key draws with a new one each time."""
    monkeypatch.setattr(reproduction, "CHEAP", ())
    first, second = (load_run(toy_runs / "toy_cls" / model) for model in ("random", "majority"))
    assert first.record.samples_sha256 != second.record.samples_sha256
    found = reproduce_runs(report_registry, [first, second], 5, key="a key of mine")
    assert [r.items for r in found.values()][0] == [r.items for r in found.values()][1]
    assert all(len(r.items) == 5 and r.status == REPRODUCED for r in found.values())
    keys = {reproduce_runs(report_registry, [first], 5)[id(first)].key for _ in range(2)}
    assert len(keys) == 2


@pytest.mark.parametrize("key", ["", "x" * 201, "tab\tkey", "\udcff"])
def test_a_bad_reproduce_key_is_an_error_naming_the_option(cli, toy_runs, key):
    code, _, err = cli("verify-run", "--reproduce", "5", "--reproduce-key", key, toy_runs / "toy_cls" / "majority")
    assert code == 2 and "--reproduce-key" in err and "Traceback" not in err


# ---- door 2: a claim nobody can rerun is not crowned over a reproduced run


def _claims(report_registry, toy_runs, tmp_path) -> Path:
    """toy_cls's honest runs, and majority's run with every answer set to the gold (accuracy 1.0) under two
    model names nobody can rerun here: an adapter installed nowhere, and a model folder that does not exist."""
    runs = tmp_path / "claims"
    shutil.copytree(toy_runs / "toy_cls", runs / "toy_cls")
    golds = {r["id"]: r["gold"] for r in read_samples(runs / "toy_cls" / "majority")}
    for folder, model in (("noadapter", {"spec": "noadapter:x", "adapter": "noadapter"}),
                          ("nofolder", {"spec": "hf:/nonexistent/model-folder", "adapter": "hf-encoder",
                                        "family": "encoder", "fingerprint": "0" * 64})):
        shutil.copytree(runs / "toy_cls" / "majority", runs / "toy_cls" / folder)
        forge_consistently(report_registry, runs / "toy_cls" / folder, predictions=golds, model=model)
        _passes_every_check(report_registry, runs / "toy_cls" / folder)
    return runs


def test_a_claim_not_reproducible_here_is_never_crowned_over_a_reproduced_run(report_registry, toy_runs, tmp_path):
    from metabench.report.leaderboard import build_site

    runs = _claims(report_registry, toy_runs, tmp_path)
    build_site(report_registry, [runs], tmp_path / "out", formats=["json", "markdown", "html"], n_resamples=50,
               jobs=1, reproduce=ALL)
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    (task,) = board["tasks"]
    entries = {e["model"]: e for e in task["entries"]}
    claims = [entries["noadapter:x"], entries["hf:/nonexistent/model-folder"]]
    assert all(e["metrics"]["accuracy"]["mean"] == 1.0 for e in claims)
    assert all(not e["star"] and e["marks"]["reproduced"] is False for e in claims)
    assert all(e["verified"]["reproduction"]["status"] == NOT_REPRODUCIBLE for e in claims)
    reproduced = [e for e in task["entries"] if e["marks"].get("reproduced")]
    assert reproduced and max(e["rank"] for e in reproduced) < min(e["rank"] for e in claims)
    assert all(e["marks"]["reproduced"] for e in task["entries"] if e["star"])  # toy_cls's baselines: none ★
    markdown = (tmp_path / "out" / "leaderboard.md").read_text()
    assert "noadapter:x (not reproducible here)" in markdown and "Reproduction: every run that would be ranked" in markdown
    assert "not reproducible here" in (tmp_path / "out" / "index.html").read_text()


def test_every_surface_says_a_number_was_never_reproduced(report_registry, toy_runs, tmp_path, cli):
    """Without --reproduce: the board (JSON and Markdown), compare and the Hub export say so."""
    from metabench.export.hf_eval_results import export, read
    from metabench.report.leaderboard import build_site

    build_site(report_registry, [toy_runs / "toy_cls"], tmp_path / "out", formats=["json", "markdown"],
               n_resamples=50, jobs=1)
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert board["reproduction"]["tried"] is False and board["reproduction"]["key"] is None
    assert "Reproduction: never tried" in (tmp_path / "out" / "leaderboard.md").read_text()
    code, out, _ = cli("compare", toy_runs / "toy_cls" / "majority", toy_runs / "toy_cls" / "lookup")
    assert code == 0 and "reproduction: never tried" in out
    (plain,) = export(report_registry, [load_run(toy_runs / "toy_cls" / "lookup")], tmp_path / "hf",
                      dataset_id="org/bench")
    assert read(plain.path)[0]["notes"]["reproduced"].startswith("never tried")
    (rerun,) = export(report_registry, [load_run(toy_runs / "toy_cls" / "lookup")], tmp_path / "hf-rerun",
                      dataset_id="org/bench", reproduce=5)
    assert read(rerun.path)[0]["notes"]["reproduced"].startswith("reproduced on 40 items (key ")


# ---- door 3: a run does not choose how its task ranks


@pytest.mark.parametrize("edit, said", [
    (lambda r: r["task"].update(primary_metric="f1"), "primary metric"),
    (lambda r: r["higher_is_better"].update(accuracy=False), "lower-is-better"),
    (lambda r: r["higher_is_better"].clear(), None),  # a metric missing is higher-is-better, as registered
])
def test_a_run_does_not_set_its_tasks_ranked_metric_or_direction(report_registry, toy_runs, tmp_path, edit, said):
    """results.json's ranking fields edited and the run written again by the store (its digest and all)."""
    from metabench.report.leaderboard import build_site

    runs = tmp_path / "runs"
    shutil.copytree(toy_runs / "toy_cls", runs / "toy_cls")
    results = json.loads((runs / "toy_cls" / "majority" / "results.json").read_text())
    edit(results)
    write_run(runs / "toy_cls" / "majority", results, read_samples(runs / "toy_cls" / "majority"), overwrite=True)
    kept, rejected, _ = verify_runs(report_registry, find_runs([runs / "toy_cls" / "majority"]))
    if said is None:
        assert kept and not rejected
        return
    assert len(rejected) == 1 and said in rejected[0].problems[0], rejected[0].problems
    build_site(report_registry, [runs], tmp_path / "out", formats=["json"], n_resamples=50, jobs=1)
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    (task,) = board["tasks"]
    assert (task["primary_metric"], task["higher_is_better"]) == ("accuracy", True)
    assert "majority" not in {e["model"] for e in task["entries"]}


def test_the_board_ranks_by_the_tasks_definition_not_by_its_first_run(report_registry, toy_runs):
    from metabench.report.leaderboard.board import ranked_by

    run = load_run(toy_runs / "toy_cls" / "majority")
    run.record.task.primary_metric = "f1"  # a record read before verification: never what the board ranks by
    run.record.higher_is_better = {"accuracy": False}
    assert ranked_by(report_registry, "toy_cls", run) == ("accuracy", True)


# ---- door 4: one unparseable model spec is that run's rejection


def test_an_unparseable_model_spec_is_that_runs_named_rejection(report_registry, toy_runs, copy_run, tmp_path, cli):
    target = copy_run(toy_runs / "toy_cls" / "random", "unparseable")
    forge_consistently(report_registry, target, model={"spec": "random:"})
    honest = load_run(toy_runs / "toy_cls" / "lookup")
    found = reproduce_runs(report_registry, [load_run(target), honest], ALL)
    by_model = {r.run.record.model.spec: r for r in found.values()}
    assert by_model["lookup"].status == REPRODUCED
    assert by_model["random:"].status == FAILED
    assert "its model spec 'random:' (results.json model.spec) names no model" in by_model["random:"].reason
    assert "--model" not in by_model["random:"].reason
    code, out, err = cli("verify-run", "--reproduce", "5", target, honest.path)
    assert code == 1 and f"{target}: verified" in out and "failed reproduction: its model spec 'random:'" in out
    assert "Traceback" not in err


def test_a_run_listing_fewer_folds_cannot_shrink_a_groups_mean():
    """Door 3's class (a run's record deciding how its task ranks), for groups: the first record read used to name a
    group's members, so a forged run listing the five folds it does well on made the k-fold mean of five folds."""
    from mirror import REPO

    from metabench.report.groups import group_rows
    from metabench.run_record import GroupFact

    honest = [load_run(REPO / "leaderboard" / "runs" / f"moh_x_cv_fold{k}" / "hf_minilm-l6").record for k in range(10)]
    forged = []
    for record in honest[:5]:
        group = record.groups[0]
        shrunk = GroupFact(**{**group.model_dump(), "members": group.members[:5]})
        forged.append(record.evolve(model=record.model.model_copy(update={"spec": "forged"}),
                                    task=record.task.model_copy(update={"groups": [shrunk]})))
    rows = {row["model"]: row for row in group_rows(forged + honest) if row["group"] == "moh_x_cv"}
    assert rows["hf:minilm-l6"]["members"] == 10 and not rows["hf:minilm-l6"]["missing"]
    assert rows["forged"]["missing"] == [f"moh_x_cv_fold{k}" for k in range(5, 10)]  # no mean over five folds
