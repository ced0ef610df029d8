"""The published leaderboard: runs → one board (``board``) → every registered reporter writes its files.

Reporters are registered through ``metabench_register_reporters`` (the built-ins: ``markdown``, ``json``,
``html``); each is ``write(board: dict, out_dir: Path) -> list[Path]``, so a plugin adds an output format
without touching the statistics.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...errors import MetabenchError
from ...registry import Registry
from ..compare import Options
from ...hard.phi_table import TABLE_FILE, find_tables
from ..runs import find_runs
from .board import build_board


def build_site(registry: Registry, paths: list[Path], out_dir: Path, *, formats: list[str] | None = None,
               title: str = "metabench leaderboard", correction: str = "holm", alpha: float = 0.05,
               n_resamples: int = 10_000) -> list[Path]:
    """Build the board from the runs under ``paths`` and run the reporters into ``out_dir``."""
    names = formats or registry.names("reporter")
    if not names:
        raise MetabenchError("no leaderboard reporters are registered",
                             hint="the built-in plugin metabench.report.plugin registers markdown, json and html")
    writers = [registry.resolve("reporter", name, where="--format") for name in names]
    tables = find_tables(paths)
    run_paths = [p for p in paths if not _tables_only(p)]
    board = build_board(registry, find_runs(run_paths), title=title, correction=correction, alpha=alpha,
                        options=Options(n_resamples=n_resamples), phi_tables=tables)
    if out_dir.exists() and not out_dir.is_dir():
        raise MetabenchError(f"-o {out_dir}: is a file, not a folder", hint="choose a folder, e.g. -o leaderboard/")
    out_dir.mkdir(parents=True, exist_ok=True)
    _relative_run_paths(board, out_dir)
    before = _generated(out_dir)
    written = [path for write in writers for path in write(board, out_dir)]
    now = {p.resolve().relative_to(out_dir.resolve()).as_posix() for p in written}
    for stale in sorted(before - now):  # a task or model that is gone leaves no page behind
        (out_dir / stale).unlink(missing_ok=True)
    (out_dir / MANIFEST).write_text(json.dumps(sorted(now), indent=0) + "\n", encoding="utf-8")
    return written


def _tables_only(path: Path) -> bool:
    """A phi table, or a folder of them without runs: a source of hardness tables, not of runs."""
    from ...store import RESULTS

    if path.is_file():
        return path.name == TABLE_FILE
    return path.is_dir() and bool(find_tables([path])) and not any(path.rglob(RESULTS))


#: The files the last build wrote, relative to the output folder: the only files a build ever deletes, so
#: the user's own pages in the same folders survive.
MANIFEST = ".metabench-generated.json"
#: Sites built before the manifest: a page is ours if it loads the site's script (tasks/ and models/ only).
_LEGACY_MARK = '<script src="../assets/site.js" defer></script>'


def _generated(out_dir: Path) -> set[str]:
    manifest = out_dir / MANIFEST
    if manifest.is_file():
        try:
            names = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            names = []
        return {n for n in names if isinstance(n, str) and not n.startswith(("/", "..")) and "/../" not in n}
    return {page.relative_to(out_dir).as_posix() for folder in ("tasks", "models")
            for page in (out_dir / folder).glob("*.html") if _LEGACY_MARK in page.read_text(encoding="utf-8", errors="replace")}


def _relative_run_paths(board: dict, out_dir: Path) -> None:
    """Run folders as paths relative to the output folder: the published files name no local directories."""
    def relative(path: str) -> str:
        return Path(os.path.relpath(Path(path).resolve(), out_dir.resolve())).as_posix()

    for task in board.get("tasks", []):
        for entry in task.get("entries", []):
            if "run" in entry:
                entry["run"] = relative(entry["run"])
    for ignored in board.get("ignored_runs", []):
        if "run" in ignored:
            ignored["run"] = relative(ignored["run"])
