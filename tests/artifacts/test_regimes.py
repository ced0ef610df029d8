"""Split regimes on every Boisson dataset: folds partition the pool, lexical folds never share a key between
train and test, proportions are 70/10/20, and the assignment is a deterministic function of its inputs."""

from __future__ import annotations

from collections import Counter

import pytest

from metabench_artifacts.recipes import KEYS, RECIPES, SINGLE_SPLIT_ITEMS
from metabench_artifacts.regimes import CHUNKS, FOLDS, assign, chunk_of, digest, folding, role_of_chunk, split_of
from metabench.data.load import load_split
from metabench.errors import MetabenchError

from .conftest import ALL

pytestmark = pytest.mark.mirror

CASES = [(n, r) for n in ALL for r in RECIPES[n].regimes if r not in ("original", "authors")]


def _key(name: str, regime: str):
    recipe = RECIPES[name]
    if regime == "random":
        return lambda item: item.id
    return KEYS[recipe.key_l2 if regime == "lexical_l2" else recipe.key]


def _folds(name, regime, items):
    folds = FOLDS if len(items) < SINGLE_SPLIT_ITEMS else (0,)
    return {f: assign(items, _key(name, regime), dataset=f"boisson_{name}", regime=regime, seed=0, fold=f) for f in folds}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "regime"), CASES)
def test_folds_partition_and_lexical_keys_disjoint(pool, name, regime):
    items = pool(name, regime)
    ids = {i.id for i in items}
    assert len(ids) == len(items)
    folds = _folds(name, regime, items)
    tests = []
    for parts in folds.values():
        role_ids = {role: {i.id for i in part} for role, part in parts.items()}
        assert set().union(*role_ids.values()) == ids
        assert sum(map(len, role_ids.values())) == len(ids)
        shares = {role: len(part) / len(items) for role, part in parts.items()}
        tolerance = 0.005 if regime == "random" else 0.05
        assert shares["test"] == pytest.approx(0.2, abs=2 * tolerance)
        assert shares["validation"] == pytest.approx(0.1, abs=tolerance)
        if regime != "random":
            key = _key(name, regime)
            test_keys = {key(i) for i in parts["test"]}
            assert not test_keys & {key(i) for i in parts["train"]}
            assert not test_keys & {key(i) for i in parts["validation"]}
        tests.append(role_ids["test"])
    if len(folds) == len(FOLDS):  # the five test folds cover the pool exactly once
        assert set().union(*tests) == ids and sum(map(len, tests)) == len(ids)


@pytest.mark.parametrize("name", ["card_n", "tsv_an"])
def test_loader_matches_assignment_and_is_deterministic(registry, pool, name):
    args = {"regime": "lexical", "fold": 2, "seed": 0}
    first = [i.id for i in load_split(registry, f"boisson_{name}", "test", args).items]
    again = [i.id for i in load_split(registry, f"boisson_{name}", "test", args).items]
    expected = [i.id for i in _folds(name, "lexical", pool(name))[2]["test"]]
    assert first == again and set(first) == set(expected)
    other_seed = [i.id for i in load_split(registry, f"boisson_{name}", "test", {**args, "seed": 1}).items]
    assert set(other_seed) != set(first)


def test_chunks_keep_groups_together_and_balance():
    keys = [f"k{i % 37}" for i in range(500)]
    chunks = chunk_of(keys, "salt")
    where = {}
    for key, chunk in zip(keys, chunks):
        assert where.setdefault(key, chunk) == chunk
    sizes = [chunks.count(c) for c in range(10)]
    assert max(sizes) - min(sizes) <= max(keys.count(k) for k in set(keys))
    assert chunk_of(keys, "salt") == chunks and chunk_of(keys, "other") != chunks


def _chunks_by_definition(keys: list[str], salt: str) -> list[int]:
    """The module docstring's rule, written plainly: groups largest first (hex digest order among equals),
    each into the least-filled chunk (lowest number among equals)."""
    sizes = Counter(keys)
    fill, where = [0] * CHUNKS, {}
    for key in sorted(sizes, key=lambda k: (-sizes[k], digest(salt, k))):
        where[key] = min(range(CHUNKS), key=lambda c: (fill[c], c))
        fill[where[key]] += sizes[key]
    return [where[k] for k in keys]


def test_chunk_assignment_follows_its_definition():
    keys = [f"k{(i * 7) % 53 % (1 + i % 5)}" for i in range(3000)]  # many groups of equal size
    assert chunk_of(keys, "salt") == _chunks_by_definition(keys, "salt")
    keys = [f"id{i}" for i in range(997)]  # singletons only (the random regime)
    assert chunk_of(keys, "salt") == _chunks_by_definition(keys, "salt")


@pytest.mark.parametrize(("name", "regime"), [("card_n", "lexical"), ("tsv_an", "lexical_l2"), ("moh", "random")])
def test_folding_and_split_order_follow_their_definition(pool, name, regime):
    items, dataset = pool(name), f"boisson_{name}"
    chunk, order = folding(items, _key(name, regime), dataset=dataset, regime=regime, seed=3)
    assert list(chunk) == _chunks_by_definition([_key(name, regime)(i) for i in items], f"{dataset}\x00{regime}\x003")
    ranked = sorted(range(len(items)), key=lambda i: digest(dataset, regime, 3, items[i].id))
    assert list(order) == ranked
    for fold in FOLDS:  # a split: its chunks' items in hashed order
        assert split_of((chunk, order), fold, "test") == [i for i in ranked if role_of_chunk(chunk[i], fold) == "test"]


def test_deduplication_counts(pool):
    assert len(pool("trofi")) == 3737 - 95  # repeated WSJ sentences with the same target verb (A.4)
    assert len(pool("tsv_an")) == 1963 - 18  # training pairs that repeat a test pair (A.1)
    assert len(pool("tsv_an", "original")) == 1963  # the original split is not deduplicated


def test_trofi_label_sources(registry, pool):
    """labels=cluster (the Boisson default) gives the paper's Table 1 share and Maj: 2,097 / 3,642 = 57.6 %;
    labels=human (Gao et al.'s, the trofi_cv tasks' labels) is the switch; the folds do not depend on it."""
    cluster = [i.label for i in pool("trofi")]
    assert cluster.count("metaphor") == 2097 and round(100 * 2097 / len(cluster), 1) == 57.6
    human = load_split(registry, "boisson_trofi", "test", {"regime": "random", "fold": 0, "labels": "human"}).items
    default = load_split(registry, "boisson_trofi", "test", {"regime": "random", "fold": 0}).items
    assert [i.id for i in human] == [i.id for i in default] and [i.label for i in human] != [i.label for i in default]
    svo = load_split(registry, "boisson_tsv_svo", "train", {"regime": "original"}).items
    assert sum(i.label == "metaphor" for i in svo) == 2145  # TroFi's 3,737 with their cluster labels
    with pytest.raises(MetabenchError, match="labels"):
        load_split(registry, "boisson_trofi", "test", {"regime": "random", "labels": "gold"})


def test_tsv_svo_tests_on_the_222_sentences_with_the_verb_as_pme(registry):
    test = load_split(registry, "boisson_tsv_svo", "test", {"regime": "original"}).items
    assert len(test) == 222 and sum(i.label == "metaphor" for i in test) == 111
    first = test[0]
    assert first.text == "The twentieth century saw intensive development of new technologies"
    (start, end), = first.spans
    assert first.text[start:end] == "saw" and first.lemma == "see"  # an irregular form, found through verb.exc
    assert sum(i.text.endswith((".", "!", "?")) for i in test) > 200  # sentences, not bare triples
    triples = load_split(registry, "tsv_svo", "test", {"form": "triple"}).items
    assert len(triples) == 222 and triples[0].text == "conversation turn subject"


def test_card_n_authors_regime_is_the_release_split(registry, pool):
    """The Cardiff release's own folds (CARD_N_LEMSPLIT): a partition of the same 512 items, vehicle-disjoint,
    about 70/10/20, read from each record's 5-folds field."""
    ids, tests = {i.id for i in pool("card_n")}, []
    for fold in FOLDS:
        parts = {split: load_split(registry, "boisson_card_n", split, {"regime": "authors", "fold": fold}).items
                 for split in ("train", "validation", "test")}
        assert set().union(*({i.id for i in p} for p in parts.values())) == ids
        assert all(i.meta["folds"][fold] == "test" for i in parts["test"])
        vehicles = {split: {i.group.lower() for i in p} for split, p in parts.items()}
        assert not vehicles["test"] & (vehicles["train"] | vehicles["validation"])
        assert len(parts["test"]) / len(ids) == pytest.approx(0.2, abs=0.01)
        tests.append({i.id for i in parts["test"]})
    assert set().union(*tests) == ids and sum(map(len, tests)) == len(ids)


def test_jank_labels_and_original_split(registry, pool):
    labels = [i.label for i in pool("jank")]
    assert labels.count("metaphor") == 120 and labels.count("literal") == 240  # Table 1: 33 % metaphor
    svo = load_split(registry, "boisson_tsv_svo", "train", {"regime": "original"}).items
    assert len(svo) == 3737  # Table 1 TSV_V train = TroFi


def test_single_split_rule_and_bad_regime(registry):
    with pytest.raises(MetabenchError, match="footnote 4"):
        load_split(registry, "boisson_vuac_st2", "test", {"regime": "random", "fold": 1})
    with pytest.raises(MetabenchError, match="regime"):
        load_split(registry, "boisson_card_n", "test", {"regime": "original"})
