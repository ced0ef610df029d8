"""``python -m metabench.models.llama_server ARGS``: llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server
ARGS``) with llama.cpp's extra weight buffers off (``llama_model_params.use_extra_bufts``: the AMX and repacked
weight layouts), which the server has no option for.

Why: on a CPU that reports AMX inside a VM that does not enable its tile state (these Firecracker machines),
llama.cpp repacks the weights for AMX and its first matrix product dies with a general protection fault. The
plain layout computes the same model, only without those kernels.

``metabench serve-local`` (:mod:`metabench.models.local_server`) starts the server through this module; so does
tests/decoders/test_openai_server.py.
"""

from __future__ import annotations

import runpy


def main() -> None:
    """Run llama-cpp-python's server module with its model parameters' ``use_extra_bufts`` off (llama_cpp is
    imported here, not at import time: the package imports without the ``server`` extra)."""
    import llama_cpp.llama_cpp as native

    default_params = native.llama_model_default_params

    def params():
        plain = default_params()
        plain.use_extra_bufts = False
        return plain

    native.llama_model_default_params = params
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
