"""Runs as Hugging Face ``.eval_results/*.yaml`` files, which model pages and Hub benchmark leaderboards read.

The format (https://huggingface.co/docs/hub/eval-results) is a YAML list of results, each::

    - dataset:
        id: ORG/NAME          # the Hub dataset (a registered benchmark)
        task_id: TASK         # the benchmark's task
        revision: HASH        # optional: the dataset's revision
      value: 0.6464           # the score
      date: "2026-11-25"      # optional
      source: {url, name, user}   # optional, url required when given
      notes: "..."            # optional: the evaluation setup

It has no field for uncertainty, seeds, protocol or provenance, and ``verifyToken`` is the Hub's own proof that
HF Jobs ran the evaluation, which a local run cannot produce. So everything beyond the score goes into
``notes`` as ``key=value`` clauses separated by ``"; "`` (``NOTE_KEYS``), which :func:`read` parses back:
the metric, the seeds and their per-seed values, the confidence interval and how it was made, the protocol
(the task's ``protocol.<family>`` section the run followed), how a decoder answered (``answering``: zero-shot
scored, 5-shot generated, fine-tuned; ``—`` for another model) and a generated run's format-failure rate beside
its value (``unread``: "3.1 % unread", `report.unread`; ``—`` for a run that did not generate), the verification (``verify_data``), the
verification digest, whether the run is partial (judged against the split's size in the data), whether it was
reproduced (``reproduced``: rerun here with ``reproduce=K``, its items drawn with a key made now and written
beside; not reproducible here, with the reason; or never tried), and the board's
caveats (constant, ≈ chance, below chance or a collapsed fit, unstable across seeds, an unchecked metric).
The interval is clipped to the value's scale (0-1). One file per run, named after the task (``_limitN`` for
a ``--limit`` run, which its notes also mark partial).

A run is exported only when it passed verification: a rejected run (its files disagree with each other or
with the data) never is, nor one that failed reproduction, and an unverified one (its data is not here) only with ``allow_unverified``, its
notes saying so. All runs must be of one model: an ``.eval_results`` folder belongs to one model repo.

What the files carry is checked before anything is written: ``--dataset-revision`` (a commit hash, branch or tag
name), ``--source-url`` (http or https only: a ``javascript:`` link would run in a reader's page), each run's
``created`` (an ISO date). A note's value cannot forge a clause: ``%``, ``;`` and ``=`` in it are written as
``%25``, ``%3B`` and ``%3D`` (a model spec holding ``; verified=...`` stays one value), which :func:`read`
decodes. The output folder must be a folder (or absent) outside every run folder exported, so an export never
writes into the runs it reads; a write that fails (a full disk) is an error naming the folder.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from .. import safe_paths
from ..errors import MetabenchError
from ..runs.stored import Run
from ..runs.verify import Verdict, verify_runs
from ..report.answering_label import way
from ..report.intervals import interval
from ..report.unread import run_rate, unread
from ..report.run_caveats import caveats
from ..version import __version__

#: The clauses of ``notes``, in order (``key=value; key=value``).
NOTE_KEYS = ("metabench", "metric", "scale", "seeds", "per_seed", "std", "ci95", "ci_method", "protocol", "answering",
             "unread", "items", "partial", "verified", "reproduced", "caveats", "digest")
#: The ``reproduced`` clause of a run exported without ``reproduce``.
NEVER_TRIED = "never tried (metabench verify-run --reproduce K RUN reruns it here)"
#: A Hub revision: a commit hash, a branch or a tag name.
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,199}")


@dataclass(frozen=True)
class Exported:
    """One written file: the run it holds and where it went."""

    run: Run
    path: Path
    entry: dict


def export(registry, runs: list[Run], outdir: Path, *, dataset_id: str, dataset_revision: str | None = None,
           metric: str | None = None, source_url: str | None = None, source_name: str | None = None,
           user: str | None = None, allow_unverified: bool = False, reproduce: int | None = None,
           reproduce_key: str | None = None) -> list[Exported]:
    """Write one ``.eval_results`` YAML per run into ``outdir`` (the module docstring); refuses before writing
    anything when a run is rejected, unverified without ``allow_unverified``, of another model, or (with
    ``reproduce``: K items of each run rerun with its model, `launch.reproduce`) failed reproduction."""
    if not runs:
        raise MetabenchError("hf-eval-results: no runs given", hint="pass run folders or an output folder")
    models = sorted({run.record.model.spec for run in runs})
    if len(models) > 1:
        raise MetabenchError(f"hf-eval-results: runs of {len(models)} models ({', '.join(models)}); an .eval_results "
                             "folder belongs to one model repo", hint="export each model's runs into its own folder")
    if not dataset_id or not re.fullmatch(r"[\w.-]+/[\w.-]+", dataset_id):
        raise MetabenchError(f"--dataset-id {dataset_id!r}: not a Hub dataset id (ORG/NAME)",
                             hint="the Hub benchmark dataset these tasks belong to, e.g. --dataset-id my-org/metabench")
    _check_inputs(dataset_revision, source_url)
    _, rejected, verdicts = verify_runs(registry, runs)
    if rejected:
        raise MetabenchError("hf-eval-results: run(s) rejected by verification, never exported: "
                             + "; ".join(f"{v.run.path}: {'; '.join(v.problems)}" for v in rejected),
                             hint="rerun them (or leave them out)")
    unverified = [run for run in runs if verdicts[id(run)].unverified]
    if unverified and not allow_unverified:
        raise MetabenchError("hf-eval-results: run(s) not checked against the data: "
                             + "; ".join(f"{run.path}: {verdicts[id(run)].unverified}" for run in unverified),
                             hint="export where the data is (METABENCH_DATA_DIR), or pass --allow-unverified to "
                             "export them marked unverified")
    reproduced = _reproduced(registry, runs, reproduce, reproduce_key)
    names = [_file_name(run) for run in runs]
    if len(set(names)) < len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise MetabenchError(f"hf-eval-results: several runs of the same task for one model ({', '.join(twice)})",
                             hint="pass one run per task")
    _check_outdir(outdir, runs)
    entries = [_entry(registry, run, verdicts[id(run)], dataset_id=dataset_id,
                      revision=dataset_revision, metric=metric or run.record.primary_metric, source_url=source_url,
                      source_name=source_name, user=user, reproduced=reproduced.get(id(run), NEVER_TRIED))
               for run in runs]
    written = []
    try:
        outdir.mkdir(parents=True, exist_ok=True)
        for run, name, entry in zip(runs, names, entries):
            text = yaml.safe_dump([entry], sort_keys=False, allow_unicode=True, width=10_000)
            written.append(Exported(run, safe_paths.write_text(outdir, outdir / name, text), entry))
    except OSError as exc:
        raise MetabenchError(f"-o {outdir}: cannot write the export ({exc.strerror or exc})",
                             hint="free space on that disk, or choose another output folder") from None
    return written


def _reproduced(registry, runs: list[Run], k: int | None, key: str | None) -> dict[int, str]:
    """Each run's ``reproduced`` clause with ``k`` (none without: never tried); a failed reproduction refuses the
    export, naming the run."""
    if k is None:
        return {}
    from ..launch.reproduce import reproduce_runs

    found = reproduce_runs(registry, runs, k, key=key)
    failed = [r for r in found.values() if r.failed]
    if failed:
        raise MetabenchError("hf-eval-results: run(s) failed reproduction, never exported: "
                             + "; ".join(f"{r.run.path}: {r.line}" for r in failed),
                             hint="the model here does not give what the run recorded: rerun the evaluation")
    return {run_id: f"{r.mark} (key {r.key}): {r.reason}" for run_id, r in found.items()}


def _check_inputs(dataset_revision: str | None, source_url: str | None) -> None:
    """The options copied into every file, checked before anything is read or written."""
    if dataset_revision is not None and (not _REVISION.fullmatch(dataset_revision) or ".." in dataset_revision):
        raise MetabenchError(f"--dataset-revision {dataset_revision!r}: not a Hub revision",
                             hint="a commit hash, a branch or a tag name (letters, digits, . _ / -)")
    if source_url is not None:
        parts = urlsplit(source_url)
        if parts.scheme not in ("http", "https") or not parts.netloc or not source_url.isprintable() \
                or any(c.isspace() for c in source_url):
            raise MetabenchError(f"--source-url {source_url!r}: not an http(s) URL",
                                 hint="a page where the evaluation can be seen, e.g. https://github.com/ORG/REPO")


def _check_outdir(outdir: Path, runs: list[Run]) -> None:
    """``-o`` is a folder (or absent), and neither a run folder exported nor inside one."""
    if os.path.lexists(outdir) and not outdir.is_dir():
        raise MetabenchError(f"-o {outdir}: is a file, not a folder", hint="name a folder for the .eval_results files")
    real = Path(os.path.realpath(outdir))
    for run in runs:
        folder = Path(os.path.realpath(run.path))
        if real == folder or real.is_relative_to(folder):
            raise MetabenchError(f"-o {outdir}: is inside the run folder {run.path} it exports; an export never "
                                 "writes into a run folder", hint="name a folder outside the runs, e.g. my-model/.eval_results")


def _date(run: Run) -> str:
    """The run's ``created`` as the file's ``date`` (YYYY-MM-DD): an ISO date-time, or an error naming the run."""
    created = run.record.created
    try:
        return datetime.datetime.fromisoformat(str(created)).date().isoformat()
    except ValueError:
        raise MetabenchError(f"{run.path}: 'created' is {str(created)[:40]!r}, not an ISO date-time",
                             hint="re-run the evaluation (metabench records when a run was made)") from None


def _escaped(value: str) -> str:
    """A note's value that cannot end its clause or start another (``read`` decodes it)."""
    return value.replace("%", "%25").replace(";", "%3B").replace("=", "%3D")


def _unescaped(value: str) -> str:
    return value.replace("%3D", "=").replace("%3B", ";").replace("%25", "%")


def _file_name(run: Run) -> str:
    limit = run.record.limit
    return re.sub(r"[^\w.-]", "_", run.record.task.name) + (f"_limit{limit}" if limit is not None else "") + ".yaml"


def _entry(registry, run: Run, verdict: Verdict, *, dataset_id: str, revision: str | None, metric: str,
           source_url: str | None, source_name: str | None, user: str | None, reproduced: str = NEVER_TRIED) -> dict:
    value = run.record.mean(metric)
    if value is None:
        raise MetabenchError(f"{run.path}: no value for metric '{metric}'",
                             hint=f"task '{run.record.task.name}' reports: {', '.join(sorted(run.record.metrics.aggregate))}")
    low, high, method = interval(registry, run, metric)
    per_seed = run.record.per_seed(metric)
    unverified, unchecked = verdict.unverified, verdict.unchecked_note(metric)
    verified = (f"unverified, {unverified}" if unverified
                else "checked against the data the task names" + (f", but {unchecked}" if unchecked else ""))
    notes = {
        "metabench": f"{__version__} task {run.record.task.name} model {run.record.model.spec}",
        "metric": metric, "scale": "fraction (0-1), as metabench reports it",
        "seeds": ",".join(map(str, run.record.seeds)),
        "per_seed": ",".join("—" if v is None else f"{v:.6f}" for v in per_seed),
        "std": f"{run.record.aggregate(metric).std or 0.0:.6f}",
        "ci95": "—" if low is None else f"[{low:.6f}, {high:.6f}]", "ci_method": method,
        "protocol": run.record.protocol or run.record.model.family or "?",
        "answering": way(run.record) or "—",
        "unread": unread(run_rate(run)) or "—",
        "items": str(run.record.n_items),
        "partial": "; ".join(run.partial_reasons).replace(";", ",") or "no",
        "verified": verified.replace(";", ","),
        "reproduced": reproduced,
        "caveats": " | ".join(caveats(registry, run, verdict, metric)).replace(";", ",") or "none",
        "digest": digest(run),
    }
    dataset = {"id": dataset_id, "task_id": run.record.task.name, **({"revision": revision} if revision else {})}
    entry = {"dataset": dataset, "value": round(float(value), 6), "date": _date(run)}
    if source_url:
        entry["source"] = {"url": source_url, **({"name": source_name} if source_name else {}),
                           **({"user": user} if user else {})}
    entry["notes"] = "; ".join(f"{key}={_escaped(notes[key])}" for key in NOTE_KEYS)
    return entry


def digest(run: Run) -> str:
    """The verification digest: sha256 over what verification checks a run against (task config hash, test ids
    and golds digests, samples.jsonl's sha256), so a reader holding the run folder can match it to the export."""
    test = run.record.split("test")
    parts = [run.record.task.config_hash, test.ids_sha256 if test else "", (test.golds_sha256 if test else None) or "",
             run.record.samples_sha256 or ""]
    return "sha256:" + hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def read(path: Path) -> list[dict]:
    """An exported file read back: each entry with ``notes`` parsed into a dict by ``NOTE_KEYS``."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(entries, list):
        raise MetabenchError(f"{path}: not an .eval_results file (a YAML list of results)")
    out = []
    for entry in entries:
        clauses = {key: _unescaped(value) for key, value in
                   (clause.split("=", 1) for clause in str(entry.get("notes", "")).split("; ") if "=" in clause)}
        out.append({**entry, "notes": clauses})
    return out
