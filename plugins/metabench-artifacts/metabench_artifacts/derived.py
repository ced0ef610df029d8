"""The Boisson datasets (``recipes.py``) registered as datasets: ``boisson_<name>`` with ``regime``, ``fold``
and ``seed`` arguments and the splits train / validation / test (plus ``all``, the pool after deduplication).

A derived dataset declares the files of the datasets it is built from and reads their slices through the
parsed-item cache (the base's own entries), recording every file in its own data context, so results.json
lists the exact upstream bytes; the fold membership comes from ``regimes.py`` alone (reproducible without
any cache).

Caching (``caches_items`` in the spec): every split of one (dataset, seed) is a subset of one pool, so the
pool is stored once in the parsed-item cache (:func:`_pooled`), with its folding per regime (each item's
chunk and the hashed order), and each (regime, fold, split) is cut from it by index.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections import OrderedDict

from metabench.plugin_api import builtin_dataset, DataError, DatasetSpec, itemcache, load_spec
from .recipes import KEYS, RECIPES, SINGLE_SPLIT_ITEMS, Recipe, dedup_key
from .regimes import FOLDS, deduplicate, folding, split_of
from .sampling import SAMPLINGS, samples, to_items

PREFIX = "boisson_"
SPLITS = ("train", "validation", "test", "all")
#: a derived split -> the split of an ``authors`` base dataset (the Cardiff releases call validation "dev")
AUTHORS_SPLIT = {"train": "train", "validation": "dev", "test": "test", "all": "all"}


def read_slice(ctx, dataset: str, split: str, args: tuple, labels: dict[str, str], base_args: dict | None = None) -> list:
    """One base slice, labels mapped to metaphor/literal: from the base's parsed-item cache entry (the one its
    own tasks read and write), its files recorded in ``ctx`` (which declares them) as if read here. Of
    ``base_args`` (the derived dataset's pass-through arguments) the slice gets those its dataset takes."""
    spec = builtin_dataset(dataset)
    passed = {k: v for k, v in (base_args or {}).items() if k in spec.args}
    loaded = load_spec(spec, split, {**dict(args), **passed}, ctx.data_dir)
    for relpath in loaded.files:
        ctx.path(relpath)
    items = loaded.items
    return [dataclasses.replace(i, label=labels[i.label]) if getattr(i, "label", None) in labels else i for i in items]


def pool(ctx, recipe: Recipe, seed: int = 0, base_args: dict | None = None) -> tuple[list, list]:
    """(kept, dropped): the recipe's pooled items, deduplicated when the paper does (A.1, A.4); for a sampled
    recipe, the sample of its token-level sentences drawn with ``seed`` (artifact-controlled, or its control)."""
    base_args = {k: v[0] for k, v in recipe.base_args.items()} | (base_args or {})
    if recipe.sample_from:
        return sampled_pools(ctx, [recipe], seed, base_args)[0], []
    items = [item for ds, split, args in recipe.pool
             for item in read_slice(ctx, ds, split, args, recipe.labels, base_args)]
    return deduplicate(items, dedup_key) if recipe.dedup else (items, [])


def sampled_pools(ctx, recipes: list[Recipe], seed: int, base_args: dict) -> list[list]:
    """The items of each of ``recipes`` (twins: the same ``sample_from``), their sentences read once and their
    samples drawn in one pass (:func:`sampling.samples`)."""
    first = recipes[0]
    sentences = [s for ds, split, args in first.sample_from for s in read_slice(ctx, ds, split, args, {}, base_args)]
    drawn = samples(sentences, seed, [SAMPLINGS[r.sampling] for r in recipes])
    layout: dict = {}
    return [to_items(sentences, sampled, PREFIX + r.name, layout) for r, (sampled, _) in zip(recipes, drawn)]


def twins(recipe: Recipe) -> list[Recipe]:
    """The recipe and every other drawn from the same sentences (same ``sample_from`` and ``base_args``: a
    corpus's BO sample and its random control), in registry order; just the recipe if it samples nothing."""
    if not recipe.sample_from:
        return [recipe]
    return [r for r in RECIPES.values() if r.sample_from == recipe.sample_from and r.base_args == recipe.base_args]


def load(ctx, split: str, regime: str = "random", fold: int = 0, seed: int = 0, **base_args):
    recipe = RECIPES[ctx.spec.name[len(PREFIX):]]
    if regime not in recipe.regimes:
        raise DataError(f"dataset '{ctx.spec.name}' has no regime '{regime}'", hint=f"its regimes: {', '.join(recipe.regimes)}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise DataError(f"dataset '{ctx.spec.name}': seed must be a non-negative integer, got {seed!r}")
    base_args = {k: v[0] for k, v in recipe.base_args.items()} | base_args
    if regime == "authors":  # the release's own folds, read from the base dataset as it ships them
        return read_slice(ctx, recipe.authors, AUTHORS_SPLIT[split], (("fold", fold),), recipe.labels, base_args)
    if regime == "original":
        slices = [s for part in recipe.original.values() for s in part] if split == "all" else recipe.original.get(split, ())
        return [i for s in slices for i in read_slice(ctx, *s, recipe.labels, base_args)]
    entry = _pooled(ctx, recipe, seed, base_args)
    items = entry.items
    if split == "all":
        return list(items)
    if fold != 0 and len(items) >= SINGLE_SPLIT_ITEMS:
        raise DataError(
            f"dataset '{ctx.spec.name}' has {len(items)} items: one split only (Boisson et al. footnote 4), fold 0",
            hint="use fold: 0",
        )
    # Hashed order, not the source's (often sorted by verb or label): the first N items (--limit, an encoder's
    # max_train) are then a seeded random sample, not one corner of the data.
    return [items[i] for i in split_of(entry.folds[regime], fold, split)]


@dataclasses.dataclass
class _Pool:
    """A built pool, the files it was read from and, per regime, its folding (each item's chunk and the item
    positions in hashed order): every fold and split of the regime is cut from it by index."""

    items: list
    used: list[str]
    folds: dict[str, tuple[bytes, array]]


#: (dataset, seed, data folder) -> the last few pools used in this process.
_POOLS: OrderedDict[tuple, _Pool] = OrderedDict()
_POOLS_KEPT = 4


def _pooled(ctx, recipe: Recipe, seed: int, base_args: dict) -> _Pool:
    """The recipe's pool, built once for all the splits, regimes and folds drawn from it (a task loads three
    splits, and a dataset has up to a dozen regime × fold tasks), and kept in the parsed-item cache under the
    dataset's manifest, sources and seed, and in this process for the next few loads (tasks run in name
    order, so a dataset's tasks come together). Either way every file the pool was read from is resolved and
    verified again, so a changed or missing file fails as on a build and results.json lists the same files.

    A sampled recipe's twins (:func:`twins`) not stored yet are built with it and stored too: their jobs come
    to this worker with its own (``DatasetSpec.built_with`` groups them), or find the pool in the cache."""
    entry = _POOLS.get(_memo(ctx, recipe, seed, base_args))
    if entry is None:
        stored = _stored(ctx, recipe, seed, base_args)
        entry = itemcache.read(stored)
        if not isinstance(entry, _Pool):  # absent, unreadable or foreign: build it (once, if several processes miss it)
            with itemcache.building(stored):
                entry = itemcache.read(stored)
                if not isinstance(entry, _Pool):
                    keys = {r.name: _stored(ctx, r, seed, base_args) for r in twins(recipe)}
                    missing = [r for r in twins(recipe) if r is recipe or not itemcache.exists(keys[r.name])]
                    pools = _build(ctx, missing, seed, base_args)
                    for built, made in zip(missing, pools):
                        itemcache.write(keys[built.name], made)
                        _keep(_memo(ctx, built, seed, base_args), made)
                    entry = pools[missing.index(recipe)]
    _keep(_memo(ctx, recipe, seed, base_args), entry)
    for relpath in entry.used:
        ctx.path(relpath)
    return entry


def _memo(ctx, recipe: Recipe, seed: int, base_args: dict) -> tuple:
    return (PREFIX + recipe.name, seed, tuple(sorted(base_args.items())), str(ctx.data_dir))


def _stored(ctx, recipe: Recipe, seed: int, base_args: dict) -> str:
    """The parsed-item cache key of a recipe's pool: its dataset's (a twin's spec is the loading dataset's
    under the twin's name: same files, loader and sources)."""
    spec = ctx.spec if ctx.spec.name == PREFIX + recipe.name else dataclasses.replace(ctx.spec, name=PREFIX + recipe.name)
    return itemcache.key(spec, "all", {"seed": seed, **base_args}, part="pool")


def _keep(memo: tuple, entry: _Pool) -> None:
    _POOLS[memo] = entry
    _POOLS.move_to_end(memo)
    while len(_POOLS) > _POOLS_KEPT:
        _POOLS.popitem(last=False)


def _build(ctx, recipes: list[Recipe], seed: int, base_args: dict) -> list[_Pool]:
    """The pools of ``recipes`` (one, or sampled twins drawn together), each with its folding per regime."""
    if len(recipes) > 1:
        pools = sampled_pools(ctx, recipes, seed, base_args)
    else:
        pools = [pool(ctx, recipes[0], seed, base_args)[0]]
    out = []
    for recipe, items in zip(recipes, pools):
        folds = {}
        for regime in recipe.regimes:
            if regime not in ("original", "authors"):
                key = KEYS[recipe.key_l2 if regime == "lexical_l2" else recipe.key] if regime.startswith("lexical") else _item_id
                folds[regime] = folding(items, key, dataset=PREFIX + recipe.name, regime=regime, seed=seed)
        out.append(_Pool(items, list(ctx.used), folds))
    return out


def _item_id(item) -> str:
    return str(item.id)


def specs() -> list[DatasetSpec]:
    out = []
    for recipe in RECIPES.values():
        bases = [builtin_dataset(name) for name in recipe.bases]
        files = tuple({f.path: f for b in bases for f in b.files}.values())
        out.append(
            DatasetSpec(
                name=PREFIX + recipe.name,
                files=files,
                loader="metabench_artifacts.derived:load",
                splits=SPLITS,
                args={"regime": recipe.regimes, "fold": FOLDS, "seed": None, **recipe.base_args},
                licence="; ".join(dict.fromkeys(b.licence for b in bases)),
                caches_items=True,
                built_with=tuple(PREFIX + twin.name for twin in twins(recipe) if twin is not recipe),
                citation=" ".join(dict.fromkeys(b.citation for b in bases)),
                description=f"Boisson et al. (2023) {recipe.paper}: {recipe.note} Regimes: {', '.join(recipe.regimes)}.",
            )
        )
    return out
