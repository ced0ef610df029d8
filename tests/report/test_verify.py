"""Verification at build time and the degenerate-run marks: forged runs are rejected, constants never crowned."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from scipy import stats

from metabench.report.compare import Options
from metabench.runs.stored import find_runs, load_run
from metabench.report.trivial import assess, constant
from metabench.runs.verify import verify_run, verify_runs
from metabench.store import read_samples, samples_text


def forge(run_dir: Path, *, samples=None, results=None) -> None:
    """Edit a run the way a careful forger would: change samples and/or results, then re-record the samples
    digest so that only the deeper checks can catch it."""
    data = json.loads((run_dir / "results.json").read_text())
    rows = read_samples(run_dir)
    if samples is not None:
        rows = samples(rows)
    if results is not None:
        results(data)
    text = samples_text(rows).encode()
    (run_dir / "samples.jsonl").write_bytes(text)
    data["samples_sha256"] = hashlib.sha256(text).hexdigest()
    (run_dir / "results.json").write_text(json.dumps(data))


@pytest.fixture
def runs(toy_runs, tmp_path) -> Path:
    folder = tmp_path / "runs"
    shutil.copytree(toy_runs, folder)
    return folder


def _edit_metric(data):
    for values in data["metrics"]["per_seed"].values():
        values["span_f1"] += 0.1
    data["metrics"]["aggregate"]["span_f1"]["mean"] += 0.1


def _flip_first(tags: list[str]) -> list[str]:
    return ["B-METAPHOR" if tags[0] == "O" else "O", *tags[1:]]


FORGERIES = {
    "edited metric (per seed and mean alike)": (None, _edit_metric, "rebuilt from samples.jsonl"),
    "edited mean only": (None, lambda d: d["metrics"]["aggregate"]["span_f1"].update(mean=0.99), "per-seed values give"),
    "dropped row": (lambda rows: rows[1:], None, "n_items"),
    "dropped row, n_items edited to match": (lambda rows: rows[1:], lambda d: d.update(n_items=d["n_items"] - 1),
                                            "data.splits.test.ids_sha256"),
    "duplicated row": (lambda rows: rows + rows[:1], None, "more sample rows than results.json declares"),
    "duplicated row, n_items edited to match": (lambda rows: rows + rows[:1], lambda d: d.update(n_items=d["n_items"] + 1),
                                                "appears twice"),
    "changed gold": (lambda rows: [{**r, "gold": _flip_first(r["gold"])} if r["id"] == rows[0]["id"] else r
                                   for r in rows], None, "golds_sha256"),
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_forged_run_is_rejected_with_its_reason(report_registry, runs, name):
    edit_samples, edit_results, reason = FORGERIES[name]
    target = runs / "toy_tag" / "lookup"
    healthy = verify_run(report_registry, load_run(target))
    assert healthy.ok and "span_f1" in healthy.checked and "token_f1" in healthy.checked
    forge(target, samples=edit_samples, results=edit_results)
    verdict = verify_run(report_registry, load_run(target))
    assert not verdict.ok and reason in " ".join(verdict.problems), verdict.problems


def _append(text: bytes):
    return lambda data: data + text


def _first_line_edited(data: bytes) -> bytes:
    first, rest = data.split(b"\n", 1)
    return first.replace(b'"seed": 0', b'"seed": 0 ') + b"\n" + rest


#: Samples edited after results.json recorded their digest, the digest left as it was. Extra lines stop the
#: read at the first line past n_items x seeds (blank ones count) and, since the lines before it are the ones
#: the digest covers, are reported against the digest; an edit within the rows is found by the digest at the end.
DIGEST_TAMPERS = {
    "blank line appended": (_append(b"\n"), ":41: does not match the 'samples_sha256'"),
    "another run's row appended": (_append(b'{"id": "test-0", "seed": 0, "scores": {}}\n'),
                                   ":41: does not match the 'samples_sha256'"),
    "a line edited in place": (_first_line_edited, "does not match the 'samples_sha256'"),
}


@pytest.mark.parametrize("tamper", list(DIGEST_TAMPERS))
def test_samples_not_matching_their_digest_are_rejected(report_registry, runs, tamper):
    edit, reason = DIGEST_TAMPERS[tamper]
    target = runs / "toy_cls" / "lookup"
    assert json.loads((target / "results.json").read_text())["n_items"] == 40  # the line numbers below
    data = (target / "samples.jsonl").read_bytes()
    assert edit(data) != data
    (target / "samples.jsonl").write_bytes(edit(data))
    verdict = verify_run(report_registry, load_run(target))
    assert not verdict.ok and "samples_sha256" in verdict.problems[0] and reason in verdict.problems[0], verdict.problems


def test_older_runs_without_a_golds_digest_are_checked_against_each_other(report_registry, runs, tmp_path,
                                                                         monkeypatch, repredict):
    """Three runs of toy_cls recorded no golds digest; the one whose golds differ from the majority is out. No
    data here (where it is, the check against it rejects the run first)."""
    monkeypatch.setenv("METABENCH_DATA_DIR", str(tmp_path / "no-mirror"))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "no-cache"))
    for folder in (runs / "toy_cls").iterdir():
        forge(folder, results=lambda d: d["data"]["splits"]["test"].pop("golds_sha256"))
    flip = {"literal": "metaphorical", "metaphorical": "literal"}
    forge(runs / "toy_cls" / "majority", samples=lambda rows: [{**r, "gold": flip[r["gold"]]} if r["id"] == "test-0"
                                                                else r for r in rows])
    majority = read_samples(runs / "toy_cls" / "majority")
    repredict(runs / "toy_cls" / "majority", {"test-0": majority[0]["prediction"]})  # its scores and metrics redone
    kept, rejected, _ = verify_runs(report_registry, find_runs([runs / "toy_cls"]))
    assert [v.run.record.model.spec for v in rejected] == ["majority"] and "strict majority" in rejected[0].problems[0]
    assert {r.record.model.spec for r in kept} == {"lookup", "random", "random:strategy=prior"}


def test_build_leaves_a_forged_run_out_lists_it_and_exits_1(cli, runs, tmp_path):
    forge(runs / "toy_tag" / "lookup", results=_edit_metric)
    out = tmp_path / "site"
    code, _, err = cli("leaderboard", "build", runs, "-o", out, "--resamples", "200")
    assert code == 1 and "rejected run toy_tag/lookup: span_f1 at seed" in err
    board = json.loads((out / "leaderboard.json").read_text())
    assert [(r["run"], r["task"], r["model"]) for r in board["rejected_runs"]] == [("toy_tag/lookup", "toy_tag", "lookup")]
    tag = next(t for t in board["tasks"] if t["name"] == "toy_tag")
    assert "lookup" not in {e["model"] for e in tag["entries"]}
    assert not any("error" in (e["vs_best"] or {}) for e in tag["entries"])  # no healthy run marked "not comparable"
    page = (out / "index.html").read_text()
    assert "toy_tag/lookup" in page and str(tmp_path) not in page and str(tmp_path) not in (out / "leaderboard.md").read_text()
    code, _, err = cli("leaderboard", "build", runs / "toy_cls", "-o", tmp_path / "clean", "--resamples", "200")
    assert code == 0, err


def _run(path: Path, model: str, golds: list[str], preds: list[str]) -> Path:
    """A one-seed classification run with accuracy as its primary metric."""
    from metabench.store import write_run

    samples = [{"id": f"i{k}", "seed": 0, "gold": g, "prediction": p, "scores": {"correct": float(g == p)}}
               for k, (g, p) in enumerate(zip(golds, preds))]
    accuracy = sum(g == p for g, p in zip(golds, preds)) / len(golds)
    write_run(path, {
        "schema_version": 1, "created": "2026-01-01T00:00:00+00:00",
        "task": {"name": "t", "version": 1, "config_hash": "c" * 64, "kind": "classification", "dataset": "d",
                 "primary_metric": "accuracy", "source": "", "plugin": "tests",
                 "config": {"metrics": ["accuracy"], "labels": {"names": ["a", "b"], "positive": "b"}}},
        "data": {"files": {"d:test.tsv": "0" * 64}},
        "model": {"spec": model, "adapter": model, "family": "baseline", "args": {}, "fingerprint": model, "info": {}},
        "seeds": [0], "limit": None, "n_items": len(golds), "higher_is_better": {"accuracy": True},
        "metrics": {"per_seed": {"0": {"accuracy": accuracy}}, "aggregate": {"accuracy": {"mean": accuracy, "std": 0.0, "n": 1}}},
    }, samples)
    return path


GOLDS = ["a"] * 30 + ["b"] * 20


def test_a_constant_predictor_never_gets_the_star(cli, tmp_path):
    """The constant run tops the task; a model below the majority is ≈ chance: nobody is crowned."""
    _run(tmp_path / "runs" / "t" / "const", "const", GOLDS, ["a"] * 50)
    _run(tmp_path / "runs" / "t" / "weak", "weak", GOLDS, ["a"] * 20 + ["b"] * 10 + ["b"] * 5 + ["a"] * 15)
    code, _, err = cli("leaderboard", "build", tmp_path / "runs", "-o", tmp_path / "site", "--resamples", "200")
    assert code == 0, err
    entries = {e["model"]: e for e in json.loads((tmp_path / "site" / "leaderboard.json").read_text())["tasks"][0]["entries"]}
    assert entries["const"]["rank"] == 1 and entries["const"]["marks"]["constant"] and not entries["const"]["star"]
    assert entries["weak"]["marks"]["trivial"]["chance"] and not entries["weak"]["star"]
    assert "constant" in (tmp_path / "site" / "tasks" / "t.html").read_text()


def test_chance_mark_uses_mcnemar_against_the_majority_on_the_same_items(report_registry, tmp_path):
    """40 of 50 right; the majority ('a') gets the 30 a-items right: McNemar's exact test on the discordant
    items, checked against scipy's binomial test."""
    preds = ["a"] * 27 + ["b"] * 3 + ["b"] * 13 + ["a"] * 7  # a-items: 27 right; b-items: 13 right
    run = load_run(_run(tmp_path / "t" / "m", "m", GOLDS, preds))
    marks = assess(report_registry, run, Options(n_resamples=200), alpha=0.05)
    trivial = marks["trivial"]
    assert trivial["baseline"] == 'majority "a"' and trivial["baseline_value"] == 0.6 and trivial["test"] == "mcnemar"
    # discordant: the model alone right on 13 b-items, the majority alone right on 3 a-items
    assert trivial["pvalue"] == pytest.approx(stats.binomtest(3, 16, 0.5).pvalue)
    assert trivial["chance"] is False and marks["eligible"] and not marks["constant"]


def test_constant_rule_counts_one_answer_for_99_percent_of_items(tmp_path):
    golds = ["a"] * 100 + ["b"] * 100
    almost = load_run(_run(tmp_path / "t" / "x", "x", golds, ["a"] * 199 + ["b"]))
    spread = load_run(_run(tmp_path / "t" / "y", "y", golds, ["a"] * 197 + ["b"] * 3))
    assert constant(almost)["constant"] and not constant(spread)["constant"]


def test_compare_and_gate_refuse_a_forged_run(cli, runs):
    forge(runs / "toy_tag" / "lookup", results=_edit_metric)
    code, _, err = cli("compare", runs / "toy_tag" / "majority", runs / "toy_tag" / "lookup")
    assert code == 2 and "rejected by verification: span_f1 at seed 0" in err
    code, out, err = cli("compare", runs, "--baseline", "majority", "--resamples", "200")
    assert code == 0 and "rejected by verification: span_f1 at seed 0" in out, err  # one note: shown in full
    code, _, err = cli("gate", "--baseline", runs / "toy_tag" / "majority", "--candidate", runs / "toy_tag" / "lookup")
    assert code == 2 and "rejected by verification" in err
