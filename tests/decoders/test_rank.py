"""MUNCH generation ranking on hand-built next-token distributions: top-k order, prefix filter, greedy word
completion, then MRR / Recall@k / accuracy@1."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from metabench.kinds.parsers import rank_candidates
from metabench.metrics.ranking import accuracy_at_1, mrr, recall_at_k
from metabench.models.hf_decoder import HFDecoder, word_ended
from metabench.requests import RankRequest

VOCAB = ["<eos>", "prompt", '"', "cov", "ered", "clean", "ed", " ", "ill", "umin", "ated", "x", "Cov", "-", "known"]
ID = {t: i for i, t in enumerate(VOCAB)}
NEXT = {"cov": "ered", "ered": '"', "ill": "umin", "umin": "ated", "ated": '"', "clean": "ed", "ed": " ",
        "Cov": "ered", "x": '"', "-": "known", "known": '"', '"': "<eos>", " ": "<eos>", "<eos>": "<eos>"}


class FakeTokenizer:
    eos_token_id = 0
    pad_token_id = 0

    def decode(self, ids, skip_special_tokens=False):
        ids = [ids] if isinstance(ids, int) else ids
        return "".join(VOCAB[i] for i in ids if not (skip_special_tokens and i == 0))


class FakeCache:
    def batch_repeat_interleave(self, n):
        self.n = n


class FakeModel:
    """First call (the prompt): logits of ``first`` (a ranked token list); later calls: greedy ``NEXT``."""

    def __init__(self, first):
        self.first = first
        self.calls = 0

    def __call__(self, input_ids, past_key_values=None, use_cache=True):
        import torch

        self.calls += 1
        rows, length = input_ids.shape
        logits = torch.full((rows, length, len(VOCAB)), -50.0)
        if past_key_values is None:
            for rank, token in enumerate(self.first):
                logits[0, -1, ID[token]] = 10.0 - rank
            return SimpleNamespace(logits=logits, past_key_values=FakeCache())
        for row in range(rows):
            logits[row, -1, ID[NEXT[VOCAB[int(input_ids[row, -1])]]]] = 5.0
        return SimpleNamespace(logits=logits, past_key_values=past_key_values)


def _adapter(first):
    adapter = HFDecoder({"pretrained": "/nonexistent"})
    adapter._lm = SimpleNamespace(model=FakeModel(first), tokenizer=FakeTokenizer(), device="cpu", max_length=512,
                                  tok_encode=lambda text: [ID["prompt"], ID['"']])
    return adapter


FIRST = ["cov", "x", "ill", "clean", '"', "Cov"]


def test_rank_completes_only_tokens_that_begin_an_answer():
    adapter = _adapter(FIRST)
    (answer,) = adapter.predict([RankRequest("p", k=6, complete=("covered", "illuminated", "bathed"))], seed=0)
    assert answer == [["cov", "covered"], ["x", None], ["ill", "illuminated"], ["clean", None], ['"', None],
                      ["Cov", "Covered"]]


def test_rank_all_completes_every_token():
    (answer,) = _adapter(FIRST).predict([RankRequest("p", k=4)], seed=0)
    assert answer == [["cov", "covered"], ["x", "x"], ["ill", "illuminated"], ["clean", "cleaned"]]


def test_k_limits_the_ranking_and_hyphens_are_kept():
    (answer,) = _adapter(["-", "cov"]).predict([RankRequest("p", k=1)], seed=0)
    assert answer == [["-", "known"]]  # a leading hyphen is not part of a word
    assert word_ended("cov ") and word_ended('covered"') and not word_ended("well-kn") and not word_ended(" cov")


def test_metrics_on_hand_built_rankings():
    gold = ["covered", "illuminated", "bathed"]
    first = rank_candidates([["cov", "covered"], ["x", None], ["ill", "illuminated"], ["clean", None], ['"', None],
                             ["Cov", "Covered"]])
    second = rank_candidates([["x", None], ["ill", "illuminated"]])
    missing = rank_candidates([["x", None]])
    golds, preds = [gold, gold, gold], [first, second, missing]
    assert mrr(golds, preds) == pytest.approx((1 + 1 / 2 + 0) / 3)
    assert accuracy_at_1(golds, preds) == pytest.approx(1 / 3)
    # fraction of distinct answers in the top k: "Covered" de-duplicates with "covered"
    assert recall_at_k(golds, preds, k=5, mode="fraction") == pytest.approx((2 / 3 + 1 / 3 + 0) / 3)
    assert recall_at_k(golds, preds, k=1, mode="fraction") == pytest.approx((1 / 3 + 0 + 0) / 3)


@pytest.mark.slow
def test_generation_kind_scores_rank_answers(decoder_registry):
    from metabench.config.index import TaskIndex
    from metabench.data.load import load_split

    task = TaskIndex(decoder_registry).load("toy_rank")
    fns = {m.name: decoder_registry.resolve("metric", m.name) for m in task.config.metric_specs()}
    kind = decoder_registry.resolve("kind", "generation")(task.config, fns)
    items = load_split(decoder_registry, "toy_cls", "test").items[:2]
    request = kind.request(items[0])
    assert isinstance(request, RankRequest) and request.complete is None and request.k == 5
    golds = [kind.gold(i) for i in items]
    preds = [[[" lit", items[0].label]], [["x", None], ["m", items[1].label]]]
    out = kind.aggregate(items, golds, preds)
    assert out["mrr"] == pytest.approx((1 + 1 / 2) / 2)
    assert out["recall_at_k[k=1]"] == pytest.approx(0.5) and out["recall_at_k[k=5]"] == pytest.approx(1.0)
    assert out["parse_rate"] == 1.0
    scores = kind.score(items[1], golds[1], preds[1])
    assert scores["rank"] == 2 and scores["reciprocal_rank"] == 0.5 and scores["correct"] == 0.0
    bad = kind.score(items[0], golds[0], "not a ranking")
    assert bad["parse_ok"] == 0.0 and bad["reciprocal_rank"] == 0.0
