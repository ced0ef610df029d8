"""Paper-layout views: the papers' numbers fit their tables, runs fill the declared cells, the rest shows —."""

from __future__ import annotations

import pytest

from metabench import hookimpl
from metabench.report.compare import Options

from metabench.report.paper_numbers import PAPER_NUMBERS
from metabench.config.paper_layouts import FILLED_VIEWS
from metabench.report.paper_views import MISSING, Cells, fill

VIEW = {v.key: v for v in FILLED_VIEWS}  # the Boisson views are rendered and tested in artifacts/


@pytest.fixture(scope="module")
def builtin_cells():
    """The bindings of the built-in tasks (``metadata.paper_view``), as a run would record them."""
    from metabench import plugins
    from metabench.config.index import TaskIndex

    index = TaskIndex(plugins.load())
    return Cells.from_bindings((name, b.model_dump(mode="json")) for name, task in index.tasks.items()
                               for b in task.config.metadata.paper_views())


def test_every_view_cell_is_bound_to_existing_tasks(builtin_cells):
    """A renamed or deleted task would leave a cell that can never fill: every cell names exactly as many
    registered tasks as the view averages over."""
    for view in FILLED_VIEWS:
        for row in view.rows:
            for column in view.columns:
                tasks = builtin_cells.of(view, row, column)
                assert len(tasks) == view.tasks_per_cell, (view.key, row, column, tasks)


def test_validate_rejects_a_binding_to_a_missing_row(tmp_path):
    from metabench.cli import main

    task = tmp_path / "t.yaml"
    task.write_text("task: t\nkind: tagging\ndataset: meta4xnli_detection\nsplits: {test: test}\nmetrics: [span_f1]\n"
                    "labels: {scheme: BIO, positive: METAPHOR}\n"
                    "metadata:\n  paper_view: {table: meta4xnli_table_14, row: [ES -> EN]}\n")
    assert main(["validate", str(task)]) == 1
    task.write_text(task.read_text().replace("ES -> EN", "ES → EN"))
    assert main(["validate", str(task)]) == 0


def _cells(bindings: dict) -> Cells:
    return Cells.from_bindings((task, b) for task, b in bindings.items())


def test_every_printed_row_fits_its_view():
    assert set(PAPER_NUMBERS) == set(VIEW) == {
        "meta4xnli_table_11", "meta4xnli_table_12", "meta4xnli_table_13", "meta4xnli_table_14", "meta4xnli_table_15",
        "meta4xnli_table_16", "meta4xnli_table_17",
        "munch_table_2", "munch_table_3",
    }
    for key, models in PAPER_NUMBERS.items():
        view = VIEW[key]
        for model, rows in models.items():
            assert set(rows) <= set(view.rows) | {view.average_row}, (key, model)
            assert all(len(cells.split("|")) == len(view.columns) for cells in rows.values()), (key, model)


def _agg(mean, std=0.0, n=1):
    return {"mean": mean, "std": std, "n": n}


def test_a_run_fills_its_cells_and_the_rest_shows_a_dash(builtin_cells):
    runs = {("m4x_det_es_mono", "hf:x"): {"span_f1": _agg(0.5, 0.01, 5), "inv_f1": _agg(0.6)}}
    table = fill(VIEW["meta4xnli_table_11"], builtin_cells, ["hf:x", "no-runs-here"], runs)
    ours = [r for r in table["rows"] if r["source"] == "metabench"]
    assert {r["model"] for r in ours} == {"hf:x"}  # a model without runs in this table gets no rows
    first = next(r for r in ours if r["labels"] == ["M4X_ES", "M4X_ES"])
    assert first["cells"] == ["50.00 ± 1.00", "60.00", MISSING, MISSING, MISSING]
    assert all(c == MISSING for r in ours if r is not first for c in r["cells"])
    paper = next(r for r in table["rows"] if r["source"] == "paper" and r["model"] == "mDeBERTa")
    assert paper["cells"][0] == "67.17 ± 0.72"
    assert table["header"] == ["Train", "Test", "model", "F1", "Inv", "Oov", "P", "R"]
    assert "m4x_det_es_mono" not in table["missing_tasks"] and "m4x_det_en_mono" in table["missing_tasks"]
    assert "m4x_det_en_mono_vua20" in table["tasks"]  # the VUAM row: bound by the task, no longer a dead name


def test_decoder_rows_fill_table_12_and_a_budget_run_is_labelled_partial(builtin_cells):
    model = "hf-decoder:smollm2-135m,finetune=true,epochs=1"
    runs = {("m4x_det_en_mono_decoder", model): {"span_f1": _agg(0.25), "inv_f1": _agg(0.3)}}
    labels = {model: f"{model} (partial: budget epochs=1)"}
    table = fill(VIEW["meta4xnli_table_12"], builtin_cells, [model], runs, labels)
    ours = [r for r in table["rows"] if r["source"] == "metabench"]
    assert {r["model"] for r in ours} == {labels[model]}
    row = next(r for r in ours if r["labels"] == ["M4X_EN", "M4X_EN"])
    assert row["cells"][:2] == ["25.00", "30.00"]
    paper = next(r for r in table["rows"] if r["source"] == "paper" and r["labels"] == ["M4X_EN", "M4X_EN"])
    assert paper["model"] == "Llama-3.1-8B-Instruct" and paper["cells"][0] == "50.41"
    # the encoders' Table 11 does not take the decoder task's run
    assert fill(VIEW["meta4xnli_table_11"], builtin_cells, [model], runs)["rows"] == \
        [r for r in fill(VIEW["meta4xnli_table_11"], builtin_cells, [], {})["rows"]]


def test_munch_cells_are_mean_and_sd_over_prompt_tasks(builtin_cells):
    runs = {(f"munch_word_judge_mword_p{p}", "m"): {"accuracy": _agg(v)} for p, v in ((1, 0.30), (2, 0.20), (3, 0.25))}
    table = fill(VIEW["munch_table_2"], builtin_cells, ["m"], runs)
    row = next(r for r in table["rows"] if r["source"] == "metabench" and r["labels"] == ["Word-judge", "M-Word"])
    assert row["cells"] == [".25 (.05)"]
    partial = fill(VIEW["munch_table_2"], builtin_cells, ["m"], {k: v for k, v in runs.items() if "p3" not in k[0]})
    row = next(r for r in partial["rows"] if r["source"] == "metabench" and r["labels"] == ["Word-judge", "M-Word"])
    assert row["cells"] == [MISSING]  # a prompt variant without a run: no mean over the other two
    bound_two = _cells({f"munch_word_judge_mword_p{p}": {"table": "munch_table_2", "row": ["Word-judge", "M-Word"]}
                        for p in (1, 2)})
    row = next(r for r in fill(VIEW["munch_table_2"], bound_two, ["m"], runs)["rows"]
               if r["source"] == "metabench" and r["labels"] == ["Word-judge", "M-Word"])
    assert row["cells"] == [MISSING]  # only two of the three prompt tasks are known: the cell stays empty


@pytest.mark.parametrize("complete", [True, False])
def test_average_row_is_the_unweighted_mean_of_complete_columns(complete, builtin_cells):
    view = VIEW["meta4xnli_table_17"]
    values = {"nomet_met": 0.70, "nomet_nomet": 0.74, "all_met": 0.72, "all_nomet": 0.80}
    runs = {(f"m4x_int_en_ft_{k}", "m"): {"accuracy": _agg(v, 0.01, 5)} for k, v in values.items()}
    if not complete:
        runs.pop(("m4x_int_en_ft_all_nomet", "m"))
    table = fill(view, builtin_cells, ["m"], runs)
    average = next(r for r in table["rows"] if r["source"] == "metabench" and r["labels"] == ["average", ""])
    assert average["cells"] == (["74.00", MISSING] if complete else [MISSING, MISSING])
    printed = next(r for r in table["rows"] if r["source"] == "paper" and r["labels"] == ["average", ""])
    assert printed["cells"] == ["75.84", "74.01"]


def test_partial_runs_stay_out_of_the_paper_views(report_registry, toy_runs, short_runs):
    """toy_tag is bound to Table 14's ES → EN row (fixture): its full runs fill it, its --limit run does not."""
    from metabench.report.leaderboard.board import build_board
    from metabench.runs.stored import find_runs

    board = build_board(report_registry, find_runs([toy_runs, short_runs]), options=Options(n_resamples=50))
    table = next(t for t in board.paper_tables if t.key == "meta4xnli_table_14")
    ours = [r for r in table.rows if r.source == "metabench" and r.labels == ["ES → EN"]]
    assert {r.model for r in ours} == {"majority", "lookup", "random", "random:strategy=prior"}
    full = next(e for e in board.task("toy_tag").entries if e.model == "lookup" and not e.partial)
    row = next(r for r in ours if r.model == "lookup")
    assert row.cells[0] == f"{100 * full.metrics['span_f1'].mean:.2f}"  # the full run, not the 30 items
    assert table.notes == ["toy fixture, not Meta4XNLI (toy_tag)"]


def test_runs_older_than_the_binding_record_fill_views_from_the_task_yaml(report_registry, toy_runs):
    from metabench.report.leaderboard.board import build_board
    from metabench.runs.stored import find_runs

    runs = find_runs([toy_runs])
    for run in runs:
        run.record.raw["task"].pop("paper_view")  # as written before runs recorded their paper-view cells
    board = build_board(report_registry, runs, options=Options(n_resamples=50))
    table = next(t for t in board.paper_tables if t.key == "meta4xnli_table_14")
    assert "toy_tag" in table.tasks and table.cells_without_runs == 3  # the ES → EN row is filled


class _ViewPlugin:
    """A third party's paper view, registered through the hook, with its paper's numbers."""

    __name__ = "view_plugin"

    @staticmethod
    @hookimpl
    def metabench_register_paper_views(register):
        from metabench.config.paper_layouts import PaperTable

        register(PaperTable("toy_table_1", "Toy paper", "Table 1", "Toy accuracy (%)", ("Split",), (("dev",), ("test",)),
                            {"Acc": "accuracy"}, percent=True, numbers={"BERT": {("test",): "71.00"}}))


def test_a_plugin_registers_a_paper_view_that_tasks_bind_to_and_runs_fill():
    from metabench import plugins
    from metabench.config.paper_layouts import check_binding, registered_views
    from metabench.config.schema import PaperViewCell

    registry = plugins.load(extra_plugins=(_ViewPlugin(),))
    views = registered_views(registry)
    assert set(VIEW) < set(views) and registry.get("paper_view", "toy_table_1").plugin == "view_plugin"
    assert check_binding(PaperViewCell(table="toy_table_1", row=["test"]), views) is None
    assert "has no row ['train']" in check_binding(PaperViewCell(table="toy_table_1", row=["train"]), views)
    assert "no paper view 'toy_table_1'" in check_binding(PaperViewCell(table="toy_table_1", row=["test"]))  # built-ins
    cells = Cells.from_bindings([("toy_task", {"table": "toy_table_1", "row": ["test"]})], views)
    table = fill(views["toy_table_1"], cells, ["majority"], {("toy_task", "majority"): {"accuracy": {"mean": 0.5, "std": 0.0, "n": 1}}})
    rows = {(tuple(r["labels"]), r["model"]): r["cells"] for r in table["rows"]}
    assert rows[(("test",), "BERT")] == ["71.00"] and rows[(("test",), "majority")] == ["50.00"]
    assert rows[(("dev",), "majority")] == [MISSING]


def test_a_registered_view_that_is_not_a_paper_table_is_the_plugins_error():
    from metabench import plugins
    from metabench.config.paper_layouts import registered_views
    from metabench.errors import PluginError

    class Bad:
        __name__ = "bad_view_plugin"

        @staticmethod
        @hookimpl
        def metabench_register_paper_views(register):
            register({"key": "not_a_view"})

    with pytest.raises(PluginError, match="bad_view_plugin"):
        registered_views(plugins.load(extra_plugins=(Bad(),)))


def test_boissons_views_live_with_their_family_and_the_old_names_still_resolve():
    """Boisson et al.'s layouts moved into the artifacts family (registered like a plugin's); the paper's name
    is the family's alone (the core aliases were removed in 0.1, docs/plugins.md change log)."""
    import metabench.config.paper_layouts as core
    import metabench.report.paper_views as report
    from metabench_artifacts import paper_layouts as family

    assert not any(key.startswith("boisson_") for key in core.VIEW_BY_KEY)
    from metabench.config.paper_layouts import registered_views
    from metabench.plugins import default_registry

    views = registered_views(default_registry())
    assert {v.key for v in family.VIEWS} <= set(views) and views["boisson_table_3"] is family.VIEW_BY_KEY["boisson_table_3"]
    assert not hasattr(core, "BOISSON") and not hasattr(report, "BOISSON")  # the old aliases are gone (0.1)
