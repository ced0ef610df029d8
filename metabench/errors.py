"""Errors a user can act on.

Every error metabench raises on purpose is an `ExplainedError`: the CLI prints its message (which names the
file, line or option at fault and how to fix it) without a traceback, and exits with its `exit_code`.
Almost all are `MetabenchError`; a damaged run file is a `RunFileError`, deliberately outside that family so
that no report that skips what it "cannot pair" (``except MetabenchError``) skips a damaged run.
Anything else is a bug: the CLI reports it in one line with exit 2 (the traceback with METABENCH_DEBUG=1).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ExplainedError(Exception):
    """An error with a message naming what is at fault and a hint saying how to fix it."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None):
        self.message = message
        self.hint = hint
        super().__init__(message if not hint else f"{message}\n  hint: {hint}")


class MetabenchError(ExplainedError):
    """A problem with the user's input or environment, explained so that it can be fixed."""


class ConfigError(MetabenchError):
    """A task or group YAML file is invalid."""


class PluginError(MetabenchError):
    """A plugin could not be loaded or one of its hooks failed."""


class UnknownNameError(MetabenchError):
    """A name (task, kind, metric, adapter, dataset...) that nothing registered."""


class DataError(MetabenchError):
    """A data file is missing, corrupt or malformed."""


class NotBuiltError(DataError):
    """A derived dataset that a separate command builds (e.g. ``metabench hard mine``) is not built yet, or
    cannot be on this installation (its model needs an extra): a run skips the tasks that read it, with the
    fix as the hint, rather than failing them. ``reason`` is the short cause a run counts its skips by."""

    def __init__(self, message: str, *, hint: str | None = None, reason: str = "dataset not built yet"):
        super().__init__(message, hint=hint)
        self.reason = reason


class RunFileError(ExplainedError):
    """A run file is damaged, mixed with another run's or not a run file. Never skipped or shown without a
    mark (unlike runs that merely cannot be paired): a report built on it would publish a false number."""


class AdapterError(MetabenchError):
    """A model adapter was given arguments or inputs it cannot use."""


class UnsupportedError(AdapterError):
    """A model cannot run a task at all (another kind, no protocol section): the job is skipped, not failed.

    ``reason`` is the short, task-independent cause ("needs a training split"): a run over many tasks
    counts its skips by reason in one line instead of printing one block per skipped job.
    """

    def __init__(self, message: str, *, hint: str | None = None, reason: str = "not supported by the model"):
        super().__init__(message, hint=hint)
        self.reason = reason


class PluginAPIDeprecationWarning(DeprecationWarning):
    """A plugin uses a form of the plugin API that still works but will be removed (docs/plugins.md, change
    log). A subclass of ``DeprecationWarning`` so that the command line can show it to plugin authors while
    Python hides other libraries' deprecations."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """A ' (did you mean 'x'?)' suffix naming the closest valid choice, or '' when nothing is close."""
    close = difflib.get_close_matches(name, sorted(set(choices)), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def unknown(category: str, name: str, choices: Iterable[str], *, where: str = "") -> UnknownNameError:
    """Build the standard 'unknown X' error with a did-you-mean and the command that lists valid names."""
    choices = list(choices)
    prefix = f"{where}: " if where else ""
    return UnknownNameError(
        f"{prefix}unknown {category} '{name}'{did_you_mean(name, choices)}",
        hint=registered_hint(category, len(choices)),
    )


def registered_hint(category: str, count: int) -> str:
    """The hint of an unknown name: where the valid ones are listed, and that a plugin's need the plugin (a task
    file of a plugin validated or run without it loaded would otherwise look merely misspelt)."""
    return (f"`metabench ls {category}s` lists the {count} registered {category}s; one a plugin registers needs "
            "that plugin loaded (`metabench plugins` lists the loaded ones; install it, or name its module in "
            "METABENCH_PLUGIN_MODULES)")
