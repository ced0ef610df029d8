"""Switching data folders in one process (#59 item 6): the slices a process keeps for the jobs that share them
are keyed by the folders they were read from, so a Python API user who points METABENCH_DATA_DIR (or the cache)
elsewhere reads the new folder, and is never served the first folder's items. The flaky
``test_older_runs_without_a_golds_digest_are_checked_against_each_other`` was this: an earlier test in the same
worker had loaded toy_cls from the toy mirror, and the verifier, told there was no mirror, found the data all
the same."""

from __future__ import annotations

import shutil

import pytest

from metabench.config.index import TaskIndex
from metabench.errors import MetabenchError
from metabench.jobs import prepare


def test_a_slice_read_from_one_mirror_is_not_served_for_another(toy_registry, monkeypatch, tmp_path):
    import toy_plugin

    index = TaskIndex(toy_registry)
    first = prepare(toy_registry, index.load("toy_cls"))  # data_dir=None: the mirror comes from the environment
    assert first.test.items
    monkeypatch.setenv("METABENCH_DATA_DIR", str(tmp_path / "no-mirror"))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "no-cache"))
    with pytest.raises(MetabenchError):  # nothing there: before the fix, the first mirror's items were served
        prepare(toy_registry, index.load("toy_cls"))
    other = tmp_path / "other-mirror"
    shutil.copytree(toy_plugin.DATA_DIR, other)
    monkeypatch.setenv("METABENCH_DATA_DIR", str(other))
    again = prepare(toy_registry, index.load("toy_cls"))
    assert [i.id for i in again.test.items] == [i.id for i in first.test.items]
    assert again.test.items[0] is not first.test.items[0]  # read again, from the folder named now
