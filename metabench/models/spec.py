"""Parsing ``--model NAME[:ARGS]`` and building the adapter.

ARGS is ``key=value`` pairs separated by commas (``hf:pretrained=/path,batch_size=16``); a first value
without ``=`` fills the adapter's positional argument (``hf:minilm-l6``). Values stay strings; adapters
convert them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import MetabenchError, PluginAPIDeprecationWarning, unknown
from ..registry import Registry
from .base import Adapter, AdapterSettings


@dataclass(frozen=True)
class ModelSpec:
    text: str
    name: str
    args: dict

    @property
    def slug(self) -> str:
        """A folder-safe name for run directories: never ``.``/``..`` (the task folder or the output folder
        itself) nor hidden (readers skip hidden folders as staging copies)."""
        return re.sub(r"[^A-Za-z0-9_.=-]+", "_", self.text).strip("_").lstrip(".")[:120] or "model"


def parse_model_spec(text: str) -> ModelSpec:
    _check_text(text)
    name, colon, rest = text.partition(":")
    if not name:
        raise MetabenchError(f"--model '{text}': empty adapter name", hint="e.g. --model majority or --model hf:minilm-l6")
    if colon and not rest.replace(",", "").strip():  # `majority:` would be a second model with the same folder
        raise MetabenchError(f"--model '{text}': no arguments after ':'", hint=f"write --model {name}, or give arguments "
                             f"after the colon (--model {name}:key=value)")
    args: dict[str, str] = {}
    for index, part in enumerate(p for p in rest.split(",") if p.strip()) if rest else ():
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            if index:
                raise MetabenchError(
                    f"--model '{text}': '{part}' is not key=value",
                    hint="only the first argument may be given without a key",
                )
            args["_positional"] = key
        elif key in args:
            raise MetabenchError(f"--model '{text}': argument '{key}' is given twice ({args[key]!r} and {value.strip()!r})",
                                 hint=f"give '{key}' once")
        else:
            args[key] = value.strip()
    return ModelSpec(text, name, args)


def _check_text(text: str) -> None:
    """A spec becomes a folder name and JSON text: bytes that are not UTF-8 (a model folder named in another
    encoding reaches Python as lone surrogates) would fail only when the run is written, after the work."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        shown = text.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
        raise MetabenchError(
            f"--model '{shown}': character {exc.start + 1} is not UTF-8 text (a file name in another encoding?)",
            hint="rename the model folder to a UTF-8 name, or link it under one (ln -s OLD new_name)") from None


def build_adapter(spec: ModelSpec, registry: Registry, settings: AdapterSettings | None = None) -> Adapter:
    """The adapter for ``--model``, built with what it needs: its arguments, the registry (to resolve
    registered names) and the run-wide settings. Nothing is set on the adapter after it is built, except on an
    adapter of plugin API 1, which takes its arguments alone (deprecated)."""
    cls = _adapter_class(spec, registry)
    args = adapter_args(cls, spec)
    if _takes_registry_and_settings(cls):
        return cls(args, registry=registry, settings=settings or AdapterSettings())
    return _build_old_style(cls, args, spec, registry, settings or AdapterSettings())


def check_model_spec(spec: ModelSpec, registry: Registry) -> None:
    """Mistakes in ``--model`` found before any job runs, so they are bad usage (exit 2), not failed jobs: an
    unknown adapter, a positional argument it does not take, an argument it does not know. An adapter whose
    module cannot be imported is left to its jobs, which fail with the reason."""
    if not registry.has("model", spec.name):
        raise _unknown_model(spec, registry)
    try:
        cls = registry.resolve("model", spec.name)
    except MetabenchError:
        return
    adapter_args(cls, spec)


def _adapter_class(spec: ModelSpec, registry: Registry) -> type[Adapter]:
    if not registry.has("model", spec.name):
        raise _unknown_model(spec, registry)
    return registry.resolve("model", spec.name)


def _unknown_model(spec: ModelSpec, registry: Registry) -> MetabenchError:
    """'unknown model', or, for a pretrained short name given alone (``--model minilm-l6``), the ``hf:`` form."""
    if registry.has("pretrained", spec.name) and registry.has("model", "hf"):
        suggested = f"hf:{spec.text}"
        return MetabenchError(f"--model {spec.text}: '{spec.name}' is a pretrained model, not an adapter "
                              f"(did you mean '{suggested}'?)",
                              hint=f"write --model {suggested}; `metabench ls pretrained` lists the short names")
    return unknown("model", spec.name, registry.names("model"), where=f"--model {spec.text}")


def adapter_args(cls: type[Adapter], spec: ModelSpec) -> dict[str, str]:
    """The arguments ``cls`` is built with: the positional value under its name, every name checked."""
    args = dict(spec.args)
    if "_positional" in args:
        value = args.pop("_positional")
        if cls.positional_arg is None:
            raise MetabenchError(
                f"--model {spec.text}: '{spec.name}' takes no positional argument (got '{value}')",
                hint=f"write it as key=value; its arguments are: {', '.join(cls.allowed_args) or '(none)'}",
            )
        if cls.positional_arg in args:
            raise MetabenchError(
                f"--model {spec.text}: '{value}' and {cls.positional_arg}={args[cls.positional_arg]} both give "
                f"'{cls.positional_arg}'", hint=f"give '{cls.positional_arg}' once")
        args[cls.positional_arg] = value
    try:
        cls.check_args(args)
    except MetabenchError as exc:
        raise type(exc)(f"--model {spec.text}: {exc.message}", hint=exc.hint) from None
    return args


def _takes_registry_and_settings(cls) -> bool:
    import inspect

    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return True
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    return takes_all or {"registry", "settings"} <= set(parameters)


#: The plugin API 1 warnings shown in this process (warnings' own registry: one per class, file and line).
_OLD_STYLE_WARNED: dict = {}


def _defined_at(cls) -> tuple[str, int]:
    """The file and first line of ``cls``'s definition, or its module's file when the source is not available."""
    import inspect
    import sys

    try:
        return inspect.getsourcefile(cls) or "", inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return getattr(sys.modules.get(cls.__module__), "__file__", None) or cls.__module__, 1


def _build_old_style(cls, args: dict, spec: ModelSpec, registry: Registry, settings: AdapterSettings) -> Adapter:
    """An adapter written before plugin API 2 (``__init__(self, args)``) still works, for at least one minor
    version: it is built with its arguments alone, then given the registry and the settings, with a
    deprecation warning naming the class and the fix (docs/plugins.md, change log).

    The warning points at the class's own file and line, which is what its author edits (metabench's frames
    would name metabench's files), and is shown once per process however many times the adapter is built (a
    plan builds it, then the job does).
    """
    import warnings

    filename, lineno = _defined_at(cls)
    warnings.warn_explicit(
        f"--model {spec.text}: adapter class {cls.__module__}.{cls.__qualname__} takes no registry= and settings= "
        "arguments (plugin API 1); metabench sets them after building it, until it drops API 1. Write its __init__ "
        "as `def __init__(self, args, *, registry=None, settings=None)` and pass both to super().__init__ "
        "(docs/plugins.md, change log)", PluginAPIDeprecationWarning, filename, lineno, module=cls.__module__,
        registry=_OLD_STYLE_WARNED)
    adapter = cls(args)
    adapter.registry = registry
    adapter.use_cache = settings.use_cache
    adapter.progress = settings.progress
    return adapter
