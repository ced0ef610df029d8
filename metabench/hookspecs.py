"""The plugin contract: the hooks a metabench plugin may implement.

Every hook receives one argument, ``register``: a callback that records a registration stamped with the
calling plugin's name and version. Plugins never reach into metabench's registries themselves, so the
registry can check names, detect clashes and keep provenance for every results file.

Targets are *lazy*: a ``"package.module:attribute"`` string that metabench imports only when the thing is
used. That keeps ``metabench --help`` and ``metabench ls`` free of torch and transformers imports.

A plugin is a module (or object) with functions decorated by ``metabench.hookimpl`` whose names are the
hooks below. Ship it under the ``metabench`` entry-point group::

    [project.entry-points.metabench]
    my_plugin = "my_package.plugin"

Bump ``HOOKSPEC_VERSION`` on any incompatible change to these signatures.
"""

from __future__ import annotations

from typing import Protocol

import pluggy

PROJECT = "metabench"
HOOKSPEC_VERSION = 1

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class RegisterPath(Protocol):
    def __call__(self, path: str) -> None: ...


class RegisterObject(Protocol):
    def __call__(self, spec: object) -> None: ...


class RegisterTarget(Protocol):
    def __call__(self, name: str, target: str, *, description: str = "", **meta: object) -> None: ...


@hookspec
def metabench_register_tasks(register: RegisterPath) -> None:
    """Register folders of task and group YAML files: ``register("/abs/path/to/tasks")``.

    Every ``*.yaml`` below the folder is read; a file with a ``task:`` key is a task, a file with a
    ``group:`` key is a group. Files whose name starts with ``_`` are only used through ``include:``.
    """


@hookspec
def metabench_register_datasets(register: RegisterObject) -> None:
    """Register datasets: ``register(metabench.data.DatasetSpec(...))``.

    A spec names its files by upstream location and sha256 and its loader by a lazy target.
    """


@hookspec
def metabench_register_models(register: RegisterTarget) -> None:
    """Register model adapters: ``register("hf", "metabench.models.hf:HFAdapter", description=...)``.

    The target is a subclass of ``metabench.models.base.Adapter``. Users select it with ``--model NAME:ARGS``.
    """


@hookspec
def metabench_register_pretrained(register: RegisterTarget) -> None:
    """Register short model names: ``register("minilm-l6", "pkg.builders:build", description=...)``.

    The target is called with no arguments and returns a local folder that transformers can load, so that
    ``--model hf:minilm-l6`` works without a model hub.
    """


@hookspec
def metabench_register_kinds(register: RegisterTarget) -> None:
    """Register task kinds: ``register("tagging", "metabench.kinds.tagging:Tagging")``.

    The target is a subclass of ``metabench.kinds.base.Kind``; a task YAML selects it with ``kind:``.
    """


@hookspec
def metabench_register_metrics(register: RegisterTarget) -> None:
    """Register metrics: ``register("macro_f1", "metabench.metrics.classification:macro_f1")``.

    The target is ``fn(golds, preds, **args) -> float | dict[str, float]``. Pass
    ``higher_is_better=False`` for losses and error rates.
    """


@hookspec
def metabench_register_tests(register: RegisterTarget) -> None:
    """Register significance tests used by ``metabench compare`` and ``metabench gate``."""


@hookspec
def metabench_register_reporters(register: RegisterTarget) -> None:
    """Register reporters (output formats for ``metabench report`` and the leaderboard)."""
