"""Finished jobs remembered whole: a job whose inputs have not changed is not computed again.

The answer cache (``cache.py``) makes a rerun skip the model, but the job still loaded its data, rebuilt
every request it checks, scored every item and encoded every sample: with ``--tasks all`` that was 36 s
for answers that were all cached. This memo keys a finished job on what its run files depend on, computed
*before* any data is loaded, and stores the run's results record and its samples.jsonl bytes; a hit only
re-verifies the data files' hashes (stamps: no re-read) and writes the run folder.

The key (:func:`key`) covers:

- the task's config hash (its YAML, includes resolved) and the model: spec, fingerprint, protocol family;
- the seeds and ``--limit``;
- every slice each split role reads, by its parsed-item cache key (``data/itemcache.py``): the dataset's
  manifest (the sha256 of each declared file), the loader's arguments and the source of the loader, of the
  modules beside it and of ``metabench.data``;
- the source of the whole ``metabench`` package and the version of every loaded plugin, so a changed
  kind, metric or runner can never serve a stale record.

A job whose slices are not in the parsed-item cache (never parsed, or a derived dataset built at run time,
such as ``hard_metaphors``, which that cache never stores) has no key: it is computed as before. A plugin's
metric whose code changes without a version bump is the one blind spot, as for the answer cache.

On a hit the record's volatile parts are made fresh: ``created``, the environment, the metabench commit and
the timings (``cached_items`` is every item; the phases are the file check, the look-up and the write).
Everything else, the model's ``info`` included (the checkpoints a run trained, a search's trials), is the
computed run's (``benchmarks/bench_tasks_all.py`` checks the files of cold and cached runs are identical).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from .version import __version__
from .data import itemcache
from .data.context import DataContext
from .errors import MetabenchError
from .run_record import RunRecord

FORMAT = 1
#: Keys of a results record that describe the process that wrote it, not the job: refreshed on a hit (the
#: fields `RunRecord` marks volatile).
VOLATILE = RunRecord.volatile()


@lru_cache(maxsize=1)
def _package_source() -> str:
    """sha256 of every module of the installed metabench package (~150 files: a few ms, once per process)."""
    digest = hashlib.sha256(__version__.encode())
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def key(registry, job, fingerprint: str, family: str, seeds: list[int]) -> str | None:
    """The job's memo key, or None when a slice it reads has no parsed-item cache entry yet."""
    slices = {}
    try:
        for role, resolved in job.task.slices.items():
            entries = []
            for dataset, split, args in resolved:
                entry = itemcache.key(registry.resolve("dataset", dataset), split, args)
                if not itemcache.exists(entry):
                    return None
                entries.append(entry)
            slices[role] = entries
    except MetabenchError:  # an unknown dataset: the normal path says so, with its hint
        return None
    payload = {
        "format": FORMAT,
        "source": _package_source(),
        "plugins": sorted((p["name"], str(p.get("version")), p.get("status", "")) for p in registry.plugins),
        "task": job.task.hash,
        "model": [job.model.text, fingerprint, family],
        "seeds": seeds,
        "limit": job.options.limit,
        "slices": slices,
    }
    if job.options.repeat > 1:  # only then: the keys of jobs remembered before --repeat existed stay valid
        payload["repeat"] = job.options.repeat
    if job.options.log_responses:  # likewise: a remembered job's samples hold responses only if it kept them
        payload["log_responses"] = True
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def stored(record: RunRecord) -> dict:
    """The part of a computed results record a memo keeps (everything but :data:`VOLATILE`), as JSON."""
    return record.model_dump(mode="json", exclude_unset=True, exclude=set(VOLATILE))


def remembered(kept: dict) -> RunRecord:
    """A record a memo kept (:func:`stored`) as a :class:`RunRecord`, its volatile fields still to be set."""
    return RunRecord.read(kept)


def verify_files(registry, files: dict[str, str], data_dir) -> None:
    """Re-check every data file the remembered run read (``dataset:path`` -> sha256), as a parse would: a
    missing or altered mirror file fails exactly as it does on a computed run."""
    contexts: dict[str, DataContext] = {}
    for name in files:
        dataset, _, relpath = name.partition(":")
        if dataset not in contexts:
            contexts[dataset] = DataContext(registry.resolve("dataset", dataset), data_dir)
        contexts[dataset].path(relpath)
