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

``HOOKSPEC_VERSION`` is the plugin API's version: these hooks and the classes a plugin subclasses (``Adapter``,
``Kind``). Bump it on any incompatible change, keep the old form working with a ``PluginAPIDeprecationWarning``
for at least one minor version, and add a line to the change log in docs/plugins.md (a test checks both agree).
"""

from __future__ import annotations

from typing import Protocol

import pluggy

PROJECT = "metabench"
HOOKSPEC_VERSION = 2

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class RegisterPath(Protocol):
    """``register(path)``: a folder."""

    def __call__(self, path: str) -> None: ...


class RegisterObject(Protocol):
    """``register(spec)``: a ready object (a ``DatasetSpec``)."""

    def __call__(self, spec: object) -> None: ...


class RegisterTarget(Protocol):
    """``register(name, "module:attr", description=..., **meta)``: a name and a lazy import target; ``meta``
    holds category-specific keys (``higher_is_better``, ``family``, ``input``...)."""

    def __call__(self, name: str, target: str, *, description: str = "", **meta: object) -> None: ...



def register_each(entries: dict[str, tuple[str, str]]):
    """A hook implementation that registers every ``name: (target, description)`` of ``entries`` (a hook whose
    ``register`` is a ``RegisterTarget``: metrics, docs blocks, ...); a plugin module assigns it to the hook's
    name: ``metabench_register_docs_blocks = register_each(DOCS_BLOCKS)``."""

    @hookimpl
    def register_entries(register: RegisterTarget) -> None:
        for name, (target, description) in entries.items():
            register(name, target, description=description)

    return register_entries


def register_folder(folder: object):
    """A hook implementation that registers one folder (a plugin's task YAML, beside its module); a plugin module
    assigns it: ``metabench_register_tasks = register_folder(Path(__file__).parent / "tasks")``."""

    @hookimpl
    def register_path(register: RegisterPath) -> None:
        register(str(folder))

    return register_path


@hookspec
def metabench_register_tasks(register: RegisterPath) -> None:
    """Register folders of task and group YAML files.

    :param register:
        ``register(path)`` with an existing folder (absolute, e.g. ``str(Path(__file__).parent / "tasks")``).
        Every ``*.yaml`` below it is read: a file with a ``task:`` key is a task, one with a ``group:`` key a
        group; files whose name starts with ``_`` are only used through ``include:``. The schema is
        ``docs/task-yaml.md``; ``metabench validate FOLDER`` checks files before you ship them.

    A folder that does not exist is a ``PluginError``. A file whose task or group name another plugin already
    uses is quarantined (an error under ``--strict``) with a message naming both plugins and both files.
    """


@hookspec
def metabench_register_datasets(register: RegisterObject) -> None:
    """Register datasets.

    :param register:
        ``register(spec)`` with a ``metabench.data.DatasetSpec``: ``name``, ``files`` (``DataFile`` objects with
        a sha256 each; build them from a manifest written by ``metabench data manifest DIR`` with
        ``metabench.data.manifests.manifest_files``), ``loader`` (lazy ``"module:function"``, called as
        ``loader(ctx, split, **args) -> list[item]``; read files only through ``ctx.path(relpath)``), ``splits``,
        ``args`` (loader argument -> allowed values, or None for any), ``licence``, ``citation``,
        ``description``, ``counts`` (checks for ``metabench data verify``: ``{"items": {"test": 12},
        "verify": "module:function"}``) and ``root`` (the folder holding files shipped inside your package).

    Items are the dataclasses of ``metabench.data.items`` (``docs/plugins.md`` lists their fields); each has
    an ``id`` unique within its split and stable across releases. Resolving a dataset checks that it is a
    ``DatasetSpec``.
    """


@hookspec
def metabench_register_models(register: RegisterTarget) -> None:
    """Register model adapters.

    :param register:
        ``register(name, "package.module:Class", description=..., **meta)``. ``Class`` subclasses
        ``metabench.models.base.Adapter`` (checked when first resolved: anything else is a ``PluginError``
        naming your plugin). Users select it with ``--model NAME:ARGS``.

    metabench builds the adapter with ``Class(args, registry=registry, settings=settings)``
    (``metabench.models.spec.build_adapter``): ``args`` are the ``--model`` arguments as strings,
    ``registry`` resolves registered names (pretrained models, metrics), ``settings`` is an
    ``AdapterSettings`` (``use_cache``, ``progress``). An ``__init__`` you write takes ``registry`` and
    ``settings`` as keyword arguments and passes them to ``super().__init__``.
    """


@hookspec
def metabench_register_pretrained(register: RegisterTarget) -> None:
    """Register short model names, so that ``--model hf:NAME`` works without a model hub.

    :param register:
        ``register(name, "package.module:build", description=..., family="encoder" | "causal-lm")``. ``build``
        is called with no arguments (once per process at most; cache what you build) and returns a local
        folder that transformers can load (with ``config.json``). ``family`` lets ``hf:`` pick the encoder or
        decoder adapter without building the folder first.
    """


@hookspec
def metabench_register_kinds(register: RegisterTarget) -> None:
    """Register task kinds.

    :param register:
        ``register(name, "package.module:Class")`` with a subclass of ``metabench.kinds.base.Kind`` (checked
        when first resolved); a task YAML selects it with ``kind:``. A kind's ``Args`` (its ``kind_args``
        schema) should subclass ``metabench.kinds.base.KindArgs`` so its tasks get ``breakdown`` and
        ``breakdown_metrics`` like every built-in kind.
    """


@hookspec
def metabench_register_metrics(register: RegisterTarget) -> None:
    """Register metrics.

    :param register:
        ``register(name, "package.module:function", description=..., higher_is_better=True)``. The function is
        ``fn(golds, preds, **args) -> float | dict[str, float]`` (``args`` come from the task YAML's
        ``metrics:`` entry; a parameter named like a kind's metric context, e.g. ``words``, receives it).
        Pass ``higher_is_better=False`` for losses and error rates.

    For ``metabench compare`` and ``gate`` to run a paired test over items on your metric, declare how it
    decomposes with ``metabench.metrics.decomposition.per_item(contribution, combine)``; without it, only
    seed-level tests (two runs with the same 2+ seeds) apply.
    """


@hookspec
def metabench_register_tests(register: RegisterTarget) -> None:
    """Register significance tests used by ``metabench compare`` and ``metabench gate``.

    :param register:
        ``register(name, "package.module:function", description=..., input=KIND, args={...},
        swaps_items=False)``. ``input`` says what the test consumes and so how it is called:
        ``correctness`` (``fn(correct_a, correct_b)``), ``records`` (``fn(items_a, items_b, metric,
        n_resamples=, seed=)``), ``seeds`` (``fn(scores_a, scores_b)``), ``proportions`` (``fn(k1, n1, k2,
        n2)``) or ``samples`` (``fn(x, y, n_resamples=, seed=)``). The function returns an object with
        ``pvalue`` (and ``ci_low``/``ci_high`` if it gives a confidence interval). ``args`` are fixed keyword
        arguments; ``swaps_items`` marks a ``records`` test that exchanges the runs' records item by item.
    """


@hookspec
def metabench_register_commands(register: RegisterTarget) -> None:
    """Register subcommands of the ``metabench`` command (as simonw/llm's ``register_commands``).

    :param register:
        ``register(name, "package.module:add_commands", description=...)``. ``add_commands(subparsers)`` is
        called while the command line is parsed, with argparse's subparsers action: it adds its verb(s)
        (``subparsers.add_parser(name, help=...)``) and gives each a handler with
        ``parser.set_defaults(func=handler)``; ``handler(args) -> int`` returns the exit status (0 ok, 1 a
        failure the user asked to detect, 2 bad usage: raise ``metabench.errors.MetabenchError`` with a hint
        and metabench prints it). Keep the module light (``metabench --help`` imports it): import heavy
        libraries inside the handler. ``add_commands(subparsers, registry)``, when it takes a ``registry``
        parameter, also receives the registry the command line is built from (lenient and silent, so
        ``plugins`` and ``validate`` still run under ``--strict``): a verb whose options or help list what is
        registered reads it there, as ``compare`` lists the plugins' analyses (issue 47), instead of loading
        the plugins again.

    A verb name another plugin (or metabench) already uses is a clash: the later plugin is quarantined.
    """


@hookspec
def metabench_register_paper_views(register: RegisterObject) -> None:
    """Register paper views: a paper's printed result table, rebuilt from runs beside the paper's own numbers.

    :param register:
        ``register(view)`` with a ``metabench.config.paper_layouts.PaperTable``: ``key`` (what a task's
        ``metadata.paper_view: {table: KEY, row: [...], column: ...}`` names), ``paper``, ``number``, ``title``,
        ``row_header``, ``rows``, ``metrics`` (column label -> metric name), ``percent``, and ``numbers`` (the
        paper's printed cells, model -> row tuple -> ``"a | b | c"``). Tasks bind their cells in YAML;
        ``metabench validate`` rejects a binding to a row or column the view lacks, and the leaderboard fills
        the view from run files. A view that is not a ``PaperTable`` is an error naming your plugin.
    """


@hookspec
def metabench_register_reporters(register: RegisterTarget) -> None:
    """Register output formats of ``metabench leaderboard build --format NAME``.

    :param register:
        ``register(name, "package.module:write", description=...)`` with ``write(board: Board,
        out_dir: Path) -> list[Path]``; ``board`` is the typed board
        (``metabench.report.leaderboard.schema.Board``, docs/leaderboard-format.md; ``board.to_dict()`` is the
        content of ``leaderboard.json``). Return the files written. (``typed=True``, which the first typed form
        asked for, is still accepted; the untyped dict form was removed in 0.1: docs/plugins.md, change log.)
    """


@hookspec
def metabench_register_board_sections(register: RegisterTarget) -> None:
    """Register sections of the leaderboard (``metabench leaderboard build``): a paper family's own tables.

    :param register:
        ``register(name, "package.module:build", description=..., reads="FILE", family=(KEY, TITLE, TAGS),
        html="package:templates/FILE.html", markdown="package.module:lines")``.
        ``build(inputs)`` is called once per build with a ``metabench.report.leaderboard.sections.BoardInputs``
        (the registry, the ranked runs, one run per task and model, the folders the build was given, the test
        settings) and returns a
        ``BoardSection(data, paper_tables=[...])``: ``data`` (a pydantic model of your own, or JSON-ready values)
        goes into ``leaderboard.json`` under ``name`` and reaches your views as you returned it
        (``board.section(name)``), and ``paper_tables`` (the layout of ``metabench.report.paper_views.fill``: ``key``, ``paper``,
        ``number``, ``title``, ``header``, ``rows``, ``tasks``, ``missing_tasks``, ``notes``) are shown by every
        built-in reporter after the registered paper views. ``reads`` names a file your section reads beside
        the runs (the hard family's ``hard_phi.json``): a path holding only such files is not searched for runs.
        ``family`` gives your tasks their own group of columns in the overview: the tasks carrying one of
        ``TAGS`` (checked before the built-in groups, so a task tagged ``detection`` too joins yours).
        ``html`` and ``markdown`` are the section's own views: a Jinja template in your package that the site
        renders on the gaps page and on every task page (with ``section``, ``name``, ``page``, ``task``,
        ``board``: the typed board), and ``lines(board, name) -> list[str]`` that leaderboard.md prints after the
        gaps (``board`` typed; reading it as a dict still works, with a ``PluginAPIDeprecationWarning``); a view that
        fails leaves a note in its place and a warning (docs/plugins.md).

    ``build`` is checked to be callable when first resolved. A section that raises, returns anything but a
    ``BoardSection`` or takes a name the board already has (``tasks``, ``models``...) is quarantined: left
    off the board with one warning naming your plugin (an error under ``--strict``); the rest is built.
    """


@hookspec
def metabench_register_docs_blocks(register: RegisterTarget) -> None:
    """Register generated docs blocks: results tables that ``metabench report docs`` writes into Markdown pages.

    :param register:
        ``register(name, "package.module:table", description=...)``. A page marks the block with
        ``<!-- generated: NAME key=value ... (metabench report docs) -->`` and ``<!-- end generated -->``;
        ``table(context, **args) -> list[str]`` returns the block's Markdown lines, ``context`` being a
        ``metabench.report.docs.blocks.DocsContext`` (``runs``: the committed runs that passed verification,
        ``runs_dir``, ``index``: the task index, ``memo(key, compute)``) and ``args`` the marker's
        ``key=value`` pairs. ``metabench report docs --check`` fails when a page differs from what the
        tables print, so a number in your docs changes only with the runs it comes from.

    A marker naming no registered block is an error naming the page and line (with the closest name).
    """


@hookspec
def metabench_register_compare_analyses(register: RegisterTarget) -> None:
    """Register analyses of ``metabench compare``: ``metabench compare NAME RUN... [options]``.

    A paper family's analysis of stored runs belongs to ``compare`` (one place to compare runs), but its code
    belongs to the family: this hook lets ``compare`` offer it without naming the family, so a tree or an
    installation without the family runs every other command (the hard family's ``compare hardness`` and the
    artifacts family's ``compare artifacts`` register through it).

    :param register:
        ``register(name, "package.module:ANALYSIS", description=ONE_LINE)`` with a
        ``metabench.commands.analyses.Analysis``: ``description`` and ``examples`` (the verb's ``--help``),
        ``arguments(parser)`` (its options; ``RUN...`` and ``--json`` are added by compare) and
        ``run(args, runs, registry) -> int`` (the runs found under ``RUN...``; print, return the exit status).
        ``ONE_LINE`` is its line in ``metabench compare --help``. The module is imported when ``compare``'s
        command line is parsed: keep it light and import heavy libraries inside ``run``.

    A name ``compare`` already has (``published``, ``gap``, ``paired-variants``) or another plugin registered is
    a clash (the later plugin is quarantined); a target that is not an ``Analysis`` leaves the verb out with a
    warning naming your plugin (an error under ``--strict``).
    """
