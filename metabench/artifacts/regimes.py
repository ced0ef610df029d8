"""Split regimes (Boisson et al. 2023, §3.3): random and lexical 5-fold cross-validation, 70/10/20.

Folds are a pure function of (dataset, regime, seed, fold) and the items: no file, cache or RNG state is
involved, so anyone holding the data rebuilds the same item-id lists (their sha256 is stored in every
run's results). The items are cut into ten equal chunks; fold f tests on chunks 2f and 2f+1 (20 %),
validates on chunk 2f+2 (10 %) and trains on the other seven (70 %), so the five test folds partition the
data exactly once.

- ``random``: every item is its own group; chunk order is a hash of (dataset, regime, seed, item id).
- ``lexical``: items sharing a lexical key (the PME lemma by default; the adjective or the noun for
  adjective–noun pairs) form one group and land in the same chunk, so no key of the test fold occurs in its
  training or validation data (the paper only requires train; keeping validation clean too costs nothing).
  Groups are placed largest first (hash order among equals) into the least-filled chunk, which keeps the
  chunks within one group of 10 % each.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Sequence

from ..errors import DataError

FOLDS = tuple(range(5))
CHUNKS = 10
ROLES = ("train", "validation", "test")


def digest(*parts: object) -> str:
    return hashlib.sha256("\x00".join(str(p) for p in parts).encode("utf-8")).hexdigest()


def chunk_of(keys: Sequence[str], salt: str, chunks: int = CHUNKS) -> list[int]:
    """The chunk (0..chunks-1) of each position, keeping equal keys together and chunk sizes balanced."""
    sizes: dict[str, int] = defaultdict(int)
    for key in keys:
        sizes[key] += 1
    order = sorted(sizes, key=lambda k: (-sizes[k], digest(salt, k)))
    fill = [0] * chunks
    where: dict[str, int] = {}
    for key in order:
        target = min(range(chunks), key=lambda c: (fill[c], c))
        where[key] = target
        fill[target] += sizes[key]
    return [where[k] for k in keys]


def role_of_chunk(chunk: int, fold: int, chunks: int = CHUNKS) -> str:
    """train / validation / test of a chunk in fold ``fold`` (test: 2f, 2f+1; validation: 2f+2)."""
    if fold not in FOLDS:
        raise DataError(f"fold {fold} is not one of {list(FOLDS)}")
    if chunk in (2 * fold, 2 * fold + 1):
        return "test"
    if chunk == (2 * fold + 2) % chunks:
        return "validation"
    return "train"


def chunks(items: Sequence, key: Callable[[object], str], *, dataset: str, regime: str, seed: int) -> list[int]:
    """The chunk of every item under one (dataset, regime, seed): the same for all five folds."""
    return chunk_of([key(item) for item in items], f"{dataset}\x00{regime}\x00{seed}")


def assign(items: Sequence, key: Callable[[object], str], *, dataset: str, regime: str, seed: int, fold: int) -> dict[str, list]:
    """{train, validation, test: items} of one fold; ``key`` groups items (the item id for random splits)."""
    chunks_ = chunks(items, key, dataset=dataset, regime=regime, seed=seed)
    out: dict[str, list] = {role: [] for role in ROLES}
    for item, chunk in zip(items, chunks_):
        out[role_of_chunk(chunk, fold)].append(item)
    return out


def deduplicate(items: Sequence, key: Callable[[object], object]) -> tuple[list, list]:
    """(kept, dropped): the first item of each key in the given order; later ones are dropped."""
    seen: set = set()
    kept, dropped = [], []
    for item in items:
        k = key(item)
        (dropped if k in seen else kept).append(item)
        seen.add(k)
    return kept, dropped

