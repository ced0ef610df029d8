"""Optional packages: which extra of metabench installs each, so a missing one is a fix, not a crash.

The core installs without torch, transformers, Ray or lm-eval; each is imported only where it is used. When
such an import fails, the user did nothing wrong in metabench's eyes but lacks an extra: the command line, the
runner (per job) and the loaders that need a model turn the ``ImportError`` into an error that names the
package and the ``pip install 'metabench[EXTRA]'`` that brings it.
"""

from __future__ import annotations

from .errors import MetabenchError

#: Top-level module -> the extra of pyproject.toml that installs it.
EXTRA_OF = {
    "torch": "hf", "transformers": "hf", "accelerate": "hf", "lm_eval": "hf", "gguf": "hf", "safetensors": "hf",
    "huggingface_hub": "hf", "tokenizers": "hf", "datasets": "hf",
    "vllm": "vllm", "openai": "api", "aiohttp": "api", "tenacity": "api",
    "ray": "ray", "hpbandster": "search", "ConfigSpace": "search", "optuna": "search",
    "junitparser": "ci",
}


class MissingExtraError(MetabenchError):
    """An optional package is not installed; ``extra`` names the extra that installs it."""

    def __init__(self, message: str, *, hint: str, extra: str):
        super().__init__(message, hint=hint)
        self.extra = extra


def missing_extra(exc: ImportError, needed_for: str = "this") -> MissingExtraError | None:
    """The error to show for ``exc`` when it is an optional package that is not installed; None otherwise
    (a broken installation or a bug: the caller lets it through)."""
    name = (getattr(exc, "name", None) or "").split(".")[0]
    extra = EXTRA_OF.get(name)
    if extra is None:
        return None
    extra_hint = " (torch: install the CPU build first, see the README)" if name == "torch" else ""
    return MissingExtraError(f"{needed_for} needs the optional package '{name}', which is not installed",
                             hint=f"pip install 'metabench[{extra}]'{extra_hint}", extra=extra)
