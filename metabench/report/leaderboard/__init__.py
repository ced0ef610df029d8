"""The published leaderboard: runs → one board (``board``) → every registered reporter writes its files.

Reporters are registered through ``metabench_register_reporters`` (the built-ins: ``markdown``, ``json``,
``html``); each is ``write(board: Board, out_dir: Path) -> list[Path]`` (`schema.Board`), so a plugin adds an
output format without touching the statistics.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

from ... import safe_paths
from ...bounded_read import read_text
from ...errors import ExplainedError, MetabenchError, PluginError
from ...printable import escape
from ...registry import Registry
from ..compare import Options
from ...runs.stored import find_runs
from . import site_files
from .board import build_board
from .schema import Board, RunNote
from .progress import Progress
from .sections import source_files


@dataclass(frozen=True)
class Built:
    """What a build wrote, and the runs it rejected (verification failed): ``metabench leaderboard build``
    exits 1 when there are any, so a CI job notices a forged or damaged run even though the site was built."""

    written: list[Path]
    rejected: list[RunNote]
    #: each rejected run's folder as found on this machine (``rejected`` names it as published: relative to
    #: the runs folder), so the command line can point at the files to fix
    rejected_folders: list[Path]
    #: the files of ``written`` whose bytes changed (the others were left untouched, mtime included), and the
    #: generated files of the last build that are gone
    changed: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    #: runs read, and runs ranked (verified, newest per task, model and item set)
    n_runs: int = 0
    n_ranked: int = 0
    #: ranked runs that could not be checked against the data here (`verify_data`): run, task, model, reason
    unverified: list[RunNote] = field(default_factory=list)


def build_site(registry: Registry, paths: list[Path], out_dir: Path, *, formats: list[str] | None = None,
               title: str = "metabench leaderboard", correction: str = "holm", alpha: float = 0.05,
               n_resamples: int = 10_000, force: bool = False, progress: Progress | None = None,
               jobs: int | None = None, reproduce: int | None = None, reproduce_key: str | None = None) -> Built:
    """Build the board from the runs under ``paths`` and run the reporters into ``out_dir``.

    The reporters write into a fresh staging folder inside ``out_dir``; their files are then moved into place
    through :mod:`metabench.safe_paths` (nothing lands or is deleted outside ``out_dir``, whatever symlinks
    or listed names say), and only after every target was checked: a file there that the last build cannot be
    shown to have written (`site_files`: listed with the digest of its bytes, and carrying metabench's generator
    mark; the user's own ``index.html``, even listed with its true digest) is
    refused, unless ``force``, and a run's file never. A file whose bytes did not change is
    left as it is. ``progress`` shows the build's phases on stderr (`progress.Progress`); ``jobs``: processes
    that verify, rank and test the tasks (default: one per CPU; `board.build_board`)."""
    names = formats or registry.names("reporter")
    if not names:
        raise MetabenchError("no leaderboard reporters are registered",
                             hint="the built-in plugin metabench.report.plugin registers markdown, json and html")
    writers = [_writer(registry, name) for name in names]
    section_files = source_files(registry)
    run_paths = [p for p in paths if not _section_files_only(p, section_files)]
    runs = find_runs(run_paths)
    n_found = len(runs)
    board = build_board(registry, runs, title=title, correction=correction, alpha=alpha,
                        options=Options(n_resamples=n_resamples), sources=paths, progress=progress,
                        jobs=jobs, reproduce=reproduce, reproduce_key=reproduce_key)
    if out_dir.exists() and not out_dir.is_dir():
        raise MetabenchError(f"-o {out_dir}: is a file, not a folder", hint="choose a folder, e.g. -o leaderboard/")
    out_dir.mkdir(parents=True, exist_ok=True)
    rejected_folders = [Path(r.run) for r in board.rejected_runs if r.run is not None]
    _relative_run_paths(board, out_dir, run_paths)
    listed = site_files.listed(out_dir)
    sources = site_files.run_sources(out_dir, run_paths)
    before = {name for name, recorded in listed.items() if site_files.proven(out_dir, name, recorded, sources)}
    unmarked = site_files.unmarked_claims(out_dir, listed, before, sources)
    staging = Path(tempfile.mkdtemp(dir=os.path.realpath(out_dir), prefix=".metabench-build-"))
    try:
        with (progress or Progress.off()).phase("writing files", len(names), "format") as done:
            staged: dict[str, Path] = {}
            for name, write in zip(names, writers):
                staged.update((_staged_name(path, staging, name), path) for path in _written(registry, name, write,
                                                                                             board, staging))
                done()
        for name in staged:  # every target checked before the first file moves
            safe_paths.inside(out_dir, out_dir / name, action="write")
        site_files.refuse_protected(out_dir, set(staged), sources)
        _warn_unmarked_output(staged)
        _refuse_foreign(out_dir, {name: staged[name] for name in set(staged) - before}, force,
                        legacy=any(v is None for v in listed.values()), unmarked=set(unmarked))
        digests = {name: site_files.digest(path) for name, path in staged.items()}
        moved: list[str] = []
        changed: list[str] = []
        try:
            for name in sorted(staged):
                if not _same_bytes(staged[name], out_dir / name):
                    safe_paths.replace_file(out_dir, staged[name], out_dir / name)
                    changed.append(name)
                moved.append(name)
        except BaseException:  # the files moved so far are still ours: listed, so the next build may replace them
            mine = {name: listed[name] for name in before if name not in moved}
            mine.update((name, digests[name]) for name in moved)
            safe_paths.write_text(out_dir, out_dir / MANIFEST, site_files.manifest_text(mine))
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    stale = sorted(before - set(staged))
    kept = [name for name in unmarked if name not in staged]
    if kept:
        warnings.warn(f"-o {escape(out_dir)}: kept {len(kept)} file(s) that {MANIFEST} lists with their digest but "
                      f"that carry no metabench generator mark ({escape(', '.join(kept[:3]))}"
                      f"{', ...' if len(kept) > 3 else ''}): the list alone does not show the build wrote them",
                      stacklevel=2)
    for name in stale:  # a task or model that is gone leaves no page behind (only a page still as written)
        safe_paths.remove_file(out_dir, out_dir / name)
    manifest = site_files.manifest_text(digests)
    if _read_or_none(out_dir / MANIFEST) != manifest:
        safe_paths.write_text(out_dir, out_dir / MANIFEST, manifest)
    return Built([out_dir / name for name in sorted(staged)], board.rejected_runs, rejected_folders,
                 changed=[out_dir / name for name in changed], removed=[out_dir / name for name in stale],
                 n_runs=n_found, n_ranked=board.n_runs or 0, unverified=board.unverified_runs)


def _writer(registry: Registry, name: str):
    """The reporter's ``write``, which gets the typed board."""
    return registry.resolve("reporter", name, where="--format")


def _written(registry: Registry, name: str, write, board: Board, staging: Path) -> list[Path]:
    """What the reporter wrote; a reporter that raises is its plugin's error, named (exit 2), not metabench's
    internal one: the build stops before any file is moved into the site."""
    entry = registry.get("reporter", name)
    try:
        written = write(board, staging)
        return list(written)
    except ExplainedError:
        raise
    except Exception as exc:  # noqa: BLE001 - a plugin's bug, reported as the plugin's
        raise PluginError(f"leaderboard reporter '{escape(name)}' (from plugin '{escape(entry.plugin)}') raised "
                          f"{type(exc).__name__}: {escape(exc)}; no file of the site was changed",
                          hint=f"fix the reporter, leave it out with --format, or disable its plugin with "
                               f"METABENCH_DISABLE_PLUGINS={escape(entry.plugin)}") from exc


def _same_bytes(new: Path, target: Path) -> bool:
    """Whether ``target`` is a regular file (not a symlink) holding exactly ``new``'s bytes: then the build
    leaves it alone, so a rebuild of the same runs changes no file and a commit shows only what moved."""
    if target.is_symlink() or not target.is_file() or target.stat().st_size != new.stat().st_size:
        return False
    return target.read_bytes() == new.read_bytes()


def _read_or_none(path: Path) -> str | None:
    try:
        return read_text(path)
    except (OSError, MetabenchError):
        return None


def _staged_name(path: Path, staging: Path, reporter: str) -> str:
    """A reporter's file as a name relative to the output folder; a reporter writing elsewhere is refused."""
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(staging) or real == staging or not real.is_file():
        raise MetabenchError(f"reporter '{reporter}' returned {path}, which is not a file it wrote in the output folder",
                             hint="a reporter writes files below the out_dir it is given and returns their paths")
    return real.relative_to(staging).as_posix()


def _refuse_foreign(out_dir: Path, new: dict[str, Path], force: bool, *, legacy: bool = False,
                    unmarked: AbstractSet[str] = frozenset()) -> None:
    """Files already in the output folder that the last build cannot be shown to have written (not listed with
    the digest of their bytes, or without the generator mark: `site_files`) are the user's: not replaced (one
    holding the very bytes the build writes loses nothing, and is taken)."""
    foreign = sorted(name for name, staged in new.items()
                     if os.path.lexists(out_dir / name) and not _same_bytes(staged, out_dir / name))
    if foreign and not force:
        claimed = [name for name in foreign if name in unmarked]
        raise MetabenchError(
            f"-o {escape(out_dir)}: holds {len(foreign)} file(s) metabench did not write (or that changed since), "
            f"which the build would replace ({escape(', '.join(foreign[:3]))}{', ...' if len(foreign) > 3 else ''})"
            + (f"; {len(claimed)} of them ({escape(', '.join(claimed[:3]))}{', ...' if len(claimed) > 3 else ''}) "
               f"{MANIFEST} lists with their digest, but they carry no metabench generator mark, and the list "
               "alone does not show the build wrote them" if claimed else ""),
            hint="choose an empty or a metabench-built folder, or pass --force to replace them"
                 + (f" (this folder's {MANIFEST} is of the older form, without digests: a site built by an "
                    "earlier metabench is replaced once with --force)" if legacy else "")
                 + (" (a site built by a metabench from before the generator mark is replaced once with --force)"
                    if claimed else ""),
        )


def _warn_unmarked_output(staged: dict[str, Path]) -> None:
    """A reporter's file without the generator mark (`site_files.marked`): a later build cannot show it wrote
    it, so keeps it rather than replacing or deleting it. Said now, to the reporter's author."""
    bare = sorted(name for name, path in staged.items() if not site_files.marked(path))
    if bare:
        warnings.warn(f"the build writes {len(bare)} file(s) without metabench's generator mark "
                      f"({escape(', '.join(bare[:3]))}{', ...' if len(bare) > 3 else ''}): a later build will keep "
                      "them rather than replace them (without --force); a reporter marks its files as "
                      "docs/reporting.md, Extending, says (site_files.CONTENT_MARKS, a JSON 'metabench' field, "
                      "or NAME.metabench.csv)",
                      stacklevel=3)


def _section_files_only(path: Path, names: set[str]) -> bool:
    """A file a registered section reads beside the runs (the hard family's phi tables), or a folder of such files
    without runs: a source for the sections, not of runs."""
    from ...store import RESULTS

    if path.is_file():
        return path.name in names
    return path.is_dir() and any(next(path.rglob(n), None) for n in names) and not any(path.rglob(RESULTS))


MANIFEST = site_files.MANIFEST


def _relative_run_paths(board: Board, out_dir: Path, run_paths: list[Path]) -> None:
    """Run folders as paths relative to the output folder (rejected runs: to the runs folder they were found
    in), also inside messages: the published files name no local directories."""
    def relative(path: str) -> str:
        return Path(os.path.relpath(Path(path).resolve(), out_dir.resolve())).as_posix()

    roots = [p.resolve() for p in run_paths if p.is_dir()]

    def root_of(path: str) -> Path:
        folder = Path(path).resolve()
        return next((r for r in roots if folder.is_relative_to(r) and folder != r), folder.parent)

    def in_runs_folder(path: str) -> str:
        return Path(path).resolve().relative_to(root_of(path)).as_posix()

    def unlocal(reason: str, run: str) -> str:
        # the run's files, then an absolute folder above it named on its own (the migrate hint names the
        # folder holding the runs), as seen from the runs folder
        reason = reason.replace(run, in_runs_folder(run))
        for above in Path(run).parents if Path(run).is_absolute() else ():
            if above.parent != above:
                published = Path(os.path.relpath(above.resolve(), root_of(run))).as_posix()
                reason = re.sub(r"(?<![\w./-])" + re.escape(str(above)) + r"(?![\w./-])", lambda _: published, reason)
        return reason

    for rejected in board.rejected_runs:
        if rejected.run is not None:  # the builder names every run; the schema allows a note without one
            rejected.reasons = [unlocal(r, rejected.run) for r in rejected.reasons or []]
            rejected.run = in_runs_folder(rejected.run)
    for unverified in board.unverified_runs:
        if unverified.run is not None:
            unverified.run = in_runs_folder(unverified.run)
    for task in board.tasks:
        shown = {e.run: relative(e.run) for e in task.entries if e.run is not None}
        # one pass, longest folder first: run/lookup must not rewrite the start of run/lookup_key=expression
        local = re.compile("|".join(re.escape(path) for path in sorted(shown, key=len, reverse=True)) or "(?!)")
        for entry in task.entries:
            if entry.vs_best is not None and entry.vs_best.error:
                entry.vs_best.error = local.sub(lambda found: shown[found[0]], entry.vs_best.error)
            if entry.run is not None:
                entry.run = shown[entry.run]
    for ignored in board.ignored_runs:
        if ignored.run is not None:
            ignored.run = relative(ignored.run)
