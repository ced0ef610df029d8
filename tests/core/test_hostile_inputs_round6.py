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
import warnings
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
        listed = {name: hashlib.sha256((site / name).read_bytes() if form == "true-digests" and (site / name).is_file()
                                      else b"x").hexdigest()
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


@pytest.mark.parametrize("form", LIST_FORMS)
@pytest.mark.parametrize("user_file", ["notes/thesis.tex", "tasks/my_page.html", "data.json", "table.csv"])
def test_a_crafted_file_list_deletes_no_user_file(cli, tmp_path, form, user_file):
    """Even listed with its true digest (the user's file may be public), a user's file lacks the generator mark
    that only the file itself can carry: kept, and the build says so."""
    runs, site = _site_with_runs(tmp_path)
    (site / user_file).parent.mkdir(parents=True, exist_ok=True)
    (site / user_file).write_text('{"the user\'s": "own work"}')
    _crafted(site, [user_file, *RUN_FILES], form)
    before = _snapshot(runs)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 0 and "0 removed" in out, out
    assert (site / user_file).read_text() == '{"the user\'s": "own work"}' and _snapshot(runs) == before
    kept = [str(w.message) for w in said if "kept" in str(w.message)]
    if form == "true-digests":
        assert len(kept) == 1 and "kept 1 file(s)" in kept[0] and f"({user_file})" in kept[0], kept
        assert "no metabench generator mark" in kept[0]
    else:
        assert not kept


@pytest.mark.parametrize("form", LIST_FORMS)
def test_a_crafted_file_list_does_not_make_a_users_index_replaceable(cli, tmp_path, form):
    runs, site = _site_with_runs(tmp_path)
    (site / "index.html").write_text("<!doctype html><title>the user's own page</title>")
    _crafted(site, ["index.html", "leaderboard.json"], form)
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 2 and "metabench did not write" in out and "index.html" in out and "--force" in out, out
    if form == "true-digests":
        assert "carry no metabench generator mark" in out, out
    assert (site / "index.html").read_text() == "<!doctype html><title>the user's own page</title>"
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200", "--force")
    assert code == 0 and "<html" in (site / "index.html").read_text()


def test_an_honest_rebuild_replaces_and_removes_its_own_files_without_force(cli, tmp_path):
    """Every file the build writes carries the mark, nothing is keyed to the machine: a rebuild (here, or on a
    clone) replaces its changed files and removes a gone task's page without --force."""
    from metabench.report.leaderboard import site_files

    runs, site = _site_with_runs(tmp_path)
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 0 and "generator mark" not in out, out
    listed = json.loads((site / ".metabench-generated.json").read_text())
    assert {name.rsplit(".", 1)[-1] for name in listed} >= {"html", "json", "md", "css", "js"}
    assert all(site_files.marked(site / name) for name in listed)
    clone = tmp_path / "clone"
    import shutil

    shutil.copytree(site, clone)
    (clone / "tasks" / "gone.html").write_bytes((clone / "index.html").read_bytes())  # a page of an older build
    listed["tasks/gone.html"] = hashlib.sha256((clone / "tasks" / "gone.html").read_bytes()).hexdigest()
    (clone / ".metabench-generated.json").write_text(json.dumps(listed))
    before = (clone / "index.html").read_bytes()
    code, out = cli("leaderboard", "build", clone / "runs", "-o", clone, "--resamples", "200", "--title", "renamed")
    assert code == 0 and "1 removed" in out, out
    assert (clone / "index.html").read_bytes() != before and "renamed" in (clone / "index.html").read_text()
    assert not (clone / "tasks" / "gone.html").exists()


@pytest.mark.parametrize(("name", "content", "marked"), [
    ("a.html", '<!doctype html><head><meta name="generator" content="generated by metabench leaderboard build">', True),
    ("a.html", "<!doctype html><p>&lt;meta name=\"generator\" content=\"generated by metabench leaderboard build\"&gt;", False),
    ("a.html", "x" * 5000 + '<meta name="generator" content="generated by metabench leaderboard build">', False),
    ("a.md", "<!-- generated by metabench leaderboard build -->\n# x", True),
    ("a.md", "# my notes on metabench leaderboard build", False),
    ("a.json", '{"metabench": "0.1.0", "tasks": []}', True),
    ("a.json", '{"tasks": [{"metabench": "0.1.0"}]}', False),
    ("a.json", '["metabench"]', False),
    ("a.json", '{"metabench": "0.1', False),
    ("a.css", "/* generated by metabench leaderboard build */\nbody {}", True),
    ("a.js", "// generated by metabench leaderboard build\n", True),
    ("a.csv", "task,score\n", False),
    ("a.metabench.csv", "task,score\n", True),
    ("a.tex", "% generated by metabench leaderboard build", False),
])
def test_the_generator_mark_per_format(tmp_path, name, content, marked):
    from metabench.report.leaderboard import site_files

    (tmp_path / name).write_text(content)
    assert site_files.marked(tmp_path / name) is marked


def test_a_generated_page_edited_since_is_kept_and_an_unedited_one_removed(cli, tmp_path):
    """Proof is the content as written: the user's edit makes the page theirs."""
    runs, site = _site_with_runs(tmp_path)
    assert cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")[0] == 0
    listed = json.loads((site / ".metabench-generated.json").read_text())
    assert listed["index.html"] == hashlib.sha256((site / "index.html").read_bytes()).hexdigest()
    as_written = (site / "index.html").read_text()  # a page of an older build: it carries the generator mark
    for name, text in (("tasks/gone.html", as_written), ("tasks/edited.html", as_written)):
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


# ------------------------------------------------------------------ 6. merge-seeds: all or nothing

@pytest.fixture(scope="module")
def random_parts(tmp_path_factory, registry) -> Path:
    """Runs of `random` on toy_cls: seeds 0 (first/), 1 (second/), 2 (third/); and of the spec `random,` (one
    folder name with `random`) at seeds 0 (comma0/) and 1 (comma1/). Built once; tests copy them (`parts`)."""
    import shutil

    import toy_plugin

    from metabench.runner import RunOptions, run

    root = tmp_path_factory.mktemp("merge-parts")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
        patch.setenv("METABENCH_CACHE_DIR", str(root / "cache"))
        for name, seed in (("first", 0), ("second", 1), ("third", 2)):
            [outcome] = run(registry, "toy_cls", ["random"], RunOptions(output_dir=root / name, progress=False, seeds=[seed]))
            assert outcome.status == "ok", outcome.message
    for name, part in (("comma0", "first"), ("comma1", "second")):  # the spec as a record may spell it
        shutil.copytree(root / part, root / name)
        [results] = (root / name).rglob("results.json")
        record = json.loads(results.read_text())
        record["model"]["spec"] = "random,"
        results.write_text(json.dumps(record, indent=2, sort_keys=True))
    return root


@pytest.fixture
def parts(random_parts, tmp_path, monkeypatch) -> Path:
    import shutil

    import toy_plugin

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("first", "second", "third", "comma0", "comma1"):
        shutil.copytree(random_parts / name, tmp_path / name)
    return tmp_path


def _merge(registry, parts: Path, names, out: Path, **options):
    from metabench.runs.merge import merge_runs

    return merge_runs(registry, [parts / name for name in names], out, **options)


#: What a destination holds that --overwrite must not replace: no run, or a run beside the user's own file.
NOT_A_RUN = {
    "a-thesis": {"thesis.tex": "the user's thesis"},
    "an-unreadable-record": {"results.json": "{not json", "notes.txt": "kept"},
    "a-run-and-the-users-notes": None,  # filled in the test: a real run's files plus notes.txt
}


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("held", list(NOT_A_RUN))
def test_overwrite_never_replaces_a_folder_that_holds_no_run(registry, parts, held, dry_run):
    import shutil

    from metabench.errors import MetabenchError

    target = parts / "merged" / "toy_cls" / "random"
    if NOT_A_RUN[held] is None:
        shutil.copytree(next((parts / "third" / "toy_cls").iterdir()), target)
        (target / "notes.txt").write_text("kept")
    else:
        target.mkdir(parents=True)
        for name, text in NOT_A_RUN[held].items():
            (target / name).write_text(text)
    before = _snapshot(parts / "merged")
    with pytest.raises(MetabenchError, match="not a run") as caught:
        _merge(registry, parts, ["first", "second"], parts / "merged", overwrite=True, dry_run=dry_run)
    assert str(target) in caught.value.message and ("would be refused: " in caught.value.message) == dry_run
    assert _snapshot(parts / "merged") == before


@pytest.mark.parametrize("dry_run", [False, True])
def test_two_specs_of_one_folder_are_refused_before_anything_is_written(registry, parts, dry_run):
    from metabench.errors import MetabenchError

    with pytest.raises(MetabenchError, match="would both be merged into") as caught:
        _merge(registry, parts, ["first", "second", "comma0", "comma1"], parts / "merged", dry_run=dry_run)
    assert "'random,'" in caught.value.message or "random," in caught.value.message
    assert not (parts / "merged").exists()


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("where", ["the-part", "below-the-part"])
def test_output_inside_a_part_is_refused(registry, parts, where, dry_run):
    from metabench.errors import MetabenchError

    [part] = (parts / "first" / "toy_cls").iterdir()
    out = part if where == "the-part" else part / "sub"
    before = _snapshot(parts / "first")
    with pytest.raises(MetabenchError, match="inside the part") as caught:
        _merge(registry, parts, ["first", "second"], out, dry_run=dry_run)
    assert ("would be refused: " in caught.value.message) == dry_run
    assert _snapshot(parts / "first") == before and not (part / "sub").exists()


@pytest.mark.parametrize("dry_run", [False, True])
def test_an_older_format_part_as_the_newest_is_refused_naming_the_part(registry, parts, dry_run):
    from metabench.errors import MetabenchError

    [second] = (parts / "second" / "toy_cls").iterdir()
    record = json.loads((second / "results.json").read_text())
    del record["n_test_items"], record["data"]["splits"]
    record["created"] = "2099-01-01T00:00:00+00:00"  # the newest: the merged record is built from it
    (second / "results.json").write_text(json.dumps(record, indent=2, sort_keys=True))
    with pytest.raises(MetabenchError, match="older format") as caught:
        _merge(registry, parts, ["first", "second"], parts / "merged", dry_run=dry_run)
    assert str(second) in caught.value.message and "metabench-merge" not in caught.value.message
    assert "/tmp" not in caught.value.message.replace(str(parts), "") and not (parts / "merged").exists()


def test_a_re_merge_keeps_the_first_merges_parts(registry, parts):
    [first] = _merge(registry, parts, ["first", "second"], parts / "merged")
    [again] = _merge(registry, parts, ["merged", "third"], parts / "again")
    record = json.loads((again.path / "results.json").read_text())
    assert [p["seeds"] for p in record["merged_from"]] == [[0], [1], [2]]
    assert [p["folder"] for p in record["merged_from"]][:2] == [p["folder"] for p in
                                                                 json.loads((first.path / "results.json").read_text())["merged_from"]]


@pytest.mark.parametrize("output", ["a-file", "/dev/null", "below-a-file", "read-only"])
def test_an_output_that_cannot_take_a_run_is_a_clear_error(cli, parts, output):
    import os

    if output == "read-only" and os.geteuid() == 0:
        pytest.skip("root writes into a read-only folder")
    out = {"a-file": parts / "file", "/dev/null": Path("/dev/null"), "below-a-file": parts / "file" / "sub",
           "read-only": parts / "locked" / "runs"}[output]
    (parts / "file").write_text("the user's")
    (parts / "locked").mkdir()
    (parts / "locked").chmod(0o500)
    try:
        code, out_text = cli("merge-seeds", parts / "first", parts / "second", "-o", out)
    finally:
        (parts / "locked").chmod(0o700)
    assert code == 2 and "metabench: error: merge-seeds: -o" in out_text and "internal error" not in out_text, out_text
    assert (parts / "file").read_text() == "the user's"


@pytest.mark.parametrize("failing", ["samples", "results"])
def test_a_full_disk_is_a_clear_error_and_leaves_nothing(cli, parts, monkeypatch, failing):
    import errno
    import os

    from metabench import store

    real = store._write_file

    def full(path, data, durable):
        if path.name.startswith(failing) and ".metabench-merge-" not in str(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, data, durable)

    monkeypatch.setattr(store, "_write_file", full)
    code, out = cli("merge-seeds", parts / "first", parts / "second", "-o", parts / "merged")
    assert code == 2 and "No space left on device" in out and "nothing was merged" in out, out
    assert not list((parts / "merged").rglob("results.json")) and not list((parts / "merged").glob(".*"))


def test_a_killed_merges_scratch_is_in_the_output_folder_and_cleaned_at_the_next_start(registry, parts, monkeypatch):
    import tempfile

    stale = parts / "merged" / ".metabench-merge-999999999-dead" / "toy_cls" / "random"
    stale.mkdir(parents=True)
    (stale / "results.json").write_text("{}")

    def no_temp(*args, **kwargs):
        raise AssertionError("merge-seeds wrote into the system's temporary folder")

    monkeypatch.setattr(tempfile, "mkdtemp", no_temp)
    _merge(registry, parts, ["first", "second"], parts / "merged")
    assert sorted(p.name for p in (parts / "merged").iterdir()) == ["toy_cls"]


# ------------------------------------------------------------------ 7. output injection and floods

#: What a value may carry to forge a CI log line: a workflow command after a newline or a carriage return,
#: after spaces (the runner trims them), after a line separator, or after a terminal escape.
FORGED = ["\n::error::forged", "\r::warning::forged", "\n   ::add-mask::x", "\u2028::error::x", "\x1b[2K\r::error::y"]


def _forged_lines(text: str) -> list[str]:
    return [line for line in text.replace("\r", "\n").splitlines() if line.lstrip().startswith("::")]


@pytest.mark.parametrize("payload", FORGED)
@pytest.mark.parametrize("where", ["--model", "-o"])
def test_a_control_character_in_a_value_forges_no_log_line(cli, tmp_path, where, payload):
    model = "majority" + payload if where == "--model" else "majority"
    out = tmp_path / ("out" + payload if where == "-o" else "out")
    code, text = cli("--tasks", "toy_cls", "--model", model, "-o", out, "--no-progress")
    assert not _forged_lines(text) and "\r" not in text and "\x1b" not in text, text
    assert (code == 0) == (where == "-o"), text
    if where == "-o":
        assert "$'" in text  # the folder is printed as one shell word, its newline escaped


@pytest.mark.parametrize("payload", FORGED)
def test_merge_and_site_outputs_forge_no_log_line(cli, tmp_path, payload):
    good_run(tmp_path / "runs" / "syn" / "a")
    for args in (("merge-seeds", tmp_path / "runs", "-o", tmp_path / ("m" + payload)),
                 ("leaderboard", "build", tmp_path / "runs", "-o", tmp_path / ("s" + payload), "--resamples", "200")):
        code, text = cli(*args)
        assert not _forged_lines(text) and "\r" not in text, text


@pytest.mark.parametrize("value, expected", [("1e-9", 1.0), ("0", 1.0), ("-5", 1.0), ("0.5", 1.0), ("inf", 86_400.0),
                                             ("nan", 30.0), ("abc", 30.0), ("2", 2.0)])
def test_a_progress_interval_below_the_floor_is_clamped_with_a_message(monkeypatch, capsys, value, expected):
    from metabench import progress

    monkeypatch.setenv("METABENCH_PROGRESS_INTERVAL", value)
    monkeypatch.setattr(progress, "_WARNED", set())
    assert progress.interval() == expected and progress.interval() == expected
    err = capsys.readouterr().err
    assert err.count("METABENCH_PROGRESS_INTERVAL") == (0 if value == "2" else 1), err


@pytest.mark.parametrize("writer", ["run-progress", "build-progress", "an-error"])
def test_with_stderr_closed_nothing_meant_for_it_reaches_stdout(monkeypatch, capsys, registry, writer):
    import sys

    from metabench import plugins, progress
    from metabench.cli import main
    from metabench.report.leaderboard.progress import Progress

    monkeypatch.setattr(plugins, "default_registry", lambda: registry)
    monkeypatch.setattr(sys, "stderr", None)
    if writer == "run-progress":
        progress._emit("job 1/2: toy_cls with majority")
    elif writer == "build-progress":
        with Progress(enabled=True).phase("verifying runs", 1, "run") as done:
            done()
    else:
        assert main(["--tasks", "no_such_task", "--model", "majority"]) == 2
    assert capsys.readouterr().out == ""


# ------------------------------------------------------------------ 8. tracebacks turned into clear errors

def _two_runs(tmp_path: Path) -> Path:
    good_run(tmp_path / "runs" / "syn" / "a")
    good_run(tmp_path / "runs" / "syn" / "b", prediction="no")
    return tmp_path / "runs"


def _with_module(monkeypatch, name: str, **attributes):
    """A plugin module registered in-process, and the registry that loads it beside the toy plugin."""
    import sys
    import types

    import toy_plugin

    from metabench import plugins

    module = types.ModuleType(name)
    for key, value in attributes.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)
    registry = plugins.load(extra_plugins=(toy_plugin, module), strict=False)
    monkeypatch.setattr(plugins, "default_registry", lambda: registry)
    return registry


def _table(**change):
    table = {"key": "t1", "paper": "A paper (2024)", "number": "Table 1", "title": "results", "header": ["row", "model", "F1"],
             "rows": [{"labels": ["all"], "model": "x", "source": "metabench", "cells": ["0.5"]}], "tasks": [],
             "missing_tasks": [], "notes": []}
    return {**table, **change}


PAPER_TABLES = {
    "a-row-as-a-list": [_table(rows=[["all", "x", "0.5"]])],
    "a-row-too-wide": [_table(rows=[{"labels": ["all"], "model": "x", "cells": ["0.5", "0.6", "0.7"]}])],
    "labels-not-a-list": [_table(rows=[{"labels": "all", "model": "x", "cells": ["0.5"]}])],
    "no-paper": [_table(paper=None)],
    "a-table-as-a-string": ["Table 1"],
    "tables-as-a-dict": {"t1": _table()},
    "header-of-numbers": [_table(header=[1, 2, 3])],
    "model-a-number": [_table(rows=[{"labels": ["all"], "model": 3, "cells": ["0.5"]}])],
}


@pytest.mark.parametrize("case", list(PAPER_TABLES))
def test_a_sections_paper_tables_of_the_wrong_shape_are_quarantined_not_fatal(cli, tmp_path, monkeypatch, case):
    from metabench.hookspecs import hookimpl
    from metabench.report.leaderboard.sections import BoardSection

    _with_module(monkeypatch, "round6_tables",
                 build=lambda inputs: BoardSection({"rows": []}, paper_tables=PAPER_TABLES[case]),
                 metabench_register_board_sections=hookimpl(lambda register: register("round6", "round6_tables:build")))
    code, out = cli("leaderboard", "build", _two_runs(tmp_path), "-o", tmp_path / "site", "--resamples", "100")
    assert code == 0, out
    assert "quarantined plugin 'round6_tables'" in out and "paper_tables" in out, out
    assert "A paper (2024)" not in (tmp_path / "site" / "leaderboard.md").read_text()


def test_a_well_formed_paper_table_is_shown(cli, tmp_path, monkeypatch):
    from metabench.hookspecs import hookimpl
    from metabench.report.leaderboard.sections import BoardSection

    _with_module(monkeypatch, "round6_tables",
                 build=lambda inputs: BoardSection({"rows": []}, paper_tables=[_table()]),
                 metabench_register_board_sections=hookimpl(lambda register: register("round6", "round6_tables:build")))
    code, out = cli("leaderboard", "build", _two_runs(tmp_path), "-o", tmp_path / "site", "--resamples", "100")
    assert code == 0 and "quarantined" not in out, out
    assert "A paper (2024)" in (tmp_path / "site" / "leaderboard.md").read_text()


REPORTERS = {
    "raises": lambda board, out_dir: 1 / 0,
    "returns-a-number": lambda board, out_dir: 3,
    "raises-oserror": lambda board, out_dir: open(out_dir / "missing" / "x.txt"),  # noqa: SIM115
    "raises-keyerror": lambda board, out_dir: {}["tasks"],
}


@pytest.mark.parametrize("case", list(REPORTERS))
def test_a_raising_reporter_is_its_plugins_error_and_changes_no_file(cli, tmp_path, monkeypatch, case):
    from metabench.hookspecs import hookimpl

    _with_module(monkeypatch, "round6_reporter", write=REPORTERS[case],
                 metabench_register_reporters=hookimpl(
                     lambda register: register("broken", "round6_reporter:write")))
    runs = _two_runs(tmp_path)
    code, out = cli("leaderboard", "build", runs, "-o", tmp_path / "site", "--resamples", "100", "--format", "json")
    assert code == 0, out
    before = _snapshot(tmp_path / "site")
    code, out = cli("leaderboard", "build", runs, "-o", tmp_path / "site", "--resamples", "100",
                    "--format", "json", "--format", "broken")
    assert code == 2 and "internal error" not in out, out
    assert "reporter 'broken' (from plugin 'round6_reporter')" in out and "METABENCH_DISABLE_PLUGINS=round6_reporter" in out
    assert _snapshot(tmp_path / "site") == before


@pytest.mark.parametrize("where", ["read-only-runs-folder", "read-only-output", "unsearchable-parent"])
def test_explore_beside_a_read_only_folder_is_no_traceback(cli, tmp_path, monkeypatch, where):
    """What the kernel answers in a folder this user may not write or search (simulated: the suite may run as
    root, whom permissions do not stop)."""
    import errno
    import os

    from metabench import plugins
    from metabench.report.explore import page
    from metabench.runner import RunOptions, run

    [outcome] = run(plugins.default_registry(), "toy_cls", ["majority"],
                    RunOptions(output_dir=tmp_path / "runs", progress=False))
    locked = tmp_path / "locked"
    (locked / "sub").mkdir(parents=True)  # as they are: only writing into them fails
    denied = str(tmp_path / "runs" / "toy_cls") if where == "read-only-runs-folder" else str(locked)
    real_access, real_write, real_is_file = os.access, page.write_text, Path.is_file

    def access(path, mode, **kwargs):
        return False if str(path).startswith(denied) else real_access(path, mode, **kwargs)

    def write_text(root, target, text):
        if str(target).startswith(denied):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(target))
        return real_write(root, target, text)

    def is_file(self):
        if where == "unsearchable-parent" and str(self).startswith(denied + "/"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real_is_file(self)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(page, "write_text", write_text)
    monkeypatch.setattr(Path, "is_file", is_file)
    target = {"read-only-runs-folder": [], "read-only-output": ["-o", locked / "page.html"],
              "unsearchable-parent": ["-o", locked / "sub" / "page.html"]}[where]
    code, out = cli("explore", outcome.run_dir, *target)
    if where == "read-only-runs-folder":  # the page goes to the cache instead
        assert code == 0 and str(tmp_path / "cache" / "explore") in out, out
    else:
        assert code == 2 and f"-o {locked}" in out and "could not be written" in out and "internal error" not in out, out


@pytest.mark.parametrize("work", ["x/sub/..", "../x", "x/../../y"])
def test_gpu_check_refuses_a_work_folder_through_dot_dot(tmp_path, work):
    import subprocess

    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(["bash", str(repo / "benchmarks" / "gpu_check.sh"), "--dry-run"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "GPU_CHECK_WORK": work, "PYTHON": "/bin/false"}, timeout=60)
    assert done.returncode == 2 and "goes through '..'" in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("held", ["thesis.tex", "notes/draft.md"])
@pytest.mark.parametrize("form", ["--pack", "--pack="])
def test_gpu_check_pack_refuses_a_users_folder(tmp_path, held, form):
    import subprocess

    repo = Path(__file__).resolve().parents[2]
    folder = tmp_path / "mine"
    (folder / held).parent.mkdir(parents=True, exist_ok=True)
    (folder / held).write_text("the user's")
    args = [form, str(folder)] if form == "--pack" else [form + str(folder)]
    done = subprocess.run(["bash", str(repo / "benchmarks" / "gpu_check.sh"), *args], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": str(Path(__import__("sys").executable))}, timeout=60)
    assert done.returncode == 2 and "refusing to write into it" in done.stderr, done.stderr
    assert (folder / held).read_text() == "the user's" and sorted(p.name for p in folder.iterdir()) == [Path(held).parts[0]]


def _this_tree() -> dict:
    """The environment for a metabench subprocess that imports this checkout's package (not an installed one)."""
    import os

    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


@pytest.mark.parametrize("command", [["ls", "tasks"], ["ls", "models"], ["--version"]])
def test_stdout_at_a_file_size_limit_exits_cleanly(tmp_path, command):
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    with open(tmp_path / "out.txt", "w") as out:
        done = subprocess.run([sys.executable, "-m", "metabench.cli", *command], stdout=out, stderr=subprocess.PIPE,
                              text=True, preexec_fn=limit, timeout=120, cwd=tmp_path, env=_this_tree())
    if command == ["--version"]:
        assert "Traceback" not in done.stderr
        return
    assert done.returncode == 2 and "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert "the output could not be written" in done.stderr and "ulimit -f" in done.stderr


@pytest.mark.parametrize("key", [b"\xff\xfe", b"abc\x80def", b"\xed\xa0\x80"])
def test_a_non_utf8_reproduce_key_is_a_clear_error(tmp_path, key):
    import os
    import subprocess
    import sys

    runs = _two_runs(tmp_path)
    done = subprocess.run([os.fsencode(sys.executable), b"-m", b"metabench.cli", b"leaderboard", b"build",
                           os.fsencode(runs), b"-o", os.fsencode(tmp_path / "site"), b"--reproduce", b"1",
                           b"--reproduce-key", key, b"--resamples", b"100"],
                          capture_output=True, timeout=300, cwd=tmp_path, env=_this_tree())
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2 and "Traceback" not in err and "internal error" not in err, err
    assert "--reproduce-key" in err


# ------------------------------------------------------------------ 9. older leftovers

@pytest.mark.parametrize("reseal", ["plain-digest-as-before", "plain-digest-as-hmac", "hmac-under-another-secret"])
def test_a_resealed_job_memo_record_is_not_served(cli, tmp_path, reseal):
    """The memo row's seal is an HMAC under the user's secret: whoever rewrites a row cannot make it check, with
    the old unkeyed digest or with a key of their own."""
    import hmac
    import os
    import sqlite3
    import zlib

    from metabench import jobs

    args = ("--tasks", "toy_cls", "--model", "majority", "--launcher", "serial", "--no-progress")
    jobs._load_memo.cache_clear()
    for _ in range(2):  # the first run caches the parsed items the memo key is made of; the second remembers
        assert cli(*args, "-o", tmp_path / "first")[0] == 0
    truth = json.loads((tmp_path / "first" / "toy_cls" / "majority" / "results.json").read_text())["metrics"]
    db = sqlite3.connect(tmp_path / "cache" / "answers.sqlite")
    (key, text, name, blob), = db.execute("SELECT key, record, run_name, samples FROM runs").fetchall()
    sealed = json.loads(text)
    assert set(sealed) == {"record", "hmac"}
    record = sealed["record"]
    record["metrics"]["aggregate"]["accuracy"]["mean"] = 0.999
    body = json.dumps(record, ensure_ascii=False, allow_nan=False, sort_keys=True)
    if reseal == "plain-digest-as-before":
        resealed = {"record": record, "sha256": hashlib.sha256("\x00".join((key, body, name)).encode() + b"\x00" + blob).hexdigest()}
    elif reseal == "plain-digest-as-hmac":
        resealed = {"record": record, "hmac": hashlib.sha256(("\x00".join((body, name))).encode() + b"\x00" + blob).hexdigest()}
    else:
        mac = hmac.new(os.urandom(32), f"job-memo\0{key}".encode() + b"\0", hashlib.sha256)
        mac.update("\x00".join((body, name)).encode() + b"\x00" + blob)
        resealed = {"record": record, "hmac": mac.hexdigest()}
    db.execute("UPDATE runs SET record = ? WHERE key = ?", (json.dumps(resealed), key))
    db.commit()
    db.close()
    assert zlib.decompress(blob)
    assert cli(*args, "-o", tmp_path / "second")[0] == 0
    served = json.loads((tmp_path / "second" / "toy_cls" / "majority" / "results.json").read_text())
    assert served["metrics"] == truth and served["timings"]["cached_items"] == 0  # computed again, not the edit


def test_an_untouched_job_memo_is_still_served(cli, tmp_path):
    from metabench import jobs

    args = ("--tasks", "toy_cls", "--model", "majority", "--launcher", "serial", "--no-progress")
    jobs._load_memo.cache_clear()
    for folder in ("first", "first", "second"):
        assert cli(*args, "-o", tmp_path / folder)[0] == 0
    served = json.loads((tmp_path / "second" / "toy_cls" / "majority" / "results.json").read_text())
    assert served["timings"]["cached_items"] == served["n_items"]


@pytest.mark.parametrize("xi", ["2", "1.5", "0", "-0.5", "nan", "inf"])
@pytest.mark.parametrize("verb", ["stats", "fidelity"])
def test_hard_xi_out_of_range_is_an_error_before_any_work(cli, monkeypatch, verb, xi):
    from metabench_hard import build

    def no_work(*args, **kwargs):
        raise AssertionError("a build started")

    monkeypatch.setattr(build, "ensure_hard", no_work)
    monkeypatch.setattr(build, "ensure_sor", no_work)
    code, out = cli("hard", verb, "--model", "hf:minilm-l6", "--xi", xi)
    assert code == 2 and f"--xi {float(xi)}" in out and "(0, 1]" in out, out


def _phi_table(tmp_path: Path, **change) -> Path:
    table = {"format": "metabench-hard-phi/1", "label": "SOR(m), 900 steps", "sor_model": "m", "sor_steps": 900,
             "dataset": "vua_verb", "split": "test", "phi": {"i0": 0.1, "i1": 0.9}, **change}
    path = tmp_path / "hard_phi.json"
    path.write_text(json.dumps(table))
    return path


@pytest.mark.parametrize("change, needle", [
    ({"dataset": "moh_x"}, "a phi table of moh_x test items"),
    ({"split": "train"}, "a phi table of vua_verb train items"),
    ({"label": ["SOR"]}, '"label" is'),
    ({"label": None}, '"label" is'),
    ({"dataset": "moh\n::error::x"}, "moh\\n::error::x"),
    ({"sor_steps": "900"}, '"sor_steps" is'),
])
def test_a_phi_table_for_another_dataset_or_of_another_shape_is_refused(tmp_path, change, needle):
    from metabench.errors import MetabenchError
    from metabench_hard.phi_table import load_table

    with pytest.raises(MetabenchError) as caught:
        load_table(_phi_table(tmp_path, **change))
    assert needle in caught.value.message and "\n" not in caught.value.message, caught.value.message


def test_a_phi_table_is_applied_only_to_runs_of_its_dataset_and_its_label_is_escaped(tmp_path):
    from metabench.errors import MetabenchError
    from metabench_hard.phi_table import load_table
    from metabench_hard.report.hardness import format_hardness, hardness_row
    from metabench.runs.stored import load_run

    run = load_run(good_run(tmp_path / "runs" / "syn" / "a"))  # a run of the dataset 'syn'
    table = load_table(_phi_table(tmp_path, phi={f"i{i}": 0.5 for i in range(20)}))
    with pytest.raises(MetabenchError, match="was built for vua_verb"):
        hardness_row(run, table)
    table = {**table, "dataset": "syn", "label": "SOR(m)\n::error::forged\x1b[2J"}
    text = format_hardness([hardness_row(run, table)])
    assert not _forged_lines(text) and "\x1b" not in text and "SOR(m)\\n::error::forged" in text


def _variant_run(path: Path, task: str) -> Path:
    good_run(path)
    record = json.loads((path / "results.json").read_text())
    record["task"]["name"] = task
    (path / "results.json").write_text(json.dumps(record, indent=2, sort_keys=True))
    return path


@pytest.mark.parametrize("third", ["t_other_p", "t_original_q", "u_paraphrase_gen_p"])
def test_paired_variants_names_an_unpaired_run_it_leaves_out(cli, tmp_path, third):
    runs = tmp_path / "runs"
    _variant_run(runs / "t_original_p" / "syn", "t_original_p")
    _variant_run(runs / "t_paraphrase_gen_p" / "syn", "t_paraphrase_gen_p")
    _variant_run(runs / third / "syn", third)
    code, out = cli("compare", "paired-variants", runs, "--resamples", "200")
    assert f"paired-variants: left out {runs / third / 'syn'} ({third} with syn)" in out, out
    assert "left out " + str(runs / "t_original_p") not in out


def _texts(prefix: str, listed: set[int] = frozenset(), n: int = 6) -> list[dict]:
    """Rows of a json source; the rows in ``listed`` hold a list where the others hold a sentence."""
    return [{"uid": f"{prefix}-{i}", "label": ["literal", "metaphorical"][i % 2],
             "sentence": ["a", "list", str(i)] if i in listed else f"sentence {i} of {prefix}"} for i in range(n)]


def _json_source_task(folder: Path, files: dict[str, list[dict]], data_files: str) -> None:
    (folder / "data").mkdir(parents=True)
    for name, rows in files.items():
        (folder / "data" / name).write_text("\n".join(map(json.dumps, rows)) + "\n")
    (folder / "mixed.yaml").write_text(
        "task: mixed\nkind: classification\nhf_dataset:\n  path: json\n"
        f"  data_files: {data_files}\n  columns: {{id: uid, text: sentence, label: label}}\n"
        "splits: {train: train, test: test}\nlabels: {names: [literal, metaphorical], positive: metaphorical}\n"
        "metrics: [accuracy]\n")


LISTS_AMONG_STRINGS = {
    "some-rows-of-the-test-file": ({"train.jsonl": _texts("train"), "test.jsonl": _texts("test", {2})}, "TWO"),
    "every-row-of-the-test-file": ({"train.jsonl": _texts("train"), "test.jsonl": _texts("test", set(range(6)))}, "TWO"),
    "every-row-of-the-train-file": ({"train.jsonl": _texts("train", set(range(6))), "test.jsonl": _texts("test")}, "TWO"),
    "one-of-two-test-files": ({"train.jsonl": _texts("train"), "test_a.jsonl": _texts("a"),
                               "test_b.jsonl": _texts("b", {0, 1})},
                              "{train: data/train.jsonl, test: [data/test_a.jsonl, data/test_b.jsonl]}"),
}


@pytest.mark.parametrize("case", list(LISTS_AMONG_STRINGS))
def test_a_hf_dataset_column_mixing_lists_and_strings_is_an_error_naming_it(tmp_path, monkeypatch, case):
    """datasets reads such a column as text of JSON ('"a sentence"', '["a", "list"]') when the types differ between
    files: every text would reach the model quoted. The job fails naming the column (and the files)."""
    pytest.importorskip("datasets")
    import types

    from metabench import plugins
    from metabench.hookspecs import hookimpl
    from metabench.runner import RunOptions, run

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    files, data_files = LISTS_AMONG_STRINGS[case]
    two = "{train: data/train.jsonl, test: data/test.jsonl}"
    _json_source_task(tmp_path / "tasks", files, two if data_files == "TWO" else data_files)
    module = types.ModuleType("round6_mixed_tasks")
    module.metabench_register_tasks = hookimpl(lambda register: register(str(tmp_path / "tasks")))
    (outcome,) = run(plugins.load(extra_plugins=(module,)), "mixed", ["majority"],
                     RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert outcome.status == "failed" and "column 'sentence'" in outcome.message, outcome.message
    assert "DatasetGenerationError" not in outcome.message and "make 'sentence' one type" in outcome.message


def test_a_text_column_of_one_type_that_looks_like_json_is_read_as_it_is(tmp_path, monkeypatch):
    """Texts such as '[1, 2] is a list' or '"Quoted," she said' in every file: no type differs between the
    files, so they are texts, read as they are."""
    pytest.importorskip("datasets")
    import types

    from metabench import plugins
    from metabench.hookspecs import hookimpl
    from metabench.runner import RunOptions, run

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    rows = [{"uid": f"t-{i}", "label": ["literal", "metaphorical"][i % 2],
             "sentence": ["[1, 2]", '"Quoted," she said', "[sic] plain", '{"a": 1}'][i % 4]} for i in range(8)]
    _json_source_task(tmp_path / "tasks", {"train.jsonl": rows, "test.jsonl": rows},
                      "{train: data/train.jsonl, test: data/test.jsonl}")
    module = types.ModuleType("round6_json_looking_tasks")
    module.metabench_register_tasks = hookimpl(lambda register: register(str(tmp_path / "tasks")))
    (outcome,) = run(plugins.load(extra_plugins=(module,)), "mixed", ["majority"],
                     RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert outcome.status == "ok", outcome.message


@pytest.mark.parametrize("name", ["runs/README.md", "runs/syn/notes.txt"])
def test_a_crafted_list_deletes_nothing_in_the_folder_the_runs_are_read_from(cli, tmp_path, name):
    """A file in the runs folder given to the build, beside the run folders (no results.json next to it): kept
    even with its true digest listed."""
    runs, site = _site_with_runs(tmp_path)
    (site / name).write_text("the user's notes on the runs")
    _crafted(site, [name], "true-digests")
    code, out = cli("leaderboard", "build", runs, "-o", site, "--resamples", "200")
    assert code == 0 and (site / name).read_text() == "the user's notes on the runs", out
