"""Merging runs of one recipe over disjoint seeds into one run (``metabench merge-seeds``).

Why: seeds are independent draws of one recipe, and on a CPU each is expensive (a MiniLM fine-tune on TroFi's ten
folds is ~50 CPU-minutes a seed). Seeds 3 and 4 computed on another machine, or another day, belong with seeds 0-2
already published; retraining all five to get one folder would throw hours away. A merged run is held to what a
run of all its seeds is held to, and it says what it is made of:

- every part passes verification first (its files, and its data: `verify.verify_runs`); a rejected part, or one
  whose data is not here to check it against, is refused;
- the runs of one task and model spec are merged (a task and model with one run is left out, named); they must
  be one recipe (`RECIPE`): the same task (name, version, config hash), data (files and split digests),
  model (spec, adapter, arguments, fingerprint: what identifies its answers), protocol, ``--limit`` and items; and
  the same package versions, unless ``mixed_environments`` (the parts' versions are recorded either way);
- no seed is in two parts, and ``--repeat`` runs are refused (their draws are recorded per run);
- the samples are the parts' rows, seed by seed in ascending order, each part's rows in its own order; the per-seed
  metrics are the parts' (verification rebuilt each from its samples), every aggregate is computed anew
  (`stats.seeds.seed_summary`), and the merged run is verified again before it is written;
- ``merged_from`` in the record lists each part: its folder, seeds, samples digest, when, by which metabench and
  where it was computed. The rest of the record describes the recipe as the newest part recorded it (a metabench
  older than a field recorded less: a split's size, the task's facts), its ``environment`` and ``plugins`` too,
  except that a package the parts were computed under in several versions is named with each version and its
  seeds in ``environment.mixed_packages`` (``packages`` alone would name one version for seeds made under two);
  its ``created`` and ``metabench`` are the merge's, which wrote the folder; its ``timings`` add up the parts'
  phases. The adapter's ``model.info`` is the newest part's, with every entry keyed by seed (``checkpoints``)
  joined over the parts. The record is a claim like any other: what a reader trusts is what verification
  rebuilds.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import MetabenchError
from ..models.spec import parse_model_spec
from ..partial_runs import cutting_limit
from ..printable import escape
from ..run_record import AdapterInfo, MergedPart, MetabenchInfo, Metrics, MetricSummary, RunRecord, Timings, check_written
from ..stats.seeds import seed_summary
from ..store import (RESULTS, SAMPLES, SAMPLES_GZ, check_run_dir, metabench_info, read_record, run_name,
                     samples_text, seal, seed_text, write)
from .stored import Run, find_runs
from .verify import verify_runs

#: What makes two runs one recipe: (what a message calls it, how it is read from a record), in the order checked:
#: the settings a user chose before the digests they change.
RECIPE: tuple[tuple[str, Callable[[RunRecord], object]], ...] = (
    ("task.name", lambda r: r.task.name),
    ("task.version", lambda r: r.task.version),
    ("task.config_hash", lambda r: r.task.config_hash),
    ("model.spec", lambda r: r.model.spec),
    ("model.adapter", lambda r: r.model.adapter),
    ("model.family", lambda r: r.model.family),
    ("model.args", lambda r: r.model.args),
    ("model.fingerprint", lambda r: r.model.fingerprint),
    ("protocol", lambda r: r.protocol),
    ("limit", lambda r: r.limit),
    ("n_items", lambda r: r.n_items),
    ("n_test_items", lambda r: r.n_test_items),  # null in a record older than the field: unknown
    ("higher_is_better", lambda r: r.higher_is_better),
    ("data.files", lambda r: r.data.files if r.data else None),
    ("data.splits", lambda r: {k: v.as_json() for k, v in r.data.splits.items()} if r.data and r.data.splits else None),
)
#: Fields a record older than them lacks (null): unknown there, so they agree with any value. Verification has
#: held every part to the data here already (split sizes, ids and golds recomputed from it).
_UNKNOWN_WHEN_NULL = ("n_test_items", "data.splits")
#: Timing phases that add up over the parts (a merged run's work is theirs).
_PHASES = ("cached_items", "data_hash_s", "model_hash_s", "model_load_s", "cache_lookup_s", "load_s", "fit_s",
           "predict_s", "score_s", "write_s", "total_s")


@dataclass
class Merged:
    """One merged run: where it went, its parts (lowest seeds first) and its record."""

    path: Path
    parts: list[Run]
    record: RunRecord


def merge_runs(registry, paths: list[Path], output_dir: Path, *, mixed_environments: bool = False,
               overwrite: bool = False, dry_run: bool = False, skipped: list[str] | None = None) -> list[Merged]:
    """Merge the runs under ``paths`` (folders of runs, or run folders): the runs of each task and model spec must be
    one recipe over disjoint seeds. A task and model with one run has nothing to merge: it is left out and named in
    ``skipped`` (a list the caller passes), so two output folders can be given whole; when nothing is left to merge,
    that is the error. Nothing is written unless every merge is valid and every destination checked (`_plan`);
    ``dry_run``: nothing is written at all, and a merge that would be refused says so ("would be refused: ...").
    A write that fails half-way (a full disk) removes the merged folders this call created."""
    try:
        planned = _plan(registry, paths, output_dir, mixed_environments=mixed_environments, overwrite=overwrite,
                        skipped=skipped)
    except MetabenchError as exc:
        if not dry_run:
            raise
        raise MetabenchError(f"merge-seeds --dry-run: would be refused: {exc.message.removeprefix('merge-seeds: ')}",
                             hint=exc.hint) from None
    if not dry_run:
        _write(registry, planned, output_dir, overwrite)
    return [Merged(path, parts, record) for parts, record, _, path in planned]


def _plan(registry, paths: list[Path], output_dir: Path, *, mixed_environments: bool, overwrite: bool,
          skipped: list[str] | None) -> list[tuple[list[Run], RunRecord, list[dict], Path]]:
    """Every check a merge passes before its first file is written: the parts, their recipe, the merged record,
    and where it goes."""
    _check_output_dir(output_dir)
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in find_runs(paths):
        groups.setdefault((run.record.task.name, run.record.model.spec), []).append(run)
    lonely = [f"{escape(task)} with {escape(model)} ({escape(found[0].path)})"
              for (task, model), found in groups.items() if len(found) < 2]
    groups = {key: found for key, found in groups.items() if len(found) > 1}
    if not groups:
        raise MetabenchError(f"merge-seeds: nothing to merge: one run only of {', '.join(lonely)}",
                             hint="name the runs of every seed set of a task and model, e.g. "
                                  "'runs/vua18_seq/hf_minilm-l6@seeds=0-2 more/vua18_seq/hf_minilm-l6@seeds=3,4'")
    if skipped is not None:
        skipped.extend(f"{name}: one run only, nothing to merge it with" for name in lonely)
    _refuse_output_in_a_part(output_dir, [run for found in groups.values() for run in found])
    _verify_parts(registry, [run for found in groups.values() for run in found])
    planned = []
    destinations: dict[Path, str] = {}
    for (task, model), parts in groups.items():
        parts.sort(key=lambda run: min(run.record.seeds))
        _check_one_recipe(parts, mixed_environments)
        record, samples = _merged(parts)
        path = output_dir / task / _folder(record)
        if path in destinations:
            raise MetabenchError(
                f"merge-seeds: the runs of {escape(destinations[path])} and of {escape(model)} would both be merged into "
                f"{escape(path)} (their specs name one folder)",
                hint="merge them one spec at a time, into two output folders (-o)")
        destinations[path] = model
        _check_destination(path, parts, record, samples, overwrite)
        planned.append((parts, record, samples, path))
    return planned


def _write(registry, planned: list[tuple[list[Run], RunRecord, list[dict], Path]], output_dir: Path,
           overwrite: bool) -> None:
    created: list[Path] = []
    try:
        with _scratch_folder(output_dir) as scratch:
            for _, record, samples, path in planned:
                _check_before_writing(registry, scratch, path, record, samples)
        for _, record, samples, path in planned:
            new = not path.exists()
            write(path, seal(record, samples, where=path), overwrite=overwrite)
            if new:
                created.append(path)
    except OSError as exc:
        for path in created:  # all or nothing: what this call created goes
            shutil.rmtree(path, ignore_errors=True)
        raise MetabenchError(f"merge-seeds: -o {escape(output_dir)}: the merged run could not be written "
                             f"({exc.strerror or exc}{': ' + escape(exc.filename) if exc.filename else ''}); "
                             "nothing was merged",
                             hint="choose an output folder you can write to, on a disk with room for the runs") from None


def _check_output_dir(output_dir: Path) -> None:
    """-o is a folder, or can become one: a file (``/dev/null`` too), or a folder that cannot be written, is
    refused before any part is read."""
    if output_dir.exists() and not output_dir.is_dir():
        raise MetabenchError(f"merge-seeds: -o {escape(output_dir)} is a file, not a folder",
                             hint="name the folder the merged runs go into, e.g. -o leaderboard/runs")
    existing = next(folder for folder in (output_dir, *output_dir.absolute().parents) if folder.exists())
    if not existing.is_dir():
        raise MetabenchError(f"merge-seeds: -o {escape(output_dir)}: {escape(existing)} is a file, not a folder",
                             hint="name a folder the merged runs can go into")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise MetabenchError(f"merge-seeds: -o {escape(output_dir)}: {escape(existing)} is not writable",
                             hint="choose an output folder you can write to")


def _refuse_output_in_a_part(output_dir: Path, parts: list[Run]) -> None:
    """A merged run written inside one of its parts would nest a run in a run (and --overwrite could replace it)."""
    out = output_dir.resolve()
    for run in parts:
        folder = run.path.resolve()
        if out == folder or out.is_relative_to(folder):
            raise MetabenchError(f"merge-seeds: -o {escape(output_dir)} is inside the part {escape(run.path)}: the merged "
                                 "run would be written into one of the runs it is made of",
                                 hint="write merged runs beside their parts, e.g. -o leaderboard/runs, or into a new folder")


def _check_destination(path: Path, parts: list[Run], record: RunRecord, samples: list[dict], overwrite: bool) -> None:
    """Where the merged run goes: never one of its parts, never a folder holding anything but a run (not even with
    --overwrite: it replaces a run, never the user's files), and a run with other answers only with --overwrite.
    The record is checked as the writer will check it, so that a part whose record is of an older format is named."""
    check_run_dir(path)
    if any(path.resolve() == run.path.resolve() for run in parts):
        raise MetabenchError(f"merge-seeds: the merged run would replace its own part {escape(path)}",
                             hint="write it into another output folder (-o)")
    digest = hashlib.sha256(samples_text(samples).encode("utf-8")).hexdigest()
    newest = max(parts, key=lambda run: run.record.created or "")
    try:
        check_written(record.model_copy(update={"samples_sha256": digest}), path / RESULTS)
    except MetabenchError as exc:
        raise MetabenchError(
            f"merge-seeds: {escape(newest.path)}, the newest part, whose record the merged run's is built from, is of an "
            f"older format: {exc.message.removeprefix(f'{path / RESULTS}: ')}",
            hint="merge it with parts computed by this metabench only (rerun its seeds), or upgrade its record with "
                 "tools/migrate_runs.py") from None
    if not path.exists() or not any(path.iterdir()):
        return
    entries = sorted(p.name for p in path.iterdir())
    try:
        old = read_record(path) if set(entries) <= {RESULTS, SAMPLES, SAMPLES_GZ} else None
    except MetabenchError:
        old = None
    if old is None:
        raise MetabenchError(f"merge-seeds: {escape(path)} already holds files that are not a run "
                             f"({escape(', '.join(entries[:3]))}{', ...' if len(entries) > 3 else ''}); refusing to replace "
                             "them, with --overwrite or not (it replaces a run only)",
                             hint="move those files away, or write the merged run elsewhere with -o")
    if old.samples_sha256 != digest and not overwrite:
        raise MetabenchError(f"merge-seeds: {escape(path)} already holds a run with other answers (created "
                             f"{old.created}, seeds {old.seeds}); refusing to replace it",
                             hint="pass --overwrite to replace it, or write the merged run elsewhere with -o")


#: Scratch folders of merges in progress, in the output folder (never the system's temporary folder: a killed
#: merge leaves its copy where the next merge into that folder finds it, and removes it).
_SCRATCH = ".metabench-merge-"


@contextmanager
def _scratch_folder(output_dir: Path):
    output_dir.mkdir(parents=True, exist_ok=True)
    for stale in output_dir.glob(f"{_SCRATCH}*"):
        if not _alive(stale.name[len(_SCRATCH):].split("-")[0]):
            shutil.rmtree(stale, ignore_errors=True)
    scratch = output_dir / f"{_SCRATCH}{os.getpid()}-{secrets.token_hex(4)}"
    scratch.mkdir()
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _alive(pid: str) -> bool:
    """Whether the merge that made a scratch folder still runs (the folder names its process)."""
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except PermissionError:  # another user's process
        return True
    except (ProcessLookupError, OverflowError):
        return False
    return True


def _verify_parts(registry, runs: list[Run]) -> None:
    _, rejected, verdicts = verify_runs(registry, runs)
    problems = [f"{v.run.path}: rejected: {'; '.join(v.problems)}" for v in rejected]
    problems += [f"{run.path}: unverified: {verdicts[id(run)].unverified}" for run in runs
                 if verdicts[id(run)].ok and verdicts[id(run)].unverified]
    if problems:
        raise MetabenchError("merge-seeds: a part does not pass verification, so it is not merged:\n  "
                             + "\n  ".join(problems),
                             hint="merge only runs that `metabench verify-run` verifies (set METABENCH_DATA_DIR to "
                                  "the data mirror where their data is not found)")


def _check_one_recipe(parts: list[Run], mixed_environments: bool) -> None:
    first = parts[0]
    for run in parts[1:]:
        for label, read in RECIPE:
            mine, theirs = read(first.record), read(run.record)
            if label in _UNKNOWN_WHEN_NULL and (mine is None or theirs is None):
                continue
            if mine != theirs:
                raise MetabenchError(
                    f"merge-seeds: {first.path} and {run.path} are not one recipe: their {label} differ "
                    f"({_short(mine)} and {_short(theirs)})",
                    hint="merge seeds of one task, model and configuration only; rerun the odd part with the "
                         "other's settings")
        if run.record.repeat is not None or first.record.repeat is not None:
            raise MetabenchError(f"merge-seeds: {run.path if run.record.repeat else first.path} is a --repeat run, "
                                 "whose draws are recorded per run and are not merged",
                                 hint="run all its seeds in one command instead")
        if not mixed_environments:
            mine, theirs = _packages(first), _packages(run)
            if mine != theirs:
                changed = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
                raise MetabenchError(
                    f"merge-seeds: {first.path} and {run.path} were computed with other package versions ("
                    + ", ".join(f"{k} {mine.get(k, 'absent')} and {theirs.get(k, 'absent')}" for k in changed) + ")",
                    hint="rerun the part with the same versions, or pass --mixed-environments to merge them anyway "
                         "(each part's versions stay in merged_from)")
    seen: dict[int, Path] = {}
    for run in parts:
        for seed in run.record.seeds:
            if seed in seen:
                raise MetabenchError(f"merge-seeds: seed {seed} is in both {seen[seed]} and {run.path}",
                                     hint="merge runs of disjoint seeds (run the missing ones with --seeds 3,4)")
            seen[seed] = run.path


def _merged(parts: list[Run]) -> tuple[RunRecord, list[dict]]:
    newest = max((run.record for run in parts), key=lambda record: record.created or "")
    seeds = sorted(seed for run in parts for seed in run.record.seeds)
    per_seed = {seed: values for run in parts for seed, values in run.record.metrics.per_seed.items()}
    per_seed = {str(seed): per_seed[str(seed)] for seed in seeds}
    timings = _timings(parts)
    mixed = _mixed_packages([part for run in parts for part in _parts(run)])
    environment = (newest.environment.model_copy(update={"mixed_packages": mixed})
                   if mixed and newest.environment is not None else newest.environment)
    record = newest.evolve(
        environment=environment,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        metabench=MetabenchInfo(**metabench_info()),
        seeds=seeds,
        metrics=Metrics(per_seed=per_seed, aggregate={name: MetricSummary(**summary)
                                                      for name, summary in seed_summary(per_seed).items()}),
        timings=Timings(**timings) if timings is not None else None,
        merged_from=[part for run in parts for part in _parts(run)],
        model=newest.model.model_copy(update={"info": _model_info(parts, newest)}),
        samples_sha256=None,
    )
    rows: dict[int, list[dict]] = {seed: [] for seed in seeds}
    for run in parts:
        for row in run.samples:
            rows[int(row["seed"])].append(row)
    return record, [row for seed in seeds for row in rows[seed]]


def _mixed_packages(parts: list[MergedPart]) -> dict[str, str]:
    """Package -> each version the parts recorded with the seeds computed under it (``5.23.0 (seeds 0,1) /
    5.24.0 (seeds 2-4)``), for the packages whose parts differ; a part that recorded no version of it reads
    ``not recorded``. {} where every part has the same versions."""
    versions: dict[str, dict[str, list[int]]] = {}
    names = {name for part in parts if part.environment for name in part.environment.packages}
    for name in sorted(names):
        for part in parts:
            version = (part.environment.packages.get(name) if part.environment else None) or "not recorded"
            versions.setdefault(name, {}).setdefault(version, []).extend(part.seeds)
    return {name: " / ".join(f"{version} (seed{'s' if len(seeds) > 1 else ''} {seed_text(sorted(seeds))})"
                             for version, seeds in sorted(by.items(), key=lambda item: min(item[1])))
            for name, by in versions.items() if len(by) > 1}


def _model_info(parts: list[Run], newest: RunRecord) -> AdapterInfo:
    """The newest part's adapter info, with each entry keyed by the parts' seeds joined over every part (every
    key, the adapter's own too: walked as the JSON it is)."""
    info = newest.model.info.as_json()
    each = [(run, run.record.model.info.as_json()) for run in parts]
    for key in list(info):
        if all(_by_seed(facts.get(key), run) for run, facts in each):
            info[key] = {seed: entry for _, facts in each for seed, entry in facts[key].items()}
    return AdapterInfo.model_validate(info)


def _by_seed(value, run: Run) -> bool:
    return isinstance(value, dict) and bool(value) and set(value) <= {str(seed) for seed in run.record.seeds}


def _timings(parts: list[Run]) -> dict | None:
    timings = [run.record.timings for run in parts if run.record.timings is not None]
    if not timings:
        return None
    out: dict = {}
    for phase in _PHASES:
        values = [getattr(t, phase) for t in timings if getattr(t, phase) is not None]
        if values:
            out[phase] = sum(values)
    out["items_per_s"] = None  # per part only: the parts' answers were asked in other processes
    return out


def _parts(run: Run) -> list[MergedPart]:
    """What ``run`` is made of: itself, or, for a run merged before, the parts its ``merged_from`` lists (a
    re-merge keeps the first merge's record of where each seed was computed)."""
    record = run.record
    if record.merged_from:
        return list(record.merged_from)
    return [MergedPart(folder=f"{run.path.parent.name}/{run.path.name}", seeds=list(run.record.seeds),
                       samples_sha256=record.samples_sha256, created=record.created, metabench=record.metabench,
                       environment=record.environment)]


def _folder(record: RunRecord) -> str:
    protocol = record.protocol_seeds
    limit = cutting_limit(record.limit, record.n_test_items)
    return run_name(parse_model_spec(record.model.spec).slug, record.seeds,
                    list(range(protocol)) if isinstance(protocol, int) else [], limit)


def _check_before_writing(registry, scratch: Path, path: Path, record: RunRecord, samples: list[dict]) -> None:
    """The merged run verified in a scratch folder before the real one is written: a merge that would not pass
    verification is a bug here, and must not replace a run."""
    folder = scratch / path.parent.name / path.name
    write(folder, seal(record, samples, where=folder))
    run = find_runs([folder])[0]
    _, rejected, verdicts = verify_runs(registry, [run])
    if rejected or verdicts[id(run)].unverified:
        found = rejected[0].problems if rejected else [verdicts[id(run)].unverified or ""]
        raise MetabenchError(f"merge-seeds: the merged run of {escape(record.task.name)} fails verification: "
                             f"{escape('; '.join(found)).replace(escape(folder), escape(path))}",
                             hint="this is a bug in merge-seeds: report it with the command")


def _packages(run: Run) -> dict:
    return dict(run.record.environment.packages) if run.record.environment else {}


def _short(value) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
