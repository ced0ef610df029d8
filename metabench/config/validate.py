"""Checks a parsed task against what is registered: kind, kind_args, dataset, splits, metrics."""

from __future__ import annotations

import inspect

from pydantic import ValidationError

from ..data.load import check_args
from ..errors import ConfigError, did_you_mean, registered_hint
from ..registry import Registry
from .loader import RawConfig
from .paper_layouts import check_binding, registered_views
from .schema import ROLES, GroupConfig, SplitRef, TaskConfig


def check_task(config: TaskConfig, raw: RawConfig, registry: Registry) -> None:
    _check_name(registry, "kind", config.kind, raw.where("kind"))
    kind_cls = registry.resolve("kind", config.kind)
    try:
        kind_cls.Args.model_validate(config.kind_args)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ("kind_args", *err["loc"])
        valid = ", ".join(kind_cls.Args.model_fields) or "(none)"
        what = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        raise ConfigError(
            f"{raw.where(*loc)}: {'.'.join(map(str, loc))}: {what}"
            f"{did_you_mean(str(loc[-1]), kind_cls.Args.model_fields)}",
            hint=f"kind '{config.kind}' takes kind_args: {valid}",
        ) from None

    _check_name(registry, "dataset", config.dataset, raw.where("dataset"))
    for role in ROLES:
        value = getattr(config.splits, role)
        if value is None:
            continue
        values = split_values(value)
        for index, one in enumerate(values):
            at = ("splits", role, index) if isinstance(value, list) else ("splits", role)
            dataset, split, args = resolve_split(config, one)
            _check_name(registry, "dataset", dataset, raw.where(*at, "dataset"))
            check_args(registry.get("dataset", dataset).target, split, args, where=raw.where(*at))

    names = []
    for index, metric in enumerate(config.metric_specs()):
        _check_name(registry, "metric", metric.name, raw.where("metrics", index))
        _check_metric_args(registry, metric, raw.where("metrics", index))
        names.append(metric.name)
    if config.primary_metric and config.primary_metric not in names:
        raise ConfigError(
            f"{raw.where('primary_metric')}: primary_metric '{config.primary_metric}' is not among the task's "
            f"metrics{did_you_mean(config.primary_metric, names)}",
            hint=f"use one of: {', '.join(names)}",
        )
    encoder = config.protocol.encoder
    select = encoder.finetune.select_metric if encoder is not None else None
    _check_validation_metric(select, names, raw, ("protocol", "encoder", "finetune", "select_metric"))
    search = encoder.search if encoder is not None else None
    if search is not None:
        _check_validation_metric(search.metric, names, raw, ("protocol", "encoder", "search", "metric"))
    kind_cls.check_config(config, raw)
    for key in ("decoder", "decoder_generated"):
        _check_answering_section(config, raw, registry, key)
    _check_paper_views(config, raw, registry)


def _check_answering_section(config: TaskConfig, raw: RawConfig, registry: Registry, key: str) -> None:
    """A protocol section naming its own kind (metabench.answering) is checked as that kind's task would be, its
    errors pointing into the section: the kind registered, its kind_args, its prompt."""
    section = getattr(config.protocol, key, None)
    if section is None or section.kind is None:
        if key == "decoder_generated" and section is not None:
            raise ConfigError(f"{raw.where('protocol', key)}: protocol.{key} needs its own `kind` (normally "
                              "generation): it is how a decoder answers by parsed text",
                              hint="e.g. decoder_generated: {kind: generation, kind_args: {parser: label_strict}, ...}")
        return
    from ..answering import section_config

    inner = _SectionRaw(raw, key)
    _check_name(registry, "kind", section.kind, inner.where("kind"))
    kind_cls = registry.resolve("kind", section.kind)
    if not hasattr(kind_cls, "check_prompt"):
        raise ConfigError(f"{inner.where('kind')}: protocol.{key}.kind '{section.kind}' builds no prompt: a decoder "
                          "answers a task through a prompted kind", hint="kind: choice (scored) or generation")
    answered = section_config(config, section)
    try:
        kind_cls.Args.model_validate(answered.kind_args)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"{inner.where('kind_args', *err['loc'])}: protocol.{key}.kind_args: {err['msg']}",
                          hint=f"kind '{section.kind}' takes kind_args: {', '.join(kind_cls.Args.model_fields)}") from None
    kind_cls.check_config(answered, inner)


class _SectionRaw:
    """A task file's positions, read from inside one protocol section: what a kind's check names as the task's
    ``kind_args`` or ``protocol.decoder`` is the section's own (``protocol.decoder_generated.kind_args``...)."""

    def __init__(self, raw: RawConfig, key: str):
        self.raw, self.key, self.path = raw, key, raw.path

    def where(self, *keys) -> str:
        if keys[:2] == ("protocol", "decoder"):
            keys = keys[2:]
        elif keys[:1] == ("protocol",):
            keys = ()
        return self.raw.where("protocol", self.key, *keys)


def _check_validation_metric(metric: str | None, names: list[str], raw: RawConfig, at: tuple[str, ...]) -> None:
    """Model selection and the search score the validation split with the task's own metrics (or its loss)."""
    if metric and metric != "loss" and metric not in names and not any(metric.startswith(f"{n}/") for n in names):
        raise ConfigError(
            f"{raw.where(*at)}: {at[-1]} '{metric}' is not among the task's metrics{did_you_mean(metric, names)}",
            hint=f"the validation split is scored with the task's metrics: use loss or one of {', '.join(names)}",
        )


def check_group(config: GroupConfig, raw: RawConfig, registry: Registry | None = None) -> None:
    """A group's own checks: the paper-table cells it fills (a k-fold group fills one cell with its fold mean),
    against the registry's paper views (without one, the built-in views)."""
    _check_paper_views(config, raw, registry)


def _check_paper_views(config: TaskConfig | GroupConfig, raw: RawConfig, registry: Registry | None) -> None:
    """A binding to a view, row or column that does not exist would leave a paper-table cell silently empty."""
    bindings = config.metadata.paper_views()
    views = registered_views(registry) if bindings else {}
    for index, binding in enumerate(bindings):
        problem = check_binding(binding, views)
        if problem:
            at = ("metadata", "paper_view", index) if isinstance(config.metadata.paper_view, list) else ("metadata", "paper_view")
            raise ConfigError(f"{raw.where(*at)}: metadata.paper_view: {problem}",
                              hint="the views and their rows and columns are listed in docs/reporting.md")


def _check_metric_args(registry: Registry, metric, where: str) -> None:
    """A misspelt metric argument is a config error here, not a TypeError hours into a run."""
    if not metric.args:
        return
    fn = registry.resolve("metric", metric.name)
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    accepted = [n for n, p in parameters.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL][2:]  # after golds, preds
    for key in metric.args:
        if key not in accepted:
            raise ConfigError(
                f"{where}: metric '{metric.name}' has no argument '{key}'{did_you_mean(key, accepted)}",
                hint=f"its arguments: {', '.join(accepted) or '(none)'}",
            )


def split_values(value) -> list:
    """The slices of a split role: one, or several concatenated (``splits.train`` given as a list)."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def resolve_split(config: TaskConfig, value) -> tuple[str, str, dict]:
    """(dataset, split, loader args) for a split role: a plain name means the task's own dataset."""
    if isinstance(value, SplitRef):
        if value.dataset is None:
            return config.dataset, value.split, {**config.dataset_args, **value.args}
        return value.dataset, value.split, dict(value.args)
    return config.dataset, value, dict(config.dataset_args)


def role_slices(config: TaskConfig) -> dict[str, list[tuple[str, str, dict]]]:
    """Each split role the task names -> its slices as (dataset, split, loader args), in ``ROLES`` order.

    The one place a task's data is resolved: a loaded task keeps the answer (``LoadedTask.slices``), and the
    jobs, job groups, task facts, job memo and surface controls read it."""
    return {role: [resolve_split(config, one) for one in split_values(getattr(config.splits, role))]
            for role in ROLES if getattr(config.splits, role) is not None}


def _check_name(registry: Registry, category: str, name: str, where: str) -> None:
    if not registry.has(category, name):
        valid = registry.names(category)
        raise ConfigError(
            f"{where}: unknown {category} '{name}'{did_you_mean(name, valid)}",
            hint=registered_hint(category, len(valid)),
        )
