"""The fifth hardening round (issue 49): what was added since the fourth under hostile and broken input.

One section per class of the issue, each parametrised over several cases: code run from a cache file, deleting
what metabench did not make, a plugin's board section taking down the build, bounds a shape slips past, the Hub
export, a data file edited in place, and last round's leftovers. CLI cases run in-process through the bad-input
suites' `cli` fixture (tests/cli_inprocess.py: no traceback, and nothing outside the cache and the command's
output folders may change).
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from cli_inprocess import cli, good_run, registry  # noqa: F401 - cli, registry: fixtures


# ------------------------------------------------------------------- 1. code execution from a cache file

class _RunsCode:
    """Unpickling this writes a marker file: what a planted cache file would do with ``os.system``."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "code ran"))


def _index_file(registry):
    from metabench.config import index_cache

    return index_cache.cache_file(), f"task-index\0{index_cache.key(registry)}", index_cache.key(registry)


def _item_file(registry):
    from metabench.data import itemcache

    entry = itemcache.key(registry.resolve("dataset", "toy_cls"), "test", {})
    return itemcache.cache_folder() / f"{entry}.pkl", f"items\0{entry}", entry


def _fake_index(registry, marker: Path) -> dict:
    """A well-formed index naming a task that no file declares (what re-pickling under the key serves)."""
    from metabench.config.index import TaskIndex

    real = TaskIndex(registry)
    return {"tasks": {"planted_task": next(iter(real.tasks.values()))}, "groups": {}, "quarantined": {},
            "_group_plugins": {}, "_problems": [], "marker": _RunsCode(marker)}


PLANTED = {
    "code": lambda registry, key, marker: _RunsCode(marker),
    "code-in-the-expected-shape": lambda registry, key, marker: (key, {"tasks": _RunsCode(marker)}),
    "items-shape-with-code": lambda registry, key, marker: ([_RunsCode(marker)], ["toy/cls_test.tsv"]),
    "plausible-index-under-its-key": lambda registry, key, marker: _fake_index(registry, marker),
}


@pytest.mark.slow
@pytest.mark.parametrize("cache", ["task-index", "items"])
@pytest.mark.parametrize("planted", list(PLANTED))
def test_a_planted_cache_file_never_runs_code_and_is_rebuilt(registry, tmp_path, monkeypatch, cache, planted):
    """A pickle in the cache folder that the user's secret did not seal is never unpickled (the marker its
    ``__reduce__`` would write stays absent), whatever shape it has, and the entry is rebuilt from the files."""
    import toy_plugin

    from metabench import cache_seal
    from metabench.config.index import TaskIndex
    from metabench.data.load import load_split

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    marker = tmp_path / "marker"
    path, _, key = (_index_file if cache == "task-index" else _item_file)(registry)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(PLANTED[planted](registry, key, marker)))
    if cache == "task-index":
        index = TaskIndex(registry)
        assert "planted_task" not in index.tasks and "bad_input_task" not in index.tasks and index.tasks
    else:
        assert len(load_split(registry, "toy_cls", "test").items) > 0
    assert not marker.exists(), "a planted cache file ran code"
    assert path.read_bytes().startswith(cache_seal.MAGIC)  # replaced by a sealed entry


@pytest.mark.slow
@pytest.mark.parametrize("cache", ["task-index", "items"])
def test_an_entry_sealed_for_another_key_is_not_served(registry, tmp_path, monkeypatch, cache):
    """The HMAC covers the entry's key: a sealed file copied or renamed onto another entry is a miss."""
    import toy_plugin

    from metabench import cache_seal
    from metabench.config.index import TaskIndex
    from metabench.data.load import load_split

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    path, purpose, _ = (_index_file if cache == "task-index" else _item_file)(registry)
    cache_seal.dump(path, purpose.replace("\0", "\0other"), {"tasks": {}} if cache == "task-index" else ([], []))
    assert cache_seal.load(path, purpose) is None
    if cache == "task-index":
        assert TaskIndex(registry).tasks
    else:
        assert load_split(registry, "toy_cls", "test").items
    assert cache_seal.load(path, purpose) is not None  # rebuilt, sealed for its own key


@pytest.mark.parametrize("problem", ["group-readable", "world-writable", "inside-the-cache", "a-link", "short"])
def test_an_unsafe_secret_turns_the_caches_off_with_a_warning_that_says_how_to_fix_it(tmp_path, monkeypatch, problem):
    from metabench import cache_seal

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    secret = tmp_path / ("cache" if problem == "inside-the-cache" else "config") / "secret"
    secret.parent.mkdir()
    secret.write_bytes(os.urandom(16 if problem == "short" else 32))
    secret.chmod({"group-readable": 0o640, "world-writable": 0o602}.get(problem, 0o600))
    if problem == "a-link":
        os.symlink(secret, tmp_path / "link")
        secret = tmp_path / "link"
    monkeypatch.setenv(cache_seal.SECRET_ENV, str(secret))
    monkeypatch.setattr(cache_seal, "_secrets", {})
    with pytest.warns(RuntimeWarning, match="caches are off") as caught:
        assert cache_seal.seal("x", b"payload") is None
    message = str(caught[0].message)
    assert str(secret) in message and any(fix in message for fix in ("remove it", "chmod 600", "name a file outside"))


def test_a_new_secret_is_made_private_outside_the_cache(tmp_path, monkeypatch):
    from metabench import cache_seal

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(cache_seal.SECRET_ENV, str(tmp_path / "config" / "metabench" / "cache-secret"))
    monkeypatch.setattr(cache_seal, "_secrets", {})
    sealed = cache_seal.seal("entry", b"payload")
    secret = tmp_path / "config" / "metabench" / "cache-secret"
    assert secret.stat().st_mode & 0o777 == 0o600 and secret.parent.stat().st_mode & 0o777 == 0o700
    assert bytes(cache_seal.unseal("entry", sealed)) == b"payload"
    assert cache_seal.unseal("entry", sealed[:-1] + b"!") is None and cache_seal.unseal("other", sealed) is None


# ------------------------------------------------------------------- 2. deleting what it did not make

def _gpu_check(monkeypatch, tmp_path, work: Path, *args) -> int:
    """benchmarks/gpu_check.py's main in-process (its environment changes undone after the test)."""
    import importlib.util

    from mirror import REPO

    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "benchmarks" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(os, "environ", {**os.environ, "GPU_CHECK_WORK": str(work)})
    return module.main(["--cpu-smoke", "--carry", str(tmp_path / "no-carry"), *args])


def _users_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "thesis.tex").write_text("years of work")
    return path


WORK_FOLDERS = {
    "foreign-non-empty": lambda tmp: _users_folder(tmp / "home"),
    "a-file": lambda tmp: (tmp / "file").write_text("x") and tmp / "file",
    "a-link-to-a-foreign-folder": lambda tmp: (_users_folder(tmp / "home"), os.symlink(tmp / "home", tmp / "link"),
                                               tmp / "link")[-1],
    "a-link-to-a-marked-folder": lambda tmp: (_users_folder(tmp / "home"), (tmp / "home" / ".metabench-made").write_text("{}"),
                                              os.symlink(tmp / "home", tmp / "link"), tmp / "link")[-1],
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(WORK_FOLDERS))
def test_the_gpu_check_never_empties_a_work_folder_it_did_not_make(monkeypatch, tmp_path, capsys, case):
    work = WORK_FOLDERS[case](tmp_path)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    assert _gpu_check(monkeypatch, tmp_path, work, "--out", str(tmp_path / "out")) == 2
    err = capsys.readouterr().err
    assert f"GPU_CHECK_WORK={work}" in err and "hint: point GPU_CHECK_WORK at a new or empty folder" in err, err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", ["unknown", "typo", "one-known-one-not"])
def test_gpu_check_only_naming_no_path_is_an_error(monkeypatch, tmp_path, capsys, case):
    names = {"unknown": ["nothing"], "typo": ["taggerr"], "one-known-one-not": ["tagger", "nothing"]}[case]
    only = [arg for name in names for arg in ("--only", name)]
    assert _gpu_check(monkeypatch, tmp_path, tmp_path / "work", "--out", str(tmp_path / "out"), *only) == 2
    err = capsys.readouterr().err
    assert "no such path" in err and "choose from scoring_one_token" in err and "tagger" in err, err
    assert not (tmp_path / "work").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", ["out-is-a-file", "out-is-a-link", "json-is-a-folder", "json-is-a-link"])
def test_gpu_check_output_that_is_a_file_or_a_link_is_an_error(monkeypatch, tmp_path, capsys, case):
    out = tmp_path / "out"
    if case == "out-is-a-file":
        out.write_text("x")
    elif case == "out-is-a-link":
        _users_folder(tmp_path / "elsewhere")
        os.symlink(tmp_path / "elsewhere", out)
    else:
        out.mkdir()
        (tmp_path / "elsewhere").write_text("x")
        (out / "gpu_check.json").mkdir() if case == "json-is-a-folder" else \
            os.symlink(tmp_path / "elsewhere", out / "gpu_check.json")
    assert _gpu_check(monkeypatch, tmp_path, tmp_path / "work", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert f"--out {out}:" in err and "hint: name a new folder" in err, err
    assert not (tmp_path / "work").exists()


def test_a_folder_metabench_made_is_emptied_and_removed_and_nothing_else(tmp_path):
    from metabench import owned_folders
    from metabench.errors import MetabenchError

    made = owned_folders.fresh(tmp_path / "new" / "work", variable="WORK")
    (made / "scratch.bin").write_text("x")
    assert sorted(p.name for p in owned_folders.fresh(made, variable="WORK").iterdir()) == [owned_folders.MARK]
    owned_folders.remove(made, variable="WORK")
    assert not made.exists()
    owned_folders.fresh(tmp_path / "empty", variable="WORK")  # an empty folder of the user's is taken and marked
    with pytest.raises(MetabenchError, match="did not make and it is not empty"):
        owned_folders.remove(_users_folder(tmp_path / "home"), variable="WORK")
    assert (tmp_path / "home" / "thesis.tex").exists()


# ------------------------------------------------------------------- 6. a data file edited in place

def _edit_in_place(path: Path, how: str) -> None:
    """Change ``path``'s bytes keeping its size, inode and mtime (what a stamp of size, mtime, inode misses)."""
    import time

    time.sleep(0.05)  # past the clock tick of the stamp just taken (the change time's granularity)
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[-2] = ord("X") if data[-2] != ord("X") else ord("Y")
    if how == "overwrite":
        path.write_bytes(bytes(data))
    else:  # one byte patched through an open handle, as a tool editing in place would
        with path.open("r+b") as handle:
            handle.seek(len(data) - 2)
            handle.write(bytes(data[-2:-1]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)


@pytest.mark.parametrize("how", ["overwrite", "patch-one-byte"])
def test_a_data_file_edited_in_place_keeping_size_mtime_and_inode_fails_its_hash(registry, tmp_path, monkeypatch, how):
    import shutil

    import toy_plugin

    from metabench.data import resolve
    from metabench.data.load import load_split
    from metabench.errors import DataError

    mirror = tmp_path / "mirror"
    shutil.copytree(toy_plugin.DATA_DIR, mirror)
    monkeypatch.setenv("METABENCH_DATA_DIR", str(mirror))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(resolve, "_stamps", None)
    load_split(registry, "toy_cls", "test")
    resolve.flush_stamps()
    target = mirror / "toy" / "cls_test.tsv"
    _edit_in_place(target, how)
    monkeypatch.setattr(resolve, "_verified", {})  # the next process: only the stamps file remembers
    monkeypatch.setattr(resolve, "_stamps", None)
    with pytest.raises(DataError, match="sha256"):
        load_split(registry, "toy_cls", "test")


@pytest.mark.parametrize("how", ["overwrite", "patch-one-byte"])
@pytest.mark.parametrize("reader", ["hf-dataset-source", "model-weights"])
def test_a_file_hashed_under_a_stamp_is_hashed_again_after_an_in_place_edit(tmp_path, monkeypatch, how, reader):
    import hashlib

    from metabench.data import resolve
    from metabench.models.hf_common import file_sha256

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(resolve, "_stamps", None)
    hashed = resolve.stamped_sha256 if reader == "hf-dataset-source" else file_sha256
    path = tmp_path / "file.bin"
    path.write_bytes(b"golds: literal metaphorical literal\n")
    assert hashed(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    _edit_in_place(path, how)
    assert hashed(path) == hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------- 4. bounds that a shape slips past

def _pair_of_runs(tmp_path: Path) -> tuple[Path, Path]:
    """Two 40-item runs of one task, under base/ and cand/."""
    return (good_run(tmp_path / "base" / "syn" / "m", n=40),
            good_run(tmp_path / "cand" / "syn" / "m", n=40, prediction="no"))


def _blank_lines_after_the_rows(run: Path, blank: bytes, count: int) -> None:
    """``run``'s samples followed by ``count`` blank lines, gzipped (a few KB), the digest in results.json matched."""
    import gzip
    import hashlib
    import json

    text = (run / "samples.jsonl").read_bytes() + blank * count
    (run / "samples.jsonl").unlink()
    (run / "samples.jsonl.gz").write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
    results = json.loads((run / "results.json").read_text())
    results["samples_sha256"] = hashlib.sha256(text).hexdigest()
    (run / "results.json").write_text(json.dumps(results))


def _commands(tmp_path: Path, base: Path, cand: Path) -> dict[str, list]:
    return {"compare": ["compare", base, cand], "gate": ["gate", "--baseline", base, "--candidate", cand],
            "leaderboard": ["leaderboard", "build", tmp_path / "base", tmp_path / "cand", "-o", tmp_path / "site",
                            "--resamples", "100"]}


@pytest.mark.parametrize("blank", [b"\n", b"\r\n", b"   \n"], ids=["newlines", "crlf", "spaces"])
def test_a_gzip_of_blank_lines_counts_every_line_towards_the_row_bound(cli, tmp_path, blank):
    """2 MB of gzip expanding to millions of blank lines: refused at the first line past n_items x seeds."""
    import time

    base, cand = _pair_of_runs(tmp_path)
    _blank_lines_after_the_rows(cand, blank, 3_000_000)
    started = time.perf_counter()
    code, out = cli("compare", base, cand)
    assert code == 2 and ":41: more lines (blank ones count) than results.json declares (40 items" in out, out
    assert time.perf_counter() - started < 30


@pytest.mark.parametrize("raw", ["inf", "nan", "1e30", "Infinity", "1e400"])
@pytest.mark.parametrize("variable", ["METABENCH_MAX_INPUT_BYTES", "METABENCH_MAX_SAMPLE_ROWS", "METABENCH_TEMPLATE_TIMEOUT_S",
                                      "METABENCH_MAX_YAML_DEPTH"])
def test_a_limit_variable_of_inf_nan_or_1e30_is_refused_where_it_is_read(monkeypatch, variable, raw):
    from metabench import limits
    from metabench.errors import MetabenchError

    (limit,) = [limit for limit in limits.ALL if limit.env == variable]
    monkeypatch.setenv(variable, raw)
    with pytest.raises(MetabenchError, match=f"{variable}='{raw}': expected a positive number of at most") as caught:
        limit.value
    assert "unset it for the default" in str(caught.value)


@pytest.mark.parametrize("raw", ["inf", "nan", "1e30"])
def test_a_run_command_given_an_unbounded_input_limit_says_so(cli, tmp_path, monkeypatch, raw):
    base, cand = _pair_of_runs(tmp_path)
    monkeypatch.setenv("METABENCH_MAX_INPUT_BYTES", raw)
    code, out = cli("compare", base, cand)
    assert code == 2 and f"METABENCH_MAX_INPUT_BYTES='{raw}': expected a positive number" in out, out


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


RESULTS_TEXT = {
    "nested-200k-deep": (lambda text: text.replace('"config": {', f'"config": {{"x": {_nested(200_000)}, ', 1),
                         "values nested deeper than"),
    "nested-40-deep": (lambda text: text.replace('"config": {', f'"config": {{"x": {_nested(40)}, ', 1),
                       "values nested deeper than 32 levels"),
    "5000-digit-integer": (lambda text: text.replace('"config": {', '"config": {"x": 1' + "0" * 5000 + ", ", 1),
                           "an integer of 5,001 digits"),
    "n_items-10**300": (lambda text: text.replace('"n_items": 40', '"n_items": 1' + "0" * 300, 1),
                        "an integer of 301 digits"),
    "n_test_items-10**300": (lambda text: text.replace('"n_items": 40', '"n_test_items": 1' + "0" * 300 + ', "n_items": 40', 1),
                             "an integer of 301 digits"),
    "float-1e400": (lambda text: text.replace('"config": {', '"config": {"x": 1e400, ', 1), "1e400, beyond the range"),
    "duplicate-digest": (lambda text: text.replace('"n_items": 40', '"samples_sha256": "' + "0" * 64 + '", "n_items": 40', 1),
                         "the key 'samples_sha256' twice in one object"),
    "duplicate-metric": (lambda text: text.replace('"n_items": 40', '"n_items": 40, "n_items": 4', 1),
                         "the key 'n_items' twice in one object"),
}


@pytest.mark.parametrize("case", list(RESULTS_TEXT))
@pytest.mark.parametrize("command", ["compare", "gate", "leaderboard"])
def test_a_results_json_with_a_shape_no_run_has_is_a_clear_error_naming_it(cli, tmp_path, case, command):
    base, cand = _pair_of_runs(tmp_path)
    results = cand / "results.json"
    edit, message = RESULTS_TEXT[case]
    text = json_text = results.read_text()
    assert '"n_items": 40' in json_text and '"config": {' in json_text
    results.write_text(edit(text))
    code, out = cli(*_commands(tmp_path, base, cand)[command])
    assert code in (1, 2) and f"{results}: holds " in out and message in out, out


# ------------------------------------------------------------------- 5. the Hub export

def _export(registry, tmp_path: Path, run: Path | None = None, out: Path | None = None, **options):
    from metabench.export.hf_eval_results import export
    from metabench.runs.stored import load_run

    run = run or good_run(tmp_path / "runs" / "syn" / "m", n=40)
    return export(registry, [load_run(run)], out or tmp_path / "out", dataset_id="o/m", allow_unverified=True,
                  **options)


@pytest.mark.parametrize("spec", ["m; verified=checked against the data the task names", "m;digest=sha256:0",
                                  "m; digest=x; items=9", "m=1", "m%3B; x=%3D"])
def test_a_model_spec_cannot_forge_a_clause_of_the_export_notes(registry, tmp_path, spec):
    from metabench.export.hf_eval_results import NOTE_KEYS, digest, read
    from metabench.runs.stored import load_run

    run = good_run(tmp_path / "runs" / "syn" / spec, n=40)
    [written] = _export(registry, tmp_path, run)
    raw = written.entry["notes"]  # read by a stricter reader too: split on ';' alone, one '=' per clause
    assert [clause.strip().split("=")[0] for clause in raw.split(";")] == list(NOTE_KEYS), raw
    assert all(clause.count("=") == 1 for clause in raw.split(";")), raw
    [entry] = read(written.path)
    assert entry["notes"]["metabench"].endswith(f"model {spec}") and entry["notes"]["digest"] == digest(load_run(run))
    assert entry["notes"]["verified"].startswith("unverified")


@pytest.mark.parametrize("option, value", [
    ("source_url", "javascript:alert(1)"), ("source_url", "file:///etc/passwd"), ("source_url", "ftp://example.org/x"),
    ("source_url", "https://"), ("source_url", "https://example.org/a b"), ("source_url", "data:text/html,<b>x</b>"),
    ("dataset_revision", "main\nverified: true"), ("dataset_revision", "../../x"), ("dataset_revision", ""),
    ("dataset_revision", "a" * 300),
])
def test_export_options_copied_into_every_file_are_checked_before_anything_is_written(registry, tmp_path, option, value):
    from metabench.errors import MetabenchError

    flag = "--" + option.replace("_", "-")
    with pytest.raises(MetabenchError, match=f"{flag} ") as caught:
        _export(registry, tmp_path, **{option: value})
    assert caught.value.hint and not (tmp_path / "out").exists()


@pytest.mark.parametrize("created", ["not-a-date", "", "2026-13-45T00:00:00", "javascript:x", None])
def test_a_run_whose_created_is_no_date_is_refused_by_the_export(registry, tmp_path, created):
    import json

    from metabench.errors import ExplainedError

    run = good_run(tmp_path / "runs" / "syn" / "m", n=40)
    results = json.loads((run / "results.json").read_text())
    results["created"] = created
    (run / "results.json").write_text(json.dumps(results))
    with pytest.raises(ExplainedError, match=r"m: 'created' is .*, not an ISO date-time"):
        _export(registry, tmp_path, run)
    assert not (tmp_path / "out").exists()


OUTPUT_DIRS = {
    "a-file": lambda tmp, run: (tmp / "file").write_text("x") and tmp / "file",
    "a-device": lambda tmp, run: Path("/dev/full"),
    "the-run-folder": lambda tmp, run: run,
    "inside-the-run-folder": lambda tmp, run: run / ".eval_results",
    "a-link-to-the-run-folder": lambda tmp, run: (os.symlink(run, tmp / "link"), tmp / "link")[-1],
}


@pytest.mark.parametrize("case", list(OUTPUT_DIRS))
def test_export_output_that_is_a_file_a_device_or_a_run_folder_is_a_clear_error(registry, tmp_path, case):
    from metabench.errors import MetabenchError

    run = good_run(tmp_path / "runs" / "syn" / "m", n=40)
    out = OUTPUT_DIRS[case](tmp_path, run)
    before = sorted(p.name for p in run.iterdir())
    with pytest.raises(MetabenchError, match=f"-o {out}: ") as caught:
        _export(registry, tmp_path, run, out)
    assert caught.value.hint and sorted(p.name for p in run.iterdir()) == before


def test_a_full_disk_during_the_export_is_a_clear_error(registry, tmp_path, monkeypatch):
    import errno

    from metabench import safe_paths
    from metabench.errors import MetabenchError

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safe_paths, "write_text", full)
    with pytest.raises(MetabenchError, match="No space left on device") as caught:
        _export(registry, tmp_path)
    assert "free space" in caught.value.hint


@pytest.mark.parametrize("chunk", [1, 40, 1000])
def test_the_export_bootstrap_draws_in_chunks_with_the_same_interval(registry, tmp_path, monkeypatch, chunk):
    """No (2000, n) index array: at most DRAW_CHUNK indices (one row at least) are drawn at once, and the
    interval is the one a single draw gives."""
    import numpy as np

    from metabench.report import intervals

    [whole] = _export(registry, tmp_path)
    sizes = []
    real = np.random.default_rng

    class Recording:
        def __init__(self, seed):
            self.rng = real(seed)

        def integers(self, low, high, size):
            sizes.append(size)
            return self.rng.integers(low, high, size=size)

    monkeypatch.setattr(intervals, "DRAW_CHUNK", chunk)
    monkeypatch.setattr(intervals.np.random, "default_rng", Recording)
    [chunked] = _export(registry, tmp_path, out=tmp_path / "out2")
    assert chunked.entry["notes"] == whole.entry["notes"]
    assert sizes and max(rows * n for rows, n in sizes) <= max(chunk, 40) and sum(rows for rows, _ in sizes) == 2000


# ------------------------------------------------------------------- 3. one plugin section takes down the build

def _markdown_view(board, name):
    """A plugin section's markdown= view (registered as ``round5_board:view``)."""
    return [f"## {name}", "", f"rows: {len(board[name]['rows'])}"]


SECTIONS = {
    "markdown-only-view": ({"rows": [1, 2]}, [], {"markdown": "round5_board:view"}),
    "nan-in-data": ({"rows": [float("nan")]}, [], {}),
    "infinity-in-data": ({"rows": [{"score": float("inf")}]}, [], {}),
    "nan-in-paper-table": ({"rows": []}, [{"title": "t", "rows": [[float("-inf")]]}], {}),
    "a-set-in-data": ({"rows": {1, 2}}, [], {}),
    "nan-with-a-markdown-view": ({"rows": [float("nan")]}, [], {"markdown": "round5_board:view"}),
}


@pytest.mark.parametrize("case", list(SECTIONS))
def test_a_plugin_sections_failure_is_quarantined_with_its_plugin_and_the_build_succeeds(cli, registry, tmp_path,
                                                                                          monkeypatch, case):
    import sys
    import types

    import toy_plugin

    from metabench import plugins
    from metabench.hookspecs import hookimpl
    from metabench.report.leaderboard.sections import BoardSection

    data, tables, views = SECTIONS[case]
    module = types.ModuleType("round5_board")
    module.build = lambda inputs: BoardSection(data, paper_tables=tables)
    module.view = _markdown_view
    module.metabench_register_board_sections = hookimpl(
        lambda register: register("round5", "round5_board:build", **views))
    monkeypatch.setitem(sys.modules, "round5_board", module)
    with_section = plugins.load(extra_plugins=(toy_plugin, module), strict=False)
    monkeypatch.setattr(plugins, "default_registry", lambda: with_section)
    base, cand = _pair_of_runs(tmp_path)
    code, out = cli("leaderboard", "build", tmp_path / "base", tmp_path / "cand", "-o", tmp_path / "site",
                    "--resamples", "100")
    assert code == 0, out
    markdown = (tmp_path / "site" / "leaderboard.md").read_text()
    if case == "markdown-only-view":
        assert "rows: 2" in markdown and "quarantined" not in out, out
    else:
        assert "quarantined plugin 'round5_board'" in out and "returned data leaderboard.json cannot hold" in out, out
        assert "METABENCH_DISABLE_PLUGINS=round5_board" in out and "round5" not in markdown


# ------------------------------------------------------------------- 7. last round's leftovers

@pytest.mark.parametrize("models", [["majority", "majority"], ["majority", "lookup", "majority"]])
def test_the_same_model_listed_twice_is_an_error(cli, models):
    code, out = cli("--tasks", "toy_cls", *[arg for m in models for arg in ("--model", m)], "--dry-run")
    assert code == 2 and "models: 'majority' given twice" in out and "list each one once" in out, out


@pytest.mark.parametrize("seed", ["-1", "-100"])
def test_stats_calibrate_with_a_negative_seed_is_a_usage_error(cli, seed):
    code, out = cli("stats", "calibrate", "--seed", seed)
    assert code == 2 and f"--seed {seed}: must be 0 or more" in out, out


def _run_config(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


CONFIGS_TWICE = {
    "two-files": (["a.yaml", "b.yaml"], "--config given twice (a.yaml, b.yaml)"),
    "one-file-twice": (["a.yaml", "a.yaml"], "--config given twice (a.yaml, a.yaml)"),
    "three-files": (["a.yaml", "b.yaml", "a.yaml"], "--config given 3 times (a.yaml, b.yaml, a.yaml)"),
}


@pytest.mark.parametrize("form", ["separate", "equals", "abbreviated"])
@pytest.mark.parametrize("case", list(CONFIGS_TWICE))
def test_a_run_given_two_run_configs_is_an_error_naming_both(cli, tmp_path, case, form):
    """argparse kept the last --config and dropped the first file's settings without a word (a.yaml's tasks and
    models gone: 'a.yaml' twice ran, 'a.yaml b.yaml' said --tasks was required 'or in b.yaml')."""
    _run_config(tmp_path, "a.yaml", "tasks: toy_cls\nmodels: majority\n")
    _run_config(tmp_path, "b.yaml", "models: lookup\n")
    names, message = CONFIGS_TWICE[case]
    flag = "--conf" if form == "abbreviated" else "--config"
    args = [f"{flag}={n}" for n in names] if form == "equals" else [a for n in names for a in (flag, n)]
    code, out = cli("run", *args, "--dry-run")
    assert code == 2 and message in out and "a run reads one run config" in out, out
    assert "merge them into one file" in out and "plan:" not in out, out


def _a_file(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("the user's notes")
    return tmp_path / "notes.txt"


DRY_RUN_OUTPUTS = {
    "a-file": (lambda t: _a_file(t), "this is a file, not a folder"),
    "a-path-under-a-file": (lambda t: _a_file(t) / "runs", "{t}/notes.txt is a file, so no folder can be made under it"),
    "two-levels-under-a-file": (lambda t: _a_file(t) / "a" / "runs", "{t}/notes.txt is a file, so no folder can be made"),
    "a-link-to-a-file": (lambda t: (t / "out").symlink_to(_a_file(t)) or t / "out", "this is a file, not a folder"),
    "a-link-to-nothing": (lambda t: (t / "out").symlink_to(t / "gone") or t / "out",
                          "this is a symlink to nothing, not a folder"),
    "under-a-link-to-nothing": (lambda t: (t / "out").symlink_to(t / "gone") or t / "out" / "runs",
                                "{t}/out is a symlink to nothing, so no folder can be made under it"),
    "a-device": (lambda t: Path(os.devnull), "this is a device, pipe or socket, not a folder"),
}


@pytest.mark.parametrize("given", ["flag", "run-config"])
@pytest.mark.parametrize("case", list(DRY_RUN_OUTPUTS))
def test_a_dry_run_refuses_an_output_folder_that_cannot_be_one_as_the_run_does(cli, tmp_path, case, given):
    """The dry run planned jobs into -o notes.txt (or notes.txt/runs) and exit 0; the run itself then failed.
    Both refuse it now, naming the option and what is in the way, and the dry run still writes nothing."""
    output = DRY_RUN_OUTPUTS[case][0](tmp_path)
    message = DRY_RUN_OUTPUTS[case][1].format(t=tmp_path)
    if given == "flag":
        code, out = cli("--tasks", "toy_cls", "--model", "majority", "--dry-run", "-o", output)
    else:
        config = _run_config(tmp_path, "run.yaml", f"tasks: toy_cls\nmodels: majority\noutput: {output}\n")
        code, out = cli("run", "--config", config, "--dry-run")
    assert code == 2 and f"--output-dir {output}: {message}" in out and "choose a folder" in out, out
    assert "plan:" not in out, out
    if (tmp_path / "notes.txt").exists():
        assert (tmp_path / "notes.txt").read_text() == "the user's notes"
    assert not (tmp_path / "gone").exists()


@pytest.mark.parametrize("blocked", ["task-folder", "run-folder"])
def test_a_dry_run_plans_a_job_whose_folder_is_a_file_as_failing(cli, tmp_path, blocked):
    """A file where the job's task or run folder goes fails that job when it runs; the plan said 'run'."""
    out_dir = tmp_path / "out"
    path = out_dir / "toy_cls" if blocked == "task-folder" else out_dir / "toy_cls" / "majority"
    path.parent.mkdir(parents=True)
    path.write_text("mine")
    code, out = cli("--tasks", "toy_cls", "--model", "majority", "--dry-run", "-o", out_dir)
    assert code == 0 and "0 to run" in out and "1 failing" in out, out
    assert f"{path}: exists and is not a folder, so the run cannot be written there" in out, out
    assert path.read_text() == "mine"


EXPLORE_TWICE = {
    "same-path": lambda run: (run, run),
    "folder-and-its-results": lambda run: (run, run / "results.json"),
    "dotted-path": lambda run: (run, run.parent / "." / run.name),
    "through-a-link": lambda run: (run, (run.parent / "link").symlink_to(run) or run.parent / "link"),
}


@pytest.mark.parametrize("case", list(EXPLORE_TWICE))
def test_explore_given_one_run_twice_is_an_error(cli, tmp_path, case):
    """`explore RUN RUN` wrote a side-by-side page of a run against itself (no discordant item can exist) and
    exit 0; it is now an error naming the run and both ways on, and no page is written."""
    run = good_run(tmp_path / "runs" / "syn" / "m", n=10)
    first, second = EXPLORE_TWICE[case](run)
    code, out = cli("explore", first, second, "-o", tmp_path / "page.html")
    assert code == 2 and f"explore: the same run given twice ({run})" in out, out
    assert "explore it alone" in out and "give two runs of 'syn'" in out, out
    assert not (tmp_path / "page.html").exists()


def _mixed_source(folder: Path, files: dict[str, list[dict]], data_files: str) -> None:
    import json

    (folder / "data").mkdir(parents=True)
    for name, rows in files.items():
        (folder / "data" / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "mixed.yaml").write_text(f"""\
task: mixed
kind: classification
hf_dataset:
  path: json
  data_files: {data_files}
  columns: {{id: uid, text: sentence, label: label}}
splits: {{train: train, test: test}}
labels: {{names: [literal, metaphorical], positive: metaphorical}}
metrics: [accuracy]
""")


def _rows(prefix: str, n: int = 6, **changes) -> list[dict]:
    rows = [{"uid": f"{prefix}-{i}", "sentence": f"sentence {i} of {prefix}",
             "label": "metaphorical" if i % 3 == 0 else "literal"} for i in range(n)]
    return [{**row, **{key: change(i) for key, change in changes.items()}} for i, row in enumerate(rows)]


TWO_SPLITS = "{train: data/train.jsonl, test: data/test.jsonl}"
MIXED_ACROSS_FILES = {
    "label-ids-in-train-names-in-test": (
        {"train.jsonl": _rows("train", label=lambda i: i % 2), "test.jsonl": _rows("test")}, TWO_SPLITS,
        "column 'label' has different types in the source's files: int64 in data/train.jsonl, string in data/test.jsonl"),
    "id-numbers-in-train-text-in-test": (
        {"train.jsonl": _rows("train", uid=lambda i: i), "test.jsonl": _rows("test")}, TWO_SPLITS,
        "column 'uid' has different types in the source's files: int64 in data/train.jsonl, string in data/test.jsonl"),
    "text-numbers-in-train": (
        {"train.jsonl": _rows("train", sentence=lambda i: i), "test.jsonl": _rows("test")}, TWO_SPLITS,
        "column 'sentence' has different types in the source's files: int64 in data/train.jsonl"),
    "two-files-of-one-split": (
        {"train_a.jsonl": _rows("a", label=lambda i: i % 2), "train_b.jsonl": _rows("b"), "test.jsonl": _rows("test")},
        "{train: [data/train_a.jsonl, data/train_b.jsonl], test: data/test.jsonl}",
        "column 'label' has different types in the source's files: int64 in data/train_a.jsonl, string in "
        "data/train_b.jsonl"),
}


@pytest.mark.parametrize("case", list(MIXED_ACROSS_FILES))
def test_a_hf_dataset_column_of_different_types_in_different_files_is_named(tmp_path, monkeypatch, case):
    """Within one file a column of mixed types is read as Json and refused (issue 36); across files, datasets
    fixes each column's type from the first file and fails on the next one as 'DatasetGenerationError: An error
    occurred while generating the dataset', naming neither column nor file. The job now fails naming both."""
    pytest.importorskip("datasets")
    import types

    from metabench import plugins
    from metabench.hookspecs import hookimpl
    from metabench.runner import RunOptions, run

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    files, data_files, message = MIXED_ACROSS_FILES[case]
    _mixed_source(tmp_path / "tasks", files, data_files)
    module = types.ModuleType("round5_mixed_tasks")
    module.metabench_register_tasks = hookimpl(lambda register: register(str(tmp_path / "tasks")))
    (outcome,) = run(plugins.load(extra_plugins=(module,)), "mixed", ["majority"],
                     RunOptions(output_dir=tmp_path / "runs", progress=False))
    assert outcome.status == "failed" and f"{tmp_path / 'tasks' / 'mixed.yaml'}:3: hf_dataset 'json': " in outcome.message
    assert message in outcome.message and "DatasetGenerationError" not in outcome.message, outcome.message
    assert "hint: make '" in outcome.message and "' one type in every file" in outcome.message, outcome.message


BOGUS_REGISTRIES = {
    "a-name": lambda: "toy",
    "a-number": lambda: 42,
    "a-dict": lambda: {"tasks": {}},
    "an-object": lambda: object(),
    "the-plugins-module": lambda: __import__("metabench.plugins", fromlist=["load"]),
    "the-load-function": lambda: __import__("metabench.plugins", fromlist=["load"]).load,
}


@pytest.mark.parametrize("function", ["evaluate", "compare"])
@pytest.mark.parametrize("case", list(BOGUS_REGISTRIES))
def test_the_python_api_refuses_a_registry_that_is_not_one(tmp_path, function, case):
    """`evaluate(..., registry="toy")` was AttributeError: 'str' object has no attribute 'task_dirs' from deep in
    the task index; now a MetabenchError naming the argument, what it got and the fix, before anything is written."""
    import metabench
    from metabench.errors import MetabenchError

    bogus = BOGUS_REGISTRIES[case]()
    with pytest.raises(MetabenchError) as caught:
        if function == "evaluate":
            metabench.evaluate("toy_cls", "majority", output_dir=tmp_path / "out", progress=False, registry=bogus)
        else:
            metabench.compare(good_run(tmp_path / "runs" / "syn" / "m"), registry=bogus)
    assert "registry: expected a metabench Registry (what metabench.plugins.load() returns), got " \
        f"{type(bogus).__name__}" in str(caught.value)
    assert "leave registry out" in caught.value.hint
    assert not (tmp_path / "out").exists()
