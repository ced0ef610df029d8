"""docs/reporting.md's "Publishing the site" workflow (#50 item 5): the site is built, not committed, so CI
builds it from the committed runs and publishes the folder its build step writes."""

from __future__ import annotations

import re
import shlex

import yaml

from mirror import REPO

DOC = REPO / "docs" / "reporting.md"


def _workflow() -> dict:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### Publishing the site"):]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S)[1])


def test_the_pages_workflow_builds_the_committed_runs_and_uploads_that_folder():
    workflow = _workflow()
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    runs = [step["run"].strip() for step in build["steps"] if step.get("run", "").lstrip().startswith("metabench ")]
    (command,) = runs
    words = shlex.split(command)
    assert words[:4] == ["metabench", "leaderboard", "build", "leaderboard/runs"]
    out = words[words.index("-o") + 1]
    assert not out.startswith("leaderboard")  # published from its own folder, never committed
    upload = next(step for step in build["steps"] if step.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == out
    assert deploy["needs"] == "build" and deploy["steps"][0]["uses"].startswith("actions/deploy-pages")
    assert workflow["permissions"]["pages"] == "write" and workflow["permissions"]["id-token"] == "write"


def test_the_site_is_ignored_and_the_board_files_are_tracked():
    import shutil
    import subprocess

    import pytest

    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")

    def tracked(pattern: str) -> list[str]:
        return subprocess.run(["git", "ls-files", pattern], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.split()

    assert tracked("leaderboard/*.html") == [] and tracked("leaderboard/assets") == []
    assert {"leaderboard/leaderboard.md", "leaderboard/leaderboard.json"} <= set(tracked("leaderboard"))
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "leaderboard/index.html", "leaderboard/tasks/x.html",
                              "leaderboard/models/x.html", "leaderboard/assets/site.css", "leaderboard/leaderboard.md"],
                             cwd=REPO, capture_output=True, text=True).stdout.split()
    assert ignored == ["leaderboard/index.html", "leaderboard/tasks/x.html", "leaderboard/models/x.html",
                       "leaderboard/assets/site.css"]
