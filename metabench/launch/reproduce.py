"""Reproducing a stored run: K of its items answered again by its model, here, and compared with what it recorded.

Verification (`metabench.runs.verify`) checks a run's files against each other and against the data its task
names; it cannot check that the predictions are the model's. Predictions altered and every score, metric and
digest recomputed, a run of one model relabelled as another, a claimed seed: each leaves files that agree in every
respect. Where the run's model can be had here, rerunning it settles the question:

1. **The model is here.** The task is installed at the run's config hash (the task's config as it is here is the
   one rerun, never the run's copy of it), its data is in the mirror or the cache (nothing is downloaded, and
   no model is fetched from a hub: ``HF_HUB_OFFLINE``), the adapter the run names is registered and builds from
   the run's ``--model`` spec. A model fine-tuned in-suite (an encoder) is reproduced only from a checkpoint
   cached here for exactly the run's training data, settings and seed (``cached_checkpoint``): a reproduction
   never trains. Anything missing leaves the run *not reproducible here*, with the reason.
   The model's fingerprint is compared with the recorded one. A baseline's is its name and arguments alone, so
   one that differs is a record naming another model: failed. An HF model's hashes its folder's files, and the
   same weights written by another transformers (its version is in config.json) hash otherwise: such a model is
   rerun all the same; answers equal to the recorded ones reproduce the run (the reason says the fingerprint
   differs), answers that differ leave it not reproducible here (the model here is not proven to be the run's),
   never failed.
2. **K items, drawn with a key the run's author can neither choose nor predict.** The run's items sorted by
   sha256 of (key, item id), the first K taken; the same items at every seed. The key is made when the
   reproduction starts (`new_key`: 128 random bits from the operating system), once for every run of a
   ``verify-run`` or a board, and printed (``verify-run``) or recorded on the board (``reproduction.key``), so
   anyone can redo the same draw by passing it back (``--reproduce-key``). A key drawn from anything the run
   holds (its samples digest, as before) is the author's to steer: a forger who alters m of N items varies one
   byte until no altered item is drawn, about (1 - K/N)^-m tries. With a key made after the run was written,
   altered items escape a draw of K with a chance of about (1 - K/N)^m, once, and no retry is the author's.
   Where a rerun is cheap (a baseline: `CHEAP`), every item is rerun, whatever K: nothing escapes.
3. **Rerun as ``metabench run`` computes a job**: the adapter fitted per recorded seed on the task's training
   split (`execute._training`; a baseline counts, an encoder loads its checkpoint), its ``predict`` called on
   the drawn items' requests with that seed, never through the answer cache.
4. **Compared**: every prediction equal to the recorded one (numbers within ``TOLERANCE``: log-likelihoods
   summed in another batch or by another library version differ in the last digits), and the per-item scores
   the task's kind gives the rerun prediction against the data's gold equal to the recorded scores. A choice
   whose options' log-likelihoods agree but whose pick differs between two options that tie within the
   tolerance is a *tie*, counted and not held against the run. Any other difference: *failed reproduction*.
"""

from __future__ import annotations

import hashlib
import math
import resource
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from .. import answering, environ
from ..errors import ExplainedError, MetabenchError, UnsupportedError
from ..jobs import Job, RunOptions
from ..models.base import Adapter
from ..models.spec import parse_model_spec
from ..runs.align import item_rows
from ..runs.stored import Run
from ..runs.verify_data import DataVerifier
from .execute import _plain, _training, preflight

REPRODUCED, NOT_REPRODUCIBLE, FAILED = "reproduced", "not_reproducible", "failed"
#: Numbers in a prediction or a score may differ by this much (absolute, plus relative to the recorded value):
#: a log-likelihood is a sum over tokens, and summed in another batch (padding) or by another torch it moves in
#: the fifth or sixth significant digit; labels, indices and generated text compare exactly.
TOLERANCE = (1e-3, 1e-5)
#: Mismatches kept (and named in the reason) per run.
SHOWN = 5
#: Adapter families whose ``fit`` trains nothing (a baseline counts, a decoder loads): rerun as they are. Any
#: other family fine-tunes in-suite and is rerun only from a cached checkpoint.
_UNTRAINED = ("baseline", "decoder")
#: Adapter families whose rerun costs next to nothing (a baseline counts or looks up): every item is rerun, not K.
CHEAP = ("baseline",)


def new_key() -> str:
    """A draw key nobody could know before the reproduction started (128 bits from `secrets`): a run's author,
    having written the run earlier, cannot have chosen which of its items are rerun."""
    return secrets.token_hex(16)


def key_text(key: str) -> str:
    """``--reproduce-key``'s value, checked: printable UTF-8 text of at most 200 characters (it is recorded on the
    board and printed, so that anyone can redo the draw)."""
    if not isinstance(key, str) or not key or len(key) > 200 or not key.isprintable():
        raise MetabenchError("--reproduce-key: expected printable text of 1 to 200 characters",
                             hint="e.g. --reproduce-key 3f9c0b1e, or leave it out to have a key made")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise MetabenchError("--reproduce-key: the key is not UTF-8 text",
                             hint="pass the key as the board or verify-run printed it") from None
    return key


@dataclass(frozen=True)
class Mismatch:
    """One drawn item at one seed whose rerun answer or score is not the recorded one."""

    item: str
    seed: int
    what: str

    def __str__(self) -> str:
        return f"item {self.item!r} at seed {self.seed}: {self.what}"


@dataclass
class Reproduction:
    """What rerunning a run found: ``status`` one of ``reproduced``, ``not_reproducible`` (the model, its
    checkpoint, the task or its data is not here; ``reason`` says which) and ``failed`` (the model here does not
    give what the run recorded; ``mismatches``). ``k``: the items asked for; ``items``: those rerun (all of
    the run's, where it has fewer or its model is `CHEAP`), at every seed in ``seeds``; ``key``: the draw's key; ``ties``: choices whose pick differs between
    options that tie within the tolerance; ``cpu_s``/``wall_s``: what the reproduction cost in this process."""

    run: Run
    status: str
    k: int
    reason: str
    items: list[str] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    n_mismatches: int = 0
    ties: int = 0
    cpu_s: float = 0.0
    wall_s: float = 0.0
    key: str = ""

    @property
    def reproduced(self) -> bool:
        return self.status == REPRODUCED

    @property
    def failed(self) -> bool:
        return self.status == FAILED

    @property
    def mark(self) -> str:
        """The board's words for it: "reproduced on 50 items", "not reproducible here", "failed reproduction"."""
        if self.status == REPRODUCED:
            return f"reproduced on {len(self.items)} item{'s' if len(self.items) != 1 else ''}"
        return "not reproducible here" if self.status == NOT_REPRODUCIBLE else "failed reproduction"

    @property
    def line(self) -> str:
        """The mark and its reason, one line (what ``verify-run`` prints and a rejection lists)."""
        return f"{self.mark}: {self.reason}"

    def as_json(self) -> dict:
        return {"status": self.status, "mark": self.mark, "k": self.k, "key": self.key, "reason": self.reason,
                "items": self.items,
                "seeds": self.seeds, "mismatches": [str(m) for m in self.mismatches],
                "n_mismatches": self.n_mismatches, "ties": self.ties, "cpu_s": round(self.cpu_s, 3),
                "wall_s": round(self.wall_s, 3)}


def draw(ids, k: int, key: str) -> list[str]:
    """The first ``k`` of ``ids`` in the order of sha256(``key``, id): the same items at every seed, and an
    order the run's items alone do not choose (`module docstring`, point 2)."""
    def rank(item: str) -> bytes:
        return hashlib.sha256(f"{key}\x00{item}".encode("utf-8")).digest()

    return sorted(ids, key=rank)[:k]


def reproduce(registry, run: Run, k: int, *, key: str | None = None, data: DataVerifier | None = None) -> Reproduction:
    """Rerun ``k`` items of ``run`` with its model, here, and compare (module docstring). ``key``: the draw's
    key (default: a new one, `new_key`; the result records it); ``data``: a verifier whose loaded tasks are
    reused (runs of one task load its data once: `reproduce_runs`)."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise MetabenchError(f"--reproduce {k!r}: expected a whole number of items of 1 or more",
                             hint="e.g. --reproduce 50")
    key = new_key() if key is None else key_text(key)
    started, cpu = time.perf_counter(), _cpu_seconds()
    own = DataVerifier(registry) if data is None else None  # a verifier of its own is released when done
    try:
        with _offline():
            result = _reproduce(registry, run, k, key, data or own)
    finally:
        if own is not None:
            own.release()
    result.cpu_s, result.wall_s, result.key = _cpu_seconds() - cpu, time.perf_counter() - started, key
    return result


def reproduce_runs(registry, runs: list[Run], k: int, *, key: str | None = None,
                   done: Callable[[Reproduction], None] | None = None) -> dict[int, Reproduction]:
    """Every run of ``runs`` reproduced on ``k`` items (`reproduce`), keyed by ``id(run)`` as
    `verify.verify_runs`' verdicts are, every run with one draw key (``key``, else a new one: `new_key`). Runs of
    one model are rerun together (a decoder is loaded once) and each task's data is loaded once, then dropped
    after its last run; ``done`` is called with each result."""
    key = new_key() if key is None else key_text(key)
    data = DataVerifier(registry)
    order = sorted(runs, key=lambda r: (r.record.model.spec, r.record.task.name, r.record.limit or 0))
    left: dict[tuple, int] = {}
    for run in order:
        left[(run.record.task.name, run.record.limit)] = left.get((run.record.task.name, run.record.limit), 0) + 1
    found = {}
    try:
        for run in order:
            found[id(run)] = reproduce(registry, run, k, key=key, data=data)
            where = (run.record.task.name, run.record.limit)
            left[where] -= 1
            if not left[where]:
                data.forget(*where)
            if done is not None:
                done(found[id(run)])
    finally:
        data.release()
    return found


def _reproduce(registry, run: Run, k: int, key: str, data: DataVerifier) -> Reproduction:
    record = run.record

    def verdict(status: str, reason: str, **found) -> Reproduction:
        return Reproduction(run, status, k, reason, **found)

    if record.repeat is not None and record.draws > 1:
        return verdict(NOT_REPRODUCIBLE, f"its answers are the majority of {record.draws} sampled draws "
                       "(--repeat), which a reproduction does not redraw")
    try:
        spec = parse_model_spec(record.model.spec)
    except MetabenchError as exc:  # no `--model` could have made this run: the record names no model
        detail = exc.message.partition("': ")[2] or exc.message  # the parser's words, less the option it names
        return verdict(FAILED, f"its model spec {record.model.spec!r} (results.json model.spec) names no model: "
                       f"{detail}")
    if data.task(run.record.task.name) is None:
        return verdict(NOT_REPRODUCIBLE, f"task '{run.record.task.name}' is not installed here")
    if not registry.has("model", spec.name):
        return verdict(NOT_REPRODUCIBLE, f"model adapter '{spec.name}' is not installed here: its answers are only "
                       "the run's own account")
    loaded = data.expected(run.record.task.name, record.limit)
    if isinstance(loaded, str):
        return verdict(NOT_REPRODUCIBLE, f"its task's data is not here ({loaded.removeprefix('not checked against the data: ')})")
    if loaded.config_hash != record.task.config_hash:
        return verdict(NOT_REPRODUCIBLE, f"the run was made with another version of task '{run.record.task.name}' (its config "
                       "hash is not the task's here), and only the task as it is here is rerun")
    try:
        table = item_rows(run)
    except ExplainedError as exc:
        return verdict(FAILED, f"its samples cannot be read item by item ({exc.message})")
    items = {str(item.id): item for item in loaded.data.test.items}
    job = Job(loaded.data.task, spec, RunOptions(limit=record.limit, progress=False))
    try:
        adapter, kind, _ = preflight(registry, job)
        fingerprint = adapter.fingerprint()
    except UnsupportedError as exc:  # the model the run names cannot serve its task: no such run could be made
        return verdict(FAILED, f"model '{spec.text}' cannot serve task '{run.record.task.name}' here ({exc.message})")
    except (MetabenchError, ImportError, OSError) as exc:
        return verdict(NOT_REPRODUCIBLE, f"model '{spec.text}' cannot be built here ({_message(exc)})")
    changed = answering.changed_section(record, loaded.data.task, kind)
    if changed:
        return verdict(NOT_REPRODUCIBLE, changed)
    drawn = draw(table, len(table) if adapter.family in CHEAP else k, key)
    outside = [i for i in drawn if i not in items]
    if outside:
        return verdict(FAILED, f"item {outside[0]!r} of its samples is not a test item of task '{run.record.task.name}' here",
                       items=drawn)
    other_build = fingerprint != record.model.fingerprint
    if other_build and type(adapter).fingerprint is Adapter.fingerprint:  # a fingerprint of name and arguments
        return verdict(FAILED, f"its recorded model fingerprint is not the one '{spec.text}' has (a fingerprint of "
                       "the adapter's name and arguments alone): the record names another model")
    try:
        result = _rerun(run, adapter, loaded.data, answering_kind(kind, loaded.data), table, drawn, items, verdict)
    except UnsupportedError as exc:
        return verdict(FAILED, f"model '{spec.text}' cannot serve task '{run.record.task.name}' here ({exc.message})")
    except Exception as exc:  # noqa: BLE001 - a model that cannot answer here is not evidence against the run
        return verdict(NOT_REPRODUCIBLE, f"rerunning '{spec.text}' here failed ({_message(exc)})")
    if other_build:  # files that differ (a config written by another transformers, other weights)
        if result.status == FAILED:
            result.status = NOT_REPRODUCIBLE
            result.reason = (f"model '{spec.text}' here is another build than the run's (its fingerprint differs: "
                             f"other files) and answers otherwise ({result.reason})")
        elif result.status == REPRODUCED:
            result.reason += f" (model '{spec.text}' here has another fingerprint than the run recorded: other files, the same answers)"
    return result


def answering_kind(kind, data):
    """The kind the run's model answers through (`metabench.answering`: a decoder's answering kind, its ``shots``),
    shown the task's training split as a run shows it (its few-shot pool, a tagger's vocabulary)."""
    for role, fit in (("train", kind.fit_context), ("fewshot", kind.fit_fewshot)):
        if data.splits.get(role) is not None:
            fit(data.splits[role].items)
    return kind


def _rerun(run: Run, adapter, data, kind, table: dict, drawn: list[str], items: dict, verdict) -> Reproduction:
    chosen = [items[i] for i in drawn]
    render = (lambda: [kind.request(item) for item in chosen]) if adapter.reads_requests(kind.request_type()) \
        else (lambda: [None] * len(chosen))
    requests = render()
    prediction = getattr(kind, "prediction", None)  # a decoder's answer mapped into the task's form, as stored
    training_hash = data.data_hash(("train", "validation"), with_limit=False)
    golds = dict(zip((str(item.id) for item in data.test.items), data.test.golds(kind)))
    mismatches: list[Mismatch] = []
    ties, seeds = 0, run.record.seeds
    answers: list | None = None
    for j, seed in enumerate(seeds):
        if answers is None or adapter.seeded:
            training = _training(replace(data, kind=kind), adapter, seed, training_hash)  # the kind it answers through
            if adapter.family not in _UNTRAINED and _checkpoint(adapter, training) is None:
                return verdict(NOT_REPRODUCIBLE, f"its model is fine-tuned in-suite and no checkpoint of seed {seed} "
                               "for this task's training data and settings is cached here (a reproduction never "
                               "trains)", items=drawn, seeds=seeds)
            adapter.fit(training)
            if getattr(kind, "reseed", None) is not None and kind.reseed(seed):
                requests = render()  # this seed's demonstrations, as the run drew them
            answers = _answers(adapter, requests, seed)
            if prediction is not None:
                answers = _plain([prediction(item, answer) for item, answer in zip(chosen, answers)])
        for item, answer in zip(chosen, answers):
            row = table[str(item.id)][j]
            found = _compare(kind, item, golds[str(item.id)], row, answer)
            if found == "tie":
                ties += 1
            elif found is not None:
                mismatches.append(Mismatch(str(item.id), seed, found))
    at = f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"
    tied = f"; {ties} choice(s) between options that tie within {TOLERANCE[0]:g}" if ties else ""
    if mismatches:
        shown = "; ".join(map(str, mismatches[:SHOWN]))
        more = f" (and {len(mismatches) - SHOWN} more)" if len(mismatches) > SHOWN else ""
        return verdict(FAILED, f"{len(mismatches)} of {len(drawn) * len(seeds)} rerun answers at {at} differ from "
                       f"the recorded ones: {shown}{more}{tied}", items=drawn, seeds=seeds,
                       mismatches=mismatches[:SHOWN], n_mismatches=len(mismatches), ties=ties)
    every = " (every item: a baseline's rerun is cheap)" if adapter.family in CHEAP and len(drawn) > 1 else ""
    return verdict(REPRODUCED, f"model '{run.record.model.spec}' rerun here gives the recorded predictions and scores on "
                   f"{len(drawn)} item(s){every} at {at}{tied}", items=drawn, seeds=seeds, ties=ties)


def _checkpoint(adapter, training):
    """The cached checkpoint a fine-tuned adapter would load, or None (an adapter that cannot say: None)."""
    find = getattr(adapter, "cached_checkpoint", None)
    return find(training) if find is not None else None


def _answers(adapter, requests: list, seed: int) -> list:
    """``predict`` on ``requests`` in the adapter's batches, as plain JSON values (as a run stores them)."""
    size, out = max(1, adapter.batch_size()), []
    for start in range(0, len(requests), size):
        batch = requests[start : start + size]
        answers = adapter.predict(batch, seed)
        if len(answers) != len(batch):
            raise MetabenchError(f"model '{adapter.name}' returned {len(answers)} answers for {len(batch)} requests")
        out.extend(_plain(list(answers)))
    return out


def _compare(kind, item, gold, row: dict, answer) -> str | None:
    """None where the rerun ``answer`` is the recorded one and scores as recorded; "tie" for a choice between
    tied options; else what differs."""
    recorded = row.get("prediction")
    difference = _difference(recorded, answer, "prediction")
    if difference is not None:
        return "tie" if _tie(recorded, answer) else difference
    stored = row.get("scores") or {}
    for name, value in sorted(kind.item_scores(item, gold, answer).items()):
        if name not in stored or _difference(stored[name], value, f"score {name}") is not None:
            return f"score {name} is {stored.get(name)!r} in samples.jsonl, {value!r} for the rerun answer"
    return None


def _difference(recorded, rerun, where: str) -> str | None:
    """Where two JSON values differ beyond ``TOLERANCE`` (numbers) or at all (everything else), or None."""
    if _number(recorded) and _number(rerun) and (isinstance(recorded, float) or isinstance(rerun, float)):
        absolute, relative = TOLERANCE
        if math.isfinite(recorded) and math.isfinite(rerun) and abs(recorded - rerun) <= absolute + relative * abs(recorded):
            return None
        return None if recorded == rerun else f"{where} is {recorded!r} recorded, {rerun!r} rerun"
    if isinstance(recorded, dict) and isinstance(rerun, dict):
        if recorded.keys() != rerun.keys():
            return f"{where} has keys {sorted(recorded)} recorded, {sorted(rerun)} rerun"
        return next((d for name in sorted(recorded)
                     if (d := _difference(recorded[name], rerun[name], f"{where}.{name}")) is not None), None)
    if isinstance(recorded, list) and isinstance(rerun, list):
        if len(recorded) != len(rerun):
            return f"{where} has {len(recorded)} parts recorded, {len(rerun)} rerun"
        return next((d for i, (a, b) in enumerate(zip(recorded, rerun))
                     if (d := _difference(a, b, f"{where}[{i}]")) is not None), None)
    if type(recorded) is not type(rerun) or recorded != rerun:
        return f"{where} is {_short(recorded)} recorded, {_short(rerun)} rerun"
    return None


def _tie(recorded, rerun) -> bool:
    """A scored choice whose options' log-likelihoods agree within the tolerance and whose two picks tie."""
    if not (isinstance(recorded, dict) and isinstance(rerun, dict)):
        return False
    scores, again = recorded.get("loglikelihoods"), rerun.get("loglikelihoods")
    first, second = recorded.get("index"), rerun.get("index")
    if not (isinstance(scores, list) and isinstance(again, list) and len(scores) == len(again)):
        return False
    if first == second or not all(isinstance(i, int) and 0 <= i < len(again) for i in (first, second)):
        return False
    if _difference(scores, again, "loglikelihoods") is not None:
        return False
    return abs(again[first] - again[second]) <= TOLERANCE[0]


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _message(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text.splitlines()[0][:300]}" if not isinstance(exc, MetabenchError) else text


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


#: What keeps a reproduction off the network: models from a hub are read from its local cache only.
_OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


@contextmanager
def _offline() -> Iterator[None]:
    """No model is fetched while reproducing (data is read with `no_downloads` by the verifier): a model not
    here leaves the run not reproducible instead of downloading gigabytes. huggingface_hub reads the variable
    when it is imported; the CLI sets it before anything imports it."""
    with environ.variables(dict.fromkeys(_OFFLINE, "1")):
        yield
