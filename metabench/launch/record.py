"""A computed job's results record (results.json): what ran, on which data, with which model, and the
metrics per seed with their mean, standard deviation and count over seeds.

The record is built here as the typed :class:`metabench.run_record.RunRecord` (docs/results-format.md is
generated from it), section by section; the launcher sets the fields it knows only later as attributes
(``repeat``, the test split's ``golds_sha256``, ``n_test_items``, ``timings``) and the store serialises the
record (``store.seal``), holding it to the whole model first, so a field declared there and not written here
fails the first run that writes it (and the tests) instead of reaching a reader."""

from __future__ import annotations

from datetime import datetime, timezone

from .. import answering
from ..jobs import Job, TaskData
from ..run_record import (SCHEMA_VERSION, Answering, DataInfo, DatasetUsed, Environment, GroupFact, MetabenchInfo,
                          Metrics, MetricSummary, ModelInfo, PaperCell, PluginInfo, RunRecord, SplitInfo, TaskInfo,
                          Timings)
from ..stats.seeds import seed_summary
from ..store import environment, metabench_info
from ..task_facts import task_facts


def process_facts(registry) -> dict:
    """The parts of a results record that describe the process writing it (fresh on a remembered job too): the
    record's volatile fields but ``timings`` (``metabench.run_record.RunRecord.volatile()``)."""
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "metabench": metabench_info(),
        "environment": environment(),
        "plugins": [{k: p[k] for k in ("name", "version", "status")} for p in registry.plugins],
    }


def process_sections(registry) -> dict:
    """:func:`process_facts` as the record's typed sections (``RunRecord`` field -> value)."""
    facts = process_facts(registry)
    return {"created": facts["created"], "metabench": MetabenchInfo(**facts["metabench"]),
            "environment": Environment(**facts["environment"]),
            "plugins": [PluginInfo(**plugin) for plugin in facts["plugins"]]}


#: Config parts a run's record leaves out: the search, as the config hash does; `hf_dataset` when unset, so
#: the records of tasks on registered datasets stay as they were before the key existed.
_UNRECORDED_HF = {"protocol": {"encoder": {"search"}}}
_UNRECORDED = {**_UNRECORDED_HF, "hf_dataset": True}


def results_record(registry, job: Job, adapter, data: TaskData, seeds, per_seed, timings=None) -> RunRecord:
    """The job's :class:`RunRecord`, built section by section (``timings``: set by the launcher once the job's
    phases are known, when not given here)."""
    task, spec, options = job.task, job.model, job.options
    config = task.config
    higher = {m.name: registry.get("metric", m.name).meta.get("higher_is_better", True) for m in config.metric_specs()}
    files = {}
    for split in data.splits.values():
        if split is not None:
            files.update(split.files)
    facts = task_facts(registry, task)
    record = RunRecord(
        schema_version=SCHEMA_VERSION,
        **process_sections(registry),
        task=TaskInfo(
            name=task.name,
            version=config.metadata.version,
            config_hash=task.hash,
            kind=config.kind,
            dataset=config.dataset,
            primary_metric=config.primary,
            source=config.metadata.source,
            plugin=task.plugin,
            # protocol.encoder.search left out as from the config hash: a search that ran is in model.info
            config=config.model_dump(mode="json", exclude=_UNRECORDED if config.hf_dataset is None else _UNRECORDED_HF),
            datasets=[DatasetUsed(**d) for d in facts["datasets"]],
            groups=[GroupFact(**g) for g in facts["groups"]],
            paper_view=[PaperCell(**c) for c in facts["paper_view"]],
        ),
        data=DataInfo(
            files=files,
            splits={role: SplitInfo(n=len(split.items), ids_sha256=split.ids_sha256())
                    for role, split in data.splits.items() if split is not None},
        ),
        model=ModelInfo(
            spec=spec.text,
            adapter=adapter.name,
            family=adapter.family,
            args=adapter.args,
            fingerprint=adapter.fingerprint(),
            info=adapter.info(),
        ),
        protocol=adapter.family,
        seeds=seeds,
        limit=options.limit,
        n_items=len(data.test.items),
        higher_is_better=higher,
        metrics=Metrics(per_seed=per_seed,
                        aggregate={name: MetricSummary(**summary) for name, summary in seed_summary(per_seed).items()}),
    )
    if timings is not None:
        record.timings = Timings(**timings)
    return record


def answering_section(kind, section, shown: dict[str, list[str]], adapter=None) -> Answering | None:
    """The record's ``answering`` section for a job ``adapter`` answered through ``kind`` following ``section``
    (`metabench.answering`); None for a model that is not a decoder. ``shown``: seed -> its demonstrations' ids."""
    way = answering.way_of(kind, adapter)
    if not way:
        return None
    prompted = getattr(kind, "prompted", kind)
    parser = getattr(getattr(prompted, "args", None), "parser", None) if way == answering.GENERATED else None
    declared = dict(getattr(section, "kind_args", None) or {}).get("parser", parser)
    return Answering(mode=way, shots=max((len(ids) for ids in shown.values()), default=0),
                     demonstrations={seed: ids for seed, ids in shown.items() if ids}, parser=parser,
                     lenient=parser is not None and parser != declared,
                     prompt_source=getattr(section, "prompt_source", "") or "",
                     section_sha256=answering.section_sha256(section) if section is not None else None)
