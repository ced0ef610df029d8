"""Fine-tuned checkpoints, cached by what determines them, written so that a half-written one is never used.

Key: sha256 of (base model fingerprint, training data hash + content hash, label set, head, hyperparameters,
seed, trainer version). Every task that trains the same model on the same data with the same settings and seed
reuses one checkpoint, whatever its test set (Meta4XNLI's 9 cross-domain test sets share one).

Layout under ``$METABENCH_CACHE_DIR/checkpoints/``::

    <key>/                      a finished checkpoint: model + tokenizer files, then metabench-checkpoint.json
    <key>.partial.pt            training state after the last finished epoch (resume after an interrupt)
    .tmp-<key>-<pid>-<n>/       a checkpoint being written; renamed to <key>/ in one os.replace when complete

A finished checkpoint appears atomically (rename of a complete folder), so a process killed mid-write leaves
only a ``.tmp-`` folder, which is never read and is removed once its process is gone. ``--no-cache`` points the
store at a temporary folder deleted when the process exits: nothing persistent is read or written, and tasks of
the same invocation that share training still train once.
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..cache import cache_root

#: Bump whenever training or the checkpoint format changes what a key produces.
TRAINER_VERSION = "hf-encoder/1"
META = "metabench-checkpoint.json"
_counter = itertools.count()
_TEMP_ROOT: Path | None = None


def checkpoint_key(parts: dict) -> str:
    payload = json.dumps({"trainer": TRAINER_VERSION, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def _temporary_root() -> Path:
    global _TEMP_ROOT
    if _TEMP_ROOT is None:
        _TEMP_ROOT = Path(tempfile.mkdtemp(prefix="metabench-checkpoints-"))
        atexit.register(shutil.rmtree, _TEMP_ROOT, ignore_errors=True)
    return _TEMP_ROOT


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class CheckpointStore:
    """Finished checkpoints and resumable training states, by key."""

    def __init__(self, root: Path | None = None, *, persistent: bool = True):
        if root is None:
            root = cache_root() / "checkpoints" if persistent else _temporary_root()
        self.root = Path(root)
        self.persistent = persistent

    # ------------------------------------------------------------------ finished checkpoints

    def find(self, key: str) -> Path | None:
        folder = self.root / key
        return folder if (folder / META).is_file() else None

    def meta(self, key: str) -> dict:
        folder = self.find(key)
        return json.loads((folder / META).read_text(encoding="utf-8")) if folder else {}

    def save(self, key: str, write: Callable[[Path], dict]) -> Path:
        """``write(tmp_folder)`` saves the model files and returns metadata; the folder then appears at once."""
        self.root.mkdir(parents=True, exist_ok=True)
        self._clean_stale()
        tmp = self.root / f".tmp-{key}-{os.getpid()}-{next(_counter)}"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        try:
            meta = write(tmp)
            (tmp / META).write_text(json.dumps({"key": key, **meta}, indent=2, sort_keys=True, default=str), encoding="utf-8")
            _fsync_tree(tmp)
            final = self.root / key
            try:
                os.replace(tmp, final)
            except OSError:
                if self.find(key) is None:  # not a concurrent writer's finished copy: a real failure
                    raise
                shutil.rmtree(tmp, ignore_errors=True)
            return final
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _clean_stale(self) -> None:
        for tmp in self.root.glob(".tmp-*"):
            try:
                pid = int(tmp.name.rsplit("-", 2)[-2])
            except (ValueError, IndexError):
                continue
            if pid != os.getpid() and not _alive(pid):
                shutil.rmtree(tmp, ignore_errors=True) if tmp.is_dir() else tmp.unlink(missing_ok=True)

    # ------------------------------------------------------------------ resumable training state

    def partial_path(self, key: str) -> Path:
        return self.root / f"{key}.partial.pt"

    def load_partial(self, key: str) -> dict | None:
        import torch

        path = self.partial_path(key)
        if not path.is_file():
            return None
        try:
            state = torch.load(path, map_location="cpu", weights_only=False)
        except Exception:  # noqa: BLE001 - a damaged state is discarded, training restarts
            path.unlink(missing_ok=True)
            return None
        return state if isinstance(state, dict) and state.get("key") == key else None

    def save_partial(self, key: str, state: dict) -> None:
        import torch

        self.root.mkdir(parents=True, exist_ok=True)
        path = self.partial_path(key)
        tmp = self.root / f".tmp-{key}-{os.getpid()}-{next(_counter)}.pt"
        try:
            torch.save({"key": key, **state}, tmp)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)

    def drop_partial(self, key: str) -> None:
        self.partial_path(key).unlink(missing_ok=True)


def _fsync_tree(folder: Path) -> None:
    for path in folder.iterdir():
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
