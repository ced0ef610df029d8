"""The run directory: results.json and samples.jsonl, written atomically.

``results.json`` follows ``SCHEMA_VERSION``; the reporter reads only these files, so runs made elsewhere or
by older versions stay comparable. ``samples.jsonl`` has item ids, gold answers, predictions and per-item
scores — never the dataset's text — so runs can be published without redistributing data.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from . import __version__
from .errors import MetabenchError

SCHEMA_VERSION = 1
RESULTS = "results.json"
SAMPLES = "samples.jsonl"
_PACKAGES = ("torch", "transformers", "lm_eval", "datasets", "pluggy", "pyyaml", "scipy", "numpy", "vllm")


def atomic_write(path: Path, text: str) -> None:
    """Write via a temp file in the same folder and os.replace: readers see the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_writable(folder: Path) -> None:
    """Fail before any work when the output folder cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=folder, prefix=".write-test-", delete=True)
        probe.close()
    except OSError as exc:
        raise MetabenchError(
            f"--output-dir {folder}: cannot write there ({exc.strerror or exc})",
            hint="choose a folder you can write to, e.g. --output-dir ./runs",
        ) from None


def write_run(run_dir: Path, results: dict, samples: list[dict]) -> None:
    lines = "".join(json.dumps(s, ensure_ascii=False, sort_keys=True) + "\n" for s in samples)
    atomic_write(run_dir / SAMPLES, lines)
    atomic_write(run_dir / RESULTS, json.dumps(results, indent=2, ensure_ascii=False, sort_keys=True) + "\n")


def read_results(run_dir: Path) -> dict:
    path = run_dir / RESULTS if run_dir.is_dir() else run_dir
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MetabenchError(f"{path}: no results file here", hint="pass a run folder written by `metabench run`") from None
    except json.JSONDecodeError as exc:
        raise MetabenchError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise MetabenchError(
            f"{path}: results schema version {version!r}, this metabench reads version {SCHEMA_VERSION}",
            hint="upgrade metabench, or re-run the evaluation",
        )
    return data


def read_samples(run_dir: Path) -> list[dict]:
    path = run_dir / SAMPLES
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise MetabenchError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
    return rows


def environment() -> dict:
    packages = {}
    for name in _PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {"python": sys.version.split()[0], "platform": platform.platform(), "packages": packages}


def git_hash() -> str | None:
    """The metabench checkout's commit, when running from one."""
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
