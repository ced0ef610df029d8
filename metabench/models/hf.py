"""``hf``: one name for every transformers model; reads the model's config and hands over to the right adapter.

- an encoder (BERT, RoBERTa, XLM-R, DeBERTa, ...) → ``hf-encoder`` (:class:`~metabench.models.hf_encoder.HFEncoder`:
  fine-tuned in-suite under the task's ``protocol.encoder``);
- a decoder-only LM (Llama, GPT-2, SmolLM, ...) → ``hf-decoder`` (``metabench.models.hf_decoder.HFDecoder``:
  prompted/scored under ``protocol.decoder``).

``hf-encoder:`` / ``hf-decoder:`` force one path. The detection reads ``config.json`` only (architectures first,
then the model type; see :func:`metabench.models.hf_common.model_family`); a short name registered through
``metabench_register_pretrained`` with ``family=`` metadata is trusted without building its folder first.
A name resolved here is handed to the decoder, so it is not resolved twice.
"""

from __future__ import annotations

from ..errors import AdapterError
from .base import Adapter, AdapterSettings
from .hf_common import model_family, resolve_pretrained
from .hf_encoder import HFEncoder


def _decoder_class():
    try:
        from .hf_decoder import HFDecoder
    except ModuleNotFoundError as exc:
        if exc.name != "metabench.models.hf_decoder":
            raise
        raise AdapterError(
            "this model is a decoder (causal LM), and the decoder adapter (metabench.models.hf_decoder) is not "
            "installed in this version of metabench",
            hint="use an encoder model, or update metabench",
        ) from None
    return HFDecoder


def _registered_family(registry, name: str) -> str | None:
    if registry is None or not registry.has("pretrained", name):
        return None
    family = registry.get("pretrained", name).meta.get("family")
    return {"encoder": "encoder", "causal-lm": "decoder", "decoder": "decoder"}.get(str(family)) if family else None


class HFAuto(Adapter):
    """Not instantiated itself: ``HFAuto(args, registry=..., settings=...)`` returns an HFEncoder or an HFDecoder."""

    name = "hf"
    family = "auto"
    positional_arg = "pretrained"
    allowed_args = HFEncoder.allowed_args

    @classmethod
    def accepted_args(cls) -> tuple[str, ...]:
        """The encoder's and the decoder's: which of them takes the model is read from its config later (the
        one built checks its own)."""
        from .decoder_tagger import DecoderTagger

        return tuple(dict.fromkeys(HFEncoder.allowed_args + _decoder_class().allowed_args + DecoderTagger.allowed_args))

    def __new__(cls, args: dict[str, str], *, registry=None, settings: AdapterSettings | None = None):
        name = args.get("pretrained")
        if not name:
            raise AdapterError("model 'hf' needs pretrained=", hint="e.g. --model hf:minilm-l6")
        resolved = None
        family = _registered_family(registry, name)
        if family is None:
            resolved = resolve_pretrained(name, registry, args.get("revision") or None)
            family = model_family(resolved.folder)
        if family == "encoder":
            return HFEncoder(args, registry=registry, settings=settings)
        decoder = _decoder_class()(args, registry=registry, settings=settings)
        if resolved is not None:
            decoder.use_resolved(resolved)
        return decoder
