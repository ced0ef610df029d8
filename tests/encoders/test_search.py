"""protocol.encoder.search: the schema, and a 3-trial BOHB search on Ray Tune with the tiny BERT, end to end."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from metabench.config.index import validate_paths
from metabench.hookspecs import hookimpl
from metabench.runner import RunOptions, run

SEARCH_TASKS = Path(__file__).parent / "fixtures" / "search_tasks"


class SearchTasks:
    @hookimpl
    def metabench_register_tasks(self, register):
        register(str(SEARCH_TASKS))


@pytest.fixture
def registry(monkeypatch, tmp_path):
    import toy_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin, SearchTasks()))


def _validate(tmp_path, registry, search: str):
    path = tmp_path / "task.yaml"
    body = textwrap.dedent("""\
        task: t
        kind: classification
        dataset: toy_cls
        splits: {train: train, validation: test, test: test}
        labels: {names: [literal, metaphorical]}
        metrics: [accuracy]
        protocol:
          encoder:
            search:
        """) + textwrap.indent(textwrap.dedent(search), " " * 6)
    path.write_text(body)
    ((_, error),) = validate_paths([path], registry)
    return error


PAPER = """\
metric: accuracy
space:
  batch_size: [4, 8, 16]
  lr: {low: 5.0e-7, high: 5.0e-5, log: true}
  epochs: {low: 1, high: 12}
  seed: [1, 2, 3]
"""


def test_schema_accepts_the_papers_search_and_names_file_and_key_of_a_bad_one(tmp_path, registry):
    assert _validate(tmp_path, registry, PAPER) is None
    assert _validate(tmp_path, registry, "algorithm: optuna\nscheduler: asha\n" + PAPER) is None
    error = _validate(tmp_path, registry, PAPER + "trails: 50\n")
    assert "task.yaml:" in error and "unknown key 'protocol.encoder.search.trails'" in error and "trials" in error
    error = _validate(tmp_path, registry, PAPER.replace("log: true", "lg: true"))
    assert "task.yaml:" in error and "protocol.encoder.search.space.lr.lg" in error
    error = _validate(tmp_path, registry, PAPER + "  dropout: [0.1]\n")
    assert "unknown key 'protocol.encoder.search.space.dropout'" in error
    assert "must be below high" in _validate(tmp_path, registry, PAPER.replace("low: 1, high: 12", "low: 12, high: 1"))
    assert "log range needs low > 0" in _validate(tmp_path, registry, PAPER.replace("5.0e-7", "0"))
    assert "epochs" in _validate(tmp_path, registry, PAPER.replace("high: 12", "high: 1.5"))
    assert "needs scheduler hyperband" in _validate(tmp_path, registry, "scheduler: asha\n" + PAPER)
    assert "required key 'protocol.encoder.search.metric'" in _validate(tmp_path, registry, PAPER.split("\n", 1)[1])
    error = _validate(tmp_path, registry, PAPER.replace("metric: accuracy", "metric: acuracy"))
    assert "metric 'acuracy' is not among the task's metrics (did you mean 'accuracy'?)" in error
    assert "at least one hyperparameter" in _validate(tmp_path, registry, "metric: accuracy\nspace: {}\n")


@pytest.mark.slow
def test_the_search_block_changes_neither_the_config_hash_nor_a_fixed_recipe_run(registry, tmp_path, tiny_bert):
    from metabench.config.index import TaskIndex
    from metabench.config.loader import config_hash

    task = TaskIndex(registry).load("enc_toy_search")
    without = task.config.model_copy(update={"protocol": task.config.protocol.model_copy(update={
        "encoder": task.config.protocol.encoder.model_copy(update={"search": None})})})
    assert config_hash(task.config) == config_hash(without)

    from enc_helpers import make_adapter

    plain, off = make_adapter(tiny_bert), make_adapter(tiny_bert, search="false")
    on = make_adapter(tiny_bert, search="true")
    assert plain.fingerprint() == off.fingerprint() != on.fingerprint()
    protocol = task.config.protocol.encoder
    assert plain.task_fingerprint(protocol) == plain.fingerprint()  # search off: the block is not read
    assert on.task_fingerprint(protocol) != on.task_fingerprint(protocol.model_copy(update={
        "search": protocol.search.model_copy(update={"trials": 4})}))

    (outcome,) = run(registry, "enc_toy_search", [f"hf-encoder:{tiny_bert}"],
                     RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert outcome.status == "ok", outcome.message
    record = outcome.record.raw["model"]["info"]["checkpoints"]["0"]
    assert "search" not in record and "search" not in outcome.record.raw["task"]["config"]["protocol"]["encoder"]


@pytest.mark.slow
@pytest.mark.heavy
def test_a_three_trial_bohb_search_runs_end_to_end_and_trains_the_best_trial(registry, tmp_path, tiny_bert):
    pytest.importorskip("hpbandster")
    model = f"hf-encoder:{tiny_bert},search=true,threads=1"
    options = RunOptions(output_dir=tmp_path / "runs", progress=False)
    (outcome,) = run(registry, "enc_toy_search", [model], options)
    assert outcome.status == "ok", outcome.message
    record = outcome.record.raw["model"]["info"]["checkpoints"]["0"]
    search = record["search"]
    assert search["algorithm"] == "bohb" and search["metric"] == "loss" and search["mode"] == "min"
    assert search["trials_requested"] == 3
    trials = search["trials"]
    assert len(trials) == 3
    for trial in trials:
        config = trial["config"]
        assert 1e-3 <= config["lr"] <= 5e-3 and config["epochs"] in (1, 2, 3) and config["seed"] in (1, 2)
        # one report per epoch, also for a trial HyperBand paused and resumed from its checkpoint
        assert len(trial["validation"]) == trial["epochs_run"] >= 1
        assert trial["completed"] == (trial["epochs_run"] == config["epochs"])
        assert trial["score"] == trial["validation"][-1]
    completed = [t for t in trials if t["completed"]]
    assert len({t["score"] for t in completed}) == len(completed) >= 1  # validation losses: no ties to break
    best = min(completed, key=lambda t: t["score"])
    assert search["best"] == {"trial": best["trial"], "config": best["config"], "score": best["score"]}
    # the final fit is the best configuration, trained with its seed and epochs: on a CPU it repeats the trial
    assert record["trained_seed"] == best["config"]["seed"] and record["best_epoch"] == best["config"]["epochs"]
    assert search["final_validation"] == pytest.approx(best["score"], abs=1e-9)
    assert outcome.record.raw["metrics"]["aggregate"]["accuracy"]["n"] == 1

    fixed = run(registry, "enc_toy_search", [f"hf-encoder:{tiny_bert}"], RunOptions(output_dir=tmp_path / "r2",
                                                                                   progress=False))[0]
    assert fixed.record.raw["model"]["info"]["checkpoints"]["0"]["key"] != record["key"]
    assert fixed.record.raw["timings"]["cached_items"] == 0  # a searched model's answers are not the fixed recipe's

    again = run(registry, "enc_toy_search", [model], RunOptions(output_dir=tmp_path / "r3", progress=False))[0]
    assert again.record.raw["timings"]["cached_items"] == again.record.raw["n_items"]  # no second search


@pytest.mark.slow
@pytest.mark.heavy
def test_the_fallback_optuna_with_asha_runs_end_to_end(registry, tmp_path, tiny_bert):
    pytest.importorskip("optuna")
    (outcome,) = run(registry, "enc_toy_search_optuna", [f"hf-encoder:{tiny_bert},search=true,threads=1"],
                     RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert outcome.status == "ok", outcome.message
    search = outcome.record.raw["model"]["info"]["checkpoints"]["0"]["search"]
    assert (search["algorithm"], search["scheduler"], len(search["trials"])) == ("optuna", "asha", 3)
    best = next(t for t in search["trials"] if t["trial"] == search["best"]["trial"])
    assert best["completed"] and search["final_validation"] == pytest.approx(best["score"], abs=1e-9)


@pytest.mark.parametrize("algorithm", ["bohb", "optuna"])
def test_both_algorithms_sample_inside_the_papers_space(algorithm):
    pytest.importorskip("hpbandster" if algorithm == "bohb" else "optuna")
    import yaml

    from metabench.config.schema import Search
    from metabench.models import search as searching

    search = Search.model_validate({"algorithm": algorithm, **yaml.safe_load(PAPER)})
    searcher = searching._algorithm(search, "accuracy", "max", seed=1)
    searcher.set_search_properties("accuracy", "max", searching.domains(search.space))
    for n in range(8):
        config = {k: searching.plain(v) for k, v in searcher.suggest(str(n)).items()}
        assert config["batch_size"] in (4, 8, 16) and config["seed"] in (1, 2, 3)
        assert 5e-7 <= config["lr"] <= 5e-5 and isinstance(config["epochs"], int) and 1 <= config["epochs"] <= 12
    assert searching.max_epochs(search.space, 3) == 12


def test_the_best_trial_is_the_best_completed_one_earliest_on_ties():
    from metabench.models.search import summarise

    def reports(*scores):
        return [{"epoch": e + 1, "m": v} for e, v in enumerate(scores)]

    log = {
        "a": {"config": {"epochs": 2}, "reports": reports(0.5, 0.7)},
        "b": {"config": {"epochs": 3}, "reports": reports(0.9)},  # stopped early: not chosen
        "c": {"config": {"epochs": 1}, "reports": reports(0.7)},
        "d": {"config": {}, "reports": reports(0.6, 0.65)},  # epochs not searched: the task's 2
    }
    trials, best = summarise(log, metric="m", mode="max", best_epoch=False, planned_epochs=lambda c: c.get("epochs", 2))
    assert [t["completed"] for t in trials] == [True, False, True, True]
    assert best == {"trial": 0, "config": {"epochs": 2}, "score": 0.7}
    _, lowest = summarise(log, metric="m", mode="min", best_epoch=True, planned_epochs=lambda c: c.get("epochs", 2))
    assert lowest["trial"] == 0 and lowest["score"] == 0.5  # best epoch of trial a


def test_budget_knobs_cut_trials_and_epochs_and_need_the_search_on(tiny_bert):
    import yaml

    from enc_helpers import make_adapter
    from metabench.config.schema import Search
    from metabench.errors import AdapterError, MetabenchError
    from metabench.models.search import reduced

    search = Search.model_validate(yaml.safe_load(PAPER))
    small = reduced(search, trials=5, max_epochs=3)
    assert small.trials == 5 and (small.space.epochs.low, small.space.epochs.high) == (1, 3)
    assert small.space.lr == search.space.lr and search.trials == 50  # the task's block is left as it was
    with pytest.raises(MetabenchError, match="below the search's fewest epochs"):
        reduced(search.model_copy(update={"space": search.space.model_copy(update={"epochs": [4, 8]})}), max_epochs=3)
    with pytest.raises(AdapterError, match="search_trials applies to a search, which is off"):
        make_adapter(tiny_bert, search_trials=5)
    from enc_helpers import cls_data, training

    from metabench.errors import UnsupportedError

    requests, golds = cls_data(8)
    plain = training(requests, golds, val=(requests, golds), labels=("literal", "metaphorical"))
    with pytest.raises(UnsupportedError, match="no protocol.encoder.search") as skipped:
        make_adapter(tiny_bert, search="true").fit(plain)
    assert skipped.value.reason == "no protocol.encoder.search"  # a skip with its reason, not a failure
    searched = dataclasses.replace(plain, validation_requests=[], validation_golds=[], protocol=plain.protocol.model_copy(
        update={"search": search}))
    with pytest.raises(UnsupportedError, match="validation split"):
        make_adapter(tiny_bert, search="true").fit(searched)
    assert make_adapter(tiny_bert, search="true", search_trials=5).fingerprint() != \
        make_adapter(tiny_bert, search="true").fingerprint()
