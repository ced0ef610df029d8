"""The job builder: what a (task, model) job is, and a task made ready to run — its kind and its loaded data.

Shared by the runner and the lm-eval exporter, so both build kinds and metric functions, resolve split
slices (one or a list of them) and apply ``--limit`` the same way.

- :class:`Job` is a plain description of one unit of work (the validated task, the ``--model`` spec and the
  run options). It holds no registry, adapter or open file, so it can be pickled and run by another process
  (a launcher rebuilds the registry there with ``plugins.load()``).
- :func:`prepare` loads a task's splits and builds its kind. Each split role's slices are resolved once and
  kept with the loaded items, and the data hashes are computed from them (never re-resolved), so the hash
  always describes exactly the data that was loaded.
"""

from __future__ import annotations

import hashlib
import os
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .config.index import LoadedTask
from .config.schema import ROLES
from .data.load import LoadedSplit, load_split
from .kinds.base import Kind
from .errors import MetabenchError
from .models.base import AdapterSettings
from .models.spec import ModelSpec
from .progress import style as progress_style
from .registry import Registry



@dataclass
class RunOptions:
    """Run-wide options (``metabench run`` flags); plain values, so a :class:`Job` stays picklable."""

    output_dir: Path = Path("runs")
    seeds: list[int] | None = None
    limit: int | None = None
    data_dir: Path | None = None
    use_cache: bool = True
    #: True: bars on a terminal, plain lines where stderr is not one (resolved here, in the process that starts
    #: the run, so workers get "bars" or "lines"); False: nothing; "bars" / "lines" (`--progress`): that style
    #: (:mod:`metabench.progress`)
    progress: bool | str = True
    launcher: str = "serial"  # auto | serial | processes | ray (see metabench.launch; the CLI's default is auto)
    ray_address: str | None = None  # join this Ray cluster instead of starting a local one
    workers: int | None = None  # worker processes, or the CPUs of a local Ray (default: all CPUs)
    overwrite: bool = False  # --overwrite: replace a finished run whose samples differ
    repeat: int = 1  # --repeat: draws per item and seed of sampled generation, voted (metabench.launch.repeats)
    #: --log-responses: keep each generated answer's text in samples.jsonl (``response``), read again by verification
    log_responses: bool = False

    def __post_init__(self):
        """Paths may be given as strings (a script's ``RunOptions(output_dir="out")``); anything else (``123``)
        is refused here, naming the option, rather than failing as a bare ``TypeError``."""
        self.output_dir = _folder(self.output_dir, "--output-dir")
        if self.data_dir is not None:
            self.data_dir = _folder(self.data_dir, "--data-dir")
        if self.progress is True:
            self.progress = progress_style(True)

    @property
    def progress_style(self) -> str:
        """``bars``, ``lines`` or ``off`` (:func:`metabench.progress.style`)."""
        return progress_style(self.progress)

    @property
    def adapter_settings(self) -> AdapterSettings:
        """An adapter's ``progress`` is whether it draws bars; in the lines style its meters print lines
        (`metabench.progress.meter`)."""
        return AdapterSettings(use_cache=self.use_cache, progress=self.progress_style == "bars")


@dataclass(frozen=True)
class Job:
    """One (task, model) job: everything needed to run it, as data. ``position`` is (its number, the run's job
    count), shown in its progress bar ("job 37/554") so a long ``--tasks all`` says how far it has come."""

    task: LoadedTask
    model: ModelSpec
    options: RunOptions
    position: tuple[int, int] = (1, 1)


@dataclass
class Split:
    """One split role as loaded: the items, the slices they came from and the sha256 of every file read."""

    items: list
    slices: list[tuple[str, str, dict]]
    listed: bool  # the role was given as a list of slices (recorded as a list in the data hash)
    files: dict[str, str] = field(default_factory=dict)
    _ids: tuple | None = field(default=None, repr=False, compare=False)
    _whole: tuple | None = field(default=None, repr=False, compare=False)  # (items as loaded, their one _Slice)

    def identity(self) -> dict:
        return {"slice": self.slices if self.listed else self.slices[0], "files": self.files, "ids": self.ids_sha256()}

    def ids_sha256(self) -> str:
        """sha256 of the sorted item ids: fold membership is part of what a score depends on.

        Remembered for the items it was computed from (a job asks three times: the answer and training data
        hashes and results.json), and for a split that is one whole slice, by the slice: the three views of
        a Boisson fold and the models of a run load the same slice, and sorting a 10^5-item training split
        per job showed in `--tasks all`."""
        whole = self._slice()
        if whole is not None:
            return whole.ids_sha256()
        if self._ids is None or self._ids[0] is not self.items or self._ids[1] != len(self.items):
            self._ids = (self.items, len(self.items), ids_sha256(self.items))
        return self._ids[2]

    def golds(self, kind) -> list:
        """``kind.golds`` of the items; for a split that is one whole slice, read once per slice and kind
        semantics (``Kind.gold_key``): every view and fold task re-read its training split's golds."""
        whole, key = self._slice(), kind.gold_key()
        if whole is None or key is None:
            return kind.golds(self.items)
        if key not in whole.golds:
            whole.golds[key] = kind.golds(self.items)
        return list(whole.golds[key])

    def _slice(self):
        """The one slice these items are, unless the split has several or its items were changed (``--limit``)."""
        if self._whole is not None and self._whole[0] is self.items and len(self.items) == len(self._whole[1].loaded.items):
            return self._whole[1]
        return None


def ids_sha256(items: list) -> str:
    return hashlib.sha256("\n".join(sorted(str(i.id) for i in items)).encode("utf-8")).hexdigest()


@dataclass
class TaskData:
    """A task ready to run: its kind (with the task's metric functions) and its loaded splits.

    ``test`` is cut to ``limit`` items; the kind has seen the training split (``fit_context``), so requests
    built from it (few-shot examples, in-vocabulary flags) are the ones the runner sends.
    """

    task: LoadedTask
    kind: Kind
    splits: dict[str, Split | None]
    limit: int | None
    n_test_items: int  # the whole test split, before ``limit``

    @property
    def test(self) -> Split:
        return self.splits["test"]

    def data_hash(self, roles: tuple[str, ...] = ROLES, *, with_limit: bool = True) -> str:
        """Identifies the data of some split roles: which slices play each role and their files' hashes.

        The answer cache keys on all roles and ``--limit``; a trained checkpoint keys on train and validation
        only, so every task that trains on the same data reuses it whatever its test set.
        """
        payload: dict = {"limit": self.limit if with_limit else None}
        for role in roles:
            split = self.splits.get(role)
            if split is not None:
                payload[role] = split.identity()
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def build_kind(registry: Registry, task: LoadedTask, protocol: str | None = None, choice=None):
    """The task's kind, with the metric functions its YAML names; for a model following ``protocol`` (a section
    key: ``decoder``, ``decoder_generated``...) whose section names its own kind, the task's kind answered through
    that one (:class:`metabench.kinds.answered.Answered`). ``choice`` (`metabench.answering.Choice`): a decoder's
    ``shots`` and ``parse`` arguments."""
    config = task.config
    metric_fns = {m.name: registry.resolve("metric", m.name) for m in config.metric_specs()}
    own = registry.resolve("kind", config.kind)(config, metric_fns)
    section = getattr(config.protocol, protocol, None) if protocol else None
    kind = own
    if getattr(section, "kind", None) is not None and section.kind != config.kind:  # the tagger's is the task's own
        from .answering import mode_of, section_config
        from .kinds.answered import Answered

        prompted = registry.resolve("kind", section.kind)(section_config(config, section, choice), metric_fns)
        kind = Answered(own, prompted, mode_of(prompted.request_type()))
    if choice is not None and choice.shots is not None:
        (kind.prompted if kind is not own else kind).use_shots(choice.shots)
    kind.protocol = protocol
    return kind


def prepare(registry: Registry, task: LoadedTask, *, limit: int | None = None, data_dir: Path | None = None,
            kind=None) -> TaskData:
    """Load every split role of ``task`` (the test split cut to ``limit``) and build its kind (or take the
    one given, built by :func:`build_kind`)."""
    kind = kind or build_kind(registry, task)
    splits = {role: _load(registry, task, role, data_dir) for role in ROLES}
    test = splits["test"]
    n_test_items = len(test.items)
    if limit is not None:
        test.items = test.items[:limit]
    if not test.items:
        raise MetabenchError(f"task '{task.name}': the test split is empty")
    _check_unique_ids(task, test.items)
    if splits["train"] is not None:
        kind.fit_context(splits["train"].items)
    if splits["fewshot"] is not None:
        kind.fit_fewshot(splits["fewshot"].items)
    return TaskData(task, kind, splits, limit, n_test_items)


@dataclass
class _Slice:
    """A loaded slice, with what jobs sharing it compute the same way: the sha256 of its item ids and its
    golds per kind semantics."""

    loaded: LoadedSplit
    _ids: str | None = None
    golds: dict = field(default_factory=dict)  # Kind.gold_key() -> the golds of the slice's items

    def ids_sha256(self) -> str:
        if self._ids is None:
            self._ids = ids_sha256(self.loaded.items)
        return self._ids


@lru_cache(maxsize=32)
def _load_memo(registry, dataset: str, split: str, args_json: str, data_dir, folders: tuple[Path | None, Path]) -> _Slice:
    """Each dataset slice is read once per process, however many tasks and models use it. ``folders``: where
    the files are read from (the mirror, resolved from ``data_dir`` or ``METABENCH_DATA_DIR``, and the data
    cache), so a process that points either elsewhere (a Python API user switching mirrors, a test) reads the
    other folder's files instead of being served the first folder's items."""
    return _Slice(load_split(registry, dataset, split, json.loads(args_json), data_dir))


def release_loaded() -> None:
    """Forget the slices kept for jobs that share them: a report that loads data only to check runs against it
    must not carry ~10^6 items, and the garbage collector's passes over them, through the rest of its work."""
    _load_memo.cache_clear()


def _load(registry, task: LoadedTask, role: str, data_dir: Path | None) -> Split | None:
    if role not in task.slices:
        return None
    from .data.resolve import cache_dir, data_dir_from_env

    folders = (Path(data_dir).expanduser().resolve() if data_dir is not None else data_dir_from_env(), cache_dir())
    out = Split([], [], isinstance(getattr(task.config.splits, role), list))
    for dataset, split, args in task.slices[role]:  # several slices are concatenated in order (EN + ES training)
        one_slice = _load_memo(registry, dataset, split, json.dumps(args, sort_keys=True), data_dir, folders)
        loaded = one_slice.loaded
        out.slices.append((dataset, split, args))
        out.items.extend(loaded.items)
        out.files.update({f"{dataset}:{path}": sha for path, sha in loaded.files.items()})
    if len(out.slices) == 1:  # the split is this slice: its id hash and golds are the slice's
        out._whole = (out.items, one_slice)
    return out


def _check_unique_ids(task: LoadedTask, items: list) -> None:
    seen = set()
    for item in items:
        if item.id in seen:
            raise MetabenchError(
                f"task '{task.name}': item id '{item.id}' appears twice in the test split",
                hint="ids must be unique for caching and paired tests; fix the dataset loader",
            )
        seen.add(item.id)


def _folder(value, option: str) -> Path:
    """A folder option given as text or a path (an empty name is no folder)."""
    if isinstance(value, (str, os.PathLike)) and str(value).strip():
        return Path(value)
    raise MetabenchError(f"{option} {value!r}: expected a folder (a path or its name as text)",
                         hint=f"e.g. {option} runs, or output_dir='runs' in Python")
