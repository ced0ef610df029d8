"""A task's ``hf_dataset``: a Hugging Face ``datasets`` source turned into a :class:`DatasetSpec`.

Built-in datasets pin every file in a manifest. A source that already is a ``datasets`` dataset (a Hub repo,
a ``save_to_disk`` folder, json/parquet/csv files) gets the same treatment without one: its files are listed
and hashed when the task is loaded (stamped like mirror files, so an unchanged file is not read again), and
the spec built from them is registered as the task's dataset, ``hf.<task>``. From there it loads, caches and
verifies as any dataset: the parsed-item cache and the job memo key on the files' hashes and the source
(revision, config, columns), the answer cache on the files read, and a changed file changes all three.

A Hub source must pin a commit: ``revision: main`` follows the branch knowingly, and the commit it resolved
to is recorded. Hub files are fetched with ``huggingface_hub`` into ``$METABENCH_CACHE_DIR/hf-hub``; offline
(``HF_DATASETS_OFFLINE``/``HF_HUB_OFFLINE``/``METABENCH_ALLOW_DOWNLOAD=0``) a source missing there is an
error naming the command that fetches it. Nothing here imports ``datasets`` (the loader, ``hf_items.py``,
does): listing and validating tasks stay light.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .. import limits
from ..bounded_read import read_bytes, read_text
from ..cache import cache_root
from ..errors import ConfigError, DataError, did_you_mean
from ..extras import missing_extra
from ..registry import Entry
from .hf_items import FIELDS, item_type
from .resolve import download_allowed, stamped_sha256
from .spec import DataFile, DatasetSpec

#: ``datasets``' packaged builders that read local ``data_files``.
BUILDERS = ("json", "parquet", "csv", "arrow", "text")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")
LOADER = "metabench.data.hf_items:load"


def place(path: str) -> str:
    """Where a source lives: ``local`` (written ./, ../ or /), ``builder`` (json, parquet...) or ``hub``."""
    if path.startswith(("./", "../", "/")) or path in (".", ".."):
        return "local"
    return "builder" if path in BUILDERS else "hub"


def hub_cache() -> Path:
    """Where Hub sources are fetched to (``huggingface_hub``'s cache layout), beside the other caches."""
    return cache_root() / "hf-hub"


def offline() -> bool:
    """Whether a Hub source may be fetched: not when HF or metabench says the network is off."""
    off = any(os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
              for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"))
    return off or not download_allowed()


def register(registry, config, raw, plugin: str = "", version: str = "", *, defer: bool = False) -> DatasetSpec | None:
    """Check a task's ``hf_dataset`` and register its spec as the task's dataset (None for other tasks).

    Called where a task is loaded (``TaskIndex.load``, ``metabench validate``) and where a job runs, since a
    spawned worker's registry holds only what plugins registered. Files are re-listed each time, so a file
    changed since the last call gets a new spec (the entry is replaced). ``defer``: data that cannot be had
    (a Hub source not fetched, a file gone) registers a spec without files, so a run plans the task and its
    job fails with the reason while the other jobs run; a mistake in the YAML is an error either way."""
    if config.hf_dataset is None:
        return None
    check(config, raw)
    try:
        spec = build_spec(config, raw)
    except DataError as exc:
        if not defer:
            raise
        spec = DatasetSpec(name=config.dataset, files=(), loader=LOADER, splits=_named_splits(config),
                           source={"path": config.hf_dataset.path, "unavailable": exc.message})
    entry = Entry("dataset", spec.name, spec, plugin or f"task {config.task}", version, spec.description)
    if registry.has("dataset", spec.name) and getattr(registry.get("dataset", spec.name).target, "source", None):
        registry.replace(entry)
    else:
        registry.add(entry)
    return spec


def check(config, raw) -> None:
    """What a source must say, checked before anything is read, with the file:line of the key at fault."""
    source = config.hf_dataset
    where = raw.where("hf_dataset", "revision") if source.revision is not None else raw.where("hf_dataset")
    kind = place(source.path)
    if kind == "hub":
        if not HUB_ID.match(source.path):
            raise ConfigError(
                f"{raw.where('hf_dataset', 'path')}: hf_dataset.path '{source.path}' is neither a Hub id (org/name) "
                f"nor a local path{did_you_mean(source.path, BUILDERS)}",
                hint="write local folders with ./, ../ or /; packaged builders are " + ", ".join(BUILDERS),
            )
        if source.revision is None or not (COMMIT.match(source.revision) or source.revision == "main"):
            got = "no revision" if source.revision is None else f"revision '{source.revision}'"
            raise ConfigError(
                f"{where}: hf_dataset '{source.path}' is a Hub source with {got}: its data could change under "
                "the same task, and cached answers would mix versions",
                hint="pin the commit (revision: <40-hex sha>, from the repo's history on the Hub), or write "
                "revision: main to follow the branch knowingly",
            )
    elif source.revision is not None:
        raise ConfigError(
            f"{where}: hf_dataset.revision is for Hub sources; '{source.path}' is {kind} and is pinned by its "
            "files' hashes", hint="remove revision",
        )
    absolute = [p for p in _patterns(source.data_files) if Path(p).is_absolute() or ".." in Path(p).parts]
    if absolute:
        raise ConfigError(f"{raw.where('hf_dataset', 'data_files')}: hf_dataset.data_files '{absolute[0]}' leaves "
                          "the source's folder", hint="make the files' folder the source (path: ../data, data_files: {train: "
                          "train.jsonl}): data_files are read inside it")
    if kind == "builder" and source.data_files is None:
        raise ConfigError(
            f"{raw.where('hf_dataset')}: hf_dataset.path '{source.path}' is a packaged builder: it reads data_files",
            hint="add data_files, e.g. {train: train.jsonl, test: test.jsonl} (relative to this file)",
        )
    try:
        item_type(source.columns)
    except ValueError as exc:
        raise ConfigError(f"{raw.where('hf_dataset', 'columns')}: hf_dataset.columns: {exc}",
                          hint=f"item fields: {', '.join(FIELDS)}") from None
    local = (_base(raw) / source.path).resolve()
    if kind == "local" and not local.is_dir():
        what = "is a file, not a folder" if local.exists() else f"does not exist (looked for {local})"
        raise ConfigError(
            f"{raw.where('hf_dataset', 'path')}: hf_dataset.path '{source.path}' {what}",
            hint="a local source is a folder (save_to_disk, or data files), relative to the file that sets it; "
            "for files alone write path: json (parquet, csv...) with data_files",
        )


def build_spec(config, raw) -> DatasetSpec:
    """The spec of a checked source: its files hashed, its splits where the source lists them."""
    source = config.hf_dataset
    kind = place(source.path)
    revision = None
    if kind == "hub":
        root = fetch(source.path, source.revision, raw.where("hf_dataset", "path"))
        revision = root.name  # the snapshot folder is the commit, also for revision: main
        data_files = source.data_files
    elif kind == "builder":
        root, data_files = _base(raw), source.data_files
    else:
        root, data_files = (_base(raw) / source.path).resolve(), source.data_files
    relpaths = _matched(root, data_files, raw) if data_files is not None else _all_files(root, raw)
    if kind != "builder" and "README.md" not in relpaths and (root / "README.md").is_file():
        relpaths.append(_Walk(root, raw).add(root / "README.md"))  # the card: its configs shape what load_dataset reads
    if not relpaths:
        raise DataError(f"{raw.where('hf_dataset')}: hf_dataset '{source.path}' has no files in {root}")
    files = tuple(DataFile(path=rel, sha256=stamped_sha256(root / rel)) for rel in relpaths)
    splits, fingerprints = _splits(root, data_files, kind, relpaths)
    splits = splits or _named_splits(config)
    card = _card(root, relpaths, source.name)
    counts = {s: n for s, n in card.get("splits", {}).items() if s in splits}
    return DatasetSpec(
        name=config.dataset, files=files, loader=LOADER, splits=splits, root=str(root),
        description=f"datasets source {source.path}" + (f" ({source.name})" if source.name else ""),
        licence=card.get("license", ""), citation=card.get("citation", ""),
        counts={"verify": "metabench.data.hf_items:verify", **({"items": counts} if counts else {})},
        source={
            "path": source.path, "place": kind, "name": source.name, "revision": revision,
            "requested_revision": source.revision, "data_files": data_files, "columns": dict(source.columns),
            "fingerprints": fingerprints, "where": raw.where("hf_dataset"),
        },
    )


def fetch(repo: str, revision: str, where: str) -> Path:
    """The local snapshot of a Hub dataset at a revision: from metabench's Hub cache, fetched when allowed.

    Once per process (a task loads once per job): a pinned commit is looked for in the cache before the Hub
    is asked; ``main`` asks the Hub where the branch is, unless the network is off."""
    key = (repo, revision, str(hub_cache()))
    if key in _SNAPSHOTS:
        return _SNAPSHOTS[key]
    try:
        from huggingface_hub import snapshot_download  # noqa: PLC0415 - only for Hub sources
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled  # noqa: PLC0415
    except ImportError as exc:
        raise missing_extra(exc, f"{where}: hf_dataset '{repo}'") or exc from None

    is_offline, error = offline(), None
    for local in (True,) if is_offline else (False,) if revision == "main" else (True, False):
        try:
            _SNAPSHOTS[key] = Path(snapshot_download(repo, repo_type="dataset", revision=revision,
                                                     cache_dir=hub_cache(), local_files_only=local))
            return _SNAPSHOTS[key]
        except (LocalEntryNotFoundError, OfflineModeIsEnabled, HfHubHTTPError, OSError) as exc:
            error = exc
    command = f"hf download {repo} --repo-type dataset --revision {revision} --cache-dir {hub_cache()}"
    why = ("is not in the local cache and the network is off (HF_DATASETS_OFFLINE / HF_HUB_OFFLINE / "
           "METABENCH_ALLOW_DOWNLOAD=0)" if is_offline else f"could not be fetched: {error}")
    raise DataError(
        f"{where}: hf_dataset '{repo}' at revision {revision} {why}",
        hint=f"fetch it on a machine with the network: `{command}`, then copy that folder to the same place here "
        "(under $METABENCH_CACHE_DIR/hf-hub)",
    )


_SNAPSHOTS: dict[tuple[str, str, str], Path] = {}


def _base(raw) -> Path:
    """The folder of the file that set ``hf_dataset.path`` (a shared ``_base.yaml`` may set it)."""
    hit = raw.located.lines.get(("hf_dataset", "path"))
    return Path(hit[0]).parent if hit else Path(raw.path).parent


def _all_files(root: Path, raw) -> list[str]:
    """Every file of a folder source, hidden files and folders (``.git``, ``.cache``) left out, walked without
    following links to folders and within the source limits (``path: /usr`` by mistake must not hash a system)."""
    walk = _Walk(root, raw)
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                walk.add(Path(folder) / name)
    return sorted(walk.found)


def _matched(root: Path, data_files, raw) -> list[str]:
    """The files ``data_files`` names under ``root`` (globs expanded, within the source limits); one matching
    nothing is an error."""
    walk = _Walk(root, raw)
    for pattern in _patterns(data_files):
        hits = [walk.add(path) for path in root.glob(pattern) if path.is_file()]
        if not hits:
            raise DataError(f"{raw.where('hf_dataset', 'data_files')}: hf_dataset.data_files '{pattern}' matches no "
                            f"file under {root}", hint=f"data_files are relative to {root}")
    return list(walk.found)


class _Walk:
    """The files of a source as they are found: each a regular file whose real location is inside the source's
    folder (a data file linked out of it would read, and hash, a file the task does not own), counted against
    ``limits.SOURCE_FILES`` and ``limits.SOURCE_BYTES`` before any is hashed."""

    def __init__(self, root: Path, raw):
        self.root, self.real_root, self.where = root, Path(os.path.realpath(root)), raw.where("hf_dataset", "path")
        if self.real_root.parent.name == "snapshots":  # a Hub snapshot: its files link to the repo's blobs/
            self.real_root = self.real_root.parent.parent
        self.found: dict[str, None] = {}
        self.bytes = 0

    def add(self, path: Path) -> str:
        """``path`` (below the root) taken as one of the source's files; its name relative to the root."""
        rel = str(path.relative_to(self.root))
        if rel in self.found:
            return rel
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(self.real_root):
            raise DataError(f"{self.where}: hf_dataset file '{rel}' leads to {real}, outside the source's folder "
                            f"{self.real_root}", hint="copy the file into the source's folder instead of linking it")
        self.found[rel] = None
        self.bytes += path.stat().st_size
        for limit, used in ((limits.SOURCE_FILES, len(self.found)), (limits.SOURCE_BYTES, self.bytes)):
            if used > limit.value:
                raise DataError(f"{self.where}: hf_dataset source {self.root} holds more than {int(limit.value):,} "
                                f"{limit.unit}, the limit on the {limit.name}",
                                hint=f"point path at the dataset's own folder (or name its data_files); raise the "
                                f"limit with {limit.env}")
        return rel


def _patterns(data_files) -> list[str]:
    """Every file name or glob of a ``data_files`` value (a string, a list, or a mapping of split to either)."""
    if data_files is None:
        return []
    if isinstance(data_files, str):
        return [data_files]
    if isinstance(data_files, list):
        return list(data_files)
    return [p for value in data_files.values() for p in _patterns(value)]


def _splits(root: Path, data_files, kind: str, relpaths: list[str]) -> tuple[tuple[str, ...], dict]:
    """(splits, datasets fingerprint per split) where the source says so without loading: a save_to_disk
    folder (dataset_dict.json, state.json) or a data_files mapping. Empty splits: unknown until loaded."""
    if isinstance(data_files, dict):
        return tuple(data_files), {}
    if data_files is not None:
        return ("train",), {}  # datasets' name for files given without splits
    if kind == "local" and "dataset_dict.json" in relpaths:
        splits = tuple(json.loads(read_text(root / "dataset_dict.json", error=DataError))["splits"])
        return splits, {s: _fingerprint(root / s / "state.json") for s in splits}
    if kind == "local" and "state.json" in relpaths:
        state = json.loads(read_text(root / "state.json", error=DataError))
        split = state.get("_split") or "train"
        return (split,), {split: state.get("_fingerprint")}
    return (), {}


def _card(root: Path, relpaths: list[str], config_name: str | None) -> dict:
    """What the source says about itself: licence, citation and rows per split (``splits``), from a Hub
    dataset card's YAML header (README.md) or a save_to_disk folder's dataset_info.json. The row counts become
    the spec's ``counts``, which ``metabench data verify`` recomputes through the loader."""
    out: dict = {}
    if "README.md" in relpaths:
        out = _card_header(read_bytes(root / "README.md", error=DataError).decode("utf-8", errors="replace"), config_name)
    for info_path in [r for r in relpaths if r.endswith("dataset_info.json")]:
        try:
            info = json.loads(read_text(root / info_path, error=DataError))
        except (OSError, ValueError):
            continue
        out.setdefault("license", info.get("license") or "")
        out.setdefault("citation", info.get("citation") or "")
        for name, split in (info.get("splits") or {}).items():
            if isinstance(split, dict) and isinstance(split.get("num_examples"), int):
                out.setdefault("splits", {})[name] = split["num_examples"]
    return {k: v for k, v in out.items() if v}


def _card_header(text: str, config_name: str | None) -> dict:
    """licence, citation and split sizes from a dataset card's YAML header (``dataset_info`` is one mapping,
    or a list with one per ``config_name``)."""
    import yaml  # noqa: PLC0415

    if not text.startswith("---"):
        return {}
    try:
        header = yaml.safe_load(text[3:].split("\n---", 1)[0]) or {}
    except yaml.YAMLError:
        return {}
    if not isinstance(header, dict):
        return {}
    licence = header.get("license")
    out: dict = {"license": ", ".join(licence) if isinstance(licence, list) else str(licence or "")}
    infos = header.get("dataset_info")
    infos = infos if isinstance(infos, list) else [infos] if isinstance(infos, dict) else []
    wanted = [i for i in infos if isinstance(i, dict) and i.get("config_name", "default") == (config_name or "default")]
    for info in wanted[:1]:
        out["splits"] = {split["name"]: split["num_examples"] for split in info.get("splits") or []
                         if isinstance(split, dict) and isinstance(split.get("num_examples"), int)}
    return out


def _fingerprint(state: Path) -> str | None:
    """The fingerprint ``datasets`` gave a saved split (its state.json), None where unreadable."""
    try:
        return json.loads(read_text(state, error=DataError)).get("_fingerprint")
    except (OSError, ValueError):
        return None


def _named_splits(config) -> tuple[str, ...]:
    """The splits a task names from its own source, for a source that lists none before loading (a Hub
    repo, a folder of data files): an unknown one is an error when it is loaded."""
    names: list[str] = []
    for role in ("train", "validation", "test", "fewshot"):
        value = getattr(config.splits, role)
        for one in value if isinstance(value, list) else [value] if value is not None else []:
            own = isinstance(one, str) or getattr(one, "dataset", None) in (None, config.dataset)
            split = one if isinstance(one, str) else one.split
            if own and split not in names:
                names.append(split)
    return tuple(names)
