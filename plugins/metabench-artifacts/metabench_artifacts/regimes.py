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
import heapq
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from metabench.plugin_api import DataError

FOLDS = tuple(range(5))
CHUNKS = 10
ROLES = ("train", "validation", "test")


def digest(*parts: object) -> str:
    return hashlib.sha256("\x00".join(map(str, parts)).encode("utf-8")).hexdigest()


def _hash_into(hashed: dict[str, bytes], salt: str, values: Iterable[str]) -> dict[str, bytes]:
    """Add the raw sha256 of ``salt NUL value`` for each value not hashed yet. Raw digests sort exactly as
    :func:`digest`'s hex strings do (same bytes, fixed length), at a fraction of the cost."""
    prefix, sha = f"{salt}\x00", hashlib.sha256
    for value in values:
        if value not in hashed:
            hashed[value] = sha((prefix + value).encode("utf-8")).digest()
    return hashed


def chunk_of(keys: Sequence[str], salt: str, chunks: int = CHUNKS, *, hashed: dict[str, bytes] | None = None) -> list[int]:
    """The chunk (0..chunks-1) of each position, keeping equal keys together and chunk sizes balanced.

    ``hashed``: a memo of raw digests under ``salt`` the caller shares (see :func:`folding`)."""
    sizes = Counter(keys)
    hashed = _hash_into({} if hashed is None else hashed, salt, map(str, sizes))
    if len(sizes) == len(keys):  # every key its own group (random regime): the least-filled chunk goes round
        where = {key: i % chunks for i, key in enumerate(sorted(sizes, key=lambda k: hashed[str(k)]))}
        return [where[k] for k in keys]
    order = sorted(sizes, key=lambda k: (-sizes[k], hashed[str(k)]))
    heap = [(0, c) for c in range(chunks)]  # (fill, chunk): the least-filled chunk, lowest number first
    where: dict[str, int] = {}
    for key in order:
        fill, target = heap[0]
        where[key] = target
        heapq.heapreplace(heap, (fill + sizes[key], target))
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


def _salt(dataset: str, regime: str, seed: int) -> str:
    return f"{dataset}\x00{regime}\x00{seed}"


def chunks(items: Sequence, key: Callable[[object], str], *, dataset: str, regime: str, seed: int) -> list[int]:
    """The chunk of every item under one (dataset, regime, seed): the same for all five folds."""
    return chunk_of([key(item) for item in items], _salt(dataset, regime, seed))


def folding(items: Sequence, key: Callable[[object], str], *, dataset: str, regime: str, seed: int) -> tuple[bytes, array]:
    """(chunk of every item, item positions in hashed order) under one (dataset, regime, seed): every fold's
    train, validation and test split is the positions of that order whose chunk has that role.

    The hashed order ranks item ``i`` by ``digest(dataset, regime, seed, i.id)``, which is the digest the
    random regime's chunking gives the same id: both come from one memo, one sha256 per item."""
    salt = _salt(dataset, regime, seed)
    hashed: dict[str, bytes] = {}
    chunk = chunk_of([key(item) for item in items], salt, hashed=hashed)
    ids = [str(item.id) for item in items]
    _hash_into(hashed, salt, ids)
    ranks = [hashed[i] for i in ids]
    return bytes(chunk), array("I", sorted(range(len(ranks)), key=ranks.__getitem__))


def split_of(folded: tuple[bytes, array], fold: int, role: str) -> list[int]:
    """Positions (hashed order) of one fold's ``role`` split of a :func:`folding`."""
    chunk, order = folded
    keep = [role_of_chunk(c, fold) == role for c in range(CHUNKS)]
    return [i for i in order if keep[chunk[i]]]


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

