"""Finding stored runs on disk: a run folder, a results.json path, or a folder of many runs.

The reporter reads nothing but these files (see ``metabench.store``), so runs made on another machine or
by an older metabench compare the same way as fresh ones. Each run's results.json is read as a
:class:`metabench.run_record.RunRecord` (``Run.record``: the typed fields and the derived answers). Samples are read
lazily: a leaderboard of many runs only reads the samples of the runs it tests.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import MetabenchError, PluginAPIDeprecationWarning, RunFileError
from ..printable import escape
from ..run_record import RunRecord
from ..store import RESULTS, read_record, read_samples, resolve, run_folders


class Run:
    """One stored run: its folder, its results.json as a :class:`RunRecord` (``record``: validated when read from
    disk, every reader takes its typed fields and derived answers) and its samples, read on first use."""

    def __init__(self, path: Path, record: RunRecord, _samples: list[dict] | None = None, *,
                 split_size: int | None = None):
        if not isinstance(record, RunRecord):
            raise TypeError(f"Run needs a RunRecord (store.read_record, RunRecord.read), not {type(record).__name__}")
        self.path = path
        self._record = record
        self._samples = _samples
        #: the whole test split's size as the data gives it, set by verification (`verify.verify_runs`) where
        #: the task's data could be loaded; None before, or where it could not (the run's own record is read)
        self.split_size = split_size

    def __repr__(self) -> str:
        return f"Run(path={self.path!r}, task={self.record.task.name!r}, model={self.record.model.spec!r})"

    @property
    def record(self) -> RunRecord:
        """results.json as a :class:`RunRecord`."""
        return self._record

    @property
    def test_split_size(self) -> int | None:
        """The whole test split's size: as the data gives it once verification loaded it, else as the run
        recorded it (``n_test_items``; None for runs older than that record)."""
        return self.split_size if self.split_size is not None else self.record.n_test_items

    @property
    def partial_reasons(self) -> list[str]:
        """Why the run scored only part of its test split ([] for a whole run): `RunRecord.partial_reasons`
        (`partial_runs.partial`) on the items it scored (``n_items``, which verification holds to its distinct
        test items) and `test_split_size`. Seeds are not judged: a run does not record whether its adapter is
        deterministic."""
        return self.record.partial_reasons(self.test_split_size)

    @property
    def partial(self) -> bool:
        """True when the run scored only part of the test split (`partial_reasons`)."""
        return bool(self.partial_reasons)

    @property
    def samples(self) -> list[dict]:
        if self._samples is None:
            self._samples = read_samples(self.path, self.record)
        return self._samples

    if not TYPE_CHECKING:  # type checkers see no deprecated name: a use of one is an error there
        def __getattr__(self, name: str):
            """The record's answers ``Run`` forwarded until issue 59 (``run.task``, ``run.seeds``...): still
            answered, with a :class:`PluginAPIDeprecationWarning` naming the record's own, until metabench 0.2."""
            if name not in FORWARDED:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            where = FORWARDED[name]
            warnings.warn(f"Run.{name} is deprecated: read run.record.{where} (docs/plugins.md, change log)",
                          PluginAPIDeprecationWarning, stacklevel=2)
            value = self.record
            for step in where.removesuffix("(metric)").split("."):
                value = getattr(value, step)
            return list(value) if name == "seeds" else value


#: The names ``Run`` forwarded from its record until issue 59 (deprecated, removed in metabench 0.2) -> what to
#: read instead on ``Run.record``: a ``Run`` is its folder, its record and its samples, and the answers verification
#: adds (``split_size``, ``test_split_size``, ``partial_reasons``, ``partial``).
FORWARDED: dict[str, str] = {
    "task": "task.name", "model": "model.spec", "seeds": "seeds", "primary_metric": "primary_metric",
    "n_items": "n_items", "protocol_seeds": "protocol_seeds", "budget": "budget", "datasets": "datasets",
    "groups": "groups", "paper_view": "paper_view", "higher_is_better": "higher_is_better_for(metric)",
    "aggregate": "aggregate(metric)", "per_seed": "per_seed(metric)",
}


def load_run(path: Path) -> Run:
    """A run from its folder or its results.json."""
    folder = resolve(path.parent if path.name == RESULTS else path)
    record = read_record(folder)
    return Run(folder, record)


def _utf8_named(path: Path) -> Path:
    """A run's folder name goes into pages, JSON and JUnit files, all UTF-8: a name that is not (bytes the file
    system kept as they were) is refused here, naming the folder, rather than failing the last write."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise RunFileError(f"{escape(str(path))}: the folder name is not valid UTF-8, and run folder names are "
                           "written into reports", hint="rename the folder (e.g. with a UTF-8 or ASCII name)") from None
    return path


def find_runs(paths: list[Path]) -> list[Run]:
    """Every run named by ``paths``: run folders, results.json files, or folders searched recursively.

    Order is the order of ``paths``, and sorted by folder within a searched folder, so "the first run"
    means the same thing on every machine. A run named twice (a folder and its parent, one folder given
    twice) is one run: counted twice it would be compared with itself or ranked twice.
    """
    runs: list[Run] = []
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise MetabenchError(f"{path}: no such file or folder", hint="pass run folders, results.json files or an output folder")
        if path.is_file() or (resolve(path) / RESULTS).is_file():
            found = [path]
        else:
            found = run_folders(path)
            if not found:
                raise MetabenchError(
                    f"{path}: no runs here (no {RESULTS} in this folder or below)",
                    hint="pass the --output-dir of `metabench run`, or one of its run folders",
                )
        for run in map(load_run, map(_utf8_named, found)):
            if run.path.resolve() not in seen:
                seen.add(run.path.resolve())
                runs.append(run)
    return runs


def one_per_task_and_model(runs: list[Run], option: str) -> list[Run]:
    """``runs`` with one run per (task, model), for reports that pick *the* run of a task and model: two
    different runs of one pair would leave the choice (and the verdict) to the order of the arguments, so they
    are refused. The same folder named twice, or two copies of one run (same samples), count once."""
    kept: dict[tuple[str, str], Run] = {}
    for run in runs:
        first = kept.setdefault((run.record.task.name, run.record.model.spec), run)
        if first is run or first.path.resolve() == run.path.resolve():
            continue
        if first.record.samples_sha256 != run.record.samples_sha256 or first.record.seeds != run.record.seeds:
            raise MetabenchError(
                f"{option}: two different runs of task '{run.record.task.name}' with model '{run.record.model.spec}': "
                f"{first.path} and "
                f"{run.path}; which one counts would depend on the order of the arguments",
                hint="pass only one of them (name the run folders, or one --output-dir per set of runs)",
            )
    return list(kept.values())


def by_task(runs: list[Run]) -> dict[str, list[Run]]:
    """Runs grouped by task name, tasks and runs in first-seen order."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.record.task.name, []).append(run)
    return groups
