"""Registers the built-in model adapters (lazy targets: nothing heavy is imported here)."""

from ..hookspecs import hookimpl


@hookimpl
def metabench_register_models(register):
    register("majority", "metabench.models.baselines:Majority", description="majority training label (tagging: per word)")
    register("random", "metabench.models.baselines:RandomBaseline", description="seeded random label or option (strategy=uniform|prior; prior learns from the training split)")
    register("constant", "metabench.models.baselines:Constant", description="a given label (label=...) or option (index=...)")
    register("lookup", "metabench.models.baselines:Lookup", description="majority training label of an identical input")
    register("hf", "metabench.models.hf:HFAuto", description="any transformers model: encoder (fine-tuned) or decoder, read from its config")
    register("hf-encoder", "metabench.models.hf_encoder:HFEncoder", description="transformers encoder, fine-tuned in-suite per task and seed")
    register("hf-decoder", "metabench.models.hf_decoder:HFDecoder",
             description="causal LM through lm-eval's HFLM: choice by log-likelihood, generation, next-token ranking")
    register("vllm", "metabench.models.vllm_decoder:VLLMDecoder",
             description="causal LM on vLLM through lm-eval (GPU)")
    register("openai", "metabench.models.openai_decoder:OpenAIDecoder",
             description="OpenAI-compatible API through lm-eval (api=chat|completions; key from $OPENAI_API_KEY)")


@hookimpl
def metabench_register_commands(register):
    register("serve-local", "metabench.commands.serve_local:add_commands",
             description="a local OpenAI-compatible server (llama.cpp, SmolLM2-135M) for the openai adapter")
