"""``hf-decoder:NAME,finetune=true`` on a benchmark that is not token-level: the decoder with a classification head,
fine-tuned on the task's own encoder recipe.

The field fine-tunes decoders two ways: as taggers on the token-level benchmarks (Meta4XNLI Tables 12-13; the task's
``protocol.decoder_finetune``, :mod:`metabench.models.decoder_tagger`) and, on sentence and target-word
classification (MOH-X, TroFi, VUA-Verb, NewsMet, NLI), with a classification head on the last token, which
transformers builds for every causal LM family (``AutoModelForSequenceClassification``). So one spec,
``finetune=true``, covers every headline benchmark: the tagger where the task has a tagger section, the head where
it has an encoder recipe. The head trains exactly as an encoder does (:class:`~metabench.models.hf_encoder.HFEncoder`:
the recipe, seeds, checkpoints and model selection of ``protocol.encoder``), so its runs pair with the encoders'
item by item; the run records the way as ``fine-tuned`` (``answering.mode``) and its section as ``encoder``.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from .base import Adapter, AdapterSettings
from .hf_encoder import HFEncoder

#: The tagger's decoding arguments: a head decodes nothing, so they are left out of what it is built with.
DECODING_ONLY = ("beams", "max_new_tokens")


class DecoderHead(HFEncoder):
    """A causal LM with a sequence-classification head, fine-tuned on the task's encoder recipe."""

    name = "hf-decoder"
    #: The way this adapter answers, whatever protocol section it follows (`metabench.answering.way_of`).
    answers_way = "fine-tuned"
    allowed_args = (*HFEncoder.allowed_args, "finetune")


def for_task(adapter: Adapter, task, registry, settings: AdapterSettings | None) -> Adapter:
    """``adapter`` itself, unless it is the fine-tuned tagger meeting a classification task with an encoder recipe
    and no tagger section: then the classification head on the same model (``task``: a ``LoadedTask``)."""
    protocol = task.config.protocol
    if adapter.family != "decoder_finetune" or protocol.decoder_finetune is not None:
        return adapter
    if task.config.kind == "tagging" or protocol.encoder is None:
        return adapter
    if adapter.args.get("method", "full") != "full":
        raise UnsupportedError(
            f"method={adapter.args['method']}: task '{task.name}' fine-tunes the decoder with a classification head "
            "on its encoder recipe, which trains every weight",
            hint="drop method= (or give method=full) for this task; LoRA applies to the token-level taggers",
            reason=f"method={adapter.args['method']} applies to the tagger only")
    args = {key: value for key, value in adapter.args.items()
            if key in DecoderHead.allowed_args and key not in DECODING_ONLY}
    return DecoderHead(args, registry=registry, settings=settings)
