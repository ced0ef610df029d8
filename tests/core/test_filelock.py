"""The one file lock (metabench.filelock): exclusive between holders, released when the block ends, a
required lock gives up with the caller's error, and an optional one runs unlocked where it cannot lock."""

from __future__ import annotations

import pytest

from metabench.atomic import write_atomically
from metabench.errors import MetabenchError
from metabench.filelock import locked


def _busy() -> MetabenchError:
    return MetabenchError("busy")


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_a_held_lock_excludes_a_second_holder_until_released(tmp_path, kind):
    path = tmp_path / "x.lock"
    if kind == "folder":
        path.mkdir()
    with locked(path):  # a second open file description, as another process would have, is refused
        with pytest.raises(MetabenchError, match="busy"), locked(path, wait_s=0.05, timed_out=_busy):
            pytest.fail("the lock was held twice")
    with locked(path, wait_s=0, timed_out=_busy):  # released with the block
        pass
    assert path.exists()


def test_an_optional_lock_runs_unlocked_where_none_can_be_had_and_a_required_one_raises(tmp_path):
    nowhere = tmp_path / "missing" / "x.lock"
    ran = []
    with locked(nowhere):
        ran.append(True)
    assert ran == [True] and not nowhere.exists()
    with pytest.raises(OSError), locked(nowhere, wait_s=1, timed_out=_busy):
        pass


def test_an_atomic_write_replaces_whole_or_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "sub" / "f.json"
    write_atomically(path, "one")
    write_atomically(path, b"two")
    assert path.read_bytes() == b"two"
    with pytest.raises(TypeError):
        write_atomically(path, 3)  # fails after the temporary file was made
    assert path.read_bytes() == b"two" and [p.name for p in path.parent.iterdir()] == ["f.json"]
