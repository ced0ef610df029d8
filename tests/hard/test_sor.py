"""The SOR trainer on a tiny random BERT: loss, batching, sampling, target positions, settings."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "encoders"))

from metabench.errors import MetabenchError  # noqa: E402
from metabench_hard.pool import Instance  # noqa: E402
from metabench_hard.sor import (  # noqa: E402
    SenseSampler,
    SORSettings,
    _batched_vectors,
    contrastive_loss,
    embed,
    target_inputs,
    train_sor,
)

SENTENCES = [
    "the dog ran to the house", "she grasped the idea at night", "they attacked the argument",
    "the price fell in the market", "he ate the bread and ran", "we walked on the road at day",
    "the river rose in the storm", "a child said a new word", "the old man walked to the sea",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    import torch
    from tiny_bert import build_tiny_bert

    torch.set_num_threads(1)
    return build_tiny_bert(tmp_path_factory.mktemp("tiny-sor"))


def instances() -> list[Instance]:
    """Three verbs with three senses each, four instances per sense (target = a word of the sentence)."""
    out = []
    for v, verb in enumerate(("run", "fall", "walk")):
        for s in range(3):
            for i in range(4):
                words = tuple(SENTENCES[(v * 3 + s + i) % len(SENTENCES)].split())
                out.append(Instance(f"{verb}{s}-{i}", words, (i + s) % len(words), f"{verb}%2:38:0{s}::"))
    return out


def test_loss_is_simcse_cross_entropy_for_pairs():
    import torch

    torch.manual_seed(0)
    z = torch.nn.functional.normalize(torch.randn(8, 5), dim=-1)
    sims = z @ z.T / 0.05
    sims.fill_diagonal_(float("-inf"))
    partner = torch.arange(8) ^ 1  # rows 0,1 are one sense, 2,3 the next...
    expected = torch.nn.functional.cross_entropy(sims, partner)
    assert contrastive_loss(z, 2, 0.05).item() == pytest.approx(expected.item(), rel=1e-6)


def test_length_sorted_slices_give_the_padded_batch_vectors(tiny):
    import torch
    from transformers import AutoModel

    from metabench_hard.sor import load_tokenizer, target_vectors

    tokenizer = load_tokenizer(tiny)
    model = AutoModel.from_pretrained(str(tiny)).eval()
    batch = instances()[:10]
    ids, positions = target_inputs(tokenizer, batch, 32)
    with torch.no_grad():
        whole = target_vectors(model, tokenizer, ids, positions, -1)
        sliced = _batched_vectors(model, tokenizer, ids, positions, -1, 3)
    torch.testing.assert_close(sliced, whole, atol=1e-5, rtol=1e-5)
    assert torch.allclose(whole.norm(dim=-1), torch.ones(len(batch)))


def test_target_position_is_the_first_sub_token_of_the_target(tiny):
    from metabench_hard.sor import load_tokenizer

    tokenizer = load_tokenizer(tiny)
    inst = Instance("x", ("the", "grasping", "fell"), 1, "grasp%2:35:00::")
    ids, positions = target_inputs(tokenizer, [inst], 32)
    first = tokenizer.convert_ids_to_tokens(ids[0][positions[0]])
    assert first == "grasp" and tokenizer.convert_ids_to_tokens(ids[0][positions[0] + 1]) == "##ing"
    long = Instance("y", tuple(["the"] * 60 + ["grasping"] + ["the"] * 60), 60, "grasp%2:31:00::")
    ids, positions = target_inputs(tokenizer, [long], 16)
    assert len(ids[0]) <= 16 and tokenizer.convert_ids_to_tokens(ids[0][positions[0]]) == "grasp"


def test_sampler_batches_distinct_senses_with_distinct_same_sense_pairs_and_never_excluded_ones():
    settings = SORSettings(senses_per_batch=4)
    excluded = {"walk%2:38:00::"}
    sampler = SenseSampler(instances(), settings, excluded)
    rng = random.Random(0)
    for _ in range(20):
        batch = sampler.batch(rng)
        keys = [group[0].key for group in batch]
        assert len(batch) == 4 and len(set(keys)) == 4 and not set(keys) & excluded
        assert all(len(g) == 2 and g[0].key == g[1].key and g[0].id != g[1].id for g in batch)
    with pytest.raises(MetabenchError, match="no lemma"):
        SenseSampler(instances(), SORSettings(min_senses=5))


def test_training_moves_the_encoder_and_saves_it(tiny, tmp_path):
    import numpy as np

    settings = SORSettings(steps=3, senses_per_batch=4, max_length=32)
    meta = train_sor(tiny, instances(), set(), settings, tmp_path / "sor")
    assert meta["settings"]["steps"] == 3 and meta["training_senses"] == 9
    before = embed(tiny, instances()[:6], max_length=32)
    after = embed(tmp_path / "sor", instances()[:6], max_length=32)
    assert before.shape == after.shape == (6, 64)
    assert not np.allclose(before, after)
    np.testing.assert_allclose(np.linalg.norm(after, axis=1), 1.0, rtol=1e-5)


def test_settings_parse_and_explain_bad_values():
    settings = SORSettings.parse("steps=300, tau=0.1,exclude_metaphorical=false")
    assert (settings.steps, settings.tau, settings.exclude_metaphorical) == (300, 0.1, False)
    assert settings.changed() == {"steps": 300, "tau": 0.1, "exclude_metaphorical": False}
    assert SORSettings.parse("") == SORSettings()
    with pytest.raises(MetabenchError, match="known settings"):
        SORSettings.parse("temperature=0.1")
    with pytest.raises(MetabenchError, match="not a int"):
        SORSettings.parse("steps=many")
    with pytest.raises(MetabenchError, match="positive pair"):
        SORSettings.parse("instances_per_sense=1")


def test_context_words_keep_that_many_words_around_the_target(tiny):
    from metabench_hard.sor import load_tokenizer

    tokenizer = load_tokenizer(tiny)
    inst = Instance("z", tuple("a b c d grasping e f g h".split()), 4, "grasp%2:35:00::")
    ids, positions = target_inputs(tokenizer, [inst], 32, context_words=2)
    tokens = tokenizer.convert_ids_to_tokens(ids[0])
    assert tokens == ["[CLS]", "c", "d", "grasp", "##ing", "e", "f", "[SEP]"] and positions == [3]
