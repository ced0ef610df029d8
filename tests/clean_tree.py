"""A pytest plugin that lists what the test session left in the working tree.

Tests write only to temporary folders; one that builds in a source folder (a setuptools `build/` or
`*.egg-info` beside a plugin) or writes a run folder into the repository leaves files a user later trips over.
`git status --ignored` before and after the session shows each new untracked or ignored path (bytecode
aside). Under CI (`CI` set, as .ci/run and GitHub Actions do) a new path fails the session; elsewhere it is
listed as a warning, since other work in the same tree can also add files while the tests run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_BYTECODE = ("__pycache__/", ".pyc", ".pytest_cache/")
_BEFORE = pytest.StashKey[set]()
_LEFT = pytest.StashKey[list]()


def stray_paths() -> set[str] | None:
    """Untracked and ignored paths (a wholly new folder as one entry), or None outside a git checkout."""
    try:
        done = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=normal"], cwd=REPO,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return {line[3:] for line in done.stdout.splitlines()
            if line[:2] in ("??", "!!") and not line.endswith(_BYTECODE) and "/__pycache__/" not in line}


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_BEFORE] = stray_paths()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_BEFORE, None)
    after = stray_paths() if before is not None else None
    if after is None:
        return
    left = sorted(after - before)
    session.config.stash[_LEFT] = left
    if left and os.environ.get("CI") and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    left = config.stash.get(_LEFT, [])
    if not left:
        return
    verdict = "fails the session under CI" if os.environ.get("CI") else "a warning here; fails under CI"
    terminalreporter.section("files left in the working tree", sep="=", red=True)
    terminalreporter.line(f"{len(left)} new path(s) in {REPO} after the tests ({verdict}); a test should write "
                          "only under tmp_path (copy a source folder there before building it):")
    for path in left:
        terminalreporter.line(f"  {path}")
