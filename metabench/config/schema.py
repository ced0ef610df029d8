"""The task YAML schema: every key, its type and what it means.

This module is the reference; ``docs/task-yaml.md`` is generated from it (``metabench schema``), and a
test keeps the two in step. Models forbid unknown keys, so a typo is an error, not a silently ignored
setting. Registered names (kind, dataset, metrics...) are checked against the registry by ``validate.py``.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from ..limits import MAX_EPOCHS

Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.\-]*$")]
#: Input views of expression-level classification (Boisson et al. 2023); see metabench/kinds/views.py.
View = Literal["default", "pme_only", "masked"]

#: Seeds go to numpy, torch and lm-eval, whose smallest seed range is 32-bit; a run has at most MAX_SEEDS.
MAX_SEED = 2**31 - 1
MAX_SEEDS = 1000


def _distinct(values: list[int]) -> list[int]:
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"seed(s) {repeated} listed twice: each seed runs once")
    return values


Seeds = Union[  # strict: `seeds: true` is not a count of one
    Annotated[int, Field(strict=True, ge=1, le=MAX_SEEDS)],
    Annotated[list[Annotated[int, Field(strict=True, ge=0, le=MAX_SEED)]], Field(min_length=1, max_length=MAX_SEEDS),
              AfterValidator(_distinct)],
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SplitRef(Strict):
    """A split taken from another dataset than the task's own (e.g. train on CoMeta, test on Meta4XNLI)."""

    dataset: str | None = Field(None, description="registered dataset name; default: the task's `dataset`")
    split: str = Field(description="split name of that dataset")
    args: dict = Field(default_factory=dict, description="loader arguments; default: none (not inherited)")


SplitValue = Union[str, SplitRef]
#: Several slices concatenated in order (e.g. Meta4XNLI EN train + ES train for multilingual training).
SplitList = Annotated[list[SplitValue], Field(min_length=1)]


class Splits(Strict):
    """Which dataset split plays which role."""

    train: SplitValue | SplitList | None = Field(
        None,
        description="training split (fine-tuning, majority/lookup baselines); a list concatenates several slices",
    )
    validation: SplitValue | SplitList | None = Field(
        None, description="model-selection split; a list concatenates several slices"
    )
    test: SplitValue = Field(description="evaluation split")
    fewshot: SplitValue | None = Field(None, description="split few-shot examples are drawn from")


#: The split roles a task names, in the order their datasets are credited (the test data first); every reader
#: of a task's data goes through them (``validate.role_slices``).
ROLES = ("test", "train", "validation", "fewshot")


class Labels(Strict):
    """The label space."""

    names: list[str] | None = Field(None, description="all labels in a fixed order (classification heads use it)")
    positive: str | None = Field(None, description="positive class for P/R/F1 (e.g. METAPHOR, metaphorical)")
    scheme: Literal["BIO", "IO", "binary", "multiclass"] | None = Field(None, description="label encoding")


class Finetune(Strict):
    """Fine-tuning hyperparameters for encoder adapters (the papers' settings; cite the table in metadata)."""

    lr: float = Field(5e-5, gt=0, description="peak learning rate (AdamW)")
    batch_size: int = Field(8, ge=1, description="examples per optimiser step before accumulation")
    grad_accum: int = Field(1, ge=1, description="gradient accumulation steps")
    epochs: float = Field(4, gt=0, le=MAX_EPOCHS, description="training epochs")
    weight_decay: float = Field(0.0, ge=0, description="AdamW weight decay")
    warmup_ratio: float = Field(0.0, ge=0, le=1, description="linear warm-up share of all steps")
    max_length: int = Field(128, ge=8, description="max sub-word tokens per input")
    dropout: float | None = Field(None, ge=0, le=1, description="classifier dropout; None keeps the model's")
    select_metric: str | None = Field(None, description="validation metric for model selection; None: last epoch")


class SearchRange(Strict):
    """A numeric range the search samples from (uniformly, or log-uniformly with ``log: true``)."""

    low: float = Field(description="lower bound (inclusive)")
    high: float = Field(description="upper bound (inclusive)")
    log: bool = Field(False, description="sample the logarithm uniformly (learning rates)")

    @model_validator(mode="after")
    def _ordered(self):
        if not self.low < self.high:
            raise ValueError(f"low ({self.low}) must be below high ({self.high})")
        if self.log and self.low <= 0:
            raise ValueError(f"a log range needs low > 0 (got {self.low})")
        return self


class IntRange(SearchRange):
    """An integer range (both bounds included)."""

    low: int = Field(description="lower bound (inclusive)")
    high: int = Field(description="upper bound (inclusive)")


Choices = Annotated[list[float], Field(min_length=1)]
IntChoices = Annotated[list[int], Field(min_length=1)]


class SearchSpace(Strict):
    """What a search varies: a list is a choice, a mapping a range. A key left out keeps the task's
    ``finetune`` value (``seed``: the run seed)."""

    lr: Choices | SearchRange | None = Field(None, description="peak learning rate")
    batch_size: IntChoices | IntRange | None = Field(None, description="examples per optimiser step")
    epochs: IntChoices | IntRange | None = Field(
        None, description="training epochs (whole epochs: the validation score is reported after each)"
    )
    weight_decay: Choices | SearchRange | None = Field(None, description="AdamW weight decay")
    warmup_ratio: Choices | SearchRange | None = Field(None, description="linear warm-up share of all steps")
    seed: IntChoices | IntRange | None = Field(
        None, description="training seed (head initialisation, data order, dropout), searched as a hyperparameter"
    )

    def searched(self) -> dict:
        """The dimensions given, by name."""
        return {name: value for name, value in self if value is not None}

    @model_validator(mode="after")
    def _within_bounds(self):
        """Every value a dimension can take obeys the bound of its ``finetune`` key (a batch of 0 examples,
        a negative learning rate or 10^20 epochs would fail or never end in some trial, after hours)."""
        for name, value in self.searched().items():
            low, high, what = _SEARCH_BOUNDS[name]
            ends = (value.low, value.high) if isinstance(value, SearchRange) else (min(value), max(value))
            if not (ends[0] > low if what == "above" else ends[0] >= low) or ends[1] > high:
                raise ValueError(f"{name}: {ends[0]:g}..{ends[1]:g} leaves the allowed values, {what} {low:g} and at "
                                 f"most {high:g}")
        return self


#: A search dimension's bounds: (lowest, highest, "above" = lowest excluded | "from" = included).
_SEARCH_BOUNDS = {"lr": (0, 1, "above"), "batch_size": (1, 65536, "from"), "epochs": (1, MAX_EPOCHS, "from"),
                  "weight_decay": (0, 1e6, "from"), "warmup_ratio": (0, 1, "from"), "seed": (0, MAX_SEED, "from")}


class Search(Strict):
    """Hyperparameter search on Ray Tune before the final fit (Boisson et al. 2023: BOHB, 50 trials). Only a
    model that switches it on runs it (``hf:minilm-l6,search=true``); others keep the fixed ``finetune``
    recipe, and the task's config hash leaves this block out, so adding it changes no cached answer."""

    algorithm: Literal["bohb", "optuna"] = Field(
        "bohb", description="bohb: Ray Tune's TuneBOHB (needs hpbandster + ConfigSpace); optuna: OptunaSearch (TPE)"
    )
    scheduler: Literal["hyperband", "asha", "none"] = Field(
        "hyperband",
        description="early stopping on the per-epoch validation score: hyperband (HyperBandForBOHB with bohb, "
        "HyperBandScheduler with optuna), asha (AsyncHyperBandScheduler; optuna only) or none",
    )
    trials: int = Field(50, ge=1, le=10000, description="number of trials (configurations tried)")
    metric: str = Field(description="validation metric the search maximises (loss: minimises), e.g. macro_f1")
    space: SearchSpace = Field(description="the hyperparameters searched and their ranges")

    @model_validator(mode="after")
    def _consistent(self):
        if not self.space.searched():
            raise ValueError("space: give at least one hyperparameter to search")
        if self.algorithm == "bohb" and self.scheduler != "hyperband":
            raise ValueError("algorithm bohb needs scheduler hyperband (BOHB's model reads HyperBandForBOHB's budgets)")
        return self


class EncoderProtocol(Strict):
    """How encoders meet this task: fine-tune, then predict."""

    finetune: Finetune = Field(default_factory=Finetune, description="hyperparameters")
    seeds: Seeds = Field(1, description="number of seeds (0..n-1) or explicit list of distinct seeds")
    search: Search | None = Field(
        None, description="hyperparameter search before the final fit, run only when the model switches it on "
        "(`search=true`); default: none, the fixed `finetune` recipe"
    )


class DecoderProtocol(Strict):
    """How decoders meet this task: a prompt, scored or generated."""

    template: str | None = Field(None, description="Jinja2 prompt template (sandboxed); fields of the item")
    system: str | None = Field(None, description="system message when a chat template is used")
    fewshot: int = Field(0, ge=0, description="number of in-context examples")
    chat_template: bool = Field(False, description="wrap the prompt in the model's chat template")
    until: list[str] = Field(default_factory=list, description="stop strings for generation")
    max_new_tokens: int = Field(32, ge=1, description="generation length limit")
    temperature: float = Field(0.0, ge=0, description="0 = greedy")
    seeds: Seeds = Field(1, description="number of runs (sampling seeds) or explicit list of distinct seeds")
    kind: str | None = Field(
        None, description="the kind a decoder answers this task with, when it is not the task's own (a `choice` "
        "section scores answer words, a `generation` section parses greedy text): the task keeps its items, golds "
        "and metrics, so decoder runs pair with every other run of the task (docs/tasks.md, 'Every model kind'); "
        "default: the task's kind",
    )
    kind_args: dict = Field(default_factory=dict, description="that kind's settings (with `kind` only)")
    prompt_source: str = Field(
        "", description="where the prompt comes from: `metabench` (written for this suite) or the paper and table it "
        "is quoted from verbatim; required with `kind`",
    )

    @model_validator(mode="after")
    def _own_kind(self):
        if self.kind is None and (self.kind_args or self.prompt_source):
            raise ValueError("kind_args and prompt_source belong to a section that names its own `kind`")
        if self.kind is not None and not self.prompt_source.strip():
            raise ValueError("a section with its own kind says where its prompt comes from: prompt_source: metabench, "
                             "or the paper and table it quotes")
        return self

    @property
    def own_kind(self) -> bool:
        """A way of answering the task rather than the task itself: left out of the task's config hash (the
        answers' cache key carries it instead: `metabench.answering`)."""
        return self.kind is not None


class Lora(Strict):
    """LoRA adapters (``peft``) for a fine-tuned decoder: rank, scaling, dropout and the layers they wrap."""

    r: int = Field(16, ge=1, description="rank of the update matrices")
    alpha: int = Field(32, ge=1, description="scaling numerator (the update is scaled by alpha / r)")
    dropout: float = Field(0.05, ge=0, le=1, description="dropout on the adapters' input")
    target_modules: str | list[str] = Field(
        "all-linear", description="layers wrapped: peft's `all-linear` or a list of module names"
    )


class DecoderFinetuneProtocol(Strict):
    """How a decoder fine-tuned as a tagger meets this task (`hf-decoder:...,finetune=true`): it learns to write
    the sentence back with the tagged words wrapped in tags, and decodes under a constraint that lets it only
    copy the words in order and insert tags (docs/decoders.md)."""

    kind: Literal["tagging"] | None = Field(
        None, description="`tagging`: the section is a way for decoders to answer the task, added after the task's "
        "other runs were made: left out of the config hash, as a decoder section naming its own kind is (the tagger's "
        "answer key and `answering.section_sha256` carry it), so those runs keep their hash and pair with the "
        "tagger's; unset: hashed with the task (the VUA tasks' sections)")
    finetune: Finetune = Field(default_factory=Finetune, description="hyperparameters (max_length: prompt + output tokens)")
    seeds: Seeds = Field(1, description="number of seeds (0..n-1) or explicit list of distinct seeds")
    method: Literal["lora", "full"] = Field("lora", description="train LoRA adapters (`lora`) or every weight (`full`)")
    lora: Lora = Field(default_factory=Lora, description="LoRA settings (method: lora)")
    beams: int = Field(1, ge=1, description="beams of the constrained beam search (1: greedy)")
    instruction: str = Field(
        "Tag the metaphors.", min_length=1,
        description="what the model reads before the sentence (the system message with a chat template)",
    )
    chat_template: bool = Field(False, description="wrap instruction and sentence in the model's chat template, if it has one")
    tags: dict[str, str] = Field(
        default_factory=dict, description="tag word per entity type, e.g. {METAPHOR: metaphor} writes "
        "<metaphor> ... </metaphor>; default: the type in lower case"
    )


class BaselineProtocol(Strict):
    """How no-ML baselines meet this task."""

    seeds: Seeds = Field(1, description="seeds for the random baseline (count, or list of distinct seeds)")


class Protocol(Strict):
    """Per adapter family; a family missing here cannot run the task (it says so)."""

    encoder: EncoderProtocol | None = None
    decoder: DecoderProtocol | None = Field(
        None, description="how a decoder answers by default (`hf-decoder`, `vllm`, `openai` with api=completions): "
        "scored, when its kind is `choice`")
    decoder_generated: DecoderProtocol | None = Field(
        None, description="how a decoder answers by greedy generation parsed strictly (chat APIs; `answer=generated` "
        "on any decoder); with its own `kind` (normally `generation`)")
    decoder_finetune: DecoderFinetuneProtocol | None = None
    baseline: BaselineProtocol = Field(default_factory=BaselineProtocol)


class MetricSpec(Strict):
    """A metric with arguments."""

    name: str = Field(description="registered metric name")
    args: dict = Field(default_factory=dict, description="keyword arguments for the metric function")


class PaperViewCell(Strict):
    """Where the task's numbers appear in a paper-layout view (the leaderboard's paper tables).

    Views lay out a paper's table; tasks say which cells they fill, so a renamed task moves its binding with
    it and `metabench validate` rejects a binding to a table, row or column the view does not have.
    Several tasks bound to one cell are shown as their mean (SD), as MUNCH reports three prompt variants.
    """

    table: str = Field(description="view key, e.g. meta4xnli_table_11 (the views are listed in docs/reporting.md)")
    row: list[str] = Field(min_length=1, description="the row's labels as the view prints them, e.g. [M4X_EN, VUAM]")
    column: str | list[str] | None = Field(
        None, description="the column(s) the task fills, e.g. 'zs EN'; default: every column of the row"
    )
    note: str = Field("", description="printed under the table for this task, e.g. a substitute training set")

    def columns(self, all_columns) -> list[str]:
        """The columns this binding fills, out of the view's ``all_columns``."""
        if self.column is None:
            return list(all_columns)
        return [self.column] if isinstance(self.column, str) else list(self.column)


class Cluster(Strict):
    """Items that are not independent (the sentences of one document), resampled together by paired tests.

    Read by the reporter from the run's recorded config; it does not change results, so it is not hashed
    (metadata is not) and runs made before a task declared it pair with runs made after.
    """

    name: str = Field(description="what one cluster is, as reports print it (plural), e.g. documents")
    id_pattern: str = Field(
        description="a regular expression whose one group, searched in each item id, names the item's cluster, "
        "e.g. '^(.+)_[0-9]+$' for VUA ids '<text id>_<sentence index>'"
    )

    @model_validator(mode="after")
    def _one_group(self):
        try:
            groups = re.compile(self.id_pattern).groups
        except re.error as exc:
            raise ValueError(f"id_pattern {self.id_pattern!r} is not a regular expression: {exc}") from None
        if groups != 1:
            raise ValueError(f"id_pattern {self.id_pattern!r} has {groups} groups; give exactly one (the cluster)")
        return self


class Metadata(Strict):
    """Provenance. Changing `version` changes the config hash (and invalidates cached answers)."""

    version: int = Field(1, ge=0, description="bump when the task's semantics change")
    source: str = Field("", description="paper and table the protocol comes from")
    description: str = Field("", description="one paragraph for `metabench ls tasks -v`")
    choices: dict[str, str] = Field(
        default_factory=dict, description="decisions taken where the paper is silent or ambiguous, with why"
    )
    paper_view: PaperViewCell | list[PaperViewCell] | None = Field(
        None, description="the paper-table cell(s) this task fills on the leaderboard (one binding or a list)"
    )
    cluster: Cluster | None = Field(
        None, description="items paired tests resample together (e.g. a document's sentences); default: each item"
    )
    superseded_by: str | None = Field(
        None, description="a deprecated task: the benchmark whose protocol now asks its prompt (a run warns, naming "
        "it; the task keeps working, its runs keep their folders)"
    )

    def paper_views(self) -> list[PaperViewCell]:
        if self.paper_view is None:
            return []
        return [self.paper_view] if isinstance(self.paper_view, PaperViewCell) else list(self.paper_view)


DataFiles = Union[str, list[str], dict[str, Union[str, list[str]]]]


class HFDataset(Strict):
    """A Hugging Face ``datasets`` source read in place of a registered dataset (lm-eval's ``dataset_path``,
    ``dataset_name`` and ``dataset_kwargs.data_files``). The task's splits name the source's splits, and the
    task's `dataset` becomes ``hf.<task>``. Local files are hashed like a manifest's, so a changed file
    changes every cache key; a Hub source must pin a commit (docs/plugins.md, "Your data is already a
    `datasets` dataset")."""

    path: str = Field(
        min_length=1,
        description="a Hub id (org/name); a local folder, written with ./, ../ or / and relative to the file "
        "that sets it (a `save_to_disk` folder, or a folder of data files); or a packaged builder (json, "
        "parquet, csv, arrow, text) reading `data_files`",
    )
    name: str | None = Field(None, min_length=1, description="the config name (datasets' `name`)")
    revision: str | None = Field(
        None,
        description="Hub only: the commit sha (40 hex digits) the run reads; `main` follows the branch knowingly "
        "(the commit read is recorded); local sources are pinned by their files' hashes and take none",
    )
    data_files: DataFiles | None = Field(
        None,
        description="files per split ({train: a.jsonl, test: b.jsonl}; a file or list alone is split train; "
        "globs allowed): relative to the file that sets them for a builder, inside the folder or repo otherwise",
    )
    columns: dict[str, str] = Field(
        min_length=1,
        description="item field: column. text + label make a TextItem (also spans, target_index, lemma, pos, "
        "group), words + tags a TaggedSentence, premise + hypothesis + label an NLIPair; id (default "
        "<split>:<row>) and language for all; class-label columns give their names; other columns go to `meta`",
    )


class TaskConfig(Strict):
    """One task: a protocol on one dataset slice."""

    task: Name = Field(description="unique task name (lowercase, digits, _ . -)")
    tag: list[Name] = Field(default_factory=list, description="tags for selection with --tasks TAG; `model_specific` "
                            "marks a task whose data was built for one model (a per-model hard set, HARD(M)): "
                            "`--tasks all` leaves it out, naming it (or its tag, group or family) runs it")
    kind: str = Field(description="registered kind (tagging, classification, ...)")
    kind_args: dict = Field(default_factory=dict, description="kind-specific settings, checked by the kind")
    dataset: str = Field(description="registered dataset name (with `hf_dataset`: left out, it is hf.<task>)")
    hf_dataset: HFDataset | None = Field(
        None, description="read the data with Hugging Face `datasets` instead of a registered dataset"
    )
    dataset_args: dict = Field(default_factory=dict, description="loader arguments (checked by the dataset)")
    splits: Splits = Field(description="role → split")
    labels: Labels = Field(default_factory=Labels, description="label space")
    protocol: Protocol = Field(default_factory=Protocol, description="per adapter family")
    metrics: list[Union[str, MetricSpec]] = Field(min_length=1, description="metrics to report")
    primary_metric: str | None = Field(None, description="headline metric; default: the first in `metrics`")
    metadata: Metadata = Field(default_factory=Metadata, description="provenance")
    views: list[View] | None = Field(
        None,
        min_length=1,
        description="input views (classification with kind_args.marker: pme): the task is expanded into one task "
        "per view, named <task>@<view> (default = <PME>-marked text, pme_only = the expression alone, masked = "
        "the expression replaced by kind_args.mask); the bare name selects them all",
    )

    @model_validator(mode="before")
    @classmethod
    def _hf_dataset_name(cls, data):
        """A `datasets` source is the task's own dataset, named after the task (unique, machine-independent)."""
        if isinstance(data, dict) and data.get("hf_dataset") is not None:
            if "dataset" in data:
                raise ValueError("give `dataset` (a registered dataset) or `hf_dataset` (a datasets source), not both")
            data = {**data, "dataset": f"hf.{data.get('task')}"}
        return data

    def metric_specs(self) -> list[MetricSpec]:
        return [m if isinstance(m, MetricSpec) else MetricSpec(name=m) for m in self.metrics]

    @property
    def primary(self) -> str:
        return self.primary_metric or self.metric_specs()[0].name


class GroupConfig(Strict):
    """A named set of tasks (names, globs, tags or other groups)."""

    group: Name = Field(description="group name, usable with --tasks")
    task: list[str] = Field(min_length=1, description="member tasks: names, globs, tags or groups")
    aggregate: Literal["none", "mean"] = Field(
        "none",
        description="mean: the group also reports the unweighted mean of its members' metrics, per seed, then "
        "mean ± std over seeds (k-fold cross-validation, a paper's 'average' row); none: members only",
    )
    metadata: Metadata = Field(default_factory=Metadata, description="provenance")
    views: list[View] | None = Field(
        None,
        min_length=1,
        description="expand into one group per view, <group>@<view>, whose members are <member>@<view> (members "
        "are tasks declaring the same views); the bare name selects them all",
    )
    extends: Name | None = Field(
        None,
        description="a group defined elsewhere (another plugin's: core) that this group's members also join, after "
        "its own: how a plugin adds its tasks to the core suite without the core's file naming them",
    )
