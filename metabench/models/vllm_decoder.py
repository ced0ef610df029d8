"""Decoders on vLLM through lm-eval: ``vllm`` (``lm_eval.models.vllm_causallms.VLLM``).

Same requests and answers as ``hf-decoder`` (see :mod:`metabench.models.lmeval_bridge`). Differences:

- Sampling is seeded per request (vLLM's ``SamplingParams.seed`` = hash of the run seed and the prompt), so
  a sampled answer does not depend on which other requests share its batch.
- ``RankRequest``: the top-k come from vLLM's ``logprobs=k`` on a one-token generation, the completions from
  greedy generations that start from the prompt's token ids plus the ranked token (vLLM caps ``logprobs``
  at its ``max_logprobs``, 20 by default).

Arguments: ``pretrained`` (folder, registered short name or hub id), ``dtype`` (auto), ``batch_size``
(auto), ``max_batch_size``, ``tensor_parallel_size``, ``data_parallel_size``, ``gpu_memory_utilization``,
``max_model_len``, ``quantization``, ``revision``, ``tokenizer``, ``trust_remote_code``,
``add_bos_token``, ``enforce_eager``, ``chat_template`` (task/on/off), ``chunk_size`` (default 512: vLLM
schedules its own batches, so the runner hands it many requests at once).

Untested on a GPU in this repository's CI (no GPU there); the request plumbing is unit-tested with a fake
engine.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..errors import AdapterError
from ..requests import RankRequest
from .base import AdapterSettings
from .hf_common import parse_bool, parse_int
from .lmeval_bridge import WORD_STOPS, PretrainedDecoder, wanted, word_of


class VLLMDecoder(PretrainedDecoder):
    name = "vllm"
    backend = "lm_eval.models.vllm_causallms.VLLM"
    allowed_args = (
        "pretrained", "dtype", "batch_size", "max_batch_size", "tensor_parallel_size", "data_parallel_size",
        "gpu_memory_utilization", "max_model_len", "quantization", "revision", "tokenizer", "trust_remote_code",
        "add_bos_token", "enforce_eager", "enable_prefix_caching", "chat_template", "chunk_size",
    )

    def __init__(self, args: dict[str, str], *, registry=None, settings: AdapterSettings | None = None):
        super().__init__({"chunk_size": "512", **args}, registry=registry, settings=settings)

    def _load(self):
        try:
            from lm_eval.models.vllm_causallms import VLLM
        except ImportError as exc:
            raise AdapterError(
                f"model 'vllm' needs vLLM: {exc}", hint="pip install 'metabench[vllm]' (a CUDA machine)"
            ) from exc
        kwargs: dict[str, Any] = {
            "pretrained": self.path,
            "dtype": self.args.get("dtype", "auto"),
            "batch_size": parse_int(self.args.get("batch_size", "auto"), "batch_size", self.name, allow_auto=True),
            "tensor_parallel_size": parse_int(self.args.get("tensor_parallel_size", 1), "tensor_parallel_size", self.name),
            "data_parallel_size": parse_int(self.args.get("data_parallel_size", 1), "data_parallel_size", self.name),
            "trust_remote_code": parse_bool(self.args.get("trust_remote_code", False), "trust_remote_code", self.name),
        }
        for key in ("revision", "tokenizer", "quantization"):
            if key in self.args:
                kwargs[key] = self.args[key]
        for key in ("max_batch_size", "max_model_len"):
            if key in self.args:
                kwargs[key] = parse_int(self.args[key], key, self.name)
        if "gpu_memory_utilization" in self.args:
            kwargs["gpu_memory_utilization"] = float(self.args["gpu_memory_utilization"])
        # enable_prefix_caching: vLLM keeps the key/values of a prompt shared by many requests (a choice item's
        # options, a task's few-shot prefix) instead of recomputing them per request; lm-eval passes it to LLM().
        for key in ("add_bos_token", "enforce_eager", "enable_prefix_caching"):
            if key in self.args:
                kwargs[key] = parse_bool(self.args[key], key, self.name)
        lm = VLLM(**kwargs)
        self._facts.update({
            **self._loaded_facts(),
            "dtype": kwargs["dtype"],
            "tensor_parallel_size": kwargs["tensor_parallel_size"],
            "max_length": lm.max_length,
            "has_chat_template": bool(getattr(lm.tokenizer, "chat_template", None)),
        })
        return lm

    def gen_kwargs(self, request, seed: int) -> dict:
        kwargs = super().gen_kwargs(request, seed)
        if request.temperature > 0:
            digest = hashlib.sha256(f"{seed}\x00{request.prompt}".encode()).digest()
            kwargs["seed"] = int.from_bytes(digest[:4], "big")
        return kwargs

    def rank(self, requests: list[RankRequest]) -> list[list]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        lm = self.lm
        tokenizer = lm.tokenizer
        prompts = [lm.tok_encode(self.context(r.prompt, r)) for r in requests]
        firsts = lm.model.generate(
            [TokensPrompt(prompt_token_ids=ids) for ids in prompts],
            sampling_params=[SamplingParams(max_tokens=1, temperature=0, logprobs=r.k) for r in requests],
            use_tqdm=False,
        )
        ranked, jobs = [], []
        for r_index, (request, ids, output) in enumerate(zip(requests, prompts, firsts)):
            top = output.outputs[0].logprobs[0]  # token id -> Logprob(logprob, rank, decoded_token)
            order = sorted(top.items(), key=lambda kv: (-kv[1].logprob, kv[0]))[: request.k]
            texts = [(tid, tokenizer.decode([tid])) for tid, _ in order]
            ranked.append(texts)
            for position, (tid, text) in enumerate(texts):
                if wanted(text, request.complete):
                    jobs.append((r_index, position, ids + [tid], request.max_word_tokens))
        words: dict[tuple[int, int], str] = {}
        if jobs:
            outs = lm.model.generate(
                [TokensPrompt(prompt_token_ids=ids) for _, _, ids, _ in jobs],
                sampling_params=[SamplingParams(max_tokens=n, temperature=0, stop=list(WORD_STOPS) + [" "])
                                 for *_, n in jobs],
                use_tqdm=False,
            )
            for (r_index, position, ids, _), out in zip(jobs, outs):
                token_text = tokenizer.decode([ids[-1]])
                words[(r_index, position)] = word_of(token_text + out.outputs[0].text)
        return [[[text, words.get((r, p))] for p, (_, text) in enumerate(texts)] for r, texts in enumerate(ranked)]
