"""#35 in `compare`: a partial or unverified run says so with its reason, and `compare published` prints the
best constant answer with the ≈ chance mark beside each headline (the docs' rule), flagging a two-answer task
scored below it."""

from __future__ import annotations

import copy
import json

from metabench.report.published import Published
from metabench.report.run_marks import marks, short
from metabench.report.trivial import below_chance, beside
from metabench.run_record import RunRecord
from metabench.runs.stored import Run, load_run
from metabench.runs.verify import Verdict
from metabench.runs.verify_data import DataVerifier
from metabench.store import read_samples


def _with(run: Run, **results) -> Run:
    edited = copy.deepcopy(run.record.raw)
    edited.update(results)
    return Run(run.path, RunRecord.read(edited), run.samples)


def test_partial_reasons_name_the_limit_and_the_subset(toy_runs):
    run = load_run(toy_runs / "toy_cls" / "lookup")
    n = run.record.n_items
    assert run.partial_reasons == [] and marks(run, Verdict(run)) == [] and short([]) == ""
    assert _with(run, limit=n, n_test_items=n + 7).partial_reasons == [f"--limit {n}: {n} of {n + 7} test items"]
    assert _with(run, n_test_items=n + 7).partial_reasons == [f"{n} of {n + 7} test items (a subset of the split)"]
    older = {k: v for k, v in run.record.raw.items() if k != "n_test_items"}
    assert Run(run.path, RunRecord.read({**older, "limit": n}), run.samples).partial_reasons == [
        f"--limit {n}: {n} test items (the run does not record the split's size)"]
    verdict = Verdict(run, unverified="not checked against the data: no mirror here")
    assert marks(run, verdict) == ["unverified: no mirror here"]
    assert short(marks(_with(run, n_test_items=n + 1), verdict)) == " [partial, unverified]"


def test_compare_marks_a_limit_run_partial_and_never_whole(cli, short_pairs):
    pair = [short_pairs / "toy_cls" / "majority@limit=30", short_pairs / "toy_cls" / "lookup@limit=30"]
    code, out, err = cli("compare", *pair)
    assert code == 0, err
    total = json.loads((pair[1] / "results.json").read_text())["n_test_items"]
    assert "majority [partial]" in out and "lookup [partial]" in out
    assert f"lookup@limit=30: partial: --limit 30: 30 of {total} test items" in out and "all " not in out
    code, out, _ = cli("compare", *pair, "--json")
    [comparison] = json.loads(out)["comparisons"]
    assert comparison["candidate_marks"] == [f"partial: --limit 30: 30 of {total} test items"]


def test_compare_marks_a_run_it_cannot_check_against_the_data(cli, toy_runs, monkeypatch):
    real, why = DataVerifier.problems, "not checked against the data: (test) its data is not here"
    monkeypatch.setattr(DataVerifier, "problems", lambda self, record, ids, golds: why
                        if record.model.spec == "lookup" else real(self, record, ids, golds))
    code, out, err = cli("compare", toy_runs / "toy_cls" / "majority", toy_runs / "toy_cls" / "lookup")
    assert code == 0, err
    assert "lookup [unverified]" in out and "majority [" not in out
    assert "lookup: unverified: (test) its data is not here" in out


def test_compare_published_puts_the_best_constant_answer_beside_each_headline(cli, toy_runs, monkeypatch):
    from metabench.report import published as module

    monkeypatch.setattr(module, "load_published", lambda: [Published(
        task="toy_cls", system="Paper-X", value=0.8, scale="fraction", metric="accuracy", definition="accuracy",
        protocol="same", citation="X 2031", source="Table 9")])
    runs = [toy_runs / "toy_cls" / "majority", toy_runs / "toy_cls" / "lookup"]
    code, out, err = cli("compare", "published", *runs)
    assert code == 0, err and not err
    assert "best constant answer, same items" in out and "Paper-X" in out
    majority = next(line for line in out.splitlines() if "majority [1 seed]" in line)
    assert "≈ " in majority and "the headline is not above it" in majority  # majority is the constant answer
    code, old, err = cli("compare", *runs, "--published")  # the old flag: the paired test first, then the same rows
    assert code == 0 and old.endswith(out) and "--published is deprecated: use `metabench compare published" in err
    code, out, _ = cli("compare", "published", *runs, "--json")
    rows = json.loads(out)["published"]
    assert {r["model"] for r in rows} == {"majority", "lookup"} and all(r["constant"] for r in rows)


def test_a_two_answer_task_below_the_constant_answer_is_flagged(report_registry, toy_runs, copy_run, repredict):
    run_dir = copy_run(toy_runs / "toy_cls" / "lookup", "inverted")
    other = {"metaphorical": "literal", "literal": "metaphorical"}
    repredict(run_dir, {r["id"]: other[r["gold"]] for r in read_samples(run_dir)})  # every answer the wrong label
    inverted = load_run(run_dir)
    assert below_chance(report_registry, inverted) is None  # not a decoder: its collapse is read from its answers
    model = {**inverted.record.raw["model"], "family": "decoder"}
    assert "probable answer-format failure" in below_chance(report_registry, _with(inverted, model=model))
    assert below_chance(report_registry, load_run(toy_runs / "toy_cls" / "lookup")) is None
    assert below_chance(report_registry, load_run(toy_runs / "toy_tag" / "lookup")) is None  # tag sequences
    mean = inverted.record.aggregate(inverted.record.primary_metric).mean
    assert beside(report_registry, [inverted], mean).startswith("≈ ")


def test_a_metric_a_constant_answer_maximises_is_tested_on_accuracy_instead(report_registry):
    """HARD's mined items are scored by metaphor recall: answering "metaphor" everywhere scores 1.0000, so recall
    cannot tell a constant answer from a perfect model there. The ≈ chance test is made on accuracy, which the
    task also reports (#58 item 11: the runs are at 0.495-0.504 on balanced items), and the verdict names it;
    no below-chance flag is raised on recall."""
    from pathlib import Path

    import pytest

    from metabench.report.compare import Options
    from metabench.report.trivial import chance

    folder = Path(__file__).resolve().parents[2] / "leaderboard" / "runs" / "hard_mi_minilm_l6_sor150"
    runs = sorted(folder.glob("*/results.json"))
    if not runs:
        pytest.skip("the committed HARD runs are not in this checkout")
    for results in runs:
        run = load_run(results.parent)
        assert run.record.primary_metric == "recall" and run.record.mean("recall") < 1.0
        found = chance(report_registry, run, Options(n_resamples=200), 0.05)
        assert found["baseline_value"] == 1.0 and found["tested_metric"] == "accuracy" and found["chance"] is True
        assert found["tested_baseline_value"] == 0.5
        assert "cannot tell a constant answer from a perfect model" in found["note"]
        assert below_chance(report_registry, run, Options(n_resamples=200)) is None


def test_a_note_every_fold_carries_is_printed_once_naming_the_folds():
    """A k-fold comparison gives each fold the same calibration note: printed once, not ten times."""
    from metabench.report.compare import Comparison, format_comparisons

    def fold(k: int, notes: list[str]) -> Comparison:
        return Comparison(task=f"moh_x_cv_fold{k}", metric="f1", baseline="a", candidate="b", baseline_run="a",
                          candidate_run="b", higher_is_better=True, baseline_value=0.5, candidate_value=0.4,
                          delta=-0.1, n_items=64, seeds={"a": [0], "b": [0]}, notes=notes)

    text = format_comparisons([fold(k, ["calibration: misses"]) for k in range(10)] + [fold(10, ["its own"])], [],
                              correction="holm", alpha=0.05, confidence=0.95)
    notes = [line for line in text.splitlines() if line.startswith("note:")]
    assert notes == ["note: 10 comparisons (moh_x_cv_fold0 f1 b … moh_x_cv_fold9 f1 b): calibration: misses",
                     "note: moh_x_cv_fold10 f1 b: its own"]
