"""The object a dataset loader reads its files through.

A loader never opens a path it built itself: it asks ``ctx.path(relpath)`` for a file its spec declares,
which resolves it (mirror, cache, download), verifies its hash and records it, so that results.json can
list the exact bytes every score came from. ``ctx.load(split, **args)`` runs the dataset's own loader with
this context; integrity checkers (see ``verify.py``) use it to recount what the loader yields.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DataError
from .resolve import download_allowed, resolve_file, verify_file
from .spec import DatasetSpec


class DataContext:
    """Resolves a dataset's files by their mirror path and records each one used, with its sha256.

    ``download=None`` follows the environment (``download_allowed()``: on unless METABENCH_ALLOW_DOWNLOAD=0).
    ``registry``: the registry the dataset was resolved from, for a loader that resolves registered names (a
    model's short name); a loader asks it, never the process-global one. ``None`` where no registry is at hand
    (a derived dataset's base slices, ``metabench data verify``).
    """

    def __init__(self, spec: DatasetSpec, data_dir: Path | None = None, *, download: bool | None = None,
                 registry=None):
        self.spec = spec
        self.registry = registry
        self.data_dir = data_dir
        self.download = download_allowed() if download is None else download
        self.used: dict[str, str] = {}
        self._loaded: dict[str, list] = {}
        self._files = {f.path: f for f in spec.files}

    def declared(self, relpath: str):
        """The DataFile a relative mirror path names (KeyError naming the spec when undeclared)."""
        try:
            return self._files[relpath]
        except KeyError:
            raise KeyError(
                f"dataset '{self.spec.name}' reads '{relpath}', which its spec does not declare; add it to "
                f"the spec's files with its sha256"
            ) from None

    def path(self, relpath: str) -> Path:
        """Local path of a declared file, verified against its hash (downloaded if needed and allowed)."""
        declared = self.declared(relpath)
        if self.spec.root:  # shipped inside a plugin package: only ever read from there
            local = Path(self.spec.root) / declared.path
            if not local.is_file():
                raise DataError(
                    f"dataset '{self.spec.name}': file '{local}' is missing from its package",
                    hint=f"reinstall the plugin that registers '{self.spec.name}'",
                )
            verify_file(local, declared)
        else:
            local = resolve_file(declared, self.data_dir, download=self.download, dataset=self.spec.name)
        self.used[relpath] = declared.sha256
        return local

    def encoding(self, relpath: str) -> str:
        """The encoding the spec declares for a file (what readers should be given)."""
        return self.declared(relpath).encoding

    def load(self, split: str, **args) -> list:
        """Items of one split through the dataset's loader, reading files through this context.

        Memoised per (split, args) for the context's lifetime: checkers recount the same split many ways.
        """
        key = repr((split, sorted(args.items())))
        if key not in self._loaded:
            self._loaded[key] = list(self.spec.loader_function()(self, split, **args))
        return list(self._loaded[key])
