"""Integrity checks behind ``metabench data verify``: file hashes, then the counts the papers print.

Two layers, because they fail for different reasons:

1. every declared file is found (mirror or cache) and hashes to its pinned sha256 — generic, no code per
   dataset;
2. the dataset's own counts, declared in ``DatasetSpec.counts``, recomputed through its loader, so that a
   loader bug (a dropped row, a split sentence) shows up as a wrong number next to the paper's:

   - ``counts["items"] = {"train": 7259, "test:lang=es": 3630}``: the number of items ``ctx.load`` yields
     for each split (``split`` or ``split:key=value,key=value`` with loader arguments); no code needed;
   - ``counts["verify"] = "package.module:function"``: a checker ``fn(ctx) -> list[CheckResult]`` for
     anything else (tokens, metaphor tokens, label distributions...). ``ctx`` is a ``DataContext``
     (``ctx.load(split, **args)``, ``ctx.path(relpath)``); ``expect(name, expected, actual)`` builds a result.

Counts are only checked when every file verified (a wrong count on a corrupt file says nothing new).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError, MetabenchError
from ..keyvalues import parse_pairs
from .context import DataContext
from .load import check_args
from .hashing import sha256_of
from .resolve import _verified, locate_declared
from .spec import DatasetSpec


@dataclass(frozen=True)
class CheckResult:
    """One recomputed number: ok when it equals the expected one (or when ``ok`` is given explicitly)."""

    name: str
    expected: Any
    actual: Any
    ok: bool | None = None
    detail: str = ""

    def __post_init__(self):
        if self.ok is None:
            object.__setattr__(self, "ok", self.expected == self.actual)


def expect(name: str, expected: Any, actual: Any, detail: str = "") -> CheckResult:
    return CheckResult(name, expected, actual, detail=detail)


@dataclass(frozen=True)
class FileStatus:
    path: str
    status: str  # ok | missing | mismatch | unreadable
    where: str = ""  # mirror | cache | ''
    expected: str = ""
    actual: str = ""
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class DatasetReport:
    name: str
    files: list[FileStatus] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    skipped: str = ""  # why counts were not checked

    @property
    def files_ok(self) -> bool:
        return all(f.ok for f in self.files)

    @property
    def ok(self) -> bool:
        return self.files_ok and all(c.ok for c in self.checks)


def check_file(declared, data_dir: Path | None = None, root: str = "") -> FileStatus:
    """A declared file's hash; ``root`` is a spec's own folder (a plugin's package, a task's datasets
    source), where its files are read and nowhere else."""
    found = locate_declared(declared, data_dir, root)
    if found is None:
        return FileStatus(declared.path, "missing", expected=declared.sha256)
    where, path = found
    try:
        actual = sha256_of(path, declared.compressed)
    except DataError as exc:
        return FileStatus(declared.path, "unreadable", where, declared.sha256, detail=exc.message)
    status = "ok" if actual == declared.sha256 else "mismatch"
    if status == "ok":
        _verified[path] = actual  # the count checks then read it without hashing it again
    return FileStatus(declared.path, status, where, declared.sha256, actual)


def verify_dataset(spec: DatasetSpec, data_dir: Path | None = None, *, counts: bool = True) -> DatasetReport:
    """Hash every file of a dataset, then (if all are fine) run its count checks. Never downloads."""
    report = DatasetReport(spec.name, [check_file(f, data_dir, spec.root) for f in spec.files])
    if not counts:
        report.skipped = "counts not requested"
    elif not report.files_ok:
        report.skipped = "files missing or corrupt"
    elif not spec.counts:
        report.skipped = "no counts declared"
    else:
        report.checks = run_count_checks(spec, DataContext(spec, data_dir, download=False))
    return report


def run_count_checks(spec: DatasetSpec, ctx: DataContext) -> list[CheckResult]:
    results: list[CheckResult] = []
    for key, expected in (spec.counts.get("items") or {}).items():
        name = f"items {key}"
        try:
            split, args = parse_split_key(key, spec)
            check_args(spec, split, args, where="counts")
            results.append(expect(name, expected, len(ctx.load(split, **args))))
        except MetabenchError as exc:
            results.append(CheckResult(name, expected, "error", ok=False, detail=exc.message))
        except Exception as exc:  # noqa: BLE001 - a loader bug fails this check, named, and the rest still run
            results.append(CheckResult(name, expected, "crashed", ok=False, detail=f"{type(exc).__name__}: {exc}"))
    target = spec.counts.get("verify")
    if target:
        try:
            checker = _import(target)
            results.extend(checker(ctx))
        except MetabenchError as exc:
            results.append(CheckResult(f"checker {target}", "runs", "error", ok=False, detail=exc.message))
        except Exception as exc:  # noqa: BLE001 - a broken checker is a failed check, named, not a crash
            results.append(
                CheckResult(f"checker {target}", "runs", "crashed", ok=False, detail=f"{type(exc).__name__}: {exc}")
            )
    return results


def parse_split_key(key: str, spec: DatasetSpec) -> tuple[str, dict]:
    """``"test:lang=es,fold=3"`` -> ("test", {"lang": "es", "fold": 3}); values matched to the spec's args."""
    split, _, rest = key.partition(":")
    args: dict = {}
    for name, raw in parse_pairs(rest, what=f"dataset '{spec.name}': count key '{key}':", error=DataError).items():
        allowed = spec.args.get(name)
        args[name] = next((a for a in allowed or () if str(a) == raw), raw)
    return split, args


def _import(target: str):
    module_name, _, attr = target.partition(":")
    try:
        obj = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise DataError(f"count checker '{target}' cannot be imported: {exc}") from None
    return obj


def verify_all(specs, data_dir: Path | None = None, *, counts: bool = True) -> list[DatasetReport]:
    return [verify_dataset(spec, data_dir, counts=counts) for spec in specs]
