"""``hf-encoder``: fine-tune a transformers encoder in-suite, then predict (token tagging or classification).

One adapter per (task, model) job; the runner calls ``fit`` once per seed (only when some test item is not in
the answer cache) and then ``predict`` on batches.

``fit`` fine-tunes the model under the task's ``protocol.encoder.finetune`` settings, or loads the checkpoint a
previous job left for the same key (see :mod:`metabench.models.checkpoints`): training happens once per (base
model, training data, hyperparameters, seed) and every task that shares them reuses it.

This module is the adapter: it builds the transformers model with a token or sequence head, encodes requests
(word alignment, markers, windows: :mod:`metabench.models.alignment`) and maps predictions back to words or
labels. The training loop itself (optimiser, schedule, seeds, selection, resume) is
:func:`metabench.models.finetune.train`; ``benchmarks/bench_encoder.py`` measures it against a
``transformers.Trainer`` script on the same data. What the adapter adds to the loop:

- **Seeds**: the seed fixes the classifier head's initialisation (``torch.manual_seed`` before the model is
  built); the loop seeds data order and dropout from it.
- **Dynamic padding and length grouping**: batches are padded to their longest member, and (``group_by_length``,
  on by default) grouped by length.
- **Model selection**: after every epoch the model predicts the validation split and is scored with the task's
  own metric functions (``finetune.select_metric``; ``loss`` selects on validation loss). Without
  ``select_metric`` or without a validation split the last epoch is kept.
- **Hyperparameter search** (``search=true`` and the task's ``protocol.encoder.search``): before the final fit,
  trials on Ray Tune (:mod:`metabench.models.search`), each one a fit of this adapter with the trial's
  hyperparameters through the same loop, reporting the validation scores per epoch; the best configuration is
  then trained as any fit is, under a checkpoint key that includes the search settings.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AdapterError, UnsupportedError
from ..limits import MAX_EPOCHS
from ..requests import ClassifyRequest, TagRequest, Training
from .alignment import (
    IGNORE,
    MARKERS,
    collect_word_predictions,
    encode_text,
    encode_words,
    word_labels,
)
from . import search as searching
from .base import Adapter, AdapterSettings
from .checkpoints import TRAINER_VERSION, CheckpointStore, checkpoint_key
from .finetune import Schedule, Selection, train
from .hf_common import (
    adapter_fingerprint,
    folder_fingerprint,
    loading_model,
    parse_bool,
    parse_dtype,
    parse_float,
    parse_int,
    pick_device_and_threads,
    read_config,
    resolve_pretrained,
    torch_dtype,
)
from .training_budget import apply_budget, content_hash

#: Byte-level BPE tokenizers need a prefix space to take pre-split words.
_PREFIX_SPACE_TYPES = {"roberta", "roberta-prelayernorm", "longformer", "bart", "gpt2", "deberta", "data2vec-text",
                       "luke", "mpnet", "xmod"}
#: Position embeddings offset by padding_idx + 1 (fairseq heritage).
_POSITION_OFFSET_TYPES = {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "data2vec-text",
                          "roberta-prelayernorm", "xmod", "luke"}
#: Arguments that do not change answers (left out of the fingerprint).
_NOT_FINGERPRINTED = ("batch_size", "cache", "device", "threads")
#: Search arguments, left out of the fingerprint too when the search is off (``search=false`` is today's model).
_SEARCH_ARGS = ("search", "search_cpus", "search_trials", "search_max_epochs")
MAX_GRAD_NORM = 1.0
PREDICT_OVERLAP = 0.5


def _with_config(training: Training, config: dict) -> Training:
    """``training`` under a search configuration: its ``finetune`` values replaced, ``seed`` as the training seed."""
    updates = {k: config[k] for k in searching.FINETUNE_KEYS if k in config}
    protocol = training.protocol
    protocol = protocol.model_copy(update={"finetune": protocol.finetune.model_copy(update=updates)})
    return dataclasses.replace(training, protocol=protocol, seed=int(config.get("seed", training.seed)))


@dataclass
class _TrialJob:
    """What a search trial needs in its Ray worker: a model-less copy of the adapter and the training data."""

    adapter: HFEncoder
    training: Training
    head: str
    labels: list[str]
    markers: bool
    max_length: int
    metric: str
    checkpoint: bool
    scratch: str


def _run_trial(config: dict, job: _TrialJob) -> None:
    """Ray Tune's trainable (module level, so Ray pickles it by reference)."""
    job.adapter._trial(job, {k: searching.plain(v) for k, v in config.items()})


class HFEncoder(Adapter):
    name = "hf-encoder"
    family = "encoder"
    serves = (TagRequest, ClassifyRequest)
    positional_arg = "pretrained"
    seeded = True
    needs_training = True
    allowed_args = (
        "pretrained",
        "revision",
        "dtype",
        "device",
        "batch_size",
        "max_length",
        "trust_remote_code",
        "group_by_length",
        "cache",
        "max_train",
        "epochs",
        "lr",
        "warmup_ratio",
        "threads",
        "search",
        "search_cpus",
        "search_trials",
        "search_max_epochs",
    )

    def __init__(self, args: dict[str, str], *, registry=None, settings: AdapterSettings | None = None):
        super().__init__(args, registry=registry, settings=settings)
        if not self.args.get("pretrained"):
            raise AdapterError(f"model '{self.name}' needs pretrained=", hint=f"e.g. --model {self.name}:minilm-l6")
        self.pretrained = self.args["pretrained"]
        self.revision = self.args.get("revision") or None
        self.dtype_name = parse_dtype(self.args.get("dtype"), self.name)
        self._batch_size = parse_int(self.args.get("batch_size", 32), "batch_size", self.name)
        self.max_length = parse_int(self.args["max_length"], "max_length", self.name, 8) if "max_length" in self.args else None
        self.trust_remote_code = parse_bool(self.args.get("trust_remote_code", False), "trust_remote_code", self.name)
        self.group_by_length = parse_bool(self.args.get("group_by_length", True), "group_by_length", self.name)
        if "cache" in self.args and not parse_bool(self.args["cache"], "cache", self.name):
            self.use_cache = False
        self.device_arg = self.args.get("device")
        self.threads = parse_int(self.args["threads"], "threads", self.name) if "threads" in self.args else None
        # Budget knobs (off by default; all change the checkpoint key and the fingerprint):
        self.max_train = parse_int(self.args["max_train"], "max_train", self.name) if "max_train" in self.args else None
        self.recipe = {name: parse_float(self.args[name], name, self.name) for name in ("epochs", "lr", "warmup_ratio")
                       if name in self.args}
        for name, most in (("epochs", MAX_EPOCHS), ("lr", 1.0)):
            if not 0 < self.recipe.get(name, 1.0) <= most:  # NaN and inf too
                raise AdapterError(f"model '{self.name}': {name}={self.args[name]} must be positive and at most {most:g}")
        if not 0 <= self.recipe.get("warmup_ratio", 0.0) < 1:
            raise AdapterError(f"model '{self.name}': warmup_ratio={self.args['warmup_ratio']} must lie in [0, 1)")
        # Hyperparameter search (off by default): the task's protocol.encoder.search, trials on search_cpus CPUs.
        self.search = parse_bool(self.args.get("search", False), "search", self.name)
        self.search_cpus = parse_int(self.args.get("search_cpus", 1), "search_cpus", self.name)
        # Budget knobs of the search: fewer trials, fewer epochs than the task's search block.
        self.search_budget = {name: parse_int(self.args[f"search_{name}"], f"search_{name}", self.name)
                              for name in ("trials", "max_epochs") if f"search_{name}" in self.args}
        given = [name for name in _SEARCH_ARGS[1:] if name in self.args]
        if given and not self.search:
            raise AdapterError(f"model '{self.name}': {given[0]} applies to a search, which is off",
                               hint=f"add search=true, e.g. hf:minilm-l6,search=true,{given[0]}={self.args[given[0]]}")
        self._folder: Path | None = None
        self._base_fingerprint: str | None = None
        self.model = None
        self.tokenizer = None
        self._key: str | None = None
        self._seed: int | None = None
        self._head: str | None = None
        self._labels: list[str] = []
        self._max_length: int | None = None
        self._marker_ids: tuple[int, ...] = ()
        self._added_tokens: list[str] = []
        self._checkpoints: dict[str, dict] = {}
        self._counts = {"predicted_items": 0, "windowed_sentences": 0, "clipped_words": 0, "unk_words": 0, "truncated_inputs": 0}
        self._device: str | None = None

    # ------------------------------------------------------------------ identity

    @property
    def folder(self) -> Path:
        if self._folder is None:
            self._folder = resolve_pretrained(self.pretrained, self.registry, self.revision).folder
        return self._folder

    def base_fingerprint(self) -> str:
        if self._base_fingerprint is None:
            self._base_fingerprint = folder_fingerprint(self.folder)
        return self._base_fingerprint

    def fingerprint(self) -> str:
        skipped = _NOT_FINGERPRINTED + (() if self.search else _SEARCH_ARGS)
        args = {k: v for k, v in sorted(self.args.items()) if k not in skipped and k != "pretrained"}
        return adapter_fingerprint(self.name, TRAINER_VERSION, self.base_fingerprint(), args)

    def task_fingerprint(self, protocol) -> str:
        """A searching model's answers depend on the task's search block, which the config hash leaves out."""
        search = getattr(protocol, "search", None) if self.search else None
        if search is None:
            return self.fingerprint()  # the budget knobs are in it
        payload = {"model": self.fingerprint(), "search": search.model_dump(mode="json")}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def batch_size(self) -> int:
        return self._batch_size

    @property
    def device(self) -> str:
        if self._device is None:
            self._device = pick_device_and_threads(self.device_arg, self.name, self.threads)
        return self._device

    def info(self) -> dict[str, Any]:
        import torch
        import transformers

        config = read_config(self.folder)
        out = {
            "pretrained": self.pretrained,
            "path": str(self.folder),
            "model_type": config.get("model_type"),
            "base_fingerprint": self.base_fingerprint(),
            "head": self._head,
            "labels": self._labels,
            "added_tokens": self._added_tokens,
            "max_length": self._max_length,
            "device": self.device,
            "dtype": self.dtype_name,
            "group_by_length": self.group_by_length,
            "checkpoint_cache": "persistent" if self.use_cache else "temporary (--no-cache)",
            "checkpoints": self._checkpoints,
            "inputs": dict(self._counts),
            "trainer": TRAINER_VERSION,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        }
        if self.model is not None:
            out["parameters"] = sum(p.numel() for p in self.model.parameters())
        return out

    # ------------------------------------------------------------------ loading

    def _load_tokenizer(self, source: Path):
        from transformers import AutoTokenizer

        model_type = read_config(self.folder).get("model_type")
        kwargs = {"trust_remote_code": self.trust_remote_code}
        if model_type in _PREFIX_SPACE_TYPES:
            kwargs["add_prefix_space"] = True
        tokenizer = AutoTokenizer.from_pretrained(str(source), **kwargs)
        if not getattr(tokenizer, "is_fast", False):
            raise AdapterError(
                f"model '{self.pretrained}': its tokenizer has no fast (Rust) version, which word alignment needs",
                hint="use a model folder with a tokenizer.json",
            )
        return tokenizer

    def _effective_max_length(self, requested: int) -> int:
        config = read_config(self.folder)
        limit = config.get("max_position_embeddings")
        if isinstance(limit, int) and limit > 0:
            if config.get("model_type") in _POSITION_OFFSET_TYPES:
                limit -= 2
            return min(requested, limit)
        return requested

    def _build_model(self, source: Path, head: str, labels: list[str], dropout: float | None, seed: int, n_tokens: int | None):
        import torch
        import transformers
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoModelForTokenClassification

        config = AutoConfig.from_pretrained(
            str(source),
            num_labels=len(labels),
            id2label=dict(enumerate(labels)),
            label2id={label: i for i, label in enumerate(labels)},
            trust_remote_code=self.trust_remote_code,
        )
        if dropout is not None:
            for attr in ("classifier_dropout", "cls_dropout", "pooler_dropout"):
                setattr(config, attr, dropout)
        cls = AutoModelForTokenClassification if head == "token" else AutoModelForSequenceClassification
        torch.manual_seed(seed)  # the new head's initialisation depends on the seed only
        verbosity = transformers.logging.get_verbosity()
        transformers.logging.set_verbosity_error()
        try:
            with loading_model():  # read on the CPU: the new head's initialisation stays the same on every device
                model = cls.from_pretrained(str(source), config=config, trust_remote_code=self.trust_remote_code)
            if n_tokens is not None and n_tokens != model.get_input_embeddings().weight.shape[0]:
                model.resize_token_embeddings(n_tokens)  # its "new embeddings" notice on every fine-tune: silenced
        finally:
            transformers.logging.set_verbosity(verbosity)
        return model

    # ------------------------------------------------------------------ fit

    def fit(self, training: Training | None) -> None:
        training, parts, key = self._fit_plan(training)
        head, labels, max_length, markers = parts["head"], parts["labels"], parts["max_length"], bool(parts["markers"])
        self._head, self._labels, self._max_length = head, labels, max_length
        if self._key == key and self.model is not None:
            self._seed = training.seed
            return
        store = CheckpointStore(persistent=self.use_cache)
        found = store.find(key)
        record: dict[str, Any] = {"key": key}
        if found is not None:
            started = time.perf_counter()
            self.tokenizer = self._load_tokenizer(found)
            self.model = self._build_model(found, head, labels, None, training.seed, None)
            record.update(store.meta(key).get("summary", {}))
            record.update({"cached": True, "load_s": round(time.perf_counter() - started, 3)})
        elif self.search:
            summary = self._search_and_train(training, key, store, parts, head, labels, markers, max_length)
            record.update({"cached": False, **summary})
        else:
            summary = self._train(training, key, store, parts, head, labels, markers, max_length)
            record.update({"cached": False, **summary})
        self._added_tokens = list(MARKERS) if markers else []
        self._marker_ids = tuple(self.tokenizer.convert_tokens_to_ids(list(MARKERS))) if markers else ()
        self.model.to(self.device)
        self.model.eval()
        self._key, self._seed = key, training.seed
        self._checkpoints[str(training.seed)] = record

    def cached_checkpoint(self, training: Training | None) -> Path | None:
        """The finished checkpoint ``fit`` would load for ``training`` (None: ``fit`` would train one): what a
        reproduction of a stored run (`metabench.launch.reproduce`), which never trains, asks first."""
        return CheckpointStore(persistent=self.use_cache).find(self._fit_plan(training)[2])

    def _fit_plan(self, training: Training | None) -> tuple[Training, dict, str]:
        """(the training ``fit`` uses, budget applied; the checkpoint key's parts; the key)."""
        if training is None or not training.requests:
            raise AdapterError(
                f"model '{self.name}' is fine-tuned in-suite and needs the task's training split, which this task lacks",
                hint="give the task `splits.train`, or evaluate it with a decoder or a baseline",
            )
        if self.max_train is not None or self.recipe:
            training = apply_budget(training, self.max_train, self.recipe)
        first = training.requests[0]
        head = "token" if isinstance(first, TagRequest) else "sequence"
        labels = list(training.labels) or sorted({g for g in training.golds})
        finetune = training.protocol.finetune
        max_length = self._effective_max_length(self.max_length or finetune.max_length)
        markers = head == "sequence" and any(
            m in text for r in [*training.requests, *training.validation_requests]
            for text in (r.text, r.text_pair) if text for m in MARKERS
        )
        parts = {
            "base": self.base_fingerprint(),
            "data_hash": training.data_hash,
            "content": content_hash(training),
            "labels": labels,
            "head": head,
            "finetune": finetune.model_dump(mode="json"),
            "max_length": max_length,
            "group_by_length": self.group_by_length,
            "markers": list(MARKERS) if markers else [],
            "dtype": self.dtype_name,
            "seed": training.seed,
        }
        if self.search:
            parts["search"] = {**self._search_settings(training).model_dump(mode="json"), "cpus": self.search_cpus}
        return training, parts, checkpoint_key(parts)

    def _encode_training(self, requests, golds, head, label_ids, max_length) -> list[dict]:
        features = []
        for request, gold in zip(requests, golds):
            if head == "token":
                if len(gold) != len(request.words):
                    raise AdapterError(f"a training sentence has {len(request.words)} words but {len(gold)} tags")
                unknown = [t for t in gold if t not in label_ids]
                if unknown:
                    raise AdapterError(f"training tag '{unknown[0]}' is not in the task's labels {list(label_ids)}")
                encoded = encode_words(self.tokenizer, request.words, max_length, overlap=0.0)
                for window, labels in zip(encoded.windows, word_labels(encoded, gold, label_ids)):
                    features.append({"input_ids": window.input_ids, "labels": labels})
            else:
                if gold not in label_ids:
                    raise AdapterError(f"training label '{gold}' is not in the task's labels {list(label_ids)}")
                encoded = encode_text(self.tokenizer, request.text, request.text_pair, max_length, self._marker_ids)
                feature = {"input_ids": encoded.input_ids, "labels": label_ids[gold]}
                if encoded.token_type_ids is not None:
                    feature["token_type_ids"] = encoded.token_type_ids
                features.append(feature)
        return features

    def _train(self, training, key, store, parts, head, labels, markers, max_length, extra=None) -> dict:
        """Fit and save under ``key``; ``extra()``: more facts for the summary, computed on the trained model."""
        finetune = training.protocol.finetune
        select = finetune.select_metric if training.validation_requests else None
        summary = self._fit_model(training, head, labels, markers, max_length, select=select, store=store, key=key,
                                  after_epoch=self._after_epoch)
        summary.update(extra() if extra is not None else {})
        model = self.model

        def write(tmp: Path) -> dict:
            model.save_pretrained(str(tmp), safe_serialization=True)
            self.tokenizer.save_pretrained(str(tmp))
            return {"parts": parts, "summary": summary}

        store.save(key, write)
        store.drop_partial(key)
        return summary

    def _fit_model(self, training, head, labels, markers, max_length, *, select, store, key, after_epoch) -> dict:
        """Load the tokenizer and a fresh model, fine-tune it on ``training`` (:func:`finetune.train`)."""
        started = time.perf_counter()
        finetune = training.protocol.finetune
        seed = training.seed
        self.tokenizer = self._load_tokenizer(self.folder)
        if markers:
            self.tokenizer.add_tokens(list(MARKERS), special_tokens=True)
            self._marker_ids = tuple(self.tokenizer.convert_tokens_to_ids(list(MARKERS)))
        else:
            self._marker_ids = ()
        model = self._build_model(self.folder, head, labels, finetune.dropout, seed, len(self.tokenizer) if markers else None)
        model.to(self.device)
        self.model = model
        label_ids = {label: i for i, label in enumerate(labels)}
        features = self._encode_training(training.requests, training.golds, head, label_ids, max_length)
        summary = train(
            model,
            features,
            collate=lambda batch: self._collate(batch, head, with_labels=True),
            schedule=Schedule.from_finetune(finetune, MAX_GRAD_NORM),
            seed=seed,
            lengths=[len(f["input_ids"]) for f in features] if self.group_by_length else None,
            selection=Selection(select, lambda: self._validate(training, select)) if select else None,
            store=store,
            key=key,
            autocast=self._autocast(training=True),
            progress=self.progress,
            label=f"fine-tune {Path(str(self.pretrained)).name} seed {seed}",
            after_epoch=after_epoch,
        )
        summary.update(train_examples=len(training.requests), train_features=len(features),
                       fit_s=round(time.perf_counter() - started, 3))
        return summary

    # ------------------------------------------------------------------ search

    def _search_settings(self, training: Training):
        search = getattr(training.protocol, "search", None)
        if search is None:
            raise UnsupportedError(
                f"model '{self.name}' was asked to search (search=true), and this task has no protocol.encoder.search",
                hint="add a search block to the task (the artifacts plugin's tasks/artifacts/_boisson.yaml has the paper's), or drop search=true",
                reason="no protocol.encoder.search",
            )
        if not training.validation_requests:
            raise UnsupportedError(
                f"model '{self.name}': the search scores trials on the validation split, which this task lacks",
                hint="give the task `splits.validation`, or drop search=true", reason="search needs a validation split",
            )
        return searching.reduced(search, **self.search_budget)

    def _search_and_train(self, training, key, store, parts, head, labels, markers, max_length) -> dict:
        """Trials on Ray Tune, then the best configuration trained and saved under ``key`` like any fit (on a
        CPU the final fit repeats the best trial's training exactly: same seed, data order and weights)."""
        search = self._search_settings(training)
        finetune = training.protocol.finetune
        scratch = Path(tempfile.mkdtemp(prefix="metabench-search-"))
        job = _TrialJob(adapter=self._trial_copy(), training=dataclasses.replace(
            training, requests=list(training.requests), validation_requests=list(training.validation_requests)),
            head=head, labels=labels, markers=markers, max_length=max_length, metric=search.metric,
            checkpoint=searching.pauses(search), scratch=str(scratch / "trials"))
        from ray import tune

        try:
            record = searching.run(
                search, tune.with_parameters(_run_trial, job=job), metric=search.metric, seed=training.seed,
                default_epochs=finetune.epochs, cpus=self.search_cpus, cpus_per_trial=max(1, self.threads or 1),
                gpus_per_trial=1 if self.device.startswith("cuda") else 0, storage=scratch / "ray",
                best_epoch=finetune.select_metric is not None,
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        final = _with_config(training, record["best"]["config"])

        def facts() -> dict:  # the final model's own validation score: the best trial's, when it repeats it
            scores = self._validate(final, search.metric)
            return {"search": {**record, "final_validation": scores[search.metric]}, "trained_seed": final.seed}

        return self._train(final, key, store, parts, head, labels, markers, max_length, extra=facts)

    def _trial_copy(self) -> HFEncoder:
        """This adapter without model, tokenizer or registry: what a trial worker unpickles."""
        clone = copy.copy(self)
        clone.registry, clone.model, clone.tokenizer, clone._device = None, None, None, None
        clone._checkpoints, clone._counts, clone.progress = {}, dict(self._counts), False
        return clone

    def _trial(self, job: _TrialJob, config: dict) -> None:
        """One search trial in a Ray worker: the task's recipe with the trial's values, trained on the train split,
        reporting the validation scores after every epoch (the scheduler may stop or pause it there)."""
        training = _with_config(job.training, config)
        from ray import tune

        trial_id = tune.get_context().get_trial_id()
        reporter = searching.TrialReporter(Path(job.scratch) / trial_id, job.checkpoint)
        self._fit_model(training, job.head, job.labels, job.markers, job.max_length, select=None, store=reporter,
                        key=trial_id, after_epoch=lambda epoch: reporter.report(epoch + 1, self._validate(training, job.metric)))

    def _after_epoch(self, epoch: int) -> None:
        """Hook for tests (simulating an interrupt after an epoch)."""

    def _validate(self, training, select) -> dict[str, float]:
        preds, loss = self._predict_requests(training.validation_requests, shown="scoring the validation split",
                                             golds=training.validation_golds if select == "loss" else None)
        scores: dict[str, float] = {}
        if loss is not None:
            scores["loss"] = loss
        if select != "loss":
            if training.score_validation is not None:
                scores.update(training.score_validation(preds))
            elif self.registry is not None:
                fn = self.registry.resolve("metric", select)
                scores[select] = float(fn(list(training.validation_golds), preds))
            if select not in scores:
                raise AdapterError(
                    f"finetune.select_metric '{select}' is not among the task's validation scores",
                    hint=f"use one of: loss, {', '.join(sorted(scores))}",
                )
        return {k: float(v) for k, v in scores.items() if isinstance(v, (int, float))}

    # ------------------------------------------------------------------ predict

    def _autocast(self, training: bool):
        import contextlib

        import torch

        dtype = torch_dtype(self.dtype_name, self.device)
        if dtype == torch.float32 or (training and dtype == torch.float16):
            return contextlib.nullcontext()
        device_type = "cuda" if self.device.startswith("cuda") else "cpu"
        return torch.autocast(device_type=device_type, dtype=dtype)

    def _collate(self, features: list[dict], head: str, with_labels: bool) -> dict:
        import torch

        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        width = max(len(f["input_ids"]) for f in features)
        ids = [f["input_ids"] + [pad] * (width - len(f["input_ids"])) for f in features]
        mask = [[1] * len(f["input_ids"]) + [0] * (width - len(f["input_ids"])) for f in features]
        batch = {
            "input_ids": torch.tensor(ids, dtype=torch.long, device=self.device),
            "attention_mask": torch.tensor(mask, dtype=torch.long, device=self.device),
        }
        if "token_type_ids" in features[0]:
            types = [f["token_type_ids"] + [0] * (width - len(f["token_type_ids"])) for f in features]
            batch["token_type_ids"] = torch.tensor(types, dtype=torch.long, device=self.device)
        if with_labels:
            if head == "token":
                labels = [f["labels"] + [IGNORE] * (width - len(f["labels"])) for f in features]
            else:
                labels = [f["labels"] for f in features]
            batch["labels"] = torch.tensor(labels, dtype=torch.long, device=self.device)
        return batch

    def _forward(self, features: list[dict], head: str, with_labels: bool = False, shown: str | None = None):
        """Predicted label ids per feature (per position for tokens), and the summed loss if labels are given.
        ``shown``: a progress meter of the inputs under that name (the validation split scored after an epoch
        takes minutes, and a run's log must say how far it has come)."""
        import torch

        from .. import progress

        order = sorted(range(len(features)), key=lambda i: len(features[i]["input_ids"]))
        out: list = [None] * len(features)
        size = max(1, self._batch_size)
        loss_sum, loss_n = 0.0, 0
        model = self.model
        was_training = model.training
        model.eval()
        meter = progress.meter(len(order), shown, "input", bars=False) if shown else None
        with torch.inference_mode(), self._autocast(training=False), (meter or contextlib.nullcontext()):
            for start in range(0, len(order), size):
                chunk = order[start : start + size]
                batch = self._collate([features[i] for i in chunk], head, with_labels)
                result = model(**batch)
                if with_labels:
                    n = int((batch["labels"] != IGNORE).sum()) if head == "token" else len(chunk)
                    loss_sum += float(result.loss) * n
                    loss_n += n
                argmax = result.logits.argmax(dim=-1).tolist()
                for i, pred in zip(chunk, argmax):
                    out[i] = pred
                if meter is not None:
                    meter.update(len(chunk))
        if was_training:
            model.train()
        return out, (loss_sum / loss_n if loss_n else None)

    def _predict_requests(self, requests: list, golds: list | None = None, count: bool = False,
                          shown: str | None = None):
        """Predictions for ``requests`` (and the mean loss when ``golds`` are given); ``count``: record input facts;
        ``shown``: a progress meter's name (:meth:`_forward`)."""
        if self._head == "token":
            return self._predict_tokens(requests, golds, count, shown)
        return self._predict_sequences(requests, golds, count, shown)

    def _predict_tokens(self, requests: list, golds: list | None, count: bool, shown: str | None = None):
        """One label per word: sentences longer than the model are split into overlapping windows."""
        label_ids = {label: i for i, label in enumerate(self._labels)}
        encoded = [encode_words(self.tokenizer, r.words, self._max_length, overlap=PREDICT_OVERLAP) for r in requests]
        features = []
        for index, enc in enumerate(encoded):
            tags = word_labels(enc, golds[index], label_ids) if golds is not None else None
            for w, window in enumerate(enc.windows):
                feature = {"input_ids": window.input_ids}
                if tags is not None:
                    # loss on the words this window owns, so overlapping windows count each word once
                    labels = [IGNORE] * len(window.input_ids)
                    for offset, pos in enumerate(window.first):
                        if enc.owner[window.start + offset] == w:
                            labels[pos] = tags[w][pos]
                    feature["labels"] = labels
                features.append(feature)
        preds, loss = (self._forward(features, "token", with_labels=golds is not None, shown=shown) if features
                       else ([], None))
        out, cursor = [], 0
        for enc in encoded:
            window_preds = preds[cursor : cursor + len(enc.windows)]
            cursor += len(enc.windows)
            ids = collect_word_predictions(enc, window_preds) if enc.n_words else []
            out.append(tuple(self._labels[i] for i in ids))
            if count:
                self._counts["windowed_sentences"] += int(enc.windowed)
                self._counts["clipped_words"] += enc.clipped_words
                self._counts["unk_words"] += enc.unk_words
        return out, loss

    def _predict_sequences(self, requests: list, golds: list | None, count: bool, shown: str | None = None):
        """One label per text (or text pair); inputs longer than the model are truncated and counted."""
        label_ids = {label: i for i, label in enumerate(self._labels)}
        features = []
        for index, request in enumerate(requests):
            encoded = encode_text(self.tokenizer, request.text, request.text_pair, self._max_length, self._marker_ids)
            feature = {"input_ids": encoded.input_ids}
            if encoded.token_type_ids is not None:
                feature["token_type_ids"] = encoded.token_type_ids
            if golds is not None:
                feature["labels"] = label_ids[golds[index]]
            if count and encoded.truncated:
                self._counts["truncated_inputs"] += 1
            features.append(feature)
        preds, loss = self._forward(features, "sequence", with_labels=golds is not None, shown=shown)
        return [self._labels[p] for p in preds], loss

    def predict(self, requests, seed):
        if self.model is None or self._seed != seed:
            raise AdapterError(f"model '{self.name}': predict(seed={seed}) before fit for that seed")
        preds, _ = self._predict_requests(list(requests), count=True)
        self._counts["predicted_items"] += len(requests)
        return preds
