"""The run folder: ``results.json`` and ``samples.jsonl`` written as one unit, never mixed, never lost.

``results.json`` is the record :class:`metabench.run_record.RunRecord` defines (``schema_version``, every field
documented in docs/results-format.md), validated with it when written and when read; the reporter reads only
these files, so runs made elsewhere or by older versions stay comparable. ``samples.jsonl`` has item ids, gold answers, predictions and per-item
scores — never the dataset's text — so runs can be published without redistributing data.

Why the store works this way (docs/reliability.md has the guarantees):

- A run's folder name says what changes its answer set besides the model arguments already in the model
  slug: ``@seeds=…`` when the seeds are not the task's protocol seeds and ``@limit=N`` when only the first N
  test items were scored. A quick ``--limit 50`` run therefore never lands on the full run's folder.
- Both files are written into a hidden sibling folder, then renamed into place; the folder they replace is
  first renamed aside (``.NAME.prev``) and deleted last. A process killed at any point leaves the previous
  complete run or the new one; readers fall back to ``.NAME.prev`` in the one window where the folder is
  missing, and the next writer repairs it.
- ``results.json`` records the sha256 of ``samples.jsonl``, checked by every reader, so files of different
  runs copied together by hand are refused instead of compared.
- Writers of one task folder take an exclusive lock on it (``flock`` on the folder itself: nothing is left
  behind when a process dies) for the few milliseconds of the swap.
- A finished run is replaced only with ``--overwrite``, or by a run whose samples are identical (a re-run
  that changes no answer loses nothing).
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import io
import json
import os
import platform
import secrets
import shutil
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from itertools import repeat
from pathlib import Path

from . import limits
from .json_input import BadJson, decode_record, decode_row
from .version import __version__
from .bounded_read import read_bytes, read_text
from .errors import ExplainedError, MetabenchError, RunFileError
from .filelock import locked
from .run_record import SCHEMA_VERSION, RunRecord, check_written
from .safe_paths import inside

#: The runs committed with the repository, relative to its root: a run of every task, read where the user gave no
#: runs (``power``'s baseline, a dry run's split sizes and training speed on a fresh clone).
COMMITTED_RUNS = Path("leaderboard/runs")
RESULTS = "results.json"
SAMPLES = "samples.jsonl"
#: The same bytes gzipped (``gzip -n samples.jsonl``): how a published run keeps a large samples file small.
#: Readers decompress it and check the digest results.json recorded for the uncompressed text.
SAMPLES_GZ = "samples.jsonl.gz"
DIGEST = "samples_sha256"
PREVIOUS = ".prev"
_NEW = ".new-"
#: How long a writer waits for another writer of the same task folder (the swap itself takes milliseconds).
LOCK_WAIT_S = 60.0
_PACKAGES = ("torch", "transformers", "lm_eval", "datasets", "pluggy", "pyyaml", "scipy", "numpy", "vllm")


def run_name(model_slug: str, seeds: list[int], protocol_seeds: list[int], limit: int | None, repeat: int = 1) -> str:
    """The folder name of a run: the model slug, plus what else changes the answer set.

    ``limit`` is the effective limit (None when it kept every test item), so ``--limit 5000`` on a
    3,630-item split names the full run. ``repeat``: ``--repeat`` N > 1 scores majority answers, another
    answer set (``@repeat=N``).
    """
    name = model_slug
    if list(seeds) != list(protocol_seeds):
        name += f"@seeds={seed_text(seeds)}"
    if limit is not None:
        name += f"@limit={limit}"
    if repeat > 1:
        name += f"@repeat={repeat}"
    return name


def seed_text(seeds: list[int]) -> str:
    """A seed list as folder names and messages write it: ``0-4`` for a contiguous ascending range of three or more, else ``0,2,7``."""
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(str(s) for s in seeds)


def check_writable(folder: Path) -> None:
    """Fail before any work when the output folder cannot be written."""
    if folder.exists() and not folder.is_dir():
        raise MetabenchError(f"--output-dir {folder}: this is a file, not a folder",
                             hint="choose a folder, e.g. --output-dir ./runs")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-test-{os.getpid()}-{secrets.token_hex(4)}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        os.unlink(probe)
    except OSError as exc:
        raise MetabenchError(
            f"--output-dir {folder}: cannot write there ({exc.strerror or exc})",
            hint="choose a folder you can write to, e.g. --output-dir ./runs",
        ) from None


def check_run_dir(run_dir: Path) -> None:
    """Fail before any work when the run's folder (or its task folder) exists as something other than a folder,
    or leads out of the output folder ``OUTPUT/<task>/<name>`` through a symlink (its writes and its deletes of
    stale copies would land elsewhere)."""
    inside(run_dir.parent.parent, run_dir, action="write a run into")
    for path in (run_dir.parent, run_dir):
        if path.exists() and not path.is_dir():
            raise MetabenchError(f"{path}: exists and is not a folder, so the run cannot be written there",
                                 hint="move that file away, or choose another --output-dir")


#: The options of every sample line: ``json.dumps(sample, ensure_ascii=False, sort_keys=True, allow_nan=False)``.
def _sample_encoder() -> json.JSONEncoder:
    return json.JSONEncoder(ensure_ascii=False, sort_keys=True, allow_nan=False)


def _line_encoder():
    """One C encoder for every sample line (~540k in `--tasks all`): ``JSONEncoder.encode`` builds a new one
    per call, which cost as much as encoding the line. This is the one it builds, with the same options, so
    the bytes are the same. Circular references are not checked: sample rows come from JSON values (with
    the check, a failed line would leave its marks behind for the next). None where the C accelerator is
    missing."""
    encoder = _sample_encoder()
    make = getattr(json.encoder, "c_make_encoder", None)  # CPython's accelerator (typeshed does not declare it)
    if make is None:
        return None
    return make(None, encoder.default, json.encoder.encode_basestring, None, encoder.key_separator,
                encoder.item_separator, encoder.sort_keys, encoder.skipkeys, encoder.allow_nan)


_ENCODE_LINE = _line_encoder()


def samples_text(samples: list[dict]) -> str:
    """samples.jsonl's text: one JSON object a line, keys sorted, non-ASCII kept."""
    if not samples:
        return ""
    if _ENCODE_LINE is None:
        encode = _sample_encoder().encode
        return "".join([encode(s) + "\n" for s in samples])
    # the encoder returns each line in pieces; map() keeps the loop in C
    return "\n".join(map("".join, map(_ENCODE_LINE, samples, repeat(0)))) + "\n"


def golds_sha256(pairs) -> str:
    """sha256 of a test split's (item id, gold answer) pairs, sorted by id: recorded in results.json at run
    time (``data.splits.test.golds_sha256``) so a reporter can tell, from the run files alone, that the golds
    in samples.jsonl are the ones the dataset gave (golds are encoded as sample lines encode them)."""
    encode = _sample_encoder().encode
    lines = sorted(f"{item_id}\t{encode(gold)}" for item_id, gold in pairs)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SealedRun:
    """A run ready to be written: its record with the samples' digest set, results.json's bytes encoded from it and
    samples.jsonl's bytes. Made by :func:`seal` (metabench's launchers, ``merge-seeds``) or :func:`write_run` (the
    edge: a caller's record or dict); :func:`write` writes nothing else."""

    record: RunRecord
    body: bytes
    samples: bytes


def seal(record: RunRecord, samples: list[dict] | bytes, *, started: float | None = None,
         where: Path | None = None) -> SealedRun:
    """The run as metabench's launchers write it: the samples' digest set on a copy of ``record``, the record held
    to the whole :class:`metabench.run_record.RunRecord` (:func:`metabench.run_record.check_written`: every field
    written always present, none undeclared), the time since ``started`` added to its ``write_s`` and
    ``total_s``, then encoded. A parallel launcher's workers seal their jobs' runs, so the driver, which writes
    every run folder, only writes bytes: checking and encoding 442 records one after another was most of its work
    in a fully cached ``--tasks all``, the workers waiting on it. ``where``: the run's folder, named by errors.
    ``samples``: the per-item rows, or samples.jsonl's bytes as :func:`samples_text` encoded them."""
    lines = _lines(samples)
    record = _with_digest(record, lines)
    check_written(record, where / RESULTS if where is not None else None)
    if started is not None:
        _add_time(record, time.perf_counter() - started)
    return SealedRun(record, _body(where, record), lines)


def _lines(samples: list[dict] | bytes) -> bytes:
    return samples if isinstance(samples, bytes) else samples_text(samples).encode("utf-8")


def _with_digest(record: RunRecord, lines: bytes) -> RunRecord:
    """A copy of ``record`` with the samples' digest set."""
    record = record.model_copy()
    record.samples_sha256 = hashlib.sha256(lines).hexdigest()
    return record


def _add_time(record: RunRecord, spent: float) -> None:
    timings = record.timings
    if timings is None:  # a record a caller wrote without timings (a test's): it has none to add to
        return
    timings.write_s = (timings.write_s or 0.0) + spent
    timings.total_s = (timings.total_s or 0.0) + spent


def write_run(run_dir: Path, results: RunRecord | dict, samples: list[dict] | bytes, *, overwrite: bool = False,
              started: float | None = None, durable: bool = True) -> RunRecord:
    """Write a run given as a record, or as results.json's JSON (the edge: a test's or a script's dict, a migrated
    run), to ``run_dir`` (:func:`write`); the record written is returned. It is checked as the readers check it
    (:class:`RunFileError` naming the field), not held to the whole model as metabench's own runs are
    (:func:`seal`). ``started`` (a ``time.perf_counter()`` reading taken when writing began): the time up to
    encoding results.json is added to the record's ``timings`` (``write_s`` and ``total_s``)."""
    record = results if isinstance(results, RunRecord) else check_results(results, run_dir / RESULTS)
    check_run_dir(run_dir)
    lines = _lines(samples)
    record = _with_digest(record, lines)
    if started is not None:
        _add_time(record, time.perf_counter() - started)
    write(run_dir, SealedRun(record, _body(run_dir, record), lines), overwrite=overwrite, durable=durable)
    return record


def write(run_dir: Path, sealed: SealedRun, *, overwrite: bool = False, durable: bool = True) -> None:
    """Write a sealed run to ``run_dir`` as one unit (see the module docstring for the protocol). The record's
    digest is compared with the samples' first: a launcher bug must not leave a run the readers would refuse.

    ``durable=False`` leaves flushing to the caller, who calls :func:`sync` once when its last run is written
    (``metabench run`` does): four fsyncs per run folder cost ~5 ms each here, seconds over ``--tasks all``.
    A killed process still leaves the previous run or the new one (renames are atomic whether or not the
    files were flushed); only an operating-system crash before :func:`sync` can leave a run written since
    then damaged (refused by every reader: the samples digest) or missing. Replacing an existing run folder
    is always flushed first, so not even an OS crash loses a run that was complete before.
    """
    check_run_dir(run_dir)
    digest = sealed.record.samples_sha256
    if digest != hashlib.sha256(sealed.samples).hexdigest():
        raise MetabenchError(f"{run_dir / RESULTS}: the sealed record's {DIGEST} is not the samples' digest",
                             hint="this is a bug in a launcher: report it with the command")
    parent = run_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    with locked(parent, wait_s=LOCK_WAIT_S, timed_out=lambda: _busy(parent)):
        _repair(run_dir)
        _check_replaceable(run_dir, digest, overwrite)
        durable = durable or run_dir.exists()  # a complete run is only ever replaced by a flushed one
        staging = parent / f".{run_dir.name}{_NEW}{os.getpid()}-{secrets.token_hex(4)}"
        os.mkdir(staging)
        try:
            _write_file(staging / SAMPLES, sealed.samples, durable)
            _write_file(staging / RESULTS, sealed.body, durable)
        except BaseException:  # an interrupt or a full disk: the staging folder goes, the old run stays
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if durable:
            _fsync_dir(staging)
        previous = _aside(run_dir)
        if run_dir.exists():
            os.rename(run_dir, previous)
        os.rename(staging, run_dir)
        if durable:
            _fsync_dir(parent)
        shutil.rmtree(previous, ignore_errors=True)


def sync() -> None:
    """Flush every run written with ``durable=False`` to disk: one ``sync(2)`` instead of four fsyncs a run."""
    os.sync()


def _body(run_dir: Path | None, record: RunRecord) -> bytes:
    """results.json's bytes: the record serialised (:meth:`RunRecord.as_json`), keys sorted, 2-space indents."""
    try:
        return (json.dumps(record.as_json(), indent=2, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n").encode()
    except ValueError:
        raise MetabenchError(f"{run_dir or 'the run'}: a metric is NaN or infinite; refusing to record it",
                             hint="this is a bug in a metric or adapter: report it with the task and model") from None


def _aside(run_dir: Path) -> Path:
    return run_dir.parent / f".{run_dir.name}{PREVIOUS}"


def _write_file(path: Path, data: bytes, durable: bool = True) -> None:
    """Create ``path`` with the process umask (not tempfile's 0600); ``durable``: flush it to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _busy(folder: Path) -> MetabenchError:
    return MetabenchError(
        f"{folder}: another metabench process has been writing a run here for {LOCK_WAIT_S:.0f} s",
        hint="wait for it to finish, or write this run elsewhere with --output-dir",
    )


def _repair(run_dir: Path) -> None:
    """Under the lock: finish what a killed writer left (a folder set aside, a half-written staging folder)."""
    previous = _aside(run_dir)
    if previous.is_dir():
        if run_dir.exists():
            shutil.rmtree(previous)
        else:
            os.rename(previous, run_dir)
    for stale in run_dir.parent.glob(f".{_glob_escape(run_dir.name)}{_NEW}*"):
        shutil.rmtree(stale, ignore_errors=True)


def _glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _check_replaceable(run_dir: Path, digest: str, overwrite: bool) -> None:
    if overwrite or not run_dir.exists():
        return
    entries = sorted(p.name for p in run_dir.iterdir())
    if not entries:
        return
    try:
        old = json.loads(read_text(run_dir / RESULTS))
    except (OSError, ValueError, ExplainedError):
        old = None
    if isinstance(old, dict) and old.get(DIGEST) == digest and set(entries) <= {RESULTS, SAMPLES, SAMPLES_GZ}:
        return  # the same answers: replacing it loses nothing
    what = (f"a finished run (created {old.get('created', '?')}, {old.get('n_items', '?')} items, seeds {old.get('seeds', '?')})"
            if isinstance(old, dict) and RESULTS in entries else f"files that are not a run ({', '.join(entries[:3])})")
    raise MetabenchError(
        f"{run_dir}: already holds {what} with different answers; refusing to replace it",
        hint="pass --overwrite to replace it, or write this run elsewhere with --output-dir",
    )


def resolve(run_dir: Path) -> Path:
    """The folder holding a run's files: ``run_dir``, or its set-aside copy while a writer was killed mid-swap."""
    if not run_dir.exists() and _aside(run_dir).is_dir():
        return _aside(run_dir)
    return run_dir


def run_folders(root: Path) -> list[Path]:
    """Run folders below ``root``, sorted; staging folders and set-aside copies are skipped, except a copy set
    aside by a writer killed mid-swap (its run folder is missing, so the copy is the run)."""
    found = []
    for results in root.rglob(RESULTS):
        folder = results.parent
        hidden = [part for part in folder.relative_to(root).parts if part.startswith(".")]
        if not hidden:
            found.append(folder)
        elif hidden == [folder.name] and folder.name.endswith(PREVIOUS):
            if resolve(folder.parent / folder.name[1 : -len(PREVIOUS)]) == folder:
                found.append(folder)
    return sorted(found)


def read_results(run_dir: Path) -> dict:
    """A run's results.json (its folder or the file), as JSON, after checking it is a :class:`RunRecord`."""
    return read_record(run_dir).raw


def read_record(run_dir: Path) -> RunRecord:
    """A run's results.json (its folder or the file) as a :class:`RunRecord` (``.raw``: the JSON object): a file
    that is not one is a :class:`RunFileError` naming the file, the field and the fix."""
    path = resolve(run_dir) / RESULTS if not run_dir.is_file() else run_dir
    try:
        data = decode_record(read_text(path, error=RunFileError))
    except FileNotFoundError:
        raise RunFileError(f"{path}: no results file here", hint="pass a run folder written by `metabench run`") from None
    except IsADirectoryError:
        raise RunFileError(f"{path}: is a folder, not a results file", hint="pass a run folder written by `metabench run`") from None
    except UnicodeDecodeError:
        raise RunFileError(f"{path}: not UTF-8 text", hint="pass a results.json written by `metabench run`") from None
    except json.JSONDecodeError as exc:
        raise RunFileError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})",
                             hint="the file is damaged: re-run the evaluation (answers are cached)") from None
    except BadJson as exc:
        raise RunFileError(f"{path}: holds {exc}",
                             hint="re-run the evaluation; if it recurs, a metric is broken") from None
    if not isinstance(data, dict):
        raise RunFileError(f"{path}: expected a JSON object, found {type(data).__name__}",
                             hint="pass a results.json written by `metabench run`")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise RunFileError(
            f"{path}: results schema version {version!r}, this metabench reads version {SCHEMA_VERSION}",
            hint="upgrade metabench, or re-run the evaluation",
        )
    return check_results(data, path)


def check_results(data: dict, path: Path) -> RunRecord:
    """``data`` validated as a :class:`RunRecord` (every field a reader relies on, with its type), so a damaged
    file is one message naming the file, the field and the fix, not a crash in a report."""
    return RunRecord.read(data, path)


def _check_sample(row: object, path: Path, number: int) -> dict:
    """``row`` (a decoded samples.jsonl line), refused unless it is a sample row."""
    hint = "re-run the evaluation (answers are cached)"
    if not isinstance(row, dict):
        raise RunFileError(f"{path}:{number}: expected a JSON object, found {type(row).__name__}", hint=hint)
    for key, kind in (("id", (str, int)), ("seed", int), ("scores", dict)):
        if not isinstance(row.get(key), kind) or isinstance(row.get(key), bool):
            raise RunFileError(f"{path}:{number}: field '{key}' must be a {kind.__name__ if isinstance(kind, type) else 'str or int'}"
                                 f" ({'missing' if key not in row else repr(row[key])[:40]})", hint=hint)
    return row


def read_samples(run_dir: Path, results: RunRecord | dict | None = None) -> list[dict]:
    """The samples of a run, after checking they are the ones its results.json was written with.

    Read as a stream, one line at a time, and bounded twice: by the bytes any file read from a user may hold
    (decompressed bytes too, for ``samples.jsonl.gz``) and by the rows the run itself declares, ``n_items`` ×
    its seeds (and at most ``limits.SAMPLE_ROWS``), blank lines included. A small gzip file that expands to
    millions of short valid lines, or of newlines, is refused at the first line too many, before those rows fill
    the memory or the reads take minutes."""
    folder = resolve(run_dir)
    results = results if results is not None else read_record(folder)
    if isinstance(results, RunRecord):  # what the samples are held to: the record's digest, items and seeds
        results = {DIGEST: results.samples_sha256, "n_items": results.n_items, "seeds": results.seeds}
    path = folder / SAMPLES
    if not path.exists() and (folder / SAMPLES_GZ).exists():
        path = folder / SAMPLES_GZ
    try:
        raw = read_bytes(path, error=RunFileError)
    except FileNotFoundError:
        raise RunFileError(f"{path}: missing: results.json has no samples.jsonl beside it",
                             hint="paired tests need the per-item samples; copy the whole run folder") from None
    expected = results.get(DIGEST)
    if expected is None:
        raise RunFileError(
            f"{folder / RESULTS}: field '{DIGEST}' is missing (written before run files were checked as a unit)",
            hint=f"add it with `python tools/migrate_runs.py {folder.parent.parent}`, or re-run the evaluation",
        )
    stream = gzip.GzipFile(fileobj=io.BytesIO(raw)) if path.name == SAMPLES_GZ else io.BytesIO(raw)
    digest, lines = hashlib.sha256(), []
    cap, most_rows = int(limits.INPUT_BYTES.value), _most_rows(results, folder, path)
    total = number = 0
    while True:
        line = _next_line(stream, cap + 1 - total, path)
        if not line:
            break
        number, total = number + 1, total + len(line)
        if total > cap:
            raise RunFileError(f"{path}: decompresses to more than {cap:,} bytes, the limit on the {limits.INPUT_BYTES.name}",
                               hint=f"check that this is the file you meant; raise the limit with {limits.INPUT_BYTES.env}=BYTES")
        if number > most_rows.count:  # blank lines count: a gzip of newlines is millions of reads, not zero rows
            _refuse_extra_line(path, number, line, digest.hexdigest() == expected, most_rows)
        digest.update(line)
        if line.strip():
            lines.append((number, line))
    if digest.hexdigest() != expected:
        raise RunFileError(
            f"{path}: does not match the '{DIGEST}' in results.json beside it; the two files come from different runs",
            hint="copy both files of one run folder together, or re-run the evaluation",
        )
    return _sample_rows(lines, path)


def _sample_rows(lines: list[tuple[int, bytes]], path: Path) -> list[dict]:
    """The rows of ``lines`` ((line number, bytes) pairs), checked. Decoded as one JSON array, one parser call
    instead of one per line (a samples file has up to tens of thousands of lines, and the leaderboard reads
    800 files); where that fails, or a line held more than one value, line by line, for the error that names
    the line."""
    text = b",".join(line for _, line in lines).decode("utf-8", errors="replace")
    try:
        rows = decode_row(f"[{text}]")
    except ValueError:  # not JSON, or a value no run file holds (json_input.BadJson)
        rows = None
    if not isinstance(rows, list) or len(rows) != len(lines):
        return [_sample_row(line, path, number) for number, line in lines]
    for row, (number, _) in zip(rows, lines):
        _check_sample(row, path, number)
    return rows


def _refuse_extra_line(path: Path, number: int, line: bytes, prefix_matches: bool, most_rows: "_RowBound"):
    """Refuse ``line``, the first past the bound, without reading on. When the lines before it are exactly the
    ones ``samples_sha256`` was recorded for, the file is the run's samples with lines added after them (a
    trailing blank line, another run's rows appended): that is the digest's finding, and says so; otherwise the
    file holds more lines than its run can have."""
    kind = "a sample row" if line.strip() else "a blank line"
    if prefix_matches:
        raise RunFileError(f"{path}:{number}: does not match the '{DIGEST}' in results.json beside it: its first "
                           f"{number - 1:,} lines are the samples that digest was recorded for, and more follow "
                           f"(line {number} is {kind})",
                           hint="copy both files of one run folder together, or re-run the evaluation")
    kind = "sample rows" if line.strip() else "lines (blank ones count)"
    raise RunFileError(f"{path}:{number}: more {kind} than {most_rows.what}", hint=most_rows.hint)


class _RowBound:
    """How many sample rows a run may hold, and how to say so when it holds more."""

    def __init__(self, count: int, what: str, hint: str):
        self.count, self.what, self.hint = count, what, hint


def _most_rows(results: dict, folder: Path, path: Path) -> _RowBound:
    """The run's own bound, ``n_items`` × seeds (every reader expects one row per item and seed), within
    ``limits.SAMPLE_ROWS`` (a results.json may claim any ``n_items``)."""
    limit = limits.SAMPLE_ROWS
    cap = int(limit.value)
    over_limit = _RowBound(cap, f"{cap:,}, the limit on the {limit.name}",
                           f"check that this is the run you meant; raise the limit with {limit.env}=ROWS")
    n_items = results.get("n_items")
    if isinstance(n_items, bool) or not isinstance(n_items, int) or n_items < 0:
        raise RunFileError(f"{folder / RESULTS}: field 'n_items' must be a whole number of 0 or more ({n_items!r}); "
                           f"it bounds the rows of {path.name}", hint="re-run the evaluation (answers are cached)")
    declared = n_items * len(results["seeds"])
    if declared >= cap:
        return over_limit
    return _RowBound(declared, f"results.json declares ({n_items:,} items × {len(results['seeds'])} seed(s))",
                     "the samples file holds rows its run did not score: copy both files of one run folder together, "
                     "or re-run the evaluation")


def _next_line(stream, most: int, path: Path) -> bytes:
    """The next line of ``stream``, read no further than ``most`` bytes (a line need not end in reach)."""
    try:
        return stream.readline(max(most, 1))
    except (OSError, EOFError, zlib.error) as exc:
        raise RunFileError(f"{path}: not a readable gzip file ({exc})",
                           hint="compress the run's samples.jsonl with `gzip -n`, or copy the uncompressed file") from None


def _sample_row(line: bytes, path: Path, number: int) -> dict:
    try:
        row = decode_row(line.decode("utf-8", errors="replace"))
    except ValueError as exc:  # not JSON, or a value no run file holds (json_input.BadJson)
        raise RunFileError(f"{path}:{number}: not a valid sample line ({exc})",
                             hint="re-run the evaluation (answers are cached)") from None
    return _check_sample(row, path, number)


def environment() -> dict:
    """Python, platform and the versions of the packages results depend on (read once per process: each
    ``importlib.metadata`` look-up scans site-packages, and a run asks once per job)."""
    return copy.deepcopy(_environment())


@lru_cache(maxsize=1)
def _environment() -> dict:
    packages = {}
    for name in _PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {"python": sys.version.split()[0], "platform": platform.platform(), "packages": packages}


@lru_cache(maxsize=1)
def git_hash() -> str | None:
    """The metabench checkout's commit, when running from one (one ``git`` process per metabench process)."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def metabench_info() -> dict:
    return {"version": __version__, "git": git_hash()}
