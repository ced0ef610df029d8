"""The GPU paths, checked without a GPU: bfloat16 really runs (on CPU), and the multi-GPU switches reach lm-eval.

What a GPU run adds (speed, vLLM's kernels) is measured by benchmarks/gpu_check.sh on a CUDA machine.
"""

from __future__ import annotations

import sys
import types

import pytest

from metabench.models.hf_decoder import HFDecoder
from metabench.models.vllm_decoder import VLLMDecoder
from metabench.requests import ChoiceRequest


class _Captured(Exception):
    """Raised by a stand-in backend once it has recorded the arguments the adapter built."""


def _recorder(seen: dict):
    def build(**kwargs):
        seen.update(kwargs)
        raise _Captured

    return build


def test_bfloat16_scores_like_float32_on_cpu(tiny_gpt2):
    requests = [ChoiceRequest(context=f"Item {i}: the answer is", options=(" yes", " no", " maybe")) for i in range(6)]
    full = HFDecoder({"pretrained": str(tiny_gpt2), "batch_size": "4"}).predict(requests, 0)
    half = HFDecoder({"pretrained": str(tiny_gpt2), "batch_size": "4", "dtype": "bfloat16"})
    low = half.predict(requests, 0)
    assert half.info()["dtype"] == "torch.bfloat16"
    for a, b in zip(full, low):
        assert a["loglikelihoods"] == pytest.approx(b["loglikelihoods"], abs=0.15)  # bfloat16 keeps ~3 digits
        assert a["loglikelihoods"] != b["loglikelihoods"]  # it really ran in another precision


def test_parallelize_and_dtype_reach_hflm(monkeypatch, tiny_gpt2):
    seen: dict = {}
    import lm_eval.models.huggingface as hf

    monkeypatch.setattr(hf, "HFLM", _recorder(seen))
    adapter = HFDecoder({"pretrained": str(tiny_gpt2), "dtype": "bfloat16", "parallelize": "true", "device": "cpu"})
    with pytest.raises(_Captured):
        adapter._load()
    assert seen["dtype"] == "bfloat16" and seen["parallelize"] is True


def test_vllm_parallel_sizes_reach_the_engine(monkeypatch, tiny_gpt2):
    seen: dict = {}
    module = types.ModuleType("lm_eval.models.vllm_causallms")
    module.VLLM = _recorder(seen)
    monkeypatch.setitem(sys.modules, "lm_eval.models.vllm_causallms", module)
    adapter = VLLMDecoder({"pretrained": str(tiny_gpt2), "dtype": "bfloat16", "tensor_parallel_size": "4",
                           "data_parallel_size": "2", "gpu_memory_utilization": "0.8", "enable_prefix_caching": "true"})
    with pytest.raises(_Captured):
        adapter._load()
    assert (seen["tensor_parallel_size"], seen["data_parallel_size"]) == (4, 2)
    assert seen["dtype"] == "bfloat16" and seen["gpu_memory_utilization"] == 0.8
    assert seen["enable_prefix_caching"] is True  # shared prompts' key/values kept by the engine

