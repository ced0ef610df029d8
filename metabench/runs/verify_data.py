"""Verifying runs against the data their task names, not against the run's own account of it.

Every digest in results.json was written by whoever wrote the run: a forger who rewrites the golds and then
recomputes every digest and metric, or who relabels a run of one task as another task of the same kind,
passes every check that reads run files only, and the honest runs are the ones left "not comparable". So each
task's data is loaded here the way a run loads it (`TaskIndex.load`, `jobs.prepare` with the run's
``--limit``, ``kind.golds``), its digests computed with the functions the run used (`jobs.ids_sha256` through
the loaded splits, `store.golds_sha256`), and every run of the task must agree with them: config hash, data
files, each split's size and ids, and the test ids and golds its samples hold. The loaded task is kept until `release`, for the
rebuild of every metric by the task's own kind (`rebuild`) and for the split's true size, from which "partial"
is judged (`metabench.partial_runs`), never from the run's own account of it.

Loading is the expensive part, so it happens once per (task, limit) per verifier (the parsed-item cache
makes a load cheap; tasks share slices). Data is read from the mirror and the cache only, never downloaded:
where it cannot be had here (no mirror, a task whose plugin is not installed), the run is *unverified*, which
the reports show and never rank above a verified run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config.index import LoadedTask, TaskIndex
from ..data.resolve import no_downloads
from ..errors import MetabenchError
from ..answering import parse_args, section_sha256
from ..jobs import TaskData, build_kind, prepare, release_loaded
from ..run_record import RunRecord
from ..store import golds_sha256


@dataclass(frozen=True)
class Expected:
    """What the data gives for one task at one ``--limit``: the digests a run of it must carry."""

    config_hash: str
    files: dict[str, str]  # "dataset:path" -> sha256, every split role's files
    splits: dict[str, dict]  # role -> {"n", "ids_sha256"}, the test split cut to the limit
    golds_sha256: str
    n_test_items: int  # the whole test split, before the limit
    data: TaskData  # the loaded task (its kind and items), for `rebuild`; dropped by `DataVerifier.release`


class DataVerifier:
    """Recomputes, per (task, limit), what a run of the task must hold, and compares runs with it."""

    def __init__(self, registry):
        self.registry = registry
        self._index: TaskIndex | None = None
        self._found: dict[tuple[str, int | None], Expected | str] = {}

    def task(self, name: str) -> LoadedTask | None:
        """The task as it is here (its config and hash, from the task files alone), or None where no task of
        that name is registered (a plugin not installed)."""
        if self._index is None:
            self._index = TaskIndex(self.registry)
        return self._index.tasks.get(name)

    def expected(self, task: str, limit: int | None) -> Expected | str:
        """The task's digests at ``limit``, or why they cannot be computed here (the run stays unverified)."""
        key = (task, limit)
        if key not in self._found:
            try:
                self._found[key] = self._compute(task, limit)
            except MetabenchError as exc:  # no mirror, a file that is not the pinned one, an unknown task
                hint = f" (fix: {exc.hint})" if exc.hint else ""
                self._found[key] = f"not checked against the data: {exc.message}{hint}"
        return self._found[key]

    def _compute(self, name: str, limit: int | None) -> Expected:
        if self._index is None:
            self._index = TaskIndex(self.registry)
        with no_downloads():
            task = self._index.load(name)
            data = prepare(self.registry, task, limit=limit)
            test = data.test
            golds = golds_sha256(zip((str(item.id) for item in test.items), test.golds(data.kind)))
        files: dict[str, str] = {}
        for split in data.splits.values():
            if split is not None:
                files.update(split.files)
        splits = {role: {"n": len(split.items), "ids_sha256": split.ids_sha256()}
                  for role, split in data.splits.items() if split is not None}
        return Expected(task.hash, files, splits, golds, data.n_test_items, data)

    def reader(self, record: RunRecord):
        """The answering kind that reads a generated run's stored responses as its task reads them here
        (`rebuild.rebuilt_from_data`), or None: not a generated run, or its protocol section is not the task's as
        it is here (another prompt or parser: its readings are checked through their scores alone)."""
        way = record.answering
        task = self.task(record.task.name)
        if way is None or way.mode != "generated" or not record.protocol or task is None:
            return None
        section = getattr(task.config.protocol, record.protocol, None)
        if section is None or getattr(section, "kind", None) is None or section_sha256(section) != way.section_sha256:
            return None
        try:
            choice = parse_args({k: str(v) for k, v in (record.model.args or {}).items()}, record.model.adapter)
            kind = build_kind(self.registry, task, record.protocol, choice)
        except MetabenchError:  # arguments no decoder takes here: nothing to read with
            return None
        return kind if getattr(kind, "prediction", None) is not None else None

    def forget(self, task: str, limit: int | None) -> None:
        """Drop one task's loaded data, its runs done with (`launch.reproduce.reproduce_runs`)."""
        self._found.pop((task, limit), None)

    def release(self) -> None:
        """Drop the loaded tasks and items (the verdicts are kept): verification is done with them."""
        self._found.clear()
        release_loaded()

    def problems(self, record: RunRecord, ids_sha256: str, golds: str) -> list[str] | str:
        """What in a run (its record) disagrees with the data (``ids_sha256`` and ``golds``: the digests of its
        samples' test ids and golds), or why it could not be checked."""
        name = record.task.name
        expected = self.expected(name, record.limit)
        if isinstance(expected, str):
            return expected
        rerun = rerun_hint(record)
        found = []
        if record.task.config_hash != expected.config_hash:
            found.append(f"its task config hash is not the one task '{name}' has here (the run was made with "
                         f"another version of the task, or under another task's name; fix: {rerun})")
        recorded_files = record.data_files
        if recorded_files != expected.files:
            differ = sorted(set(recorded_files) ^ set(expected.files)
                            | {f for f in recorded_files.keys() & expected.files.keys()
                               if recorded_files[f] != expected.files[f]})
            found.append(f"its data files are not the ones task '{name}' reads here ({', '.join(differ[:3])}"
                         f"{' ...' if len(differ) > 3 else ''}; fix: {rerun})")
        for role, want in expected.splits.items():
            got = split.as_json() if (split := record.split(role)) is not None else {}
            if any(key in got and got[key] != value for key, value in want.items()):
                found.append(f"its {role} split (data.splits.{role}) is not the one task '{name}' loads here")
        if ids_sha256 != expected.splits["test"]["ids_sha256"]:
            found.append(f"the item ids in samples.jsonl are not the test items of task '{name}' in the data"
                         + (f" at {record.limit_label}" if record.limit is not None else ""))
        elif golds != expected.golds_sha256:
            found.append(f"the golds in samples.jsonl are not the ones the data gives for task '{name}'")
        return found


def rerun_hint(record: RunRecord) -> str:
    """The fix of a run made with another version of its task: the rerun, with the run's own ``--limit``."""
    limit = f" {record.limit_label}" if record.limit is not None else ""
    return (f"rerun it with the task as it is here (metabench --tasks {record.task.name} --model "
            f"'{record.model.spec}'{limit}), or drop it")
