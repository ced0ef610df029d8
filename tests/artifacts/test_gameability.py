"""The gameability flag and the Boisson tables on hand-made runs: fold means, relative gaps, the paired
bootstrap on pooled items, and the two ways a cell becomes gameable."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from metabench_artifacts.report.gameability import assess
from metabench_artifacts.report.tables import boisson_tables
from metabench.config.index import TaskIndex
from metabench.metrics.classification import macro_f1
from metabench.run_record import MetricSummary, RunRecord
from metabench.runs.stored import Run

LABELS = ["literal", "metaphor"]


def _run(task, model, golds, preds, family="encoder"):
    results = {
        "schema_version": 1,
        "task": {"name": task, "primary_metric": "macro_f1", "config": {"labels": {"names": LABELS, "positive": "metaphor"}}},
        "model": {"spec": model, "family": family}, "seeds": [0], "n_items": len(golds),
        "metrics": {"per_seed": {}, "aggregate": {"macro_f1": {"mean": macro_f1(golds, preds, labels=LABELS), "std": 0.0, "n": 1}}},
    }
    samples = [{"id": f"{task.split('@')[0]}:{i}", "seed": 0, "gold": g, "prediction": p} for i, (g, p) in enumerate(zip(golds, preds))]
    return Run(Path(task) / model, RunRecord.read(results), _samples=samples)  # built in memory: no folder read


def _noisy(golds, error, rng):
    return [("literal" if g == "metaphor" else "metaphor") if rng.random() < error else g for g in golds]


@pytest.fixture
def runs():
    rng = random.Random(0)
    out = []
    for fold in range(5):
        golds = [rng.choice(LABELS) for _ in range(100)]
        for view, error in (("default", 0.1), ("pme_only", 0.45), ("masked", 0.12)):
            out.append(_run(f"boisson_card_n_random_f{fold}@{view}", "m", golds, _noisy(golds, error, rng)))
        out.append(_run(f"boisson_card_n_random_f{fold}@default", "lookup", golds, golds, family="baseline"))
    return out


def test_flag_fold_means_and_bootstrap(registry, runs):
    rows = assess(TaskIndex(registry), runs, n_resamples=500)
    assert [(r["cell"], r["model"]) for r in rows] == [("boisson_card_n_random", "m")]  # baselines are not flagged
    row = rows[0]
    default = sum(r.record.aggregate("macro_f1").mean for r in runs if r.record.task.name.endswith("@default") and r.record.model.spec == "m") / 5
    assert row["values"]["default"] == pytest.approx(default)
    assert row["folds"] == "5/5" and row["best_view"] == "masked" and row["bootstrap"]["n_items"] == 500
    assert row["relative"]["masked"] == pytest.approx((row["values"]["masked"] - default) / default)
    assert row["gameable"] and row["share_of_default"] >= 0.9


def test_clearly_worse_view_is_not_gameable(registry, runs):
    kept = [r for r in runs if not r.record.task.name.endswith("@masked")]
    row = assess(TaskIndex(registry), kept, n_resamples=500)[0]
    assert row["best_view"] == "pme_only" and row["bootstrap"]["pvalue"] < 0.05 and not row["gameable"]


def test_the_flag_is_the_papers_five_percent_rule_and_the_alternatives_are_named(registry):
    """A view 7 % below Def on few items: not significantly worse and ≥ 90 % of Def, yet not 'competitive' in
    the paper's words (it loses more than 5 %), so not flagged; 3 % below: flagged."""
    golds = ["metaphor", "literal"] * 20
    rows = {}
    for shortfall in (1, 3):  # wrong answers the masked view adds out of 40
        masked = list(golds)
        for i in range(shortfall):
            masked[i] = "literal" if masked[i] == "metaphor" else "metaphor"
        runs = [_run("boisson_card_n_random_f0@default", "m", golds, golds),
                _run("boisson_card_n_random_f0@masked", "m", golds, masked)]
        row, = assess(TaskIndex(registry), runs, n_resamples=500)
        rows[shortfall] = row
    small, large = rows[1], rows[3]
    assert 0.05 < 1 - large["share_of_default"] < 0.10 and not large["gameable"]
    assert large["rules"] == {"loses < 5 %": False, "not significantly worse": True, "≥ 90 % of default": True}
    assert large["why"] == "not significantly worse; ≥ 90 % of default"
    assert 1 - small["share_of_default"] < 0.05 and small["gameable"] and small["rules"]["loses < 5 %"]


def test_partial_folds_are_marked(registry, runs):
    kept = [r for r in runs if "_f0@" in r.record.task.name or r.record.task.name.endswith("@default")]
    row = assess(TaskIndex(registry), kept, n_resamples=200)[0]
    assert row["folds"] == "1/5"
    table = next(t for t in boisson_tables(TaskIndex(registry), kept) if t["key"] == "boisson_table_3")
    ours = [r for r in table["rows"] if r["model"] == "m" and r["labels"] == ["CARD_N"]][0]
    assert "[" not in ours["cells"][0] and "[1/5]" in ours["cells"][1]
    paper = [r for r in table["rows"] if r["source"] == "paper" and r["labels"] == ["CARD_N"]][0]
    assert paper["cells"][:2] == ["87.38", "41.21 (-52.8%)"]


def test_maj_is_the_datasets_majority_share_not_the_mean_of_fold_majorities(registry):
    """Two folds, 60 % and 40 % metaphor: each fold's own majority share is 0.6 (mean 0.6), the dataset's 0.5."""
    from metabench_artifacts.report.tables import FOLD_MAJORITY

    golds = {0: ["metaphor"] * 6 + ["literal"] * 4, 1: ["metaphor"] * 4 + ["literal"] * 6}
    runs = []
    for fold, g in golds.items():
        run = _run(f"boisson_card_n_random_f{fold}@default", "m", g, g)
        run.record.metrics.aggregate["majority_accuracy"] = MetricSummary(mean=max(g.count(x) for x in LABELS) / len(g))
        runs.append(run)
    table = next(t for t in boisson_tables(TaskIndex(registry), runs) if t["key"] == "boisson_table_4")
    rows = {r["model"]: r["cells"] for r in table["rows"] if r["labels"] == ["CARD_N"]}
    assert rows["m"][0] == "50.00 [2/5]" and rows[FOLD_MAJORITY][0] == "60.00 [2/5]"
    assert rows[FOLD_MAJORITY][1:] == ["—"] * (len(rows["m"]) - 1)


def test_the_four_self_contradicting_paper_cells_are_found_and_marked(registry):
    """construction_artifacts.md §7: F1 above the harmonic mean of P and R in Table 4 JANK/MOH PME, Table 5
    MOH Masked and VUAC_BO PME; every other printed cell is consistent within rounding."""
    from metabench_artifacts import paper_numbers as printed

    found = {(name, dataset, position - 10) for name, table in (("T4", printed.TABLE_4), ("T5", printed.TABLE_5))
             for dataset, values in table.items() for position in printed.inconsistent_f1(values)}
    assert found == {("T4", "JANK", 1), ("T4", "MOH", 1), ("T5", "MOH", 2), ("T5", "VUAC_BO", 1)}
    runs = [_run("boisson_jank_random_f0@default", "m", ["metaphor", "literal"], ["metaphor", "literal"])]
    runs[0].record.metrics.aggregate["accuracy"] = MetricSummary(mean=1.0)
    table = next(t for t in boisson_tables(TaskIndex(registry), runs) if t["key"] == "boisson_table_4")
    paper = next(r for r in table["rows"] if r["source"] == "paper" and r["labels"] == ["JANK"])
    assert paper["cells"][11] == "45.1†" and paper["cells"][10] == "76.5"
    assert any(note.startswith("†") for note in table["notes"])


def test_every_boisson_cell_is_bound_through_metadata_paper_view(registry):
    """Each row × column of Tables 2-5 is filled by exactly the cell its YAML names (not by task naming); the
    only unbound row is TroFi's original split, which the mirror lacks."""
    from metabench_artifacts.report.tables import bound_cells
    from metabench_artifacts.paper_layouts import VIEWS

    index = TaskIndex(registry)
    bound = bound_cells(index)
    unbound = {(view.key, row[0]) for view in VIEWS if view.filled_by for row in view.rows
               for column in view.columns if (view.key, row, column) not in bound}
    assert unbound == {("boisson_table_2", "TroFi")}
    assert bound[("boisson_table_3", ("TSV_AN_L2",), "Lexical PME")] == "boisson_tsv_an_lexical_l2"
    assert bound[("boisson_table_3", ("TSV_AN_L2",), "Random PME")] == "boisson_tsv_an_random"
    assert bound[("boisson_table_5", ("VUAC_BO",), "Maj")] == "boisson_vua18_bo_lexical"
    assert bound[("boisson_table_2", ("VUAC_ST1",), "Masked")] == "boisson_vuac_st1_original"


def test_validate_rejects_a_group_bound_to_a_missing_column(tmp_path):
    from metabench.cli import main

    group = tmp_path / "g.yaml"
    group.write_text("group: g\ntask: [boisson_card_n_random_f0]\naggregate: mean\n"
                     "metadata:\n  paper_view: {table: boisson_table_3, row: [CARD_N], column: [Random Deff]}\n")
    assert main(["validate", str(group)]) == 1
    group.write_text(group.read_text().replace("Deff", "Def"))
    assert main(["validate", str(group)]) == 0
