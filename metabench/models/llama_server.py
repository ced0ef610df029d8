"""``python llama_server.py ARGS``: llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server
ARGS``) with llama.cpp's extra weight buffers off (``llama_model_params.use_extra_bufts``: the AMX and repacked
weight layouts), which the server has no option for.

Why: on a CPU that reports AMX inside a VM that does not enable its tile state (these Firecracker machines),
llama.cpp repacks the weights for AMX and its first matrix product dies with a general protection fault. The
plain layout computes the same model, only without those kernels.
"""

from __future__ import annotations

import runpy

import llama_cpp.llama_cpp as native

_default_params = native.llama_model_default_params


def _params():
    params = _default_params()
    params.use_extra_bufts = False
    return params


if __name__ == "__main__":
    native.llama_model_default_params = _params
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
