"""The sixth hardening round (issue 58, items 5-9): what was added since the fifth under hostile and broken input.

One section per class of the issue, each parametrised over several cases: a site build trusting its own file
list, merge-seeds' all-or-nothing, output injection and floods, tracebacks turned into clear errors, and the
older leftovers. CLI cases run in-process through the bad-input suites' `cli` fixture (tests/cli_inprocess.py:
no traceback, and nothing outside the cache and the command's output folders may change).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
from cli_inprocess import cli, good_run, registry  # noqa: F401 - cli, registry: fixtures


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# -------------------------------------------------- 5. a site build deletes and replaces only what it wrote

def _site_with_runs(tmp_path: Path) -> tuple[Path, Path]:
    """A site folder that also holds the runs it is built from (as leaderboard/ holds leaderboard/runs)."""
    site = tmp_path / "site"
    good_run(site / "runs" / "syn" / "a")
    good_run(site / "runs" / "syn" / "b", prediction="no")
    return site / "runs", site


#: A crafted list: names only (the older form), digests that are not the files', or the files' own digests.
LIST_FORMS = ["names", "wrong-digests", "true-digests"]
RUN_FILES = ["runs/syn/a/results.json", "runs/syn/a/samples.jsonl", "runs/syn/b/results.json"]


def _crafted(site: Path, names: list[str], form: str) -> None:
    if form == "names":
        listed: object = names
    else:
        listed = {name: hashlib.sha256((site / name).read_bytes() if form == "true-digests" else b"x").hexdigest()
                  for name in names}
    (site / ".metabench-generated.json").write_text(json.dumps(listed))


@pytest.mark.parametrize("form", LIST_FORMS)
def test_a_crafted_file_list_deletes_no_run_file(cli, tmp_path, form):
    """A list naming a run's results.json and samples: a runs folder is never the site's, whatever the list says
    (even with the files' true digests)."""
    runs, site = _site_with_runs(tmp_path)
    before = _snapshot(runs)
    _crafted(site, RUN_FILES, form)
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 0, out
    assert _snapshot(runs) == before and "0 removed" in out


@pytest.mark.parametrize("form", ["names", "wrong-digests"])
@pytest.mark.parametrize("user_file", ["notes/thesis.tex", "tasks/my_page.html"])
def test_a_crafted_file_list_deletes_no_user_file(cli, tmp_path, form, user_file):
    runs, site = _site_with_runs(tmp_path)
    (site / user_file).parent.mkdir(parents=True, exist_ok=True)
    (site / user_file).write_text("the user's own work")
    _crafted(site, [user_file, *RUN_FILES], form)
    before = _snapshot(runs)
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 0, out
    assert (site / user_file).read_text() == "the user's own work" and _snapshot(runs) == before


@pytest.mark.parametrize("form", ["names", "wrong-digests"])
def test_a_crafted_file_list_does_not_make_a_users_index_replaceable(cli, tmp_path, form):
    runs, site = _site_with_runs(tmp_path)
    (site / "index.html").write_text("the user's own page")
    _crafted(site, ["index.html", "leaderboard.json"], form)
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 2 and "metabench did not write" in out and "index.html" in out and "--force" in out, out
    assert (site / "index.html").read_text() == "the user's own page"
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200", "--force")
    assert code == 0 and "<html" in (site / "index.html").read_text()


def test_a_generated_page_edited_since_is_kept_and_an_unedited_one_removed(cli, tmp_path):
    """Proof is the content as written: the user's edit makes the page theirs."""
    runs, site = _site_with_runs(tmp_path)
    assert cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")[0] == 0
    listed = json.loads((site / ".metabench-generated.json").read_text())
    assert listed["index.html"] == hashlib.sha256((site / "index.html").read_bytes()).hexdigest()
    for name, text in (("tasks/gone.html", "as written"), ("tasks/edited.html", "as written")):
        (site / name).write_text(text)
        listed[name] = hashlib.sha256(text.encode()).hexdigest()
    (site / ".metabench-generated.json").write_text(json.dumps(listed))
    (site / "tasks/edited.html").write_text("the user's notes added")
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 0 and "1 removed" in out, out
    assert not (site / "tasks/gone.html").exists() and (site / "tasks/edited.html").read_text() == "the user's notes added"


@pytest.mark.parametrize("names", [300_000, 1_000_000])
def test_a_huge_file_list_is_not_read_and_costs_no_time(tmp_path, names):
    from metabench.report.leaderboard import site_files

    (tmp_path / "index.html").write_text("the user's")
    (tmp_path / ".metabench-generated.json").write_text(json.dumps([f"tasks/p{i}.html" for i in range(names)] + ["index.html"]))
    started = time.perf_counter()
    with pytest.warns(UserWarning, match="not read"):
        listed = site_files.listed(tmp_path)
    assert listed == {} and time.perf_counter() - started < 5


def test_a_reporter_writing_into_a_runs_folder_is_refused_even_with_force(cli, tmp_path):
    from metabench.report.leaderboard import site_files
    from metabench.errors import MetabenchError

    runs, site = _site_with_runs(tmp_path)
    with pytest.raises(MetabenchError, match="inside a runs folder"):
        site_files.refuse_protected(site, {"index.html", "runs/syn/a/results.json"})
    with pytest.raises(MetabenchError, match="inside a runs folder"):
        site_files.refuse_protected(site, {"runs/syn/a/notes.html"})
    site_files.refuse_protected(site, {"index.html", "runs/index.html"})
