"""Data manifests: the sha256 of every file a dataset reads, written by a tool and read by dataset specs.

Every ``DataFile`` a ``DatasetSpec`` declares carries a sha256 that must come from hashing the real file,
never from a hand-typed value. ``metabench data manifest DIR`` writes one for a folder of files (a plugin
ships its data and the manifest together); :func:`manifest_files` builds the spec's ``files`` from it and
fails at registration for a path the manifest lacks, so a spec can never declare an unhashed file. The
built-in datasets use the same format (``metabench/data/manifest/<family>.json``, written by
``tools/make_manifest.py`` with the upstream locations of the mirror).

Format (JSON)::

    {"family": "example", "generated_by": "metabench data manifest",
     "groups": [{"repo": "", "commit": "",                 # upstream repository and pinned commit, if any
                 "files": [{"path": "sentences.tsv",       # relative to the manifest's root (POSIX)
                            "upstream_path": "",           # path in the upstream repository, if any
                            "sha256": "…64 hex…",          # of the file's bytes (decompressed bytes for gzip)
                            "encoding": "utf-8",           # left out when utf-8; cp1252 / latin-1 detected
                            "compressed": "gzip"}]}]}      # only for files stored gzipped
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from ..bounded_read import read_text
from ..errors import DataError
from .spec import DataFile

MANIFEST_NAME = "manifest.json"


def detect_encoding(data: bytes) -> str:
    """utf-8 if the bytes decode as utf-8, else cp1252 if they decode as that, else latin-1."""
    for encoding in ("utf-8", "cp1252"):
        try:
            data.decode(encoding)
            return encoding
        except UnicodeDecodeError:
            continue
    return "latin-1"


def describe_file(path: Path, relpath: str, *, upstream_path: str = "", compressed: str = "") -> dict:
    """The manifest entry of one file: its path, upstream path, sha256 and (when not utf-8) its encoding."""
    opener = gzip.open if compressed == "gzip" else open
    try:
        with opener(path, "rb") as handle:
            data = handle.read()
    except (OSError, EOFError) as exc:
        raise DataError(f"data file '{path}' cannot be read: {exc}") from None
    entry = {"path": relpath, "upstream_path": upstream_path, "sha256": hashlib.sha256(data).hexdigest()}
    encoding = detect_encoding(data)
    if encoding != "utf-8":
        entry["encoding"] = encoding
    if compressed:
        entry["compressed"] = compressed
    return entry


def build_manifest(folder: Path, *, family: str | None = None, repo: str = "", commit: str = "",
                   upstream_prefix: str = "", exclude: tuple[str, ...] = (MANIFEST_NAME,)) -> dict:
    """A manifest of every file below ``folder`` (hidden files and ``exclude`` names left out).

    ``upstream_prefix`` + the relative path is each file's ``upstream_path`` when ``repo`` is given.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder}: not a folder", hint="give the folder that holds the dataset's files")
    paths = sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in exclude
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    if not paths:
        raise DataError(f"{folder}: no files to hash")
    entries = []
    for path in paths:
        relpath = path.relative_to(folder).as_posix()
        entries.append(describe_file(path, relpath, upstream_path=upstream_prefix + relpath if repo else ""))
    return {
        "family": family or folder.name,
        "generated_by": "metabench data manifest",
        "groups": [{"repo": repo, "commit": commit, "files": entries}],
    }


def write_manifest(manifest: dict, path: Path) -> Path:
    """Write ``manifest`` as indented JSON (a stable diff when files change)."""
    path = Path(path)
    path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_manifest(path: Path) -> dict[str, DataFile]:
    """The files a manifest lists, by path, as ``DataFile`` objects ready for a ``DatasetSpec``."""
    path = Path(path)
    try:
        data = json.loads(read_text(path, error=DataError))
    except FileNotFoundError:
        raise DataError(f"data manifest '{path}' is missing",
                        hint=f"write it with `metabench data manifest {path.parent}`") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})",
                        hint=f"write it again with `metabench data manifest {path.parent}`") from None
    files: dict[str, DataFile] = {}
    try:
        for group in data["groups"]:
            for entry in group["files"]:
                files[entry["path"]] = DataFile(
                    path=entry["path"],
                    sha256=entry["sha256"],
                    repo=group.get("repo", ""),
                    commit=group.get("commit", ""),
                    upstream_path=entry.get("upstream_path", ""),
                    encoding=entry.get("encoding", "utf-8"),
                    compressed=entry.get("compressed", ""),
                )
    except (KeyError, TypeError) as exc:
        raise DataError(f"{path}: not a metabench data manifest (missing {exc})",
                        hint=f"write it with `metabench data manifest {path.parent}`") from None
    return files


def manifest_files(manifest: Path | dict[str, DataFile], *paths: str) -> tuple[DataFile, ...]:
    """The entries of ``manifest`` (a path or what :func:`read_manifest` returned) for the given paths; a path
    ending in ``/`` means every file below it. No path: every file. Raises for a path the manifest lacks."""
    where = str(manifest) if isinstance(manifest, Path) else "the manifest"
    listed = read_manifest(manifest) if isinstance(manifest, Path) else manifest
    if not paths:
        return tuple(listed[p] for p in sorted(listed))
    out: list[DataFile] = []
    for path in paths:
        if path.endswith("/"):
            below = sorted((f for p, f in listed.items() if p.startswith(path)), key=lambda f: f.path)
            if not below:
                raise DataError(f"{where} has no file below '{path}'")
            out.extend(below)
        elif path in listed:
            out.append(listed[path])
        else:
            raise DataError(f"{where} has no file '{path}'",
                            hint="write the manifest again (`metabench data manifest DIR`) or fix the path")
    return tuple(out)
