"""How a board names a decoder's run: the model as people know it, and the way it answered.

A decoder answers a benchmark in one of three ways (`metabench.answering`): scored (the log-likelihood of the
answer words), generated (greedy text read by a parser) or fine-tuned (a tagger trained on the task), zero-shot
or with k demonstrations. Two runs of one model in two ways are two results, not one, so the headline table gives
each way its own row, labelled "SmolLM2-135M-Instruct · 5-shot scored". The way is read from the run's recorded
``answering`` (never from the spec text, which leaves the adapter's default way unsaid); a decoder run written
before ``answering`` was recorded reads as scored when its task (or the protocol section it followed) has the
``choice`` kind, else generated — the only two ways a decoder had then, besides the fine-tuned tagger whose
family says so.
"""

from __future__ import annotations

from ..answering import ARGS, FINE_TUNED, GENERATED, SCORED, SECTIONS

#: The model families whose runs are a decoder's (the tagger's family is its own: `ModelInfo.family`).
DECODER_FAMILIES = ("decoder", "decoder_finetune")
#: The sections whose kind is a decoder's own way of answering.
_SECTIONS = tuple(SECTIONS.values())


def way(record) -> str | None:
    """``zero-shot scored``, ``5-shot generated · lenient parse``, ``fine-tuned``...: how a decoder's run
    answered (`RunRecord`); None for a model that is not a decoder (an encoder, a baseline)."""
    answering = record.answering
    family = record.model.family or record.protocol
    if answering is None and family not in DECODER_FAMILIES:
        return None
    if answering is not None:
        mode, shots, lenient = answering.mode, answering.shots, answering.lenient
    else:
        mode, shots, lenient = _older_mode(record), 0, False
    if mode == FINE_TUNED:
        return FINE_TUNED
    label = f"{'zero-shot' if not shots else f'{shots}-shot'} {mode}"
    return label + (" · lenient parse" if lenient else "")


def _older_mode(record) -> str:
    """The way of a decoder run that recorded no ``answering``: fine-tuned by its family or section, else scored
    when its task's kind or its section's kind is ``choice``, else generated."""
    section_key = record.protocol or record.model.family
    if section_key == "decoder_finetune" or record.model.family == "decoder_finetune":
        return FINE_TUNED
    section = record.task.config.protocol.section(section_key) if section_key in _SECTIONS else None
    kind = (section.kind if section is not None else None) or record.task.kind
    return SCORED if kind == "choice" else GENERATED


def model_name(registry, record) -> str:
    """The model as people know it: a registered short name's description up to its colon
    (``smollm2-135m`` -> ``SmolLM2-135M-Instruct``), else the ``--model`` spec less the answering arguments the
    way already says (``answer=``, ``shots=``, ``parse=``)."""
    short = record.model.info.registered_name or (record.model.args or {}).get("pretrained")
    if registry is not None and isinstance(short, str) and registry.has("pretrained", short):
        description = registry.get("pretrained", short).description
        if description and ":" in description:
            return description.split(":", 1)[0].strip()
    adapter, _, args = record.model.spec.partition(":")
    kept = [arg for arg in args.split(",") if arg and arg.split("=", 1)[0].strip() not in ARGS]
    return adapter + (":" + ",".join(kept) if kept else "")


def row_label(registry, record) -> str:
    """The headline row's label: ``SmolLM2-135M-Instruct · zero-shot scored`` for a decoder; the spec for any
    other model (its row needs no way)."""
    found = way(record)
    return record.model.spec if found is None else f"{model_name(registry, record)} · {found}"
