"""Views expand into <task>@<view> tasks and groups; the expression-keyed lookup and the model-free
diagnostics behave as documented."""

from __future__ import annotations

from collections import Counter

import pytest
from lazy import lazy

from metabench_artifacts.metrics import collision_ceiling, majority_accuracy
from metabench.config.index import TaskIndex
from metabench.errors import ConfigError
from metabench.models.baselines import Lookup
from metabench.requests import ClassifyRequest, Training

skm = lazy("sklearn.metrics")


def _write(folder, name, text):
    (folder / name).write_text(text, encoding="utf-8")


BASE = """kind: classification
kind_args: {marker: pme}
dataset: boisson_card_n
splits: {train: train, test: test}
labels: {names: [literal, metaphor]}
metrics: [accuracy]
"""


def _index(registry, tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "task_dirs", lambda: [(tmp_path, type("E", (), {"plugin": "t", "plugin_version": "0"})())])
    return TaskIndex(registry)


def test_views_expand_into_tasks_and_groups(registry, tmp_path, monkeypatch):
    _write(tmp_path, "_b.yaml", BASE)
    _write(tmp_path, "f0.yaml", "include: _b.yaml\ntask: f0\nviews: [default, masked]\n")
    _write(tmp_path, "f1.yaml", "include: _b.yaml\ntask: f1\nviews: [default, masked]\n")
    _write(tmp_path, "g.yaml", "group: g\ntask: [f0, f1]\nviews: [default, masked]\naggregate: mean\n")
    index = _index(registry, tmp_path, monkeypatch)
    assert sorted(index.tasks) == ["f0@default", "f0@masked", "f1@default", "f1@masked"]
    assert index.tasks["f0@masked"].config.kind_args["view"] == "masked"
    assert index.tasks["f0@masked"].hash != index.tasks["f0@default"].hash
    assert index.select("f0") == ["f0@default", "f0@masked"]
    assert index.select("g@masked") == ["f0@masked", "f1@masked"]
    assert index.groups["g@masked"].aggregate == "mean" and index.groups["g"].aggregate == "none"
    assert sorted(index.select("g")) == sorted(index.tasks)


def test_views_need_a_marked_expression(registry, tmp_path, monkeypatch):
    _write(tmp_path, "bad.yaml", BASE.replace("{marker: pme}", "{}") + "task: bad\nviews: [masked]\n")
    index = _index(registry, tmp_path, monkeypatch)  # a bad task file is quarantined, not fatal
    assert "bad@masked" not in index.tasks
    with pytest.raises(ConfigError, match="views need kind: classification with kind_args.marker: pme"):
        index.select("bad")


def _request(text, expression):
    return ClassifyRequest(text=text, labels=("literal", "metaphor"), expression=expression)


def test_lookup_keyed_on_the_expression():
    train = [_request("a <PME>hymn</PME>", "hymn"), _request("b <PME>hymn</PME>", "hymn"), _request("c <PME>x</PME>", "x")]
    golds = ["metaphor", "metaphor", "literal"]
    training = Training(requests=train, golds=golds, validation_requests=[], validation_golds=[],
                        labels=("literal", "metaphor"), protocol=None, seed=0, data_hash="")
    by_expression, by_input = Lookup({"key": "expression"}), Lookup({})
    by_expression.fit(training)
    by_input.fit(training)
    tests = [_request("new <PME>hymn</PME>", "hymn"), _request("z <PME>x</PME>", "x"), _request("q", "unseen")]
    assert by_expression.predict(tests, 0) == ["metaphor", "literal", "metaphor"]  # unseen: global majority
    assert by_input.predict(tests, 0) == ["metaphor", "metaphor", "metaphor"]
    with pytest.raises(Exception, match="key="):
        Lookup({"key": "lemma"})


def test_diagnostics_metrics():
    golds = ["m", "l", "m", "m", "l", "l", "l"]
    inputs = ["a", "a", "b", "b", "b", "c", "d"]
    # a: one of two right; b: two of three; c, d: all -> (1 + 2 + 1 + 1) / 7
    assert collision_ceiling(golds, golds, inputs=inputs) == pytest.approx(5 / 7)
    # the ceiling is reached by the best function of the input: the per-input majority label
    best = {k: Counter(g for g, i in zip(golds, inputs) if i == k).most_common(1)[0][0] for k in set(inputs)}
    assert collision_ceiling(golds, golds, inputs=inputs) == pytest.approx(skm.accuracy_score(golds, [best[i] for i in inputs]))
    assert majority_accuracy(golds, golds) == pytest.approx(4 / 7)


@pytest.mark.parametrize("seed", range(5))
def test_collision_ceiling_is_the_accuracy_of_the_best_function_of_the_input(seed):
    import random

    rng = random.Random(seed)
    inputs = [rng.choice("abcdefg") for _ in range(60)]
    golds = [rng.choice(["metaphor", "literal", "other"]) for _ in inputs]
    # brute force: the per-input majority label, ties to whichever, is what the best function answers
    best = {k: Counter(g for g, i in zip(golds, inputs) if i == k).most_common(1)[0][0] for k in set(inputs)}
    assert collision_ceiling(golds, golds, inputs=inputs) == skm.accuracy_score(golds, [best[i] for i in inputs])


def test_card_n_pme_only_ceiling_is_one_half_under_lexical_folds(registry):
    """Every CARD_N PME occurs once literal and once metaphorical; lexical folds keep both in one test fold,
    so no model that sees only the PME can beat 50 % (the paper's Table 5: Only-PME accuracy 50.0)."""
    from metabench.config.index import TaskIndex as Index
    from metabench.data.load import load_split

    index = Index(registry)
    task = index.load("boisson_card_n_lexical_f0@pme_only")
    kind = registry.resolve("kind", "classification")(task.config, {})
    items = load_split(registry, "boisson_card_n", "test", dict(task.config.dataset_args)).items
    golds = [i.label for i in items]
    assert collision_ceiling(golds, golds, **kind.metric_context(items)) == pytest.approx(0.5)


@pytest.mark.parametrize("view", ["default", "pme_only", "masked"])
def test_the_ceiling_inputs_are_the_request_keys_whether_or_not_requests_were_built(registry, view):
    """A model that reads no requests (majority) gets the ceiling's inputs rendered directly; they must be
    the keys of the requests a model that reads them would have been sent."""
    from metabench.config.index import TaskIndex as Index
    from metabench.data.load import load_split

    task = Index(registry).load(f"boisson_card_n_random_f0@{view}")
    items = load_split(registry, "boisson_card_n", "test", dict(task.config.dataset_args)).items
    fresh = registry.resolve("kind", "classification")(task.config, {})
    direct = fresh.metric_context(items)["inputs"]
    built = registry.resolve("kind", "classification")(task.config, {})
    keys = [built.request(item).key for item in items]
    assert direct == keys == built.metric_context(items)["inputs"]
    assert not fresh._rendered  # no request was built for the direct inputs


def test_majority_reads_no_classification_or_choice_requests_and_the_runner_renders_none(registry, tmp_path, monkeypatch):
    from metabench.kinds.classification import Classification
    from metabench.models.baselines import Majority
    from metabench.requests import ChoiceRequest, ClassifyRequest, TagRequest
    from metabench.runner import RunOptions, run

    majority = Majority({})
    assert not majority.reads_requests(ClassifyRequest) and not majority.reads_requests(ChoiceRequest)
    assert majority.reads_requests(TagRequest) and majority.reads_requests(None)

    class Logging(Majority):  # a plugin's subclass whose predict reads the requests
        def predict(self, requests, seed):
            return super().predict(requests, seed)

    assert Logging({}).reads_requests(ClassifyRequest)

    def no_rendering(self, item):
        raise AssertionError("a classification request was built for majority")

    monkeypatch.setattr(Classification, "_render", no_rendering)
    outcomes = run(registry, "boisson_card_n_random_f0@masked", ["majority"],
                   RunOptions(output_dir=tmp_path, progress=False, use_cache=False))
    assert [o.status for o in outcomes] == ["ok"]
    assert "collision_ceiling" in outcomes[0].record.raw["metrics"]["aggregate"]
