"""The headline table prints the runs' own numbers: mean ± std, seeds against the protocol, summed wall time."""

from __future__ import annotations

from types import SimpleNamespace

from metabench.report.docs_blocks import DocsContext
from metabench.report.docs_headline import headline_table
from metabench.report.runs import find_runs


def test_headline_rows_come_from_the_runs(report_registry, toy_runs):
    context = DocsContext(toy_runs, report_registry)
    [run] = [r for r in find_runs([toy_runs]) if r.task == "toy_tag" and r.model == "random"]
    header, _, row, missing = headline_table(context, model="random", tasks="toy_tag;no_such_task")
    cells = [c.strip() for c in row.strip("|").split("|")]
    value = run.aggregate("span_f1")
    assert cells[:3] == ["toy_tag", "span_f1", f"{value['mean']:.4f} ± {value['std']:.4f}"]
    assert cells[4:6] == ["2 of 2", f"{run.n_items:,}"]
    assert cells[6] == f"{run.results['timings']['total_s'] / 60:.1f} min"  # not fine-tuned: its own timings
    assert "(" in cells[3] and "best constant answer" in header  # the trivial predictor beside the headline
    assert "no complete committed run" in missing and "wall time" in header


def _fine_tuned(total_s, fit_s, checkpoints, seeds=(0, 1, 2)):
    """The fields _cost reads from a stored run of a fine-tuned model."""
    results = {"timings": {"total_s": total_s, "fit_s": fit_s}, "model": {"info": {"checkpoints": checkpoints}}}
    return SimpleNamespace(results=results, seeds=list(seeds))


def test_a_fine_tune_loaded_from_its_checkpoint_counts_its_training_and_a_cached_answer_is_unrecorded():
    from metabench.report.docs_headline import _cost

    trained = {"fit_s": 700.0, "cached": False}
    loaded = {"fit_s": 650.0, "cached": True, "load_s": 2.0}  # the record the checkpoint kept from its training
    # seed 0 trained here, seeds 1-2 loaded: 700 s of this run's fit_s is replaced by the three records
    assert _cost(_fine_tuned(800.0, 704.0, {"0": trained, "1": loaded, "2": loaded})) == (800.0 - 704.0 + 2000.0, 0)
    # seed 0's answers came from the answer cache: no checkpoint loaded, no record, counted as unrecorded
    assert _cost(_fine_tuned(1500.0, 1400.0, {"1": trained, "2": trained})) == (1500.0 - 1400.0 + 1400.0, 1)


def test_a_headline_below_the_constant_answer_is_marked_on_every_fold():
    """MOH-X: MiniLM's F1 0.5685 is below answering 'metaphor' for every item (#35): the row says so."""
    from metabench.plugins import default_registry
    from mirror import REPO

    context = DocsContext(REPO / "leaderboard" / "runs", default_registry())
    _, _, moh, trofi = headline_table(context, model="hf:minilm-l6", tasks="moh_x_cv;trofi_cv")
    moh_cells = [c.strip() for c in moh.strip("|").split("|")]
    mean, constant = float(moh_cells[2].split(" ± ")[0]), moh_cells[3]
    assert constant.startswith("≈ ") and "not above it" in constant and "≈ chance in" in constant
    assert float(constant.removeprefix("≈ ").split(" ")[0]) > mean
    assert "constant \"metaphor\"" in trofi and "folds" in trofi
