"""The repository keeps no large file: data and weights live outside it, big run samples are gzipped."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from mirror import REPO

LIMIT = 4_000_000


def test_no_tracked_file_is_over_4_mb():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    names = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    sizes = {n.decode(): (REPO / n.decode()).stat().st_size for n in names if n and (REPO / n.decode()).is_file()}
    assert len(sizes) > 100  # the listing worked
    large = {name: size for name, size in sizes.items() if size > LIMIT}
    assert not large, f"tracked files over 4 MB (gzip a run's samples with `gzip -n`; keep data out): {large}"
