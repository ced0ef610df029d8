"""The plugin API: every name a plugin may import from metabench, in one module.

A plugin (a third party's, and the paper families, which ship as plugins under ``plugins/``) imports metabench only
from here: ``from metabench.plugin_api import DatasetSpec, hookimpl``. ``__all__`` is the contract, versioned with
the hooks by ``HOOKSPEC_VERSION`` (docs/plugins.md: a name removed or changed incompatibly bumps it, and the old form
keeps working with a ``PluginAPIDeprecationWarning`` for at least one minor version). Every other metabench module is
internal: it may move or change between releases without notice, and ``tests/core/test_layers.py`` fails on plugin
code that imports one.

Why one module and not "the documented modules": a plugin author could not tell a documented module from an
internal one by its name, and the families imported 36 core modules, 17 of them named nowhere in the plugin docs
(issue 59); a list is something a test can hold.

Names resolve on first use (a module ``__getattr__``): every ``metabench --help`` imports each plugin's
``plugin.py``, which imports ``hookimpl`` from here, and that must not import the board's schema, the training loop
or torch. Type checkers read the same names from the imports under ``TYPE_CHECKING`` (a test keeps the two lists
equal).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names as _WHERE, for type checkers; at run time they resolve on first use
    from .data import itemcache
    from .bounded_read import read_text
    from .cache import cache_root
    from .atomic import write_atomically
    from .commands.analyses import Analysis
    from .config.index import TaskIndex
    from .config.paper_layouts import PaperTable, registered_views
    from .data.context import DataContext
    from .data.datasets.common import LIT, MET, bad_split
    from .data.items import (ChoiceItem, NLIPair, ParaphraseGeneration, ParaphraseJudgement, ParaphraseSet,
                             SenseExample, SenseTaggedSentence, TaggedSentence, TextItem, WordNetSense)
    from .data.load import load_spec, load_split
    from .data.plugin import builtin_dataset
    from .data.manifests import build_manifest, manifest_files, read_manifest, write_manifest
    from .data.readers import read_conll, read_json, read_jsonl, read_table, read_xlsx
    from .data.spec import DataFile, DatasetSpec
    from .data.verify import CheckResult, expect
    from .errors import DataError, MetabenchError, NotBuiltError, PluginAPIDeprecationWarning
    from .extras import MissingExtraError
    from .hookspecs import HOOKSPEC_VERSION, hookimpl, register_each, register_folder
    from .keyvalues import parse_pairs
    from .kinds.base import Kind, KindArgs
    from .kinds.views import VIEWS, expression_key
    from .metrics.common import MetricInputError, check_pair
    from .metrics.decomposition import per_item
    from .metrics.tagging import shared_parsing
    from .models.alignment import encode_words
    from .models.base import Adapter, AdapterSettings
    from .models.checkpoints import CheckpointStore
    from .models.finetune import Schedule, Selection, train
    from .models.hf_common import (folder_fingerprint, loading_model, parse_bool, parse_int, pick_device,
                                   read_config, resolve_pretrained)
    from .models.lmeval_bridge import LMEvalDecoder, PretrainedDecoder
    from .models.spec import parse_model_spec
    from .plugins import default_registry
    from .printable import escape
    from .report.docs.blocks import REDUCED, DocsContext
    from .report.docs.blocks import markdown as docs_table
    from .report.docs.blocks import names as docs_names
    from .report.leaderboard.board import slug
    from .report.leaderboard.markdown import escape as markdown_escape
    from .report.leaderboard.markdown import table as markdown_table
    from .report.leaderboard.schema import Board
    from .report.leaderboard.sections import BoardInputs, BoardSection
    from .report.paper_views import MISSING
    from .report.verified_runs import verified_runs
    from .requests import (ChoiceRequest, ClassifyRequest, GenerateRequest, RankRequest, TagRequest, Training,
                           first_word)
    from .runs.stored import Run, find_runs, load_run, one_per_task_and_model
    from .safe_paths import write_text as write_inside
    from .stats import two_proportion_z
    from .stats.paired import paired_bootstrap

#: API name -> ``module:attribute`` it is read from (``module`` alone: the module itself)
_WHERE: dict[str, str] = {
    # hooks
    "HOOKSPEC_VERSION": "metabench.hookspecs:HOOKSPEC_VERSION",
    "hookimpl": "metabench.hookspecs:hookimpl",
    "register_each": "metabench.hookspecs:register_each",
    "register_folder": "metabench.hookspecs:register_folder",
    "default_registry": "metabench.plugins:default_registry",
    # errors a plugin raises or catches
    "MetabenchError": "metabench.errors:MetabenchError",
    "DataError": "metabench.errors:DataError",
    "NotBuiltError": "metabench.errors:NotBuiltError",
    "MissingExtraError": "metabench.extras:MissingExtraError",
    "MetricInputError": "metabench.metrics.common:MetricInputError",
    "PluginAPIDeprecationWarning": "metabench.errors:PluginAPIDeprecationWarning",
    # data: specs, manifests, readers, loading, items, checks, the parsed-item cache
    "DatasetSpec": "metabench.data.spec:DatasetSpec",
    "DataFile": "metabench.data.spec:DataFile",
    "DataContext": "metabench.data.context:DataContext",
    "manifest_files": "metabench.data.manifests:manifest_files",
    "read_manifest": "metabench.data.manifests:read_manifest",
    "build_manifest": "metabench.data.manifests:build_manifest",
    "write_manifest": "metabench.data.manifests:write_manifest",
    "read_table": "metabench.data.readers:read_table",
    "read_jsonl": "metabench.data.readers:read_jsonl",
    "read_json": "metabench.data.readers:read_json",
    "read_conll": "metabench.data.readers:read_conll",
    "read_xlsx": "metabench.data.readers:read_xlsx",
    "load_split": "metabench.data.load:load_split",
    "load_spec": "metabench.data.load:load_spec",
    "builtin_dataset": "metabench.data.plugin:builtin_dataset",
    "itemcache": "metabench.data.itemcache",
    "LIT": "metabench.data.datasets.common:LIT",
    "MET": "metabench.data.datasets.common:MET",
    "bad_split": "metabench.data.datasets.common:bad_split",
    "CheckResult": "metabench.data.verify:CheckResult",
    "expect": "metabench.data.verify:expect",
    "TaggedSentence": "metabench.data.items:TaggedSentence",
    "TextItem": "metabench.data.items:TextItem",
    "NLIPair": "metabench.data.items:NLIPair",
    "ChoiceItem": "metabench.data.items:ChoiceItem",
    "ParaphraseJudgement": "metabench.data.items:ParaphraseJudgement",
    "ParaphraseGeneration": "metabench.data.items:ParaphraseGeneration",
    "ParaphraseSet": "metabench.data.items:ParaphraseSet",
    "SenseExample": "metabench.data.items:SenseExample",
    "SenseTaggedSentence": "metabench.data.items:SenseTaggedSentence",
    "WordNetSense": "metabench.data.items:WordNetSense",
    # tasks, kinds, requests, metrics
    "TaskIndex": "metabench.config.index:TaskIndex",
    "PaperTable": "metabench.config.paper_layouts:PaperTable",
    "registered_views": "metabench.config.paper_layouts:registered_views",
    "Kind": "metabench.kinds.base:Kind",
    "KindArgs": "metabench.kinds.base:KindArgs",
    "VIEWS": "metabench.kinds.views:VIEWS",
    "expression_key": "metabench.kinds.views:expression_key",
    "TagRequest": "metabench.requests:TagRequest",
    "ClassifyRequest": "metabench.requests:ClassifyRequest",
    "ChoiceRequest": "metabench.requests:ChoiceRequest",
    "GenerateRequest": "metabench.requests:GenerateRequest",
    "RankRequest": "metabench.requests:RankRequest",
    "Training": "metabench.requests:Training",
    "first_word": "metabench.requests:first_word",
    "per_item": "metabench.metrics.decomposition:per_item",
    "check_pair": "metabench.metrics.common:check_pair",
    "shared_parsing": "metabench.metrics.tagging:shared_parsing",
    # models: adapters, model folders, training, checkpoints
    "Adapter": "metabench.models.base:Adapter",
    "AdapterSettings": "metabench.models.base:AdapterSettings",
    "LMEvalDecoder": "metabench.models.lmeval_bridge:LMEvalDecoder",
    "PretrainedDecoder": "metabench.models.lmeval_bridge:PretrainedDecoder",
    "parse_model_spec": "metabench.models.spec:parse_model_spec",
    "resolve_pretrained": "metabench.models.hf_common:resolve_pretrained",
    "folder_fingerprint": "metabench.models.hf_common:folder_fingerprint",
    "read_config": "metabench.models.hf_common:read_config",
    "parse_bool": "metabench.models.hf_common:parse_bool",
    "parse_int": "metabench.models.hf_common:parse_int",
    "pick_device": "metabench.models.hf_common:pick_device",
    "loading_model": "metabench.models.hf_common:loading_model",
    "encode_words": "metabench.models.alignment:encode_words",
    "train": "metabench.models.finetune:train",
    "Schedule": "metabench.models.finetune:Schedule",
    "Selection": "metabench.models.finetune:Selection",
    "CheckpointStore": "metabench.models.checkpoints:CheckpointStore",
    # stored runs, statistics, reports
    "Run": "metabench.runs.stored:Run",
    "find_runs": "metabench.runs.stored:find_runs",
    "load_run": "metabench.runs.stored:load_run",
    "one_per_task_and_model": "metabench.runs.stored:one_per_task_and_model",
    "verified_runs": "metabench.report.verified_runs:verified_runs",
    "two_proportion_z": "metabench.stats:two_proportion_z",
    "paired_bootstrap": "metabench.stats.paired:paired_bootstrap",
    "Analysis": "metabench.commands.analyses:Analysis",
    "Board": "metabench.report.leaderboard.schema:Board",
    "BoardInputs": "metabench.report.leaderboard.sections:BoardInputs",
    "BoardSection": "metabench.report.leaderboard.sections:BoardSection",
    "slug": "metabench.report.leaderboard.board:slug",
    "markdown_table": "metabench.report.leaderboard.markdown:table",
    "markdown_escape": "metabench.report.leaderboard.markdown:escape",
    "MISSING": "metabench.report.paper_views:MISSING",
    "DocsContext": "metabench.report.docs.blocks:DocsContext",
    "docs_table": "metabench.report.docs.blocks:markdown",
    "docs_names": "metabench.report.docs.blocks:names",
    "REDUCED": "metabench.report.docs.blocks:REDUCED",
    # files: bounded reads, atomic and confined writes, the cache folder, key=value options, terminal-safe text
    "read_text": "metabench.bounded_read:read_text",
    "write_atomically": "metabench.atomic:write_atomically",
    "write_inside": "metabench.safe_paths:write_text",
    "cache_root": "metabench.cache:cache_root",
    "parse_pairs": "metabench.keyvalues:parse_pairs",
    "escape": "metabench.printable:escape",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"metabench.plugin_api has no name {name!r}; the plugin API is its __all__ "
                             "(docs/plugins.md, 'The plugin API'): every other metabench module is internal")
    module, _, attribute = where.partition(":")
    value = importlib.import_module(module)
    if attribute:
        value = getattr(value, attribute)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return list(__all__)
