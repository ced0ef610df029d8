"""Loading one split of a registered dataset into items."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, did_you_mean
from ..registry import Registry
from . import itemcache
from .context import DataContext
from .resolve import flush_stamps
from .spec import DatasetSpec


@dataclass
class LoadedSplit:
    items: list
    files: dict[str, str]  # mirror path -> sha256 of every file the loader read


def check_args(spec, split: str, args: dict, *, where: str = "") -> None:
    """Validate a split name and loader arguments against the dataset's spec."""
    prefix = f"{where}: " if where else ""
    if split not in spec.splits:
        raise ConfigError(
            f"{prefix}dataset '{spec.name}' has no split '{split}'{did_you_mean(split, spec.splits)}",
            hint=f"its splits are: {', '.join(spec.splits)}",
        )
    for key, value in args.items():
        if key not in spec.args:
            raise ConfigError(
                f"{prefix}dataset '{spec.name}' takes no argument '{key}'{did_you_mean(key, spec.args)}",
                hint=f"its arguments are: {', '.join(spec.args) or '(none)'}",
            )
        allowed = spec.args[key]
        if allowed is not None and value not in allowed:
            raise ConfigError(
                f"{prefix}dataset '{spec.name}' argument {key}={value!r} is not one of {list(allowed)}"
                f"{did_you_mean(str(value), [str(a) for a in allowed])}",
            )


@contextmanager
def _gc_paused():
    """Parsing or unpickling a slice creates ~10^5 objects, none of them cyclic, while ~10^6 live ones are
    already held: each automatic collection on the way re-traverses all of them. Unpickling every slice of
    ``--tasks all`` took 11.7 CPU s with the collector on, 3.4 s paused."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def load_split(
    registry: Registry, dataset: str, split: str, args: dict | None = None, data_dir: Path | None = None
) -> LoadedSplit:
    spec = registry.resolve("dataset", dataset)
    args = dict(args or {})
    check_args(spec, split, args)
    with _gc_paused():
        return load_spec(spec, split, args, data_dir, registry=registry)


def load_spec(spec: DatasetSpec, split: str, args: dict, data_dir: Path | None = None, *,
              registry: Registry | None = None) -> LoadedSplit:
    """One slice of a dataset spec (arguments already checked), through the parsed-item cache.

    A derived dataset reads its bases' slices through here too, so a base slice is parsed once for the base's
    own tasks and every dataset built from it."""
    entry = itemcache.key(spec, split, args)
    if spec.caches_items:  # the loader keeps (and locks) its own entries
        return _parse(spec, split, args, data_dir, entry, registry)
    cached = itemcache.get(entry)
    if cached is None:
        with itemcache.building(entry):
            cached = itemcache.get(entry)  # parsed by another process while this one waited
            if cached is None:
                return _parse(spec, split, args, data_dir, entry, registry)
    ctx = DataContext(spec, data_dir)
    items, used = cached
    for relpath in used:  # still resolved and verified: a missing or altered file fails as on a parse
        ctx.path(relpath)
    return LoadedSplit(items, dict(ctx.used))


def _parse(spec: DatasetSpec, split: str, args: dict, data_dir: Path | None, entry: str, registry) -> LoadedSplit:
    """Run the dataset's loader (its context carrying ``registry``) and store what it parsed under ``entry``."""
    ctx = DataContext(spec, data_dir, registry=registry)
    items = list(spec.loader_function()(ctx, split, **args))
    declared = {f.path for f in spec.files}
    if ctx.used and set(ctx.used) <= declared:  # derived datasets (files built at run time) are never cached
        if spec.caches_items:  # the loader stored what it needs: only say the slice was loaded (job memo)
            itemcache.mark(entry, list(ctx.used))
        else:
            itemcache.put(entry, items, list(ctx.used))
    flush_stamps()
    return LoadedSplit(items, dict(ctx.used))
