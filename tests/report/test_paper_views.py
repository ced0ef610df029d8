"""Paper-layout views: the papers' numbers fit their tables, runs fill the declared cells, the rest shows —."""

from __future__ import annotations

import pytest

from metabench.report.paper_numbers import PAPER_NUMBERS
from metabench.report.paper_views import MISSING, VIEWS, fill

VIEW = {v.key: v for v in VIEWS}


def test_every_printed_row_fits_its_view():
    assert set(PAPER_NUMBERS) == set(VIEW) == {
        "meta4xnli_table_11", "meta4xnli_table_13", "meta4xnli_table_14", "meta4xnli_table_15", "meta4xnli_table_16",
        "meta4xnli_table_17",
        "munch_table_2", "munch_table_3",
    }
    for key, models in PAPER_NUMBERS.items():
        view = VIEW[key]
        for model, rows in models.items():
            assert set(rows) <= set(view.rows) | {view.average_row}, (key, model)
            assert all(len(cells.split("|")) == len(view.columns) for cells in rows.values()), (key, model)


def _agg(mean, std=0.0, n=1):
    return {"mean": mean, "std": std, "n": n}


def test_a_run_fills_its_cells_and_the_rest_shows_a_dash():
    runs = {("m4x_det_es_mono", "hf:x"): {"span_f1": _agg(0.5, 0.01, 5), "inv_f1": _agg(0.6)}}
    table = fill(VIEW["meta4xnli_table_11"], ["hf:x", "no-runs-here"], runs)
    ours = [r for r in table["rows"] if r["source"] == "metabench"]
    assert {r["model"] for r in ours} == {"hf:x"}  # a model without runs in this table gets no rows
    first = next(r for r in ours if r["labels"] == ["M4X_ES", "M4X_ES"])
    assert first["cells"] == ["50.00 ± 1.00", "60.00", MISSING, MISSING, MISSING]
    assert all(c == MISSING for r in ours if r is not first for c in r["cells"])
    paper = next(r for r in table["rows"] if r["source"] == "paper" and r["model"] == "mDeBERTa")
    assert paper["cells"][0] == "67.17 ± 0.72"
    assert table["header"] == ["Train", "Test", "model", "F1", "Inv", "Oov", "P", "R"]
    assert "m4x_det_es_mono" not in table["missing_tasks"] and "m4x_det_en_mono" in table["missing_tasks"]


def test_munch_cells_are_mean_and_sd_over_prompt_tasks():
    runs = {(f"munch_word_judge_mword_p{p}", "m"): {"accuracy": _agg(v)} for p, v in ((1, 0.30), (2, 0.20), (3, 0.25))}
    table = fill(VIEW["munch_table_2"], ["m"], runs)
    row = next(r for r in table["rows"] if r["source"] == "metabench" and r["labels"] == ["Word-judge", "M-Word"])
    assert row["cells"] == [".25 (.05)"]
    partial = fill(VIEW["munch_table_2"], ["m"], {k: v for k, v in runs.items() if "p3" not in k[0]})
    row = next(r for r in partial["rows"] if r["source"] == "metabench" and r["labels"] == ["Word-judge", "M-Word"])
    assert row["cells"] == [MISSING]  # a prompt variant without a run: no mean over the other two


@pytest.mark.parametrize("complete", [True, False])
def test_average_row_is_the_unweighted_mean_of_complete_columns(complete):
    view = VIEW["meta4xnli_table_17"]
    values = {"nomet_en_met": 0.70, "nomet_en_no_met": 0.74, "all_en_met": 0.72, "all_en_no_met": 0.80}
    runs = {(f"m4x_nli_ft_{k}", "m"): {"accuracy": _agg(v, 0.01, 5)} for k, v in values.items()}
    if not complete:
        runs.pop(("m4x_nli_ft_all_en_no_met", "m"))
    table = fill(view, ["m"], runs)
    average = next(r for r in table["rows"] if r["source"] == "metabench" and r["labels"] == ["average", ""])
    assert average["cells"] == (["74.00", MISSING] if complete else [MISSING, MISSING])
    printed = next(r for r in table["rows"] if r["source"] == "paper" and r["labels"] == ["average", ""])
    assert printed["cells"] == ["75.84", "74.01"]
