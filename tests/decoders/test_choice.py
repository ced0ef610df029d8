"""Choice scoring: the adapter's log-likelihoods equal a direct forward pass; the kind maps answers to labels."""

from __future__ import annotations

import math

import pytest
from tolerance import approx_f32

from metabench.kinds.choice import confusion_counts, munch_table9
from metabench.requests import ChoiceRequest


def _direct_loglikelihood(tok, model, context: str, continuation: str) -> float:
    """Sum of log P(continuation tokens | context) by a plain transformers forward pass."""
    import torch

    ctx = tok(context)["input_ids"]
    whole = tok(context + continuation)["input_ids"]
    cont = whole[len(ctx):]
    with torch.no_grad():
        logits = model(torch.tensor([whole])).logits[0]
    logprobs = torch.log_softmax(logits.float(), -1)
    return float(sum(logprobs[len(ctx) - 1 + i, t] for i, t in enumerate(cont)))


def test_choice_answers_are_the_argmax_of_direct_loglikelihoods(tiny_decoder, tiny_gpt2):
    context = "Option D: Neither Option A nor Option B\nCorrect answer: Option"
    options = (" A", " B", " C", " D", " covered")
    (answer,) = tiny_decoder.predict([ChoiceRequest(context, options)], seed=0)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_gpt2)
    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2).eval()
    direct = [_direct_loglikelihood(tok, model, context, o) for o in options]
    assert answer["loglikelihoods"] == pytest.approx(direct, abs=1e-4)
    assert answer["index"] == max(range(len(direct)), key=lambda i: (direct[i], -i))
    assert len(answer["is_greedy"]) == len(options)


def test_batches_of_mixed_requests_keep_their_order(tiny_decoder):
    from metabench.requests import GenerateRequest

    requests = [ChoiceRequest("Say which", (" entailment", " neutral")), GenerateRequest("Say which", ("\n",), 3),
                ChoiceRequest("No golden light", (" bathed", " covered", " cleaned"))]
    answers = tiny_decoder.predict(requests, seed=0)
    assert isinstance(answers[1], str)
    assert len(answers[0]["loglikelihoods"]) == 2 and len(answers[2]["loglikelihoods"]) == 3
    again = tiny_decoder.predict(list(reversed(requests)), seed=0)
    assert again[2]["loglikelihoods"] == approx_f32(answers[0]["loglikelihoods"])


def test_kind_maps_indices_and_dict_answers_to_labels(decoder_registry):
    from metabench.config.index import TaskIndex
    from metabench.data.load import load_split

    task = TaskIndex(decoder_registry).load("toy_choice")
    fns = {m.name: decoder_registry.resolve("metric", m.name) for m in task.config.metric_specs()}
    kind = decoder_registry.resolve("kind", "choice")(task.config, fns)
    items = load_split(decoder_registry, "toy_cls", "test").items[:6]
    golds = [kind.gold(i) for i in items]
    assert golds == [1 if i.label == "metaphorical" else 0 for i in items]
    request = kind.request(items[0])
    assert request.context == f"Sentence: {items[0].text}\nIs it literal or metaphorical? Answer:"
    preds = [0, {"index": 1, "loglikelihoods": [-2.0, -1.0]}, 1, 0, {"index": 0, "loglikelihoods": [-1.0, -3.0]}, 1]
    out = kind.aggregate(items, golds, preds)
    labels = ["literal", "metaphorical"]
    expected = sum(labels[g] == labels[kind.index(i, p)] for i, g, p in zip(items, golds, preds)) / 6
    assert out["accuracy"] == pytest.approx(expected)
    assert sum(v for k, v in out.items() if k.startswith("confusion_counts/")) == 6
    assert "accuracy@label=metaphorical" in out and "n@label=literal" in out
    assert kind.score(items[0], golds[0], preds[0]) == {"correct": float(golds[0] == 0)}


def test_per_byte_scoring_prefers_long_options_less():
    from types import SimpleNamespace

    from metabench.kinds.choice import Choice

    kind = Choice.__new__(Choice)
    kind.args = SimpleNamespace(scoring="per_byte", options=[" a", " abcdefgh"], options_field=None, option_template=None)
    answer = {"index": 0, "loglikelihoods": [-3.0, -8.0]}
    assert kind.index(None, answer) == 1  # -8/9 per byte beats -3/2
    kind.args = SimpleNamespace(scoring="sum", options=[" a", " abcdefgh"], options_field=None, option_template=None)
    assert kind.index(None, answer) == 0


def test_munch_table9_and_confusion_counts():
    golds = ["A", "B", "A", "C", "C", "D", "D", "B"]
    preds = ["A", "A", "C", "C", "B", "D", "A", "D"]
    t9 = munch_table9(golds, preds)
    assert t9["munch_table9/apt_inapt/correct"] == 1
    assert t9["munch_table9/apt_inapt/wrong_ab"] == 1
    assert t9["munch_table9/apt_inapt/C"] == 1 and t9["munch_table9/apt_inapt/D"] == 1
    assert t9["munch_table9/apt_apt/C"] == 1 and t9["munch_table9/apt_apt/AB"] == 1
    assert t9["munch_table9/inapt_inapt/D"] == 1 and t9["munch_table9/inapt_inapt/AB"] == 1
    assert sum(t9.values()) == len(golds)
    cc = confusion_counts(golds, preds, labels=["A", "B", "C", "D"])
    assert len(cc) == 16 and cc["confusion_counts/D/A"] == 1 and sum(cc.values()) == 8


def test_baselines_answer_choice_requests():
    from metabench.models.baselines import Constant, RandomBaseline

    requests = [ChoiceRequest(f"q{i}", (" A", " B", " C", " D")) for i in range(200)]
    assert set(Constant({"index": "3"}).predict(requests, 0)) == {3}
    draws = RandomBaseline({}).predict(requests, 0)
    assert set(draws) == {0, 1, 2, 3}
    assert draws == RandomBaseline({}).predict(requests, 0)
    assert math.isclose(sum(d == 0 for d in draws) / 200, 0.25, abs_tol=0.1)
