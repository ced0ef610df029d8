"""The headline table prints the runs' own numbers: mean ± std, seeds against the protocol, summed wall time."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from metabench.report.docs.blocks import DocsContext
from metabench.report.docs.headline import headline_table
from metabench.runs.stored import find_runs


def test_headline_rows_come_from_the_runs(report_registry, toy_runs):
    context = DocsContext(toy_runs, report_registry)
    [run] = [r for r in find_runs([toy_runs]) if r.record.task.name == "toy_tag" and r.record.model.spec == "random"]
    header, _, row, missing = headline_table(context, model="random", tasks="toy_tag;no_such_task")
    cells = [c.strip() for c in row.strip("|").split("|")]
    value = run.record.aggregate("span_f1")
    assert cells[:3] == ["toy_tag", "span_f1", f"{value.mean:.4f} ± {value.std:.4f}"]
    assert cells[4:6] == ["2 of 2", f"{run.record.n_items:,}"]
    assert cells[6] == f"{run.record.raw['timings']['total_s'] / 60:.1f} min"  # not fine-tuned: its own timings
    assert "(" in cells[3] and "best constant answer" in header  # the trivial predictor beside the headline
    assert "no complete committed run" in missing and "wall time" in header


def _fine_tuned(total_s, fit_s, checkpoints, seeds=(0, 1, 2)):
    """The fields _cost reads from a stored run of a fine-tuned model (its record's timings and model info)."""
    from metabench.run_record import ModelInfo, Timings

    record = SimpleNamespace(timings=Timings(total_s=total_s, fit_s=fit_s), seeds=list(seeds),
                             model=ModelInfo(spec="hf:x", info={"checkpoints": checkpoints}))
    return SimpleNamespace(record=record)


def test_a_fine_tune_loaded_from_its_checkpoint_counts_its_training_and_a_cached_answer_is_unrecorded():
    from metabench.report.docs.headline import _cost

    trained = {"fit_s": 700.0, "cached": False}
    loaded = {"fit_s": 650.0, "cached": True, "load_s": 2.0}  # the record the checkpoint kept from its training
    # seed 0 trained here, seeds 1-2 loaded: 700 s of this run's fit_s is replaced by the three records
    assert _cost(_fine_tuned(800.0, 704.0, {"0": trained, "1": loaded, "2": loaded})) == (800.0 - 704.0 + 2000.0, 0)
    # seed 0's answers came from the answer cache: no checkpoint loaded, no record, counted as unrecorded
    assert _cost(_fine_tuned(1500.0, 1400.0, {"1": trained, "2": trained})) == (1500.0 - 1400.0 + 1400.0, 1)


def test_a_headline_below_the_constant_answer_is_marked_on_every_fold():
    """MOH-X: MiniLM's F1 0.5685 is below answering 'metaphor' for every item (#35): the row says so. Read from the
    generated headline table of docs/headline-runs.md, which tests/report/test_docs_tables.py holds to what
    `headline_table` makes of the committed runs (so this test does not compute the table a second time)."""
    from metabench.report.docs.blocks import find_blocks
    from mirror import REPO

    page = REPO / "docs" / "headline-runs.md"
    text = page.read_text(encoding="utf-8")
    [block] = [b for b in find_blocks(Path(page.name), text)
               if b.name == "headline" and b.args.get("model") == "hf:minilm-l6"]
    lines = text.splitlines()[block.open_line:block.close_line - 1]
    rows = {line.split("|")[1].strip().split(" ")[0]: line for line in lines if line.startswith("| ")}
    moh, trofi = rows["moh_x_cv"], rows["trofi_cv"]
    moh_cells = [c.strip() for c in moh.strip("|").split("|")]
    mean, constant = float(moh_cells[2].split(" ± ")[0]), moh_cells[3]
    assert constant.startswith("≈ ") and "not above it" in constant and "≈ chance in" in constant
    assert float(constant.removeprefix("≈ ").split(" ")[0]) > mean
    assert "constant \"metaphor\"" in trofi and "folds" in trofi
    # #35 item 5: the per-seed fold means, MOH-X unstable across seeds and constant-like at seed 0; TroFi neither
    seeds = moh_cells[8]
    assert "unstable across seeds" in seeds and "constant-like at seed 0" in seeds
    per_seed = [float(v) for v in seeds.split(":")[0].split(" / ")]
    assert max(per_seed) - min(per_seed) > 0.10 and float(moh_cells[2].split(" ± ")[0]) == pytest.approx(
        sum(per_seed) / len(per_seed), abs=1e-3)
    assert "unstable" not in trofi and "constant-like" not in trofi


def test_the_stability_marks_follow_their_rule():
    from metabench.report.analyses.seed_stability import SKEW_MARGIN, UNSTABLE_RANGE, stability

    def run(seed_answers, golds):
        return SimpleNamespace(samples=[{"seed": seed, "prediction": a, "gold": g} for seed, answers in seed_answers.items()
                                        for a, g in zip(answers, golds)])

    golds = ["m"] * 5 + ["l"] * 5
    steady = run({0: golds, 1: golds}, golds)
    assert stability([0.60, 0.60 + UNSTABLE_RANGE - 0.01], [steady]) == "0.600 / 0.690"
    assert "unstable across seeds (range 0.110 > 0.10)" in stability([0.60, 0.71], [steady])
    assert stability([0.6, None], [steady]) == "0.600 / —"  # one value: no spread to judge
    # seed 1 answers 'l' for 8 of 10 items where the golds have 5: +0.30 > SKEW_MARGIN; seed 0 at +0.10 is not
    skewed = run({0: ["l"] * 6 + ["m"] * 4, 1: ["l"] * 8 + ["m"] * 2}, golds)
    assert 0.10 < SKEW_MARGIN < 0.30
    marks = stability([0.6, 0.6], [skewed])
    assert "constant-like at seed 1 (80% \"l\", golds 50%)" in marks and "seed 0" not in marks
    # pooled over a group's folds; tag sequences are not judged by answer share
    assert "constant-like" not in stability([0.6], [run({0: [["O", "O"]] * 10}, [["B-M", "O"]] * 10)])
