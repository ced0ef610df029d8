"""The parsed-item cache: a hit gives the parsed items, still verifies the files, and never serves stale items."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import sys
import types

import pytest

from metabench.data import itemcache, resolve
from metabench.data.load import load_split
from metabench.data.spec import DataFile, DatasetSpec
from metabench.errors import DataError


def _loader_module(monkeypatch, name: str, load) -> str:
    """A loader target made at run time (``module:load``)."""
    module = types.ModuleType(name)
    module.load = load
    monkeypatch.setitem(sys.modules, name, module)
    return f"{name}:load"


def _entries():
    folder = itemcache.cache_folder()
    return sorted(folder.glob("*.pkl")) if folder.is_dir() else []


def test_second_load_comes_from_the_cache_with_the_same_items_and_files(toy_registry, monkeypatch):
    first = load_split(toy_registry, "toy_tagging", "test")
    assert len(_entries()) == 1
    import toy_plugin

    def must_not_parse(ctx, split):
        raise AssertionError("the loader ran although the items were cached")

    monkeypatch.setattr(toy_plugin, "load_tagging", must_not_parse)
    second = load_split(toy_registry, "toy_tagging", "test")
    assert second.items == first.items and second.files == first.files
    assert [i.meta for i in second.items] == [i.meta for i in first.items]  # meta is compare=False


def test_a_changed_file_still_fails_on_a_cache_hit(toy_registry, tmp_path, monkeypatch):
    import toy_plugin

    mirror = tmp_path / "mirror"
    shutil.copytree(toy_plugin.DATA_DIR, mirror)
    monkeypatch.setenv("METABENCH_DATA_DIR", str(mirror))
    load_split(toy_registry, "toy_tagging", "test")
    target = mirror / "toy" / "tag_test.tsv"
    target.write_text(target.read_text().replace("O", "B-METAPHOR", 1))
    resolve._verified.clear()  # a new process: hashes are checked again
    with pytest.raises(DataError, match="sha256"):
        load_split(toy_registry, "toy_tagging", "test")


def test_another_manifest_or_arguments_is_another_entry(toy_registry):
    spec = toy_registry.resolve("dataset", "toy_tagging")
    moved = dataclasses.replace(spec, files=(*spec.files, DataFile(path="toy/extra.tsv", sha256="0" * 64)))
    assert itemcache.key(spec, "test", {}) != itemcache.key(moved, "test", {})
    assert itemcache.key(spec, "test", {}) != itemcache.key(spec, "train", {})
    assert itemcache.key(spec, "test", {}) != itemcache.key(spec, "test", {"language": "en"})


def test_an_unreadable_entry_is_a_miss_and_is_rewritten(toy_registry):
    first = load_split(toy_registry, "toy_tagging", "test")
    (entry,) = _entries()
    entry.write_bytes(b"not a pickle")
    again = load_split(toy_registry, "toy_tagging", "test")
    assert again.items == first.items
    assert entry.read_bytes() != b"not a pickle"


def test_a_derived_dataset_reading_undeclared_files_is_never_cached(toy_registry, tmp_path, monkeypatch):
    built = tmp_path / "built.txt"
    built.write_text("one\n")

    def load(ctx, split):
        data = built.read_bytes()
        ctx.used["derived/built.txt"] = hashlib.sha256(data).hexdigest()
        return [line for line in data.decode().splitlines()]

    from metabench.registry import Entry

    loader = _loader_module(monkeypatch, "derived_loader_for_test", load)
    spec = DatasetSpec(name="derived_for_test", files=(), loader=loader, splits=("test",))
    toy_registry.add(Entry("dataset", spec.name, spec, "test", "0"))
    assert load_split(toy_registry, "derived_for_test", "test").items == ["one"]
    built.write_text("two\n")
    assert load_split(toy_registry, "derived_for_test", "test").items == ["two"]
    assert _entries() == []


def test_a_spec_that_caches_itself_gets_a_marker_and_never_a_copy(toy_registry, monkeypatch):
    import toy_plugin

    calls = []

    def load_tagging(ctx, split):
        calls.append(split)
        return toy_plugin.load_tagging(ctx, split)

    from metabench.registry import Entry

    loader = _loader_module(monkeypatch, "self_cached_loader_for_test", load_tagging)
    spec = dataclasses.replace(toy_registry.resolve("dataset", "toy_tagging"), name="self_cached_for_test",
                               loader=loader, caches_items=True)
    toy_registry.add(Entry("dataset", spec.name, spec, "test", "0"))
    first = load_split(toy_registry, spec.name, "test")
    again = load_split(toy_registry, spec.name, "test")
    assert calls == ["test", "test"]  # its loader answers every time: load_split served no copy
    assert again.items == first.items and again.files == first.files
    entry = itemcache.key(spec, "test", {})
    assert _entries() == [itemcache.cache_folder() / f"{entry}.pkl"]
    assert itemcache.exists(entry) and itemcache.get(entry) is None  # the job memo can key on the slice
    assert itemcache.key(spec, "test", {}, part="pool") != entry


def test_processes_missing_the_same_entry_at_once_parse_it_once(toy_registry, tmp_path, monkeypatch):
    """Workers of `--launcher processes` that miss one slice together: one parses, the others wait for its
    entry and read it (both parsed, before the build lock)."""
    import multiprocessing
    import os
    import time

    import toy_plugin

    log = tmp_path / "parsed.log"
    real = toy_plugin.load_tagging

    def slow_counting(ctx, split):
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()}\n")
        time.sleep(0.5)
        return real(ctx, split)

    monkeypatch.setattr(toy_plugin, "load_tagging", slow_counting)

    def load_once(out):
        out.put(len(load_split(toy_registry, "toy_tagging", "test").items))

    context = multiprocessing.get_context("fork")
    out = context.Queue()
    workers = [context.Process(target=load_once, args=(out,)) for _ in range(3)]
    for worker in workers:
        worker.start()
    sizes = [out.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join()
        assert worker.exitcode == 0
    assert len(set(sizes)) == 1 and sizes[0] > 0
    assert len(log.read_text().splitlines()) == 1
