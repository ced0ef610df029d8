"""The results record (``results.json``), defined once: every field a run writes, its type and what it means.

:class:`RunRecord` is the one definition the rest of metabench follows:

- the writer (``launch/record.py`` and the launchers) has its record checked against it before the store writes
  the run folder (:func:`check_written`): a field the model does not declare, or one it declares that the writer
  left out, is a bug caught before any file is written;
- every reader (``store.read_results``, so ``runs.stored.Run``, ``api.TaskResult``, ``compare``, ``gate``, the
  leaderboard) validates the file with it (:meth:`RunRecord.read`): a damaged field is one message naming the
  file, the field and the fix, never a ``KeyError`` deep in a report;
- ``docs/results-format.md`` is generated from it (:func:`results_markdown`, ``metabench schema results``), and
  a test fails when the page is stale.

Versions. ``schema_version`` (:data:`SCHEMA_VERSION`) changes only when a reader of the old version would misread
a new run; a reader refuses any other version. Within a version fields are only added: each added field has a
default here, so every run written since the version began still reads (the committed runs under
``leaderboard/runs`` are read by a test), and the page says which runs lack it.

Reading is as strict as the hand-written check it replaces, and no stricter than what old runs hold: the fields
every report relies on are required (task name, primary metric, model spec, seeds, item count, metrics) and
every field present must have its type (no string for a number, no ``true`` for a count); fields a reader can
do without default, and a field this version does not know is kept (``extra``) rather than refused, so a run
from a later metabench of the same version still reads. The writer is held to more: every field written always
must be there, and none the model does not declare.
"""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from .errors import MetabenchError, RunFileError
from .partial_runs import partial
from .printable import escape, is_printable

SCHEMA_VERSION = 1
#: The validation context under which a record is checked as the writer's (see :func:`check_written`).
WRITING = "writing"
#: The fix a damaged file's message gives.
HINT = "the file was edited or damaged: re-run the evaluation (answers are cached)"


def field(description: str, default: Any = ..., *, since: str | None = None, when: str | None = None,
          expect: str | None = None, volatile: bool = False, **constraints) -> Any:
    """A documented field. ``default`` left out: required on read. ``since``: which runs lack it (they read with
    the default). ``when``: written only then (otherwise the writer must write it). ``expect``: how a message
    names a value that breaks a constraint (``a non-empty list of integers``). ``volatile``: it describes the
    process that wrote the run, not the job, and is written fresh when a remembered job is written again."""
    extra = {key: value for key, value in (("since", since), ("when", when), ("expect", expect),
                                           ("volatile", volatile)) if value}
    kwargs: dict[str, Any] = {"description": description, "json_schema_extra": extra or None, **constraints}
    if callable(default) and isinstance(default, type):
        return Field(default_factory=default, **kwargs)
    return Field(default, **kwargs) if default is not ... else Field(**kwargs)


class Section(BaseModel):
    """A part of the record: strict types (no coercion of ``"3"`` to 3 or of ``true`` to 1), unknown keys kept on
    read and refused from the writer, every field the writer always writes required of it."""

    model_config = ConfigDict(strict=True, extra="allow")

    @model_validator(mode="before")
    @classmethod
    def _written_whole(cls, data: Any, info) -> Any:
        if _writing(info) and isinstance(data, dict):
            missing = [name for name, spec in cls.model_fields.items() if _always_written(spec) and name not in data]
            if missing:
                raise PydanticCustomError("unwritten", "the writer left out {fields}", {"fields": ", ".join(missing)})
        return data

    def as_json(self) -> dict:
        """This part of the record as results.json holds it: the fields it was built or read with (a field left
        at its default because the run does not write it stays out), unknown fields kept, keys sorted as the
        file sorts them. Floats stay floats (a NaN too, which the store refuses to write, rather than pydantic's
        JSON mode writing it as null)."""
        return _sorted(self.model_dump(mode="python", exclude_unset=True))

    @model_validator(mode="after")
    def _declared_only(self, info) -> Section:
        if _writing(info) and self.model_extra:
            raise PydanticCustomError("undeclared", "the writer wrote {fields}, which RunRecord does not declare",
                                      {"fields": ", ".join(sorted(self.model_extra))})
        return self


def _sorted(value):
    """``value`` with every mapping's keys in sorted order, as ``json.dumps(sort_keys=True)`` writes them."""
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _writing(info) -> bool:
    return bool(info.context and info.context.get(WRITING))


def _always_written(spec) -> bool:
    extra = spec.json_schema_extra or {}
    return "when" not in extra


def _printable(value: str) -> str:
    """Names reports print where CI reads them (a task, a metric, a model) hold no control character."""
    if not is_printable(value):
        raise PydanticCustomError("control_character", "holds a control character")
    return value


class MetabenchInfo(Section):
    """The metabench that wrote the run."""

    version: str = field("metabench's version (`metabench.version`)")
    git: str | None = field("the commit of the metabench checkout, null when not run from one")


class Environment(Section):
    """Where the run was computed (refreshed when a remembered job is written again)."""

    python: str = field("the Python version, e.g. `3.11.9`")
    platform: str = field("`platform.platform()`")
    packages: dict[str, str] = field("the installed version of each package results depend on (torch, "
                                     "transformers, lm_eval, datasets, pluggy, pyyaml, scipy, numpy, vllm), "
                                     "those installed only", dict)
    mixed_packages: dict[str, str] = field(
        "a merged run whose seeds were computed under several versions of a package: package -> every version "
        "with the seeds computed under it, e.g. `5.23.0 (seeds 0,1) / 5.24.0 (seeds 2-4)`; `packages` holds the "
        "newest part's", dict, when="a merge of parts computed under other package versions (`merge-seeds "
        "--mixed-environments`)")


class PluginInfo(Section):
    """A plugin loaded by the process that wrote the run."""

    name: str = field("the plugin's name")
    version: str | None = field("its version, null when it declares none")
    status: str = field("`loaded`, or why it was quarantined")


class DatasetUsed(Section):
    """A dataset a task reads, as `task_facts.py` recorded it, so reports credit it without the registry."""

    name: str = field("the registered dataset name")
    roles: list[str] = field("the split roles it serves (`train`, `validation`, `test`, `fewshot`)")
    licence: str = field("its licence, empty when the spec declares none")
    citation: str = field("its citation, empty when the spec declares none")
    source: dict[str, Any] | None = field(
        "a `hf_dataset` source: `path`, `name`, `revision`, `requested_revision`, `data_files`, `fingerprints` "
        "(what was read, at which commit)", None, when="the task reads a Hugging Face `datasets` source")


class GroupFact(Section):
    """An `aggregate: mean` group the task belongs to, with all its members."""

    name: str = field("the group's name")
    members: list[str] = field("every task of the group")
    source: str = field("the group file")


class PaperCell(Section):
    """A paper-table cell the task fills (its `metadata.paper_view`, see docs/task-yaml.md)."""

    table: str = field("the view's key")
    row: list[str] = field("the row's labels")
    column: str | list[str] | None = field("the column(s) the task fills; null: every column of the row", None)
    note: str = field("printed under the table for this task", "")


class Recorded(BaseModel):
    """A copy the record keeps of something defined elsewhere (the task's resolved config, what the adapter says
    about itself): typed where reports read it, every other key kept as read and written back as it was (a key a
    later metabench, or a plugin's adapter, adds is no error). Strict like the sections (no ``"3"`` read as 3), and
    a number is kept as the type it was written with, so the file's bytes survive a read and a write."""

    model_config = ConfigDict(strict=True, extra="allow")

    def as_json(self) -> dict:
        """This part as results.json holds it (see :meth:`Section.as_json`): a dict, for code that walks every key
        (the config hash, a merge of adapter facts)."""
        return _sorted(self.model_dump(mode="python", exclude_unset=True))

    def has(self, name: str) -> bool:
        """Whether the file holds ``name`` (a typed field read with its default does not)."""
        return name in self.model_fields_set or name in (self.__pydantic_extra__ or {})


class RecordedLabels(Recorded):
    """The task's label space (`labels`, docs/task-yaml.md)."""

    names: list[str] | None = field("every label in a fixed order (a classification head's)", None)
    positive: str | None = field("the positive class of P/R/F1", None)
    scheme: str | None = field("the label encoding (`BIO`, `IO`, `binary`, `multiclass`)", None)


class RecordedMetric(Recorded):
    """A metric with arguments (a metric without any is recorded as its name)."""

    name: str = field("the registered metric name")
    args: dict[str, Any] = field("its keyword arguments", dict)


class RecordedCluster(Recorded):
    """`metadata.cluster`: items that are not independent, resampled together by paired tests."""

    name: str = field("what one cluster is, plural (`documents`)")
    id_pattern: str = field("a regular expression whose one group, searched in an item id, names its cluster")


class RecordedMetadata(Recorded):
    """The task's `metadata` (provenance; only `version` is hashed)."""

    version: int = field("bumped when the task's semantics change", 1)
    source: str = field("the paper and table the protocol comes from", "")
    description: str = field("one paragraph about the task", "")
    choices: dict[str, str] = field("decisions taken where the paper is silent, with why", dict)
    cluster: RecordedCluster | None = field("the items' clusters, when they are not independent", None,
                                            since="runs written before tasks declared clusters lack it")
    superseded_by: str | None = field("a deprecated task: the task whose protocol now asks its prompt", None,
                                      since="runs written before tasks were superseded lack it")


class RecordedSection(Recorded):
    """One model family's `protocol` section (its other settings, e.g. `finetune`, `template`, are kept as
    written)."""

    seeds: int | list[int] | None = field("how many seeds the family runs (or which)", None)
    kind: str | None = field("a decoder section's own kind (a way to answer the task, not the task)", None,
                             when="a decoder section, since sections could name their kind")
    kind_args: dict[str, Any] = field("that kind's settings", dict,
                                      when="a decoder section, since sections could name their kind")


class RecordedProtocol(Recorded):
    """The task's `protocol`: family -> its section (null: the family cannot run the task); a family a plugin
    adds is read as a section too."""

    __pydantic_extra__: dict[str, RecordedSection | None] = Field(init=False)

    encoder: RecordedSection | None = field("how an encoder is fine-tuned", None)
    decoder: RecordedSection | None = field("how a decoder answers by default", None)
    decoder_generated: RecordedSection | None = field("how a decoder answers by generation", None,
                                                      since="runs written before the section existed lack it")
    decoder_finetune: RecordedSection | None = field("how a decoder is fine-tuned as a tagger", None,
                                                     since="runs written before the section existed lack it")
    baseline: RecordedSection | None = field("the baselines' section", None)

    def section(self, family: str | None) -> RecordedSection | None:
        """The section a family follows (None: the task has none for it, or ``family`` is None)."""
        if not family:
            return None
        if family in type(self).model_fields:
            return getattr(self, family)
        return (self.__pydantic_extra__ or {}).get(family)


class RecordedKindArgs(Recorded):
    """The kind's settings (`kind_args`): checked by the kind, so only what reports read is typed here."""

    parser: str | None = field("the parser that reads a generation kind's answers", None,
                               when="a generation task that names its parser")


class RecordedConfig(Recorded):
    """`task.config`: the task's resolved config as the run ran it (docs/task-yaml.md), less
    `protocol.encoder.search` and an unset `hf_dataset`. The parts reports read are typed; every other key is
    kept as written, so a run's config still hashes to its `config_hash` (verification recomputes it)."""

    task: str = field("the task's name", "")
    tag: list[str] = field("its tags", list)
    kind: str = field("its kind", "")
    kind_args: RecordedKindArgs = field("the kind's settings", RecordedKindArgs)
    dataset: str = field("the registered dataset", "")
    dataset_args: dict[str, Any] = field("the dataset loader's arguments", dict)
    labels: RecordedLabels = field("the label space", RecordedLabels)
    metrics: list[str | RecordedMetric] = field("the metrics computed, a name or a name with arguments", list)
    primary_metric: str | None = field("the metric tables rank by (null: the first of `metrics`)", None)
    metadata: RecordedMetadata = field("provenance", RecordedMetadata)
    protocol: RecordedProtocol = field("family -> how it runs the task", RecordedProtocol)

    def metric_args(self, metric: str) -> dict[str, Any] | None:
        """The arguments ``metric`` is listed with ({} for a bare name), or None when the config does not list it."""
        for spec in self.metrics:
            name, args = (spec, {}) if isinstance(spec, str) else (spec.name, spec.args)
            if name == metric:
                return args
        return None

    @property
    def metric_names(self) -> list[str]:
        return [spec if isinstance(spec, str) else spec.name for spec in self.metrics]

    @property
    def primary(self) -> str | None:
        """The metric the config ranks by: ``primary_metric``, else the first metric listed."""
        return self.primary_metric or (self.metric_names[0] if self.metrics else None)


class AdapterInfo(Recorded):
    """`model.info`: what the adapter reports about itself (`Adapter.info()`). The facts metabench's adapters write
    and reports read are typed; an adapter's others (`labels`, `max_length`, `torch`...) are kept as written."""

    device: str | None = field("where it ran (`cpu`, `cuda:0`)", None, when="an adapter that runs a model")
    dtype: str | None = field("the weights' dtype", None, when="an adapter that runs a model")
    backend: str | None = field("an lm-eval decoder's backend (`hf`, `vllm`, `local-completions`...)", None,
                                when="an lm-eval decoder (`hf-decoder`, `vllm`, `openai`)")
    pretrained: str | None = field("the checkpoint's name or path", None, when="a Hugging Face model")
    registered_name: str | None = field("the registered short name the model was given by", None,
                                        when="a model given by a registered short name")
    path: str | None = field("the model folder read", None, when="a Hugging Face model")
    head: str | None = field("an encoder's task head (`token`, `sequence`...)", None,
                             when="an encoder (or a decoder fine-tuned with an encoder's head)")
    num_parameters: int | None = field("a decoder's parameter count", None,
                                       when="an lm-eval decoder that loaded its weights")
    parameters: int | None = field("a fine-tuned model's parameter count", None, when="a fine-tuned model, once loaded")
    method: str | None = field("a fine-tuned decoder tagger's training method (`lora`, `full`)", None,
                               when="a fine-tuned decoder tagger")
    beams: int | None = field("a decoder tagger's beams", None, when="a fine-tuned decoder tagger")
    budget: dict[str, Any] | None = field("the budget knobs it trained under instead of the task's recipe (a "
                                          "training subset, fewer epochs...): every view showing the run says so",
                                          None, when="a run below its task's recipe (`max_train=`, `epochs=`...)")
    checkpoints: dict[str, dict[str, Any]] | None = field(
        "seed (as a string) -> the fine-tuned checkpoint's training facts (`fit_s`, `history`, `key`...)", None,
        when="a fine-tuned model")
    outputs: dict[str, Any] | None = field("a decoder tagger's output counts (`predicted_items`, `predict_s`, "
                                           "`repaired_outputs`)", None, when="a fine-tuned decoder tagger")
    requests_sent: int | None = field("an API model's requests this run sent (not those the cache served)", None,
                                      when="an API model (`openai`)")
    tokens_in: int | None = field("the prompt tokens they held", None, when="an API model")
    tokens_out: int | None = field("the answer tokens", None, when="an API model")
    tokens_counted_by: str | None = field("`server usage`, `tokenizer`, both, or `not counted`", None,
                                          when="an API model")
    cost: int | float | None = field("their cost at the given `price_in`/`price_out`", None,
                                     when="an API model given prices whose tokens were counted")


class TaskInfo(Section):
    """The task as it ran: its identity, its resolved config and the facts reports need without its plugin."""

    name: str = field("the task's name")
    version: int = field("`metadata.version` of the task", 0)
    config_hash: str = field("sha256 of the resolved config (docs/task-yaml.md says what it covers); runs pair "
                             "only with runs of the same hash", "")
    kind: str = field("the task kind (`tagging`, `classification`, `choice`, `generation` or a plugin's)", "")
    dataset: str = field("the task's own dataset", "")
    primary_metric: str = field("the metric tables rank by")
    source: str = field("`metadata.source`: the paper or resource the task reproduces", "")
    plugin: str = field("the plugin that registered the task", "")
    config: RecordedConfig = field("the resolved task config (docs/task-yaml.md), less `protocol.encoder.search` "
                                   "and an unset `hf_dataset`", RecordedConfig)
    datasets: list[DatasetUsed] | None = field("every dataset any split role reads", None,
                                               since="runs written before task facts were recorded lack it")
    groups: list[GroupFact] = field("the `aggregate: mean` groups the task belongs to", list,
                                    since="runs written before task facts were recorded lack it")
    paper_view: list[PaperCell] | None = field("the paper-table cells the task fills", None,
                                               since="runs written before task facts were recorded lack it")

    @field_validator("name", "primary_metric")
    @classmethod
    def _printable_names(cls, value: str) -> str:
        return _printable(value)


class SplitInfo(Section):
    """One split role's items as the run read them."""

    n: int = field("how many items (the test split after `limit`)", ge=0)
    ids_sha256: str = field("sha256 of the items' ids in order (`jobs.ids_sha256`)")
    golds_sha256: str | None = field("sha256 of the (id, gold) pairs (`store.golds_sha256`): verification checks "
                                     "the samples' golds against it", None,
                                     when="the test split, in runs written since the golds digest existed")


class DataInfo(Section):
    """The data the run read."""

    files: dict[str, str] = field("`dataset:path` -> sha256 of every data file any split read", dict)
    splits: dict[str, SplitInfo] | None = field("split role -> its items", None,
                                                since="runs written before split digests were recorded lack it")


class ModelInfo(Section):
    """The model as the user named it and as its adapter describes itself."""

    spec: str = field("the `--model` value as written: the name every table shows")
    adapter: str = field("the adapter's registered name", "")
    family: str | None = field("`encoder`, `decoder`, `decoder_finetune` or `baseline`: whose protocol section "
                               "applies", None)
    args: dict[str, Any] = field("the parsed model arguments", dict)
    fingerprint: str = field("what identifies the model's answers (weights' hashes, arguments): the answer "
                             "cache's key", "")
    info: AdapterInfo = field("what the adapter reports about itself (device, dtype, checkpoints trained, a "
                              "training `budget` below the task's recipe...); adapter-defined", AdapterInfo)

    @field_validator("spec")
    @classmethod
    def _printable_spec(cls, value: str) -> str:
        return _printable(value)


class MetricSummary(Section):
    """A metric over the seeds that gave it a value (`stats.seeds.mean_std_n`)."""

    mean: float | None = field("the mean; null when no seed gave a value", None)
    std: float | None = field("the sample standard deviation; 0 for one seed, null for none", None)
    n: int = field("how many seeds gave a value", 0)


class Metrics(Section):
    """The task's metrics, per seed and over seeds."""

    per_seed: dict[str, dict[str, float | None]] = field(
        "seed (as a string) -> metric -> value (null: not computable on this seed)", expect="a mapping of metric values")
    aggregate: dict[str, MetricSummary] = field("metric -> its summary over seeds", expect="a mapping")


class Timings(Section):
    """Where the job's time went: consecutive phases that add up to `total_s` (`metabench/timings.py`). A
    remembered job's are those of its writing, not of the computing run."""

    cached_items: int = field("answers read from the answer cache instead of asked of the model", 0)
    data_hash_s: float | None = field("data files hashed", None, since="runs before the phase was timed lack it")
    model_hash_s: float | None = field("the model folder's files hashed (or their memoised hashes found)", None,
                                       since="runs before the phase was timed lack it")
    model_load_s: float | None = field("weights read and placed", None, since="runs before the phase was timed lack it")
    cache_lookup_s: float | None = field("answer-cache and job-memo look-ups", None,
                                         since="runs before the phase was timed lack it")
    load_s: float | None = field("data loaded and parsed", None)
    fit_s: float | None = field("training (fine-tuning, a search)", None)
    predict_s: float | None = field("the model answering", None)
    score_s: float | None = field("items scored and metrics aggregated", None,
                                  since="runs before the phase was timed lack it")
    write_s: float | None = field("the samples encoded and the record checked (the files' own writing is not "
                                  "timed: a parallel launcher's driver writes them)", None,
                                  since="runs before the phase was timed lack it")
    total_s: float | None = field("the job's wall time, the sum of the phases", None)
    items_per_s: float | None = field("answers asked of the model per second of `predict_s`; null when none were", None)


class RepeatInfo(Section):
    """How a sampled-generation run's answers were drawn and voted (`--repeat N`, docs/decoders.md)."""

    n: int = field("draws per item and seed", ge=2)
    answers: str = field("what an item's answer is: `majority of N draws per item`")
    tie_rule: str = field("how a tie between answers is broken")
    sampling_seeds: dict[str, list[int]] = field("seed -> the sampler's seed of each draw (draw 0: the seed itself)")
    mean_flip_rate: float = field("the share of an item's draws outside its majority, averaged over items and seeds")
    flipping_items: int = field("item-seed pairs whose draws disagree")
    per_seed: dict[str, dict[str, Any]] = field("seed -> `mean_flip_rate`, `flipping_items` and "
                                                "`<primary metric>_per_draw` (the primary metric of each draw)")


class Answering(Section):
    """How a decoder answered the task (`metabench.answering`): the way, the demonstrations and the parser."""

    mode: str = field("`scored` (log-likelihood of the answer words), `generated` (greedy text read by a parser) or "
                      "`fine-tuned` (a tagger trained on the task)")
    shots: int = field("demonstrations per prompt (0: zero-shot)", 0, ge=0)
    demonstrations: dict[str, list[str]] = field(
        "seed -> the ids of the items shown as demonstrations, in prompt order (drawn from the task's training "
        "split, per seed with `shots=K`)", dict)
    parser: str | None = field("the parser that read generated answers (`label_strict`, `word_list`...)", None)
    lenient: bool = field("`parse=lenient`: a lenient parser read the answers in place of the section's strict one",
                          False)
    prompt_source: str = field("where the prompt comes from: `metabench` or the paper and table it quotes", "")
    section_sha256: str | None = field("sha256 of the protocol section followed (its prompt and kind)", None)


class MergedPart(Section):
    """A run a merged run was made of (`metabench merge-seeds`, `runs/merge.py`), as that run recorded itself."""

    folder: str = field("`<task>/<run folder>` the part was read from")
    seeds: list[int] = field("its seeds")
    samples_sha256: str | None = field("its samples.jsonl's sha256")
    created: str | None = field("when it was written")
    metabench: MetabenchInfo | None = field("the metabench that computed it")
    environment: Environment | None = field("where it was computed")


class RunRecord(Section):
    """One run's `results.json`: what ran (task, data, model), with what outcome (metrics per seed and over
    seeds), written by whom and where. Every file is JSON with sorted keys and 2-space indents; NaN and
    infinities are refused by writer and readers alike. The per-item rows are in `samples.jsonl` beside it
    (item id, seed, gold, prediction, scores), whose sha256 is `samples_sha256`."""

    schema_version: int = field("the record's format version; a reader refuses any other than its own")
    created: str | None = field("when the run folder was written (UTC, ISO 8601, seconds)", None, volatile=True)
    metabench: MetabenchInfo | None = field("the metabench that wrote it", None, volatile=True)
    environment: Environment | None = field("where it was computed", None, volatile=True)
    plugins: list[PluginInfo] = field("every plugin loaded (their versions matter to results)", list, volatile=True)
    task: TaskInfo = field("the task", expect="a dict")
    data: DataInfo | None = field("the data read", None)
    model: ModelInfo = field("the model", expect="a dict")
    protocol: str | None = field("the model family whose `protocol` section of the task the run followed", None)
    seeds: list[int] = field("the seeds run, in order", expect="a non-empty list of integers", min_length=1)
    limit: int | None = field("`--limit`: only the first N test items were scored; null: no limit", None)
    n_items: int = field("test items scored (each seed scores them all); bounds the rows samples.jsonl may hold",
                         expect="a whole number of 0 or more", ge=0)
    n_test_items: int | None = field("test items in the whole split, before `limit`: `n_items` below it marks a "
                                     "partial run", None,
                                     since="runs written before it existed lack it: they count as partial when "
                                           "their `limit` could have cut the split")
    higher_is_better: dict[str, bool] = field("metric (registered name) -> its direction; a metric missing here is "
                                              "taken as higher-is-better", dict)
    metrics: Metrics = field("the metrics", expect="a dict")
    timings: Timings | None = field("where the time went", None, volatile=True)
    samples_sha256: str | None = field(
        "sha256 of samples.jsonl (uncompressed): a reader refuses samples that are not the file the record was "
        "written with", None, since="runs written before run files were checked as a unit lack it: add it with "
                                    "`python tools/migrate_runs.py`")
    repeat: RepeatInfo | None = field("how the answers were drawn and voted", None,
                                      when="`--repeat N` with N > 1 (sampled generation)")
    answering: Answering | None = field("how a decoder answered: scored, generated or fine-tuned, with k-shot "
                                        "demonstrations and the parser", None, when="a decoder run (written since "
                                        "decoders answer every headline benchmark)")
    merged_from: list[MergedPart] | None = field(
        "the runs of disjoint seeds this run was merged from, lowest seeds first (each verified, and the merge "
        "verified again); the other fields describe the recipe as the newest part recorded it (its `environment` "
        "and `plugins` too), `timings` are the parts' added up",
        None, when="a run written by `metabench merge-seeds`")

    _raw: dict = PrivateAttr(default_factory=dict)

    @property
    def raw(self) -> dict:
        """The record as JSON: the object read (unknown fields included), or, for a record built in memory,
        its fields as results.json holds them (:meth:`as_json`). For the store and the record's own checks:
        reports read the typed fields and the derived answers below."""
        return self._raw or self.as_json()

    def __setattr__(self, name: str, value) -> None:
        if not name.startswith("_"):
            self._raw = {}  # a field set after reading: the JSON read is no longer this record
        super().__setattr__(name, value)

    def evolve(self, **changes) -> RunRecord:
        """A copy with ``changes`` (field -> typed value) set: a run built in memory from this one (a trivial
        baseline on its items, a replayed run). Not validated: give values of the fields' types."""
        copied = self.model_copy(update=changes)
        copied._raw = {}
        return copied

    # ---- derived answers: what readers would otherwise compute from the fields by hand

    def partial_reasons(self, split_size: int | None = None) -> list[str]:
        """Why the run scored only part of its test split ([] for a whole run): `partial_runs.partial` on the
        items it scored, ``split_size`` (the split's size the data gives; None: the one the run recorded,
        ``n_test_items``) and its ``limit`` (``--limit 10000`` on a 500-item split: not partial)."""
        return partial(self.n_items, split_size if split_size is not None else self.n_test_items, self.limit)

    @property
    def partial(self) -> bool:
        """True when the run scored only part of the test split, as the record alone tells it
        (:meth:`partial_reasons`; the reports judge it against the split's size the verifier loaded from the
        data instead, `runs.stored.Run.partial`)."""
        return bool(self.partial_reasons())

    @property
    def limit_label(self) -> str:
        """``--limit N`` as the reports print it, "" for a run without one."""
        return f"--limit {self.limit}" if self.limit is not None else ""

    @property
    def draws(self) -> int:
        """Answers drawn per item and seed (``--repeat``; 1 for a run that did not repeat)."""
        return self.repeat.n if self.repeat is not None else 1

    @property
    def primary_metric(self) -> str:
        return self.task.primary_metric

    def aggregate(self, metric: str) -> MetricSummary | None:
        """The metric's summary over seeds (mean, std, n); None where the run has no such metric."""
        return self.metrics.aggregate.get(metric)

    def mean(self, metric: str) -> float | None:
        """The metric's mean over seeds; None where the run has no value for it."""
        summary = self.aggregate(metric)
        return summary.mean if summary is not None else None

    def per_seed(self, metric: str) -> list[float | None]:
        """The metric's value for each seed, in ``seeds`` order (None where the run has no value)."""
        per_seed = self.metrics.per_seed
        return [per_seed.get(str(seed), {}).get(metric) for seed in self.seeds]

    def higher_is_better_for(self, metric: str) -> bool:
        """The metric's direction by its registered name (``per_class/x/f1`` and ``recall_at_k[k=5]`` are keyed
        as ``per_class`` and ``recall_at_k``); a metric the record does not list is taken as higher-is-better."""
        table = self.higher_is_better
        return bool(table.get(metric, table.get(metric.split("/", 1)[0].split("[", 1)[0], True)))

    @property
    def datasets(self) -> list[DatasetUsed] | None:
        """Every dataset the task used, with roles, licence and citation (None for runs that predate it)."""
        return self.task.datasets

    @property
    def groups(self) -> list[GroupFact]:
        """The ``aggregate: mean`` groups the task belongs to, with all their members."""
        return self.task.groups

    @property
    def paper_view(self) -> list[PaperCell] | None:
        """The paper-table cells the task fills (None for runs that predate the record)."""
        return self.task.paper_view

    @property
    def budget(self) -> dict[str, Any] | None:
        """The budget knobs the run trained under instead of its task's recipe (a training subset, fewer
        epochs...), as its adapter recorded them (``model.info.budget``); None for a run that followed the recipe."""
        return self.model.info.budget or None

    @property
    def data_files(self) -> dict[str, str]:
        """``dataset:path`` -> sha256 of every data file the run read ({} where the record has no ``data``)."""
        return self.data.files if self.data is not None else {}

    def split(self, role: str) -> SplitInfo | None:
        """One split role's items as the run read them (None: not read, or not recorded)."""
        return (self.data.splits or {}).get(role) if self.data is not None else None

    @property
    def protocol_seeds(self) -> int | None:
        """How many seeds the task's protocol asks of this run's model family (None when it does not say)."""
        section = self.task.config.protocol.section(self.model.family or "encoder")
        seeds = section.seeds if section is not None else None
        return len(seeds) if isinstance(seeds, list) else seeds

    @classmethod
    def volatile(cls) -> tuple[str, ...]:
        """The fields that describe the process writing the run, not the job: a job remembered whole
        (``job_memo``) keeps the rest and writes these fresh."""
        return tuple(name for name, spec in cls.model_fields.items() if (spec.json_schema_extra or {}).get("volatile"))

    @classmethod
    def read(cls, data: dict, path: Path | str | None = None) -> RunRecord:
        """``data`` (a parsed results.json) validated; a :class:`RunFileError` naming ``path``, the field and the
        fix when a field is missing or has the wrong type."""
        try:
            record = cls.model_validate(data)
        except ValidationError as exc:
            raise _explained(exc, data, path) from None
        record._raw = data
        return record


def check_written(data: dict | RunRecord, path: Path | str | None = None) -> RunRecord:
    """The writer's record checked before the run folder is written: readable, every field written always
    present, no field the model does not declare. A failure is metabench's bug (or a plugin's that edits the
    record), reported before any file is written. ``data``: the record, or its JSON; the record returned holds
    the JSON it was checked as (``raw``)."""
    if isinstance(data, RunRecord):
        data = data.as_json()
    RunRecord.read(data, path)  # a record the readers would refuse is reported as they would report it
    try:
        record = RunRecord.model_validate(data, context={WRITING: True})
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "the record"
        raise MetabenchError(
            f"{path or 'results.json'}: {where}: {error['msg']}",
            hint="metabench's writer and metabench/run_record.py (RunRecord) disagree: declare a new field there with "
                 "its description (then `metabench schema results > docs/results-format.md`), and write every field "
                 "it does not mark as written only in some case",
        ) from None
    record._raw = data
    return record


# ------------------------------------------------------------------------------------------ error messages

def _explained(exc: ValidationError, data: dict, path) -> RunFileError:
    """The first error as the old hand-written check said it: ``PATH: field 'a.b' must be <what> (<found>)``."""
    error = exc.errors()[0]
    steps = list(_walk(error["loc"]))
    loc = ".".join(str(part) for part, _ in steps)
    spec = steps[-1][1] if steps else None
    kind = error["type"]
    where = path or "results.json"
    if kind == "control_character":
        return RunFileError(f"{where}: field '{loc}' holds a control character ({escape(str(error['input']))[:80]}); "
                            "reports print it where CI reads it", hint=HINT)
    if kind == "missing":
        found = "missing"
    elif kind.endswith("_type"):
        found = "null" if error["input"] is None else _a(type(error["input"]).__name__)
    else:
        found = repr(error["input"])[:80]
    return RunFileError(f"{where}: field '{loc}' must be {_expectation(spec, kind, error['msg'])} ({found})", hint=HINT)


def _a(name: str) -> str:
    return f"an {name}" if name[:1] in "aeiou" else f"a {name}"


def _walk(loc: tuple):
    """(key, what is there) for each JSON key of an error's location: a model's field (``FieldInfo``), or the
    element type of a mapping or list; pydantic's tags naming the union member it tried are not keys."""
    annotation: Any = RunRecord
    for part in loc:
        base = _unwrap(annotation)
        origin = typing.get_origin(base)
        if origin in (typing.Union, _UnionType):  # part is a tag: go on with the member it names
            members = {getattr(a, "__name__", None) if isinstance(a, type) else str(a): a for a in typing.get_args(base)}
            annotation = members.get(part, Any)
            continue
        if _is_model(base) and isinstance(part, str) and part in base.model_fields:
            spec = base.model_fields[part]
            yield part, spec
            annotation = spec.annotation
        elif origin in (dict, list):
            annotation = typing.get_args(base)[-1]
            yield part, annotation
        else:
            yield part, None
            annotation = Any


def _unwrap(annotation):
    """``X | None`` -> ``X``; other unions stay."""
    if typing.get_origin(annotation) in (typing.Union, _UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
        if len(args) < len(typing.get_args(annotation)):
            return typing.Union[tuple(args)]
    return annotation


_UnionType = type(int | str)


def _is_model(annotation) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _expectation(spec, kind: str, message: str) -> str:
    """How a message names what a field must hold: the field's ``expect`` (a value that breaks a constraint, a
    section that is not a mapping), else its type (a value of another type), else the constraint it breaks."""
    typed = kind == "missing" or kind.endswith("_type")
    if isinstance(spec, FieldInfo):
        expect = (spec.json_schema_extra or {}).get("expect")
        container = typing.get_origin(_unwrap(spec.annotation)) in (dict, list)
        if expect and not (container and kind.endswith("_type")):
            return expect
        spec = spec.annotation
    if typed and spec is not None:
        return _type_phrase(spec)
    return message.removeprefix("Input should be ").removeprefix("Value should be ")


def _type_phrase(annotation) -> str:
    if typing.get_origin(annotation) in (typing.Union, _UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        phrase = " or ".join(_type_phrase(a) for a in members)
        return phrase + (" or null" if len(members) < len(typing.get_args(annotation)) else "")
    if _is_model(annotation) or typing.get_origin(annotation) is dict:
        return "a mapping"
    if typing.get_origin(annotation) is list:
        return "a list"
    return {str: "a str", int: "an integer", float: "a number", bool: "true or false"}.get(annotation, "a value")


# ------------------------------------------------------------------------------------------------- the docs

INTRO = """# results.json reference

Generated by `metabench schema results` from `metabench/run_record.py` (`RunRecord`); a test fails when this
page is stale.

Every run folder holds `results.json` (this record) and `samples.jsonl` (or `samples.jsonl.gz`): one JSON
object per test item and seed with the item's `id`, the `seed`, the `gold` answer, the model's `prediction`
and the per-item `scores` (never the dataset's text). The reporter reads nothing else, so runs made on another
machine, or by an older metabench of the same `schema_version`, compare the same way as fresh ones
(docs/reliability.md has how both files are written as one unit).

Reading. A reader refuses a `schema_version` other than its own, and a field below that is missing where the
*read* column says required, or present with another type (no string for a number, no `true` for a count):
one message names the file, the field and the fix. A field it does not know is kept and ignored. Fields added
within a version have a default, the value a run that lacks them reads as (the *read* column); the *written*
column says when metabench writes a field. The writer is checked against this page's model before any file
is written: it writes every field marked *always* and nothing the model does not declare.
"""


def results_markdown() -> str:
    """docs/results-format.md: one table per section of the record, from the models' fields."""
    from .config.docs import nested_models  # noqa: PLC0415 - the docs' model walk, only when the page is made

    parts = [INTRO]
    for model in nested_models(RunRecord):
        doc = inspect.cleandoc(model.__doc__ or "")
        parts.append(f"\n## `{model.__name__}`\n\n{doc}\n")
        parts.append("| field | type | read | written | meaning |\n|---|---|---|---|---|")
        for name, spec in model.model_fields.items():
            extra = spec.json_schema_extra or {}
            kind = _type_name(spec.annotation)
            meaning = spec.description or ""
            if "since" in extra:
                meaning += f" ({extra['since']})"
            cell = " ".join(f"{meaning}".split()).replace("|", "\\|")
            written = extra.get("when", "always") + ("; fresh when a remembered job is written" if extra.get("volatile") else "")
            parts.append(f"| `{name}` | {kind} | {_read_column(spec)} | {written} | {cell} |")
    return "\n".join(parts) + "\n"


def _read_column(spec) -> str:
    if spec.is_required():
        return "**required**"
    default = spec.default_factory() if spec.default_factory is not None else spec.default
    if isinstance(default, BaseModel):  # a section read empty: every field at its default
        default = default.model_dump(exclude_unset=True)
    return f"`{_json(default)}` if absent"


def _json(value) -> str:
    import json  # noqa: PLC0415

    return json.dumps(value)


def _type_name(annotation) -> str:
    """A field's type as the page writes it (``list[int]``, ``mapping str -> number | null``)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, _UnionType):
        return " \\| ".join(_type_name(a) for a in typing.get_args(annotation))
    if origin is list:
        return f"list[{_type_name(typing.get_args(annotation)[0])}]"
    if origin is dict:
        key, value = typing.get_args(annotation)
        return f"mapping {_type_name(key)} → {_type_name(value)}"
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "any"
    if _is_model(annotation):
        return f"[`{annotation.__name__}`](#{annotation.__name__.lower()})"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(annotation, str(annotation))
