"""Resolution (mirror, cache), hash checks, missing-file messages, the verify framework and `data verify`."""

from __future__ import annotations

import argparse
import gzip
import hashlib
from pathlib import Path

import pytest

from metabench.commands import data as commands
from metabench.data.context import DataContext
from metabench.data.items import TaggedSentence
from metabench.data.readers import read_conll
from metabench.data.resolve import cache_dir, download_allowed, locate, resolve_file, sha256_of
from metabench.data.spec import DataFile, DatasetSpec
from metabench.data.verify import CheckResult, expect, parse_split_key, verify_dataset
from metabench.errors import DataError

CONLL = (Path(__file__).parent / "fixtures" / "conll_ok.tsv").read_bytes()
SHA = hashlib.sha256(CONLL).hexdigest()


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    for name in ("METABENCH_DATA_DIR", "METABENCH_DATA_URL", "METABENCH_ALLOW_DOWNLOAD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))


def _put(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_mirror_from_argument_and_env(tmp_path, monkeypatch):
    declared = DataFile("toy/a.tsv", SHA)
    local = _put(tmp_path / "mirror", "toy/a.tsv", CONLL)
    assert resolve_file(declared, tmp_path / "mirror") == local
    monkeypatch.setenv("METABENCH_DATA_DIR", str(tmp_path / "mirror"))
    assert resolve_file(declared) == local.resolve()


def test_cache_is_used_when_no_mirror_and_mirror_wins_over_cache(tmp_path, monkeypatch):
    declared = DataFile("toy/b.tsv", SHA)
    cached = _put(cache_dir(), "toy/b.tsv", CONLL)
    assert cache_dir() == tmp_path / "cache" / "data"
    assert resolve_file(declared) == cached
    mirrored = _put(tmp_path / "mirror", "toy/b.tsv", CONLL)
    assert resolve_file(declared, tmp_path / "mirror") == mirrored
    assert locate(declared, tmp_path / "mirror") == ("mirror", mirrored)


def test_hash_mismatch_names_file_and_both_hashes(tmp_path):
    declared = DataFile("toy/c.tsv", SHA)
    _put(tmp_path / "m", "toy/c.tsv", CONLL + b"x")
    with pytest.raises(DataError) as err:
        resolve_file(declared, tmp_path / "m")
    message = err.value.message
    assert "toy/c.tsv" in message and SHA in message
    assert hashlib.sha256(CONLL + b"x").hexdigest() in message


def test_missing_file_says_where_it_looked_and_how_to_fetch(tmp_path):
    declared = DataFile("toy/d.tsv", SHA)
    with pytest.raises(DataError) as err:
        resolve_file(declared, tmp_path / "m", dataset="toy")
    assert str(tmp_path / "m" / "toy/d.tsv") in err.value.message
    assert str(cache_dir() / "toy/d.tsv") in err.value.message
    assert "metabench data pull toy" in err.value.hint


def test_gzip_mirror_file_is_hashed_decompressed(tmp_path):
    declared = DataFile("toy/e.tsv.gz", SHA, compressed="gzip")
    path = _put(tmp_path / "m", "toy/e.tsv.gz", gzip.compress(CONLL))
    assert sha256_of(path, "gzip") == SHA
    assert resolve_file(declared, tmp_path / "m") == path
    assert len(list(read_conll(path, compressed="gzip"))) == 3


def test_corrupt_gzip_is_a_data_error(tmp_path):
    declared = DataFile("toy/f.tsv.gz", SHA, compressed="gzip")
    _put(tmp_path / "m", "toy/f.tsv.gz", gzip.compress(CONLL)[:-12])
    with pytest.raises(DataError, match="cannot be read"):
        resolve_file(declared, tmp_path / "m")


def test_download_allowed_env(monkeypatch):
    assert download_allowed()
    monkeypatch.setenv("METABENCH_ALLOW_DOWNLOAD", "0")
    assert not download_allowed()


def test_context_records_used_files_and_rejects_undeclared(tmp_path):
    spec = _spec()
    _put(tmp_path / "m", "toy/a.tsv", CONLL)
    ctx = DataContext(spec, tmp_path / "m")
    assert ctx.path("toy/a.tsv").read_bytes() == CONLL
    assert ctx.used == {"toy/a.tsv": SHA}
    with pytest.raises(KeyError, match="does not declare"):
        ctx.path("toy/other.tsv")


# --- the verify framework -------------------------------------------------------------------------------


def _loader(ctx, split, lang="en"):
    return [
        TaggedSentence(f"toy-{line}", tuple(t[0] for t in toks), tuple(t[1] for t in toks), lang, "toy")
        for line, toks in read_conll(ctx.path("toy/a.tsv"))
    ]


def _checker(ctx):
    items = ctx.load("train")
    return [expect("tokens train", 8, sum(len(i.words) for i in items)), expect("metaphor tokens", 99, 3)]


def _spec(**counts) -> DatasetSpec:
    return DatasetSpec(
        "toy", (DataFile("toy/a.tsv", SHA),), f"{__name__}:_loader", ("train", "test"),
        args={"lang": ("en", "es")}, licence="CC0", counts=counts,
    )


def test_check_result_ok_is_computed():
    assert CheckResult("x", 1, 1).ok and not CheckResult("x", 1, 2).ok
    assert CheckResult("x", "runs", "error", ok=False).ok is False


def test_parse_split_key_matches_spec_values():
    assert parse_split_key("test:lang=es", _spec()) == ("test", {"lang": "es"})
    assert parse_split_key("train", _spec()) == ("train", {})


def test_verify_counts_items_and_checker(tmp_path):
    _put(tmp_path / "m", "toy/a.tsv", CONLL)
    spec = _spec(items={"train": 3, "test:lang=es": 4}, verify=f"{__name__}:_checker")
    report = verify_dataset(spec, tmp_path / "m")
    assert report.files_ok
    assert [(c.name, c.ok) for c in report.checks] == [
        ("items train", True), ("items test:lang=es", False), ("tokens train", True), ("metaphor tokens", False)
    ]
    assert not report.ok


def test_verify_reports_missing_files_and_skips_counts(tmp_path):
    report = verify_dataset(_spec(items={"train": 3}), tmp_path / "empty")
    assert [f.status for f in report.files] == ["missing"] and report.checks == []
    assert report.skipped == "files missing or corrupt" and not report.ok


def test_verify_broken_checker_is_a_failed_check(tmp_path):
    _put(tmp_path / "m", "toy/a.tsv", CONLL)
    report = verify_dataset(_spec(verify="no.such.module:fn"), tmp_path / "m")
    assert len(report.checks) == 1 and not report.checks[0].ok
    assert "cannot be imported" in report.checks[0].detail


def _verify_args(tmp_path, **extra):
    base = {"names": [], "tasks": None, "files": False, "no_counts": False, "data_dir": tmp_path / "m"}
    return argparse.Namespace(**{**base, **extra})


def test_data_verify_command_prints_table_and_exit_code(tmp_path, monkeypatch, capsys):
    _put(tmp_path / "m", "toy/a.tsv", CONLL)
    good = _spec(items={"train": 3})
    monkeypatch.setattr(commands, "_specs", lambda names=None: [good])
    assert commands.cmd_verify(_verify_args(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "toy" in out and "1/1 ok" in out and "items train" in out and "all datasets verified" in out

    bad = _spec(items={"train": 5})
    monkeypatch.setattr(commands, "_specs", lambda names=None: [bad])
    assert commands.cmd_verify(_verify_args(tmp_path)) == 1
    assert "FAIL" in capsys.readouterr().out


def test_data_ls_and_stats_commands(tmp_path, monkeypatch, capsys):
    _put(tmp_path / "m", "toy/a.tsv", CONLL)
    monkeypatch.setattr(commands, "_specs", lambda names=None: [_spec()])
    assert commands.cmd_ls(argparse.Namespace(data_dir=tmp_path / "m")) == 0
    assert "mirror 1/1" in capsys.readouterr().out
    args = argparse.Namespace(name="toy", splits=None, args=["lang=es"], data_dir=tmp_path / "m")
    assert commands.cmd_stats(args) == 0
    out = capsys.readouterr().out
    assert "Tables 3/4" in out and "train metaphor tokens" not in out and "test" in out


def test_add_commands_parses_verbs():
    parser = argparse.ArgumentParser()
    commands.add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["data", "verify", "toy", "--data-dir", "/x"])
    assert args.func is commands.cmd_verify and args.names == ["toy"] and args.data_dir == Path("/x")
    args = parser.parse_args(["data", "stats", "toy", "--args", "lang=es", "--split", "test"])
    assert args.func is commands.cmd_stats and args.args == ["lang=es"] and args.splits == ["test"]
    assert not hasattr(parser.parse_args(["data", "ls"]), "data_dir")


def test_data_verify_shows_both_hashes_of_a_corrupt_file(tmp_path, monkeypatch, capsys):
    _put(tmp_path / "m", "toy/a.tsv", CONLL + b"extra")
    monkeypatch.setattr(commands, "_specs", lambda names=None: [_spec(items={"train": 3})])
    assert commands.cmd_verify(_verify_args(tmp_path)) == 1
    out = capsys.readouterr().out
    assert "mismatch" in out and SHA in out and hashlib.sha256(CONLL + b"extra").hexdigest() in out
    assert "files missing or corrupt" in out


def test_processes_flushing_stamps_side_by_side_keep_each_others(tmp_path, monkeypatch):
    """Each worker of `--launcher processes` verifies other files; a flush merges into the file instead of
    replacing it with one process's view (which lost the other workers' stamps: their files were re-hashed)."""
    import json
    import multiprocessing

    from metabench.data import resolve

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(resolve, "_stamps", None)
    monkeypatch.setattr(resolve, "_added", {})
    files = []
    for n in range(6):
        path = tmp_path / f"f{n}.txt"
        path.write_text(f"file {n}\n")
        files.append((path, DataFile(path.name, hashlib.sha256(path.read_bytes()).hexdigest())))

    def verify_some(chunk):
        for path, declared in chunk:
            resolve.verify_file(path, declared)
        resolve.flush_stamps()

    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=verify_some, args=(files[i::3],)) for i in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
        assert worker.exitcode == 0
    stamps = json.loads((tmp_path / "cache" / "verified-files.json").read_text())
    assert set(stamps) == {str(path) for path, _ in files}
    assert all(stamps[str(path)][-1] == declared.sha256 for path, declared in files)
