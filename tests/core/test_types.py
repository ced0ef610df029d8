"""The type checker runs in CI (issue 59 item 2): mypy over what pyproject.toml's ``[tool.mypy]`` names (the stored
runs' readers, the store, the reports, the example plugin) must find no error, so a reader that treats an optional
field as always there, or passes a dict where the record goes, fails here rather than on a user's run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# slow: a cold mypy run over the checked modules and what they import takes ~85 s of CPU on 2 cores; heavy: so the
# workers run it beside the other long ones
@pytest.mark.slow
@pytest.mark.heavy
def test_mypy_finds_no_type_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache")], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
