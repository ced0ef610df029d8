"""The Boisson pools in the parsed-item cache: one entry per (dataset, seed) holding the items and each
regime's folding, every split cut from it by index. A hit gives the splits a fresh build gives, with the
same files; a changed or missing base file still fails on a hit; an unreadable entry is a miss; a cache
that cannot be written only costs speed."""

from __future__ import annotations

import shutil
from collections import OrderedDict

import pytest

from metabench_artifacts import derived
from metabench.data import itemcache, resolve
from metabench.data.load import load_split
from metabench.errors import DataError

pytestmark = pytest.mark.mirror

CARD_N = "boisson_construction_artifacts/cardiff_metaphors_and_analogies/Cardillo/cardillo_with_figurativeness_ratings.jsonl"


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """An empty cache folder and a process that has built no pool and verified no file yet."""
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(derived, "_POOLS", OrderedDict())
    monkeypatch.setattr(resolve, "_verified", {})
    return tmp_path / "cache" / "items"


def _new_process(monkeypatch):
    monkeypatch.setattr(derived, "_POOLS", OrderedDict())
    monkeypatch.setattr(resolve, "_verified", {})


def _loads(name: str) -> list[tuple[str, dict]]:
    regimes = [r for r in derived.RECIPES[name].regimes if r not in ("original", "authors")]
    folds = (0, 3) if name == "card_n" else (0,)
    return [(split, {"regime": r, "fold": f, "seed": seed}) for r in regimes for f in folds for seed in (0, 1)
            for split in ("train", "validation", "test")] + [("all", {"regime": "random"})]


def _pool_entry(registry, name: str, seed: int = 0):
    spec = registry.resolve("dataset", f"boisson_{name}")
    return itemcache.cache_folder() / f"{itemcache.key(spec, 'all', {'seed': seed}, part='pool')}.pkl"


def _must_not_build(*args, **kwargs):
    raise AssertionError("the pool was built again although it is cached")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["card_n", "cometa_bo"])  # a lexical-keyed pool and a sampled one
def test_a_pool_hit_cuts_the_splits_of_a_fresh_build(registry, cache, monkeypatch, name):
    built = {repr(a): load_split(registry, f"boisson_{name}", *a) for a in _loads(name)}
    spec = registry.resolve("dataset", f"boisson_{name}")
    for split, args in _loads(name):  # a marker per split (the job memo keys on it), never a copy of items
        entry = itemcache.key(spec, split, args)
        assert itemcache.exists(entry) and itemcache.get(entry) is None
    assert _pool_entry(registry, name).is_file() and _pool_entry(registry, name, 1).is_file()
    _new_process(monkeypatch)
    monkeypatch.setattr(derived, "pool", _must_not_build)
    for args in _loads(name):
        again = load_split(registry, f"boisson_{name}", *args)
        first = built[repr(args)]
        assert again.items == first.items and again.files == first.files
        assert [i.meta for i in again.items] == [i.meta for i in first.items]  # meta is compare=False


@pytest.mark.slow
def test_a_sampled_pool_is_built_with_its_twin_which_is_then_read_from_the_cache(registry, cache, monkeypatch):
    """Loading boisson_m4x_en_bo draws its random control (m4x_en_rs) in the same pass and stores both; the
    control's tasks then read it, identical to the control built alone, and build nothing."""
    from metabench.data.context import DataContext

    load_split(registry, "boisson_m4x_en_bo", "test", {"regime": "random"})
    assert _pool_entry(registry, "m4x_en_rs").is_file()
    ctx = DataContext(registry.resolve("dataset", "boisson_m4x_en_rs"), None)
    alone = derived._build(ctx, [derived.RECIPES["m4x_en_rs"]], 0, {})[0]
    _new_process(monkeypatch)
    monkeypatch.setattr(derived, "samples", _must_not_build)
    stored = itemcache.read(_pool_entry(registry, "m4x_en_rs").stem)
    assert stored.items == alone.items and stored.folds == alone.folds and stored.used == alone.used
    assert [i.meta for i in stored.items] == [i.meta for i in alone.items]
    test = load_split(registry, "boisson_m4x_en_rs", "test", {"regime": "lexical"})
    assert [i.id for i in test.items] == [alone.items[i].id for i in derived.split_of(alone.folds["lexical"], 0, "test")]


def test_seeds_and_regimes_give_other_splits_from_one_pool(registry, cache):
    def ids(**args):
        return [i.id for i in load_split(registry, "boisson_card_n", "test", args).items]

    assert ids(regime="random", fold=0) != ids(regime="random", fold=0, seed=1)
    assert ids(regime="random", fold=0) != ids(regime="lexical", fold=0)
    assert len(list(cache.glob("*.pkl"))) == 2 + 3 + 1  # pools (seeds 0, 1), three markers, the base slice


@pytest.fixture
def small_mirror(tmp_path, monkeypatch):
    """A mirror holding only CARD_N's base file (a copy that can be altered)."""
    source = resolve.search_roots(None)[0][1] / CARD_N
    target = tmp_path / "mirror" / CARD_N
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    target.chmod(0o644)
    monkeypatch.setenv("METABENCH_DATA_DIR", str(tmp_path / "mirror"))
    return target


ARGS = {"regime": "lexical", "fold": 2}


def test_a_changed_base_file_fails_on_a_pool_hit(registry, cache, small_mirror, monkeypatch):
    load_split(registry, "boisson_card_n", "test", ARGS)
    small_mirror.write_text(small_mirror.read_text().replace("a", "b", 1))
    _new_process(monkeypatch)
    monkeypatch.setattr(derived, "pool", _must_not_build)  # the failure comes from the hit's check
    with pytest.raises(DataError, match="sha256"):
        load_split(registry, "boisson_card_n", "validation", ARGS)


def test_a_missing_base_file_fails_on_a_pool_hit(registry, cache, small_mirror, monkeypatch):
    load_split(registry, "boisson_card_n", "test", ARGS)
    small_mirror.unlink()
    _new_process(monkeypatch)
    monkeypatch.setattr(derived, "pool", _must_not_build)
    with pytest.raises(DataError, match="not found"):
        load_split(registry, "boisson_card_n", "test", ARGS)


def test_an_unreadable_pool_entry_is_a_miss_and_is_rewritten(registry, cache, monkeypatch):
    first = load_split(registry, "boisson_card_n", "test", ARGS)
    entry = _pool_entry(registry, "card_n")
    entry.write_bytes(b"not a pickle")
    _new_process(monkeypatch)
    again = load_split(registry, "boisson_card_n", "test", ARGS)
    assert again.items == first.items and again.files == first.files
    assert isinstance(itemcache.read(entry.stem), derived._Pool)


def test_a_cache_that_cannot_be_written_only_costs_speed(registry, monkeypatch, tmp_path):
    (tmp_path / "a file").write_text("")
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "a file" / "cache"))  # mkdir fails
    monkeypatch.setattr(derived, "_POOLS", OrderedDict())
    first = load_split(registry, "boisson_card_n", "test", ARGS)
    _new_process(monkeypatch)
    assert load_split(registry, "boisson_card_n", "test", ARGS).items == first.items


def test_the_pool_key_changes_with_every_input_of_the_pool(registry, monkeypatch):
    """A pool depends on its bases' bytes, its seed and base arguments, and the code that derives it — the loader,
    its package (recipes, sampling, regimes), metabench.data and what they import (the dedup and lexical keys of
    ``kinds/views.py``): changing any of them must give another key, so a stale pool is never served."""
    import dataclasses
    from pathlib import Path

    spec = registry.resolve("dataset", "boisson_trofi")

    def key(spec=spec, **args):
        for memo in (itemcache._source_hash, itemcache._file_digest, itemcache._imports_of):
            memo.cache_clear()  # a new process
        return itemcache.key(spec, "all", {"seed": 0, "labels": "cluster", **args}, part="pool")

    base = key()
    assert key() == base  # deterministic
    changed_file = dataclasses.replace(spec.files[0], sha256="0" * 64)
    keys = [key(seed=1), key(labels="human"), key(dataclasses.replace(spec, files=(changed_file, *spec.files[1:])))]
    read_bytes = Path.read_bytes
    for module in ("metabench/kinds/views.py", "plugins/metabench-artifacts/metabench_artifacts/sampling.py", "plugins/metabench-artifacts/metabench_artifacts/recipes.py",
                   "metabench/data/datasets/trofi.py"):
        monkeypatch.setattr(Path, "read_bytes", lambda self, m=module: read_bytes(self) + (b"#" if str(self).endswith(m) else b""))
        keys.append(key())
    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    assert key() == base and len({base, *keys}) == len(keys) + 1
