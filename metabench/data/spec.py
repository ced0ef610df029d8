"""How a dataset is declared: its files (upstream location + sha256), its loader, its licence and counts.

Specs are registered through the ``metabench_register_datasets`` hook, so a plugin adds a dataset exactly
the way the built-ins do. The loader is a lazy ``"module:function"`` target with the signature
``loader(ctx: DataContext, split: str, **args) -> list[item]``: it asks ``ctx.path(relpath)`` for each file it
reads, which resolves, verifies and records the file (its hash goes into results.json).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DataFile:
    """One file: where it lies in a mirror, where it comes from upstream, and what it must hash to.

    ``path`` is relative to the mirror root (laid out like ``../shared/data``). ``sha256`` is the hash of the
    upstream bytes; ``compressed`` names a compression used by the mirror only (``gzip``), in which case
    the hash is of the decompressed bytes.
    """

    path: str
    sha256: str
    repo: str = ""
    commit: str = ""
    upstream_path: str = ""
    encoding: str = "utf-8"
    compressed: str = ""

    @property
    def url(self) -> str:
        """Raw download address of the upstream file at the pinned commit ('' when unknown)."""
        if not (self.repo and self.commit and self.upstream_path):
            return ""
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.upstream_path}"


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset: files, loader, splits and the arguments the loader accepts.

    ``root`` is a folder holding the files for datasets shipped inside a plugin package (they are read and
    verified from there, never from the mirror or the network); empty for mirrored upstream data.
    ``args`` maps each loader argument to its allowed values (a tuple) or to ``None`` for free values; task
    YAMLs are validated against it. ``counts`` holds the expected counts (from the paper or SOURCE.md) that
    ``metabench data verify`` recomputes.

    ``caches_items``: the loader keeps its own entries in the parsed-item cache (``data/itemcache.py``), so
    ``load_split`` stores no copy of each split's items, only a marker that the slice was loaded. Meant for
    datasets whose splits are all cut from one whole: the Boisson datasets (``artifacts/derived.py``) store
    each pool once with its folds, where a copy per (regime, fold, split) held every item about 15 times.

    ``built_with``: other datasets the loader builds in the same pass (the Boisson BO sample of a corpus and its
    random control share their sentences and span ranks, ``artifacts/derived.py``): a parallel launcher sends
    the jobs of all of them to one worker (``launch/job_groups.py``), so the pass is made once.

    ``source``: set for a task's Hugging Face ``datasets`` source (``data/hf_source.py``): path, config,
    revision, columns and fingerprints, which key the parsed items beside the files and go into the run.
    """

    name: str
    files: tuple[DataFile, ...]
    loader: str
    splits: tuple[str, ...]
    args: dict = field(default_factory=dict)
    licence: str = ""
    citation: str = ""
    description: str = ""
    counts: dict = field(default_factory=dict)
    root: str = ""
    caches_items: bool = False
    source: dict | None = None
    built_with: tuple[str, ...] = ()  # last: a plugin that passes the fields by position keeps its ``source``

    def loader_function(self):
        """The function the lazy ``loader`` target names (its module is imported on first use)."""
        module_name, _, attr = self.loader.partition(":")
        return getattr(importlib.import_module(module_name), attr)
