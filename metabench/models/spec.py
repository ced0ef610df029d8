"""Parsing ``--model NAME[:ARGS]`` and building the adapter.

ARGS is ``key=value`` pairs separated by commas (``hf:pretrained=/path,batch_size=16``); a first value
without ``=`` fills the adapter's positional argument (``hf:minilm-l6``). Values stay strings; adapters
convert them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import MetabenchError, unknown
from ..registry import Registry
from .base import Adapter, AdapterSettings


@dataclass(frozen=True)
class ModelSpec:
    text: str
    name: str
    args: dict

    @property
    def slug(self) -> str:
        """A folder-safe name for run directories."""
        return re.sub(r"[^A-Za-z0-9_.=-]+", "_", self.text).strip("_")[:120] or "model"


def parse_model_spec(text: str) -> ModelSpec:
    name, _, rest = text.partition(":")
    if not name:
        raise MetabenchError(f"--model '{text}': empty adapter name", hint="e.g. --model majority or --model hf:minilm-l6")
    args: dict[str, str] = {}
    for index, part in enumerate(p for p in rest.split(",") if p.strip()) if rest else ():
        key, eq, value = part.partition("=")
        if not eq:
            if index:
                raise MetabenchError(
                    f"--model '{text}': '{part}' is not key=value",
                    hint="only the first argument may be given without a key",
                )
            args["_positional"] = key.strip()
        else:
            args[key.strip()] = value.strip()
    return ModelSpec(text, name, args)


def build_adapter(spec: ModelSpec, registry: Registry, settings: AdapterSettings | None = None) -> Adapter:
    """The adapter for ``--model``, built with what it needs: its arguments, the registry (to resolve
    registered names) and the run-wide settings. Nothing is set on the adapter after it is built."""
    if not registry.has("model", spec.name):
        raise unknown("model", spec.name, registry.names("model"), where=f"--model {spec.text}")
    cls = registry.resolve("model", spec.name)
    args = dict(spec.args)
    if "_positional" in args:
        value = args.pop("_positional")
        if cls.positional_arg is None:
            raise MetabenchError(
                f"--model {spec.text}: '{spec.name}' takes no positional argument (got '{value}')",
                hint=f"write it as key=value; its arguments are: {', '.join(cls.allowed_args) or '(none)'}",
            )
        args[cls.positional_arg] = value
    _check_signature(cls, spec)
    return cls(args, registry=registry, settings=settings or AdapterSettings())


def _check_signature(cls, spec: ModelSpec) -> None:
    """An adapter whose ``__init__`` cannot take ``registry=`` and ``settings=`` is named, not a TypeError."""
    import inspect

    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    if not takes_all and not {"registry", "settings"} <= set(parameters):
        raise MetabenchError(
            f"--model {spec.text}: adapter class {cls.__module__}.{cls.__qualname__} takes no registry= and "
            "settings= arguments, which metabench builds every adapter with",
            hint="write its __init__ as `def __init__(self, args, *, registry=None, settings=None)` and pass both "
                 "to super().__init__ (docs/plugins.md, Adapters)",
        )
