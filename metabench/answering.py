"""How a model answers a task: which ``protocol`` section it follows, and the kind that builds its requests.

One benchmark answers every kind of model on the same items, golds and primary metric (docs/tasks.md, "Every
model kind"). A task keeps its own kind (``classification``, ``tagging``...) for encoders and baselines; a decoder
answers it in one of three ways, each a section of the task's ``protocol``:

- **scored** (``protocol.decoder`` with ``kind: choice``): the log-likelihood of the answer words (HF, vLLM, a
  completions API that echoes prompt log-probabilities). The default way of ``hf-decoder`` and ``vllm``.
- **generated** (``protocol.decoder_generated``, ``kind: generation``): greedy text read by a strict parser; what
  a chat API can do, and its default way. ``answer=generated`` asks any decoder for it.
- **fine-tuned** (``hf-decoder:...,finetune=true``): the constrained tagger on a task with ``protocol.decoder_finetune``
  (the token-level benchmarks), else a classification head on the task's encoder recipe
  (:mod:`metabench.models.decoder_head`).

A section that names its own ``kind`` is a way of answering the task, not the task: the task's kind still reads
the golds and scores the answers, which the section's kind maps back into the task's form (a label, a tag per
word; :class:`metabench.kinds.answered.Answered`), so every run of the task pairs with every other. Such a
section is left out of the task's config hash, and :func:`answer_fingerprint` carries it into the answers'
cache key instead. A task whose own kind is prompted (MUNCH judgement) answers decoders with it, as before.

Three model arguments of every decoder choose within a task's ways: ``answer=scored|generated`` (default: the
adapter's own, ``generated`` for a chat API), ``shots=K`` (K demonstrations from the task's training split, drawn
per seed; zero-shot by default) and ``parse=strict|lenient`` (generated answers; strict by default).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from .errors import AdapterError, UnsupportedError
from .requests import ChoiceRequest, GenerateRequest, RankRequest

#: The decoder arguments read here (every decoder adapter accepts them: ``LMEvalDecoder.accepted_args``).
ARGS = ("answer", "shots", "parse")
SCORED, GENERATED, FINE_TUNED = "scored", "generated", "fine-tuned"
#: The protocol section of each way a decoder can ask for.
SECTIONS = {SCORED: "decoder", GENERATED: "decoder_generated"}
MAX_SHOTS = 64


@dataclass(frozen=True)
class Choice:
    """What a decoder's arguments ask of the task's ways (parsed once, checked before any job runs)."""

    answer: str | None = None  # scored | generated | None: the adapter's default
    shots: int | None = None  # None: the section's own `fewshot`
    lenient: bool = False


def parse_args(args: dict, model: str) -> Choice:
    """The answering arguments of a decoder's ``--model`` spec; a bad value is an error naming the fix."""
    answer = args.get("answer")
    if answer is not None and str(answer).lower() not in (SCORED, GENERATED):
        raise AdapterError(f"model '{model}': answer={answer!r} is not scored or generated",
                           hint="answer=scored (log-likelihood of the answer words) or answer=generated (greedy text, "
                                "parsed strictly)")
    shots = args.get("shots")
    if shots is not None:
        text = str(shots).strip()
        if not text.isdigit() or int(text) > MAX_SHOTS:
            raise AdapterError(f"model '{model}': shots={shots!r} is not a whole number from 0 to {MAX_SHOTS}",
                               hint="e.g. shots=5: five demonstrations from the task's training split, drawn per seed")
        shots = int(text)
    parse = str(args.get("parse", "strict")).lower()
    if parse not in ("strict", "lenient"):
        raise AdapterError(f"model '{model}': parse={args.get('parse')!r} is not strict or lenient",
                           hint="parse=lenient reads the first label anywhere in the text (labelled on the board)")
    return Choice(answer=None if answer is None else str(answer).lower(), shots=shots, lenient=parse == "lenient")


def mode_of(request_type: type | None) -> str | None:
    """The way a request type answers: scored, generated or None (not a decoder's request)."""
    if request_type is not None and issubclass(request_type, ChoiceRequest):
        return SCORED
    if request_type is not None and issubclass(request_type, (GenerateRequest, RankRequest)):
        return GENERATED
    return None


def section_key(task, adapter, request_type_of) -> str:
    """The ``protocol`` section ``adapter`` follows on ``task`` (a ``LoadedTask``): its family's, and for a
    decoder the section of the way it asks for (``answer=``), else the first it can serve, scored before
    generated. ``request_type_of(key)`` gives the request type of a section's kind. A task with no way the
    model can take raises UnsupportedError naming the ways the task has and how to ask for another."""
    family = adapter.family
    if family != "decoder":
        return family
    protocol = task.config.protocol
    choice = parse_args(adapter.args, adapter.name)
    ways = {}
    for key in SECTIONS.values():
        if getattr(protocol, key, None) is not None:
            mode = mode_of(request_type_of(key))
            if mode is not None:
                ways.setdefault(mode, key)
    wanted = choice.answer or default_way(adapter)
    order = [wanted] + [w for w in (SCORED, GENERATED) if w != wanted]
    if choice.answer is not None:
        order = [wanted]  # asked for by name: no other way stands in for it
    for way in order:
        key = ways.get(way)
        if key is not None and _serves(adapter, request_type_of(key), task.name):
            return key
    raise UnsupportedError(
        f"task '{task.name}' has no {' or '.join(order)} protocol a {adapter.name} model can follow "
        f"(it has: {', '.join(f'{w} (protocol.{k})' for w, k in ways.items()) or 'no decoder protocol'})",
        hint=_hint(task, ways, choice, adapter),
        reason=(f"its {'/'.join(ways)} way needs what {adapter.name} cannot do here" if ways and choice.answer is None
                else f"no {'/'.join(order)} decoder protocol in the task"),
    )


def default_way(adapter) -> str:
    """The way a decoder takes when ``answer=`` is not given: its adapter's (``generated`` for a chat API)."""
    preferred = getattr(adapter, "default_answer", None)
    return preferred() if callable(preferred) else SCORED


def way_of(kind, adapter=None) -> str:
    """The way a model answering through ``kind`` answers (scored, generated, fine-tuned), or "" for a model that
    is not a decoder: what the plan, the run record and the board name. An adapter that names its way
    (``answers_way``: the decoder's classification head, which follows the encoders' section) is taken at its word."""
    fixed = getattr(adapter, "answers_way", None)
    if fixed:
        return fixed
    protocol = getattr(kind, "protocol", None)
    if protocol == "decoder_finetune":
        return FINE_TUNED
    if protocol in SECTIONS.values():
        return mode_of(kind.request_type()) or ""
    return ""


def _serves(adapter, request_type, task_name: str) -> bool:
    try:
        adapter.check_request_type(request_type, task_name)
    except UnsupportedError:
        return False
    return True


def _hint(task, ways: dict, choice: Choice, adapter) -> str:
    if ways and choice.answer is not None:
        other = next(iter(ways))
        return f"this task answers decoders {other}: drop answer={choice.answer}, or give answer={other}"
    if ways:
        return (f"the task's ways need what {adapter.name} cannot do here ({', '.join(ways)}): e.g. "
                "api=completions,tokenizer=NAME on a server that echoes prompt logprobs scores options, and "
                "hf-decoder:NAME runs both locally (docs/tasks.md, 'Every model kind')")
    return (f"add protocol.decoder (kind: choice) or protocol.decoder_generated (kind: generation) to "
            f"{task.raw.path} (docs/tasks.md, 'Every model kind'), or choose another --model")


def answer_fingerprint(fingerprint: str, section) -> str:
    """The answers' cache key for a model following ``section``: the model's own fingerprint, plus the section
    itself when it names its own kind (the task's config hash leaves such a section out, so an edited prompt must
    change the key here). Other sections are in the task's hash already: their key is the fingerprint as it was."""
    if section is None or getattr(section, "kind", None) is None:
        return fingerprint
    payload = json.dumps({"model": fingerprint, "section": section.model_dump(mode="json")}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def section_sha256(section) -> str:
    """sha256 of a protocol section as JSON: which prompt a run followed (recorded in ``answering``)."""
    return hashlib.sha256(json.dumps(section.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


def changed_section(record, task, kind) -> str | None:
    """Why a decoder run cannot be rerun as it was: the protocol section it followed has changed since (its prompt,
    kind or parser: the section is not in the task's config hash, its digest is in the run's ``answering``); None
    when it is the section here, or the run recorded none."""
    recorded = record.answering
    key = getattr(kind, "protocol", None)
    section = getattr(task.config.protocol, key, None) if key else None
    if recorded is None or recorded.section_sha256 is None or section is None:
        return None
    if recorded.section_sha256 == section_sha256(section):
        return None
    return (f"the run followed another version of the task's protocol.{key} (its prompt, kind or parser changed since; "
            f"sha256 {recorded.section_sha256[:12]} recorded, {section_sha256(section)[:12]} here), and only the "
            "protocol as it is here is rerun")


#: The strict parser of each lenient one: `parse=lenient` on a decoder reads a generated answer with the latter.
LENIENT = {"label_strict": "label", "letter_strict": "letter", "word_list_strict": "word_list"}


def section_config(config, section, choice=None):
    """The config a section's own kind is built from: the task's items, labels and metrics, the section's kind,
    kind_args and prompt (as its ``protocol.decoder``), with a lenient parser where ``parse=lenient`` asks."""
    kind_args = dict(section.kind_args)
    if choice is not None and choice.lenient and kind_args.get("parser") in LENIENT:
        kind_args["parser"] = LENIENT[kind_args["parser"]]
    own = config.protocol.decoder
    if section.template is None and own is not None and own.kind is None and own.template is not None:
        # a task whose own kind is prompted (MUNCH) words its other way with its own prompt unless it gives one
        section = section.model_copy(update={"template": own.template, "system": section.system or own.system})
    protocol = config.protocol.model_copy(update={"decoder": section})
    return config.model_copy(update={"kind": section.kind, "kind_args": kind_args, "protocol": protocol})
