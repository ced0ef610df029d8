"""Which files in a site folder a build may replace or delete: only those it can show it wrote.

The build records every file it writes in ``.metabench-generated.json`` with the sha256 of the bytes it wrote.
The list sits in the user's folder, so it is input, not proof: anyone can commit one naming ``index.html``, a
run's ``results.json`` or ``../thesis.tex``. A file counts as the last build's only while its bytes are still
the ones recorded for it (a user's own file listed by name, or a generated page the user has since edited, is
not), and never when it lies in a runs folder (a folder, or one above it up to the site, holding a
``results.json``), whatever the list says: a run is not a page. A list in the older form (names without
digests, written by metabench before the digests) proves nothing; a site built then is replaced once with
``--force``. The list is bounded (:data:`MAX_FILES` names, :data:`MAX_BYTES` bytes): a site has a few hundred
files, and a list of millions of names is not read (its files are then foreign).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import warnings
from pathlib import Path

from ...errors import MetabenchError
from ...limits import Limit

#: The files the last build wrote, relative to the output folder, each with the sha256 of its bytes.
MANIFEST = ".metabench-generated.json"
#: At most this many listed names are read (the largest site here has a few hundred files).
MAX_FILES = Limit("files listed in a site's .metabench-generated.json", "METABENCH_MAX_SITE_FILES", 100_000, "files")
MAX_BYTES = 20_000_000
#: Sites built before the list: a page is ours if it loads the site's script (tasks/ and models/ only).
_LEGACY_MARK = '<script src="../assets/site.js" defer></script>'
_DIGEST = re.compile(r"[0-9a-f]{64}")
#: What a run folder holds (``metabench.store``): never a site's file, whatever a list says.
_RUN_FILES = ("results.json", "samples.jsonl", "samples.jsonl.gz")


def digest(path: Path) -> str:
    """The sha256 of the file's bytes, as the list records them."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def listed(out_dir: Path) -> dict[str, str | None]:
    """The names the last build listed, each with its recorded digest (None: a list of the older form, or a page
    of a site built before the list, proven by its mark only). Names that leave the folder are dropped here;
    `safe_paths` checks the rest where they are used."""
    manifest = out_dir / MANIFEST
    if not manifest.is_file() or manifest.is_symlink():
        return {page.relative_to(out_dir).as_posix(): None for folder in ("tasks", "models")
                for page in _pages(out_dir / folder) if _legacy_page(page)}
    entries = _read(manifest)
    if isinstance(entries, list):
        entries = {name: None for name in entries}
    if not isinstance(entries, dict):
        return {}
    return {name: (value if isinstance(value, str) and _DIGEST.fullmatch(value) else None)
            for name, value in entries.items()
            if isinstance(name, str) and name and not name.startswith(("/", "..")) and "/../" not in f"/{name}/"}


def _read(manifest: Path) -> object:
    try:
        if manifest.stat().st_size > MAX_BYTES:
            raise ValueError(f"{manifest.stat().st_size} bytes")
        with open(manifest, "rb") as handle:
            entries = json.loads(handle.read(MAX_BYTES + 1))
        if isinstance(entries, (list, dict)) and len(entries) > MAX_FILES.value:
            raise ValueError(f"{len(entries)} names")
        return entries
    except (OSError, ValueError, RecursionError) as exc:
        warnings.warn(f"{manifest}: not read ({exc}; a site lists at most {MAX_FILES.value:g} files in "
                      f"{MAX_BYTES:,} bytes): the files it names are treated as not written by metabench",
                      stacklevel=3)
        return None


def proven(out_dir: Path, name: str, recorded: str | None, sources: tuple[Path, ...] = ()) -> bool:
    """Whether ``out_dir/name`` is still the file the last build wrote: its bytes hash to the recorded digest
    (a page of a site built before the list: it carries the site's mark), and it lies in no runs folder."""
    path = out_dir / name
    if path.is_symlink() or not path.is_file() or protected(out_dir, name, sources):
        return False
    real_root = os.path.realpath(out_dir)
    if not os.path.realpath(path).startswith(real_root + os.sep):  # through a linked folder: not the site's
        return False
    if recorded is None:
        return name.count("/") == 1 and name.split("/")[0] in ("tasks", "models") and _legacy_page(path)
    try:
        return digest(path) == recorded
    except OSError:
        return False


def protected(out_dir: Path, name: str, sources: tuple[Path, ...] = ()) -> bool:
    """A run's file, any file in a runs folder (its folder or one above it, up to the site, holds a
    ``results.json``), or any file below a folder the build reads runs from (``sources``, resolved): a site
    build never replaces or deletes it."""
    path = out_dir / name
    if path.name in _RUN_FILES:
        return True
    real = Path(os.path.realpath(path))
    if any(real.is_relative_to(source) for source in sources):
        return True
    folder = path.parent
    while True:
        if (folder / "results.json").exists():
            return True
        if folder == out_dir or folder.parent == folder:
            return False
        folder = folder.parent


def refuse_protected(out_dir: Path, names: set[str], sources: tuple[Path, ...] = ()) -> None:
    """A reporter's file that would land on a run's file or in a runs folder is refused, ``--force`` or not."""
    inside_runs = sorted(name for name in names if protected(out_dir, name, sources))
    if inside_runs:
        raise MetabenchError(
            f"-o {out_dir}: the build would write {', '.join(inside_runs[:3])}{', ...' if len(inside_runs) > 3 else ''} "
            "inside a runs folder (a folder holding a results.json); a site never replaces a run's files",
            hint="build the site into a folder of its own, e.g. -o site/, not into a runs folder")


def run_sources(out_dir: Path, paths: list[Path]) -> tuple[Path, ...]:
    """The folders a build reads runs from, resolved (a run file given alone: its folder), except one holding
    the site itself (``leaderboard build leaderboard -o leaderboard``: there the runs folders are found by
    their ``results.json``)."""
    site = Path(os.path.realpath(out_dir))
    found = (Path(os.path.realpath(p if p.is_dir() else p.parent)) for p in paths if p.exists())
    return tuple(source for source in found if not site.is_relative_to(source))


def manifest_text(digests: dict[str, str | None]) -> str:
    return json.dumps(dict(sorted(digests.items())), indent=0) + "\n"


def _pages(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.html")) if folder.is_dir() and not folder.is_symlink() else []


def _legacy_page(page: Path) -> bool:
    """Whether a page of a site built before the list is ours; a folder, a device or a pipe is not."""
    from ...bounded_read import read_bytes

    try:
        return page.is_file() and _LEGACY_MARK.encode() in read_bytes(page)
    except (OSError, MetabenchError):
        return False

