"""Computing one job: data → requests → answers → scores → the results record (nothing written but answers).

For each seed every test item is looked up in the answer cache first; the adapter is fitted (trained, for
encoders) only if some item is still missing, then answers the missing items batch by batch, each batch
committed to the cache before the next starts. So an interrupted run resumes where it stopped and a repeated
run costs only the cache look-ups. Before any of that, a job whose inputs are unchanged since it last finished
is taken whole from the job memo (:mod:`metabench.job_memo`): no data loaded, nothing scored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .. import answering, job_memo, progress
from ..cache import AnswerCache, item_key, job_key
from ..config.index import LoadedTask
from ..data.hashing import hashing_seconds
from ..data.hf_source import register as register_source
from ..errors import MetabenchError, UnsupportedError
from ..jobs import Job, RunOptions, TaskData, build_kind, prepare
from ..models.base import Adapter
from ..models.hf_common import model_hashing_seconds, model_loading_seconds
from ..models import decoder_head
from ..models.spec import build_adapter
from ..partial_runs import cutting_limit
from ..registry import Registry
from ..requests import Training
from ..run_record import RepeatInfo, Timings
from ..store import check_run_dir, golds_sha256, run_name, samples_text
from ..timings import Phases
from .gc_tuning import freeze_loaded
from . import repeats
from .outcomes import JobResult
from .record import answering_section, process_sections, results_record


def job_seeds(task: LoadedTask, adapter: Adapter, options: RunOptions | None, protocol: str | None = None) -> list[int]:
    """The seeds this job runs (``options`` None: the task's protocol seeds, which name the run folder), from the
    ``protocol`` section the model follows (default: its family's)."""
    key = protocol or adapter.family
    section = getattr(task.config.protocol, key, None)
    if section is None:
        raise UnsupportedError(
            f"task '{task.name}' has no protocol.{key} section, so {adapter.family} models "
            f"('{adapter.name}') cannot run it",
            hint=_missing_section_hint(task, key),
            reason=_missing_section_reason(task, key),
        )
    seeds = options.seeds if options is not None and options.seeds is not None else section.seeds
    seeds = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    return seeds if adapter.seeded else seeds[:1]


def _missing_section_reason(task: LoadedTask, key: str) -> str:
    """The plan's one-line why: for a fine-tuned decoder, what the task would need (a tagger section, or a training
    recipe for the classification head that `metabench.models.decoder_head` fine-tunes)."""
    if key != "decoder_finetune":
        return f"no protocol.{key} in the task"
    if task.config.kind == "tagging":
        return "no protocol.decoder_finetune (tagger) in the task"
    return "no training recipe in the task (protocol.encoder) for a classification head to fine-tune on"


def _missing_section_hint(task: LoadedTask, key: str) -> str:
    """Where a model turned away for a missing section can go: the task's other ways, else the YAML to add."""
    protocol = task.config.protocol
    if key == "decoder_finetune":
        ways = [w for w in ("decoder", "decoder_generated") if getattr(protocol, w, None) is not None]
        twin = (" Where a benchmark's tagger is a task of its own (its hash predates decoder sections), `metabench ls "
                "tasks decoder_finetune` lists it, e.g. m4x_det_en_mono_vua20_decoder for m4x_det_en_mono_vua20.")
        if ways:
            return (f"the task answers decoders without fine-tuning ({', '.join(f'protocol.{w}' for w in ways)}): drop "
                    "finetune=true (docs/decoders.md, 'Fine-tuned decoders')." + twin)
    return (f"add protocol.{key} to {task.raw.path} (docs/tasks.md, 'Every model kind'), or choose another --model "
            "(`metabench ls models`)")


def protocol_key(registry: Registry, task: LoadedTask, adapter: Adapter) -> str:
    """The protocol section ``adapter`` follows on ``task`` (`metabench.answering.section_key`)."""
    return answering.section_key(task, adapter, lambda key: build_kind(registry, task, key).request_type())


def preflight(registry: Registry, job: Job) -> tuple[Adapter, object, list[int]]:
    """The adapter, the kind and the seeds of a job, decided before any data is loaded; a model that cannot
    serve the task raises UnsupportedError (a skip). `--dry-run` plans with it, so a plan skips what a run would.
    The kind is the one the model's protocol section answers with (that section's key: ``kind.protocol``)."""
    task = job.task
    adapter = decoder_head.for_task(build_adapter(job.model, registry, job.options.adapter_settings), task, registry,
                                    job.options.adapter_settings)
    key = protocol_key(registry, task, adapter)
    seeds = job_seeds(task, adapter, job.options, key)
    choice = answering.parse_args(adapter.args, adapter.name) if adapter.family == "decoder" else None
    kind = build_kind(registry, task, key, choice)
    if kind.request_type() is not None:  # a model that cannot serve the task is turned away before any loading
        adapter.check_request_type(kind.request_type(), task.name)
    _check_training(task, adapter, task.config.splits.train)
    _check_shots(task, choice)
    repeats.check(task, job.model.text, adapter, kind, job.options.repeat)
    return adapter, kind, seeds


def _check_shots(task: LoadedTask, choice) -> None:
    """``shots=K`` draws from the task's training split (or its ``splits.fewshot``): a task with neither has no
    demonstrations that are not test items, so the job is skipped rather than prompted zero-shot unawares."""
    splits = task.config.splits
    if choice is not None and choice.shots and splits.train is None and splits.fewshot is None:
        raise UnsupportedError(
            f"shots={choice.shots}: task '{task.name}' has no training split to draw demonstrations from",
            hint="leave shots out for this task (zero-shot), or run it on its own",
            reason="shots= needs a training split",
        )


def execute(registry: Registry, job: Job, cache) -> JobResult:
    """Compute one job: answers (from ``cache`` where it has them), per-item scores and the results record.

    Writes nothing but answers into ``cache`` (batch by batch); pass ``AnswerCache(None)`` to write nothing.
    Progress (`metabench.progress`) is shown in the run's style, its lines prefixed with the job.
    """
    number, count = job.position
    with progress.run_style(job.options.progress_style), \
            progress.scope(f"job {number}/{count} | {job.task.name} | {job.model.text}"):
        return _execute(registry, job, cache)


def _execute(registry: Registry, job: Job, cache) -> JobResult:
    phases = Phases({"data_hash_s": hashing_seconds, "model_hash_s": model_hashing_seconds,
                     "model_load_s": model_loading_seconds})
    task, spec, options = job.task, job.model, job.options
    register_source(registry, task.config, task.raw, task.plugin, task.plugin_version)  # a spawned worker's too
    adapter, kind, seeds = preflight(registry, job)
    key = kind.protocol
    section = getattr(task.config.protocol, key, None)
    fingerprint = answering.answer_fingerprint(adapter.task_fingerprint(section), section)
    memo = job_memo.key(registry, job, fingerprint, key, seeds)
    remembered = cache.get_run(memo) if memo is not None else None
    phases.lap("cache_lookup_s")
    if remembered is not None:
        return _remembered(registry, job, remembered, phases)
    answers_cache = cache if adapter.cache_answers else AnswerCache(None)
    data = prepare(registry, task, limit=options.limit, data_dir=options.data_dir, kind=kind)
    freeze_loaded()
    test = data.test
    limited = cutting_limit(options.limit, data.n_test_items)  # partial_runs' rule: it names the folder
    run_dir = options.output_dir / task.name / run_name(spec.slug, seeds, job_seeds(task, adapter, None, key), limited,
                                                        options.repeat)
    check_run_dir(run_dir)
    if kind.request_type() is None:  # a kind that does not declare it: probe the first item
        adapter.check_request_type(type(kind.request(test.items[0])), task.name)
    _check_training(task, adapter, data.splits["train"].items if data.splits["train"] else None)
    golds = _plain(test.golds(kind))
    phases.lap("load_s")  # the data files' hashes checked while loading: data_hash_s (a meter)
    data_hash = data.data_hash()
    training_hash = data.data_hash(("train", "validation"), with_limit=False)
    phases.lap("data_hash_s")

    ids = [str(item.id) for item in test.items]
    requests: dict[int, object] = {}  # built only for items the cache cannot answer
    per_seed, samples, preds_by_seed, per_draw, shown = {}, [], {}, {}, {}
    timings = {"cached_items": 0}
    prediction = getattr(kind, "prediction", None)  # an answering kind maps answers into the task's form
    # --log-responses: a generated answer's text is stored beside its reading (``response``): a reader sees what an
    # unread answer said, and verification parses it again (`metabench.runs.rebuild`) instead of trusting the
    # stored reading. Off by default: a model's text can quote the dataset, which samples never hold otherwise.
    texts = options.log_responses and getattr(kind, "mode", None) == "generated" and options.repeat == 1
    for seed in seeds:
        if getattr(kind, "reseed", None) is not None and kind.reseed(seed):
            requests.clear()  # this seed's demonstrations: its prompts differ from the last seed's
        if getattr(kind, "demonstrations", None) is not None:
            shown[str(seed)] = kind.demonstrations()
        answers = []
        for draw in repeats.draws(seed, options.repeat):
            whole = job_key(fingerprint, task.hash, data_hash, draw.cache_seed, key)
            found = answers_cache.get_job(whole)
            if found is not None and len(found) == len(ids) and all(i in found for i in ids):
                answers.append([found[i] for i in ids])
                timings["cached_items"] += len(ids)
            else:
                answers.append(_seed_answers(job, data, adapter, answers_cache, draw, data_hash, training_hash,
                                             fingerprint, requests, timings, phases))
                answers_cache.put_job(whole, dict(zip(ids, answers[-1])))
            responses = [str(answer) for answer in answers[-1]] if texts else None
            if prediction is not None:
                answers[-1] = _plain([prediction(item, answer) for item, answer in zip(test.items, answers[-1])])
            phases.lap("cache_lookup_s")
        if options.repeat == 1:
            preds = answers[0]
            rows = [{"id": item.id, "seed": seed, "gold": gold, "prediction": pred,
                     "scores": kind.item_scores(item, gold, pred)} for item, gold, pred in zip(test.items, golds, preds)]
            for row, response in zip(rows, responses or ()):
                row["response"] = response
            samples.extend(rows)
        else:
            preds, rows = repeats.voted_rows(kind, test.items, golds, seed, answers)
            samples.extend(rows)
            per_draw[str(seed)] = [kind.aggregate(test.items, golds, drawn) for drawn in answers]
        per_seed[str(seed)] = kind.aggregate(test.items, golds, preds)
        preds_by_seed[seed] = preds
        phases.lap("score_s")
    kind.warn_unusable(test.items, preds_by_seed)

    lines = samples_text(samples).encode("utf-8")
    record = results_record(registry, job, adapter, data, seeds, per_seed)
    record.protocol = key
    record.answering = answering_section(kind, section, shown, adapter)
    if options.repeat > 1:
        record.repeat = RepeatInfo(**repeats.summary(options.repeat, seeds, samples, per_draw, task.config.primary))
    record.data.splits["test"].golds_sha256 = golds_sha256(zip(ids, golds))
    record.n_test_items = data.n_test_items  # the whole test split: n_items < n_test_items marks a partial run
    memo = memo or job_memo.key(registry, job, fingerprint, key, seeds)  # its slices are parsed now
    if memo is not None:
        cache.put_run(memo, job_memo.stored(record), run_dir.name, lines)
    phases.lap("write_s")  # encoding the samples, the record; JobResult.seal() adds the time checking it takes
    timings.update(phases.record())
    answered = len(test.items) * len(seeds) * options.repeat - timings["cached_items"]
    timings["items_per_s"] = answered / timings["predict_s"] if timings["predict_s"] > 0 else None
    record.timings = Timings(**timings)
    return JobResult(job, record, lines, run_dir)


def _remembered(registry, job: Job, remembered: tuple[dict, str, bytes], phases: Phases) -> JobResult:
    """A job taken whole from the job memo: its data files re-verified, the process facts made fresh. The
    model's ``info`` stays the computing run's: it describes how these answers were made (the checkpoints
    trained, a search's trials), which an adapter that was never fitted here cannot say."""
    kept, name, lines = remembered
    record = job_memo.remembered(kept)
    job_memo.verify_files(registry, record.data.files if record.data else {}, job.options.data_dir)
    phases.lap("data_hash_s")
    run_dir = job.options.output_dir / job.task.name / name
    check_run_dir(run_dir)
    for key, value in process_sections(registry).items():
        setattr(record, key, value)
    phases.lap("write_s")
    record.timings = Timings(cached_items=record.n_items * len(record.seeds) * record.draws, **phases.record(),
                             items_per_s=None)
    return JobResult(job, record, lines, run_dir)


def _seed_answers(job: Job, data: TaskData, adapter, cache, draw: repeats.Draw, data_hash, training_hash,
                  fingerprint, requests: dict, timings: dict, phases: Phases) -> list:
    """One draw of one seed's answers item by item: those the cache has, then the missing ones computed (the
    adapter is fitted only if some item is missing, and requests are rendered only for the missing items).
    Without a cache (``--no-cache``, or a baseline) the items' own ids key the answers: no sha256 per item."""
    task, kind, items, seed = job.task, data.kind, data.test.items, draw.seed
    if cache.enabled:
        keys = [item_key(fingerprint, task.hash, data_hash, item.id, draw.cache_seed, kind.protocol) for item in items]
    else:  # unique within the test split (prepare checks it)
        keys = [item.id for item in items]
    answers = cache.get_many(keys)
    timings["cached_items"] += len(answers)
    missing = [i for i, key in enumerate(keys) if key not in answers]
    phases.lap("cache_lookup_s")
    if missing:
        if adapter.reads_requests(kind.request_type()):  # else predict is given None per item
            for i in missing:
                if i not in requests:
                    requests[i] = kind.request(items[i])
        phases.lap("load_s")
        adapter.fit(_training(data, adapter, seed, training_hash))
        phases.lap("fit_s")
        draw_text = f" draw {draw.index + 1}/{job.options.repeat}" if job.options.repeat > 1 else ""
        label = f"predict seed {seed}{draw_text}"
        if progress.current_style() == progress.BARS:  # a bar says which job it is itself; lines get the scope
            label = f"job {job.position[0]}/{job.position[1]} | {task.name} | {job.model.text} | seed {seed}{draw_text}"
        _answer(adapter, requests, keys, missing, answers, cache, draw.sampling_seed, label, job.options)
        phases.lap("predict_s")
    return [answers[key] for key in keys]


def _check_training(task: LoadedTask, adapter: Adapter, train) -> None:
    """A model that learns from the training split cannot serve a task without one (``train``: the declared
    split, or its loaded items): a skip, not a failure.

    (Guessing a training distribution from the test labels would leak them, so there is no fallback.)
    """
    if adapter.needs_training and not train:
        raise UnsupportedError(
            f"model '{adapter.name}' learns from the training split, and task '{task.name}' has none",
            hint="models that need no training split: random, constant (`metabench ls models`)",
            reason="needs a training split",
        )


def _training(data: TaskData, adapter, seed, data_hash) -> Training | None:
    kind, task = data.kind, data.task
    train = data.splits["train"]
    if not adapter.needs_training or train is None:
        return None
    validation = data.splits["validation"]
    val_items = validation.items if validation else []
    val_golds = _plain(validation.golds(kind)) if validation else []

    def score_validation(preds: list) -> dict[str, float]:
        """The task's metrics on the validation split (model selection reads finetune.select_metric here)."""
        return kind.aggregate(val_items, val_golds, [_plain(p) for p in preds])

    return Training(
        requests=Rendered(kind, train.items),
        golds=_plain(train.golds(kind)),
        validation_requests=Rendered(kind, val_items),
        validation_golds=val_golds,
        labels=kind.labels(),
        protocol=getattr(task.config.protocol, kind.protocol),
        seed=seed,
        data_hash=data_hash,
        score_validation=score_validation if val_items else None,
    )


def _answer(adapter, requests, keys, missing, answers, cache, seed, label, options) -> None:
    """Answer the ``missing`` requests batch by batch into ``answers``, committing each batch to ``cache``. An
    adapter with ``request_order(requests)`` may propose the order they are handed over in (a permutation of
    their positions, or ``None``): a scorer that sorts by length sees one global sort, not one per batch."""
    size = max(1, adapter.batch_size())
    propose = getattr(adapter, "request_order", None)
    if propose is not None and len(missing) > size:
        order = propose([requests.get(i) for i in missing])
        if order is not None:
            if sorted(order) != list(range(len(missing))):
                raise MetabenchError(f"model '{adapter.name}': request_order returned no permutation of the "
                                     f"{len(missing)} requests", hint="return each position once, or None")
            missing = [missing[j] for j in order]
    with progress.meter(len(missing), label, "item") as bar:
        for start in range(0, len(missing), size):
            batch = missing[start : start + size]
            preds = adapter.predict([requests.get(i) for i in batch], seed)
            if len(preds) != len(batch):
                raise MetabenchError(f"model '{adapter.name}' returned {len(preds)} answers for {len(batch)} requests")
            pairs = list(zip((keys[i] for i in batch), _plain(list(preds))))
            cache.put_many(pairs)
            answers.update(pairs)
            bar.update(len(batch))


class Rendered(Sequence):
    """A split's requests, rendered on first use: an adapter that reads only the gold answers (``majority``)
    never pays for rendering the training split's prompts."""

    def __init__(self, kind, items: list):
        self._kind, self._items, self._requests = kind, items, None

    def _all(self) -> list:
        if self._requests is None:
            self._requests = [self._kind.request(item) for item in self._items]
        return self._requests

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):
        return self._all()[index]

    def __iter__(self):
        return iter(self._all())


_SCALARS = frozenset((str, int, float, bool, type(None)))
_SEQUENCES = frozenset((tuple, list))


def _plain(value):
    """JSON round-trip, so fresh and cached answers have identical types (tuples become lists). A list of
    plain scalars (labels, option indices: most golds and answers) is already what the round trip gives, so
    it is copied as it is (the round trips were ~7 of a cold ``--tasks all``'s seconds)."""
    if isinstance(value, list):
        types = set(map(type, value))
        if types <= _SCALARS:
            return list(value)
        if types <= _SEQUENCES and all(_SCALARS.issuperset(map(type, v)) for v in value):  # tag sequences
            return [list(v) for v in value]
    return json.loads(json.dumps(value))
