"""The Boisson datasets (``recipes.py``) registered as datasets: ``boisson_<name>`` with ``regime``, ``fold``
and ``seed`` arguments and the splits train / validation / test (plus ``all``, the pool after deduplication).

A derived dataset declares the files of the datasets it is built from and calls their loaders with its own
data context, so results.json lists the exact upstream bytes, and the fold membership comes from
``regimes.py`` alone (reproducible without any cache).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections import OrderedDict

from ..errors import DataError
from ..data.spec import DatasetSpec
from .recipes import KEYS, RECIPES, SINGLE_SPLIT_ITEMS, Recipe, dedup_key
from .sampling import SAMPLINGS, sample, to_items
from .regimes import FOLDS, chunks, deduplicate, digest, role_of_chunk

PREFIX = "boisson_"
SPLITS = ("train", "validation", "test", "all")
# base dataset -> module of its family (for its spec: files and loader)
_FAMILY = {"trofi": "trofi", "tsv_an": "boisson", "tsv_svo": "boisson", "cardillo": "boisson",
           "jankowiak": "boisson", "moh_raw": "moh", "magpie": "magpie", "vua_shared_task": "vua", "vua18": "vua",
           "meta4xnli_detection": "meta4xnli", "cometa": "cometa"}


def base_spec(name: str) -> DatasetSpec:
    module = importlib.import_module(f"metabench.data.datasets.{_FAMILY[name]}")
    return next(s for s in module.specs() if s.name == name)


def _load_target(target: str):
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def read_slice(ctx, dataset: str, split: str, args: tuple, labels: dict[str, str]) -> list:
    """One base slice through ``ctx`` (which declares the base's files), labels mapped to metaphor/literal."""
    items = _load_target(base_spec(dataset).loader)(ctx, split, **dict(args))
    return [dataclasses.replace(i, label=labels[i.label]) if getattr(i, "label", None) in labels else i for i in items]


def pool(ctx, recipe: Recipe, seed: int = 0) -> tuple[list, list]:
    """(kept, dropped): the recipe's pooled items, deduplicated when the paper does (A.1, A.4); for a sampled
    recipe, the sample of its token-level sentences drawn with ``seed`` (artifact-controlled, or its control)."""
    if recipe.sample_from:
        sentences = [s for ds, split, args in recipe.sample_from for s in read_slice(ctx, ds, split, args, {})]
        return to_items(sentences, sample(sentences, seed, SAMPLINGS[recipe.sampling])[0], PREFIX + recipe.name), []
    items = [item for ds, split, args in recipe.pool for item in read_slice(ctx, ds, split, args, recipe.labels)]
    return deduplicate(items, dedup_key) if recipe.dedup else (items, [])


def load(ctx, split: str, regime: str = "random", fold: int = 0, seed: int = 0):
    recipe = RECIPES[ctx.spec.name[len(PREFIX):]]
    if regime not in recipe.regimes:
        raise DataError(f"dataset '{ctx.spec.name}' has no regime '{regime}'", hint=f"its regimes: {', '.join(recipe.regimes)}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise DataError(f"dataset '{ctx.spec.name}': seed must be a non-negative integer, got {seed!r}")
    if regime == "original":
        if split == "all":
            return [i for slices in recipe.original.values() for s in slices for i in read_slice(ctx, *s, recipe.labels)]
        return [i for s in recipe.original.get(split, ()) for i in read_slice(ctx, *s, recipe.labels)]
    entry = _pooled(ctx, recipe, seed)
    items = entry.items
    if split == "all":
        return list(items)
    if fold != 0 and len(items) >= SINGLE_SPLIT_ITEMS:
        raise DataError(
            f"dataset '{ctx.spec.name}' has {len(items)} items: one split only (Boisson et al. footnote 4), fold 0",
            hint="use fold: 0",
        )
    chunks, ranks = entry.folding(ctx.spec.name, recipe, regime, seed)
    chosen = [i for i, chunk in enumerate(chunks) if role_of_chunk(chunk, fold) == split]
    # Hashed order, not the source's (often sorted by verb or label): the first N items (--limit, an encoder's
    # max_train) are then a seeded random sample, not one corner of the data.
    return [items[i] for i in sorted(chosen, key=ranks.__getitem__)]


@dataclasses.dataclass
class _Pool:
    """A built pool, the files it was read from and, per regime, each item's chunk and rank (hashed order):
    the same for all five folds and three splits a regime's tasks load, so computed once (2.7M sha256 per
    cold ``--tasks all`` before)."""

    items: list
    used: list[str]
    _folds: dict = dataclasses.field(default_factory=dict)

    def folding(self, name: str, recipe: Recipe, regime: str, seed: int) -> tuple[list[int], list[str]]:
        if regime not in self._folds:
            key = KEYS[recipe.key_l2 if regime == "lexical_l2" else recipe.key] if regime.startswith("lexical") else _item_id
            self._folds[regime] = (chunks(self.items, key, dataset=name, regime=regime, seed=seed),
                                   [digest(name, regime, seed, item.id) for item in self.items])
        return self._folds[regime]


#: (dataset, seed, data folder) -> the last few pools built in this process.
_POOLS: OrderedDict[tuple, _Pool] = OrderedDict()
_POOLS_KEPT = 4


def _pooled(ctx, recipe: Recipe, seed: int) -> _Pool:
    """The recipe's pool, built once per process for all the splits, regimes and folds drawn from it (a task
    loads three splits, and a dataset has up to a dozen regime × fold tasks: each rebuilt the pool, re-reading
    and, for sampled recipes, re-sampling the base corpora). Tasks run in name order, so a dataset's tasks come
    together and a few pools suffice. A hit still resolves and verifies every file the pool was read from, so
    a changed file fails as before and results.json lists the same files."""
    key = (ctx.spec.name, seed, str(ctx.data_dir))
    if key in _POOLS:
        _POOLS.move_to_end(key)
        entry = _POOLS[key]
        for relpath in entry.used:
            ctx.path(relpath)
        return entry
    items, _ = pool(ctx, recipe, seed)
    _POOLS[key] = entry = _Pool(items, list(ctx.used))
    while len(_POOLS) > _POOLS_KEPT:
        _POOLS.popitem(last=False)
    return entry


def _item_id(item) -> str:
    return str(item.id)


def specs() -> list[DatasetSpec]:
    out = []
    for recipe in RECIPES.values():
        bases = [base_spec(name) for name in recipe.bases]
        files = tuple({f.path: f for b in bases for f in b.files}.values())
        out.append(
            DatasetSpec(
                name=PREFIX + recipe.name,
                files=files,
                loader="metabench.artifacts.derived:load",
                splits=SPLITS,
                args={"regime": recipe.regimes, "fold": FOLDS, "seed": None},
                licence="; ".join(dict.fromkeys(b.licence for b in bases)),
                citation=" ".join(dict.fromkeys(b.citation for b in bases)),
                description=f"Boisson et al. (2023) {recipe.paper}: {recipe.note} Regimes: {', '.join(recipe.regimes)}.",
            )
        )
    return out
