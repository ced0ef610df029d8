"""``hf-decoder:...,finetune=true``: a causal LM fine-tuned in-suite as a tagger, decoding under a constraint.

The protocol of Meta4XNLI's decoder rows (Tables 12-13), after García-Ferrero et al. (2024): the model reads an
instruction and the sentence, and writes the sentence back with the tagged words wrapped in tags. Targets and
the decoding constraint are built from the same token pieces (:mod:`metabench.models.tag_grammar`), so every
output copies the input words in order and maps back to one BIO tag per word; the tagging metrics score it as
they score an encoder.

How it runs, per (task, seed), under the task's ``protocol.decoder_finetune`` (family ``decoder_finetune``):

- ``fit``: LoRA adapters (``peft``) or every weight trained through the shared loop
  (:func:`metabench.models.finetune.train`), loss on the output tokens only; the result is cached as the encoders'
  checkpoints are (:mod:`metabench.models.checkpoints`), keyed by base model, training data, hyperparameters,
  method, prompt, tags and seed. A LoRA checkpoint holds the adapters only.
- ``predict``: batched (left-padded) constrained decoding: whatever the model prefers, only the grammar's next ids
  can be written. Greedy (``beams`` 1, the tasks' choice): :func:`greedy_decode`, a decode loop of its own with the
  key/value cache and the grammar's state on the device and no host check per step (``generate`` reads whether
  every row has finished after every step); a beam search: ``generate`` with :class:`GrammarProcessor` as the
  last logits processor. The ids are the same either way for greedy decoding.
- Device and precision: the GPU when there is one, in bfloat16 where it supports it (``dtype=auto``), float32 on
  the CPU; ``device=`` and ``dtype=`` override.

Arguments besides ``pretrained`` and ``finetune=true``: ``method`` (``lora``/``full``) and ``beams`` override the
task's choices; the budget knobs ``max_train`` (the first N training sentences), ``epochs``, ``lr`` and
``warmup_ratio`` replace the task's recipe (a run using them is a budget run and says so in ``info``);
``batch_size`` (prediction), ``device``, ``dtype``, ``threads``, ``revision``, ``trust_remote_code``, ``cache``;
``max_new_tokens`` caps every output's ids below the grammar's longest (an output cut short is read back repaired;
``info`` names the cap: ``benchmarks/gpu_check.py`` caps at the gold tagged copies' length with it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..errors import AdapterError
from ..requests import TagRequest, Training
from .base import Adapter, AdapterSettings
from .checkpoints import CheckpointStore, checkpoint_key
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
    resolve_pretrained,
    torch_dtype,
    weights_placement,
)
from .kv_cache import cache_argument, returned_cache
from .training_budget import apply_budget, content_hash
from .tag_grammar import Grammar, span_types

TRAINER_VERSION = "hf-decoder-tagger/1"
IGNORE = -100
MAX_GRAD_NORM = 1.0
#: Arguments that cannot change answers (left out of the fingerprint).
_NOT_FINGERPRINTED = ("batch_size", "cache", "device", "threads", "finetune")
_BUDGET = ("max_train", "epochs", "lr", "warmup_ratio")


class DecoderTagger(Adapter):
    name = "hf-decoder"
    family = "decoder_finetune"
    serves = (TagRequest,)
    positional_arg = "pretrained"
    seeded = True
    needs_training = True
    default_batch_size = 64
    allowed_args = ("pretrained", "finetune", "revision", "device", "dtype", "batch_size", "threads", "cache",
                    "trust_remote_code", "method", "beams", "max_new_tokens", *_BUDGET)

    def __init__(self, args: dict[str, str], *, registry=None, settings: AdapterSettings | None = None):
        super().__init__(args, registry=registry, settings=settings)
        if not self.args.get("pretrained"):
            raise AdapterError(f"model '{self.name}' needs pretrained=",
                               hint=f"e.g. --model {self.name}:smollm2-135m,finetune=true")
        self.revision = self.args.get("revision") or None
        self.dtype_name = parse_dtype(self.args.get("dtype", "auto"), self.name)
        self._batch_size = parse_int(self.args.get("batch_size", self.default_batch_size), "batch_size", self.name)
        self.threads = parse_int(self.args["threads"], "threads", self.name) if "threads" in self.args else None
        self.trust_remote_code = parse_bool(self.args.get("trust_remote_code", False), "trust_remote_code", self.name)
        if "cache" in self.args and not parse_bool(self.args["cache"], "cache", self.name):
            self.use_cache = False
        self.method = self.args.get("method")
        if self.method not in (None, "lora", "full"):
            raise AdapterError(f"model '{self.name}': method={self.method} is not lora or full", hint="method=lora")
        self.beams = parse_int(self.args["beams"], "beams", self.name) if "beams" in self.args else None
        self.max_new_tokens = (parse_int(self.args["max_new_tokens"], "max_new_tokens", self.name)
                               if "max_new_tokens" in self.args else None)
        self.max_train = parse_int(self.args["max_train"], "max_train", self.name) if "max_train" in self.args else None
        self.recipe = {k: parse_float(self.args[k], k, self.name) for k in ("epochs", "lr", "warmup_ratio") if k in self.args}
        if not all(self.recipe.get(k, 1.0) > 0 for k in ("epochs", "lr")) or not 0 <= self.recipe.get("warmup_ratio", 0) < 1:
            raise AdapterError(f"model '{self.name}': epochs and lr must be positive, warmup_ratio in [0, 1)")
        self._folder: Path | None = None
        self._base_fingerprint: str | None = None
        self._device: str | None = None
        self.model = None
        self.tokenizer = None
        self._key: str | None = None
        self._seed: int | None = None
        self._protocol = None
        self._beams = 1
        self._word_ids: dict[str, tuple[int, ...]] = {}
        self._checkpoints: dict[str, dict] = {}
        self._trainable_parameters = 0
        self._counts = {"predicted_items": 0, "repaired_outputs": 0, "generated_tokens": 0, "predict_s": 0.0}

    # ------------------------------------------------------------------ identity

    @property
    def folder(self) -> Path:
        if self._folder is None:
            self._folder = resolve_pretrained(self.args["pretrained"], self.registry, self.revision).folder
        return self._folder

    def use_resolved(self, pretrained) -> None:
        """Take a resolution already made (``hf:`` resolves the name to read the model's family)."""
        self._folder = pretrained.folder

    def base_fingerprint(self) -> str:
        if self._base_fingerprint is None:
            self._base_fingerprint = folder_fingerprint(self.folder)
        return self._base_fingerprint

    def fingerprint(self) -> str:
        args = {k: v for k, v in sorted(self.args.items()) if k not in _NOT_FINGERPRINTED and k != "pretrained"}
        return adapter_fingerprint(self.name, TRAINER_VERSION, self.base_fingerprint(), args)

    def batch_size(self) -> int:
        return self._batch_size

    @property
    def device(self) -> str:
        if self._device is None:
            self._device = pick_device_and_threads(self.args.get("device"), self.name, self.threads)
        return self._device

    def info(self) -> dict[str, Any]:
        import torch
        import transformers

        out: dict[str, Any] = {
            "pretrained": self.args["pretrained"], "path": str(self.folder), "base_fingerprint": self.base_fingerprint(),
            "trainer": TRAINER_VERSION, "device": self.device, "dtype": str(torch_dtype(self.dtype_name, self.device)),
            "method": self._method(), "beams": self._beams, "checkpoints": self._checkpoints,
            "checkpoint_cache": "persistent" if self.use_cache else "temporary (--no-cache)",
            "outputs": {**self._counts, "predict_s": round(self._counts["predict_s"], 3)},
            "torch": torch.__version__, "transformers": transformers.__version__,
        }
        budget = {k: self.args[k] for k in _BUDGET if k in self.args}
        if budget:  # the task's recipe was not followed: every view showing this run must say so
            out["budget"] = budget
        if self.max_new_tokens is not None:  # outputs cut short are read back repaired (outputs.repaired_outputs)
            out["decode_cap"] = {"max_new_tokens": self.max_new_tokens}
        if self.model is not None:
            out["parameters"] = sum(p.numel() for p in self.model.parameters())
            out["trainable_parameters"] = self._trainable_parameters
        return out

    def _method(self) -> str | None:
        return self.method or (self._protocol.method if self._protocol is not None else None)

    # ------------------------------------------------------------------ pieces and prompts

    def _words(self, words) -> list[tuple[int, ...]]:
        out = []
        for word in words:
            ids = self._word_ids.get(word)
            if ids is None:
                ids = self._word_ids[word] = tuple(self.tokenizer(" " + word, add_special_tokens=False)["input_ids"])
            out.append(ids)
        return out

    def _grammar(self, request: TagRequest) -> Grammar:
        protocol, encode = self._protocol, lambda text: tuple(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        types = span_types(request.labels)
        names = {t: protocol.tags.get(t, t.lower()) for t in types}
        return Grammar(self._words(request.words), {t: encode(f" <{n}>") for t, n in names.items()},
                       {t: encode(f" </{n}>") for t, n in names.items()}, self.tokenizer.eos_token_id)

    def _prompt(self, words) -> list[int]:
        """Instruction and sentence, in the model's chat template when the protocol asks and the model has one
        (the instruction as the system message; folded into the user turn where the template has no system)."""
        protocol, tokenizer, sentence = self._protocol, self.tokenizer, " ".join(words)
        if protocol.chat_template and getattr(tokenizer, "chat_template", None):
            try:
                text = tokenizer.apply_chat_template(
                    [{"role": "system", "content": protocol.instruction}, {"role": "user", "content": sentence}],
                    tokenize=False, add_generation_prompt=True)
            except Exception:  # noqa: BLE001 - templates without a system role raise their own errors
                text = tokenizer.apply_chat_template([{"role": "user", "content": f"{protocol.instruction}\n\n{sentence}"}],
                                                     tokenize=False, add_generation_prompt=True)
            return tokenizer(text, add_special_tokens=False)["input_ids"]
        return tokenizer(f"{protocol.instruction}\n{sentence}\n", add_special_tokens=True)["input_ids"]

    # ------------------------------------------------------------------ fit

    def fit(self, training: Training | None) -> None:
        if training is None or not training.requests:
            raise AdapterError(f"model '{self.name}' with finetune=true learns from the task's training split, which "
                               "this task lacks", hint="give the task `splits.train`, or drop finetune=true")
        if self.max_train is not None or self.recipe:
            training = apply_budget(training, self.max_train, self.recipe)
        protocol = training.protocol
        self._protocol, self._beams = protocol, self.beams or protocol.beams
        method = self._method()
        parts = {
            "trainer": TRAINER_VERSION, "base": self.base_fingerprint(), "data_hash": training.data_hash,
            "content": content_hash(training), "labels": list(training.labels),
            "finetune": protocol.finetune.model_dump(mode="json"), "method": method,
            "lora": protocol.lora.model_dump(mode="json") if method == "lora" else None,
            "prompt": [protocol.instruction, protocol.chat_template], "tags": protocol.tags,
            "dtype": self.dtype_name, "seed": training.seed,
        }
        key = checkpoint_key(parts)
        if self._key == key and self.model is not None:
            self._seed = training.seed
            return
        store = CheckpointStore(persistent=self.use_cache)
        record: dict[str, Any] = {"key": key}
        started = time.perf_counter()
        self.tokenizer = self._load_tokenizer()
        found = store.find(key)
        if found is not None:
            self.model = self._load_trained(found, method)
            record.update(store.meta(key).get("summary", {}))
            record.update({"cached": True, "load_s": round(time.perf_counter() - started, 3)})
        else:
            record.update({"cached": False, **self._train(training, key, store, parts, method)})
        # what training updates, counted before the adapters are folded into the weights (then none are left)
        self._trainable_parameters = sum(p.numel() for name, p in self.model.named_parameters()
                                         if method != "lora" or "lora_" in name)
        if method == "lora":  # the adapters folded into the weights: decoding runs the plain model
            self.model = self.model.merge_and_unload()
        self.model.eval()
        self._key, self._seed = key, training.seed
        self._checkpoints[str(training.seed)] = record

    def _load_tokenizer(self):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(self.folder), trust_remote_code=self.trust_remote_code)
        if tokenizer.eos_token_id is None:
            raise AdapterError(f"model '{self.args['pretrained']}': its tokenizer has no end-of-sequence token",
                               hint="the tagged copy ends with it; use a causal LM with an eos token")
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        return tokenizer

    def _load_base(self, folder: Path | None = None):
        """The causal LM from ``folder`` (default: the base model's), in the run's dtype, on its device."""
        import transformers
        from transformers import AutoModelForCausalLM

        verbosity = transformers.logging.get_verbosity()
        transformers.logging.set_verbosity_error()
        try:
            dtype = torch_dtype(self.dtype_name, self.device)
            name = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"  # renamed in 5
            with loading_model():
                model = AutoModelForCausalLM.from_pretrained(str(folder or self.folder), trust_remote_code=self.trust_remote_code,
                                                             **{name: dtype}, **weights_placement(self.device))
        finally:
            transformers.logging.set_verbosity(verbosity)
        return model.to(self.device)

    def _load_trained(self, folder: Path, method: str):
        if method == "lora":
            from peft import PeftModel

            base = self._load_base()
            with loading_model():
                return PeftModel.from_pretrained(base, str(folder)).to(self.device)
        return self._load_base(folder)  # a full checkpoint is a model folder

    def _trainable(self, seed: int, method: str):
        import torch

        model = self._load_base()
        if method == "full":
            return model
        from peft import LoraConfig, get_peft_model

        lora = self._protocol.lora
        torch.manual_seed(seed)  # the adapters' initialisation depends on the seed only
        config = LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                            target_modules=lora.target_modules, task_type="CAUSAL_LM")
        return get_peft_model(model, config)

    def _features(self, requests, golds, max_length: int) -> list[dict]:
        features = []
        for request, gold in zip(requests, golds):
            if len(gold) != len(request.words):
                raise AdapterError(f"a training sentence has {len(request.words)} words but {len(gold)} tags")
            prompt, target = self._prompt(request.words), self._grammar(request).target(gold)
            if len(prompt) + len(target) > max_length:
                continue  # counted in the summary (dropped_long)
            features.append({"input_ids": prompt + target, "labels": [IGNORE] * len(prompt) + target})
        return features

    def _collate(self, features: list[dict]) -> dict:
        """One training batch, right-padded; its three tensors reach the device in one copy (from pinned memory
        on a GPU, without waiting: a tensor built on the device from lists would wait for the step before)."""
        from .prompt_sharing import to_device

        width, pad = max(len(f["input_ids"]) for f in features), self.tokenizer.pad_token_id
        rows = [(f["input_ids"], f["labels"], width - len(f["input_ids"])) for f in features]
        ids, mask, labels = to_device([
            [ids + [pad] * n for ids, _, n in rows],
            [[1] * len(ids) + [0] * n for ids, _, n in rows],
            [labels + [IGNORE] * n for _, labels, n in rows],
        ], self.device)
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}

    def _train(self, training: Training, key: str, store: CheckpointStore, parts: dict, method: str) -> dict:
        started = time.perf_counter()
        finetune = training.protocol.finetune
        self.model = self._trainable(training.seed, method)
        features = self._features(training.requests, training.golds, finetune.max_length)
        if not features:
            raise AdapterError(f"every training sentence is longer than max_length={finetune.max_length} tokens "
                               "(prompt + tagged copy)", hint="raise protocol.decoder_finetune.finetune.max_length")
        select = finetune.select_metric if training.validation_requests and training.score_validation else None
        summary = train(
            self.model, features, collate=self._collate, schedule=Schedule.from_finetune(finetune, MAX_GRAD_NORM),
            seed=training.seed, lengths=[len(f["input_ids"]) for f in features],
            selection=Selection(select, lambda: self._validate(training)) if select else None,
            store=store, key=key, progress=self.progress,
            label=f"fine-tune {Path(str(self.args['pretrained'])).name} ({method}) seed {training.seed}",
        )
        epochs = len(summary["history"]) or 1
        summary.update(train_examples=len(features), dropped_long=len(training.requests) - len(features),
                       epoch_s=round(summary["train_s"] / epochs, 3), fit_s=round(time.perf_counter() - started, 3))
        model, tokenizer = self.model, self.tokenizer

        def write(tmp: Path) -> dict:
            model.save_pretrained(str(tmp), safe_serialization=True)  # LoRA: the adapters only
            tokenizer.save_pretrained(str(tmp))
            return {"parts": parts, "summary": summary}

        store.save(key, write)
        store.drop_partial(key)
        return summary

    def _validate(self, training: Training) -> dict[str, float]:
        """The task's metrics on the validation split, decoded as the test split is (dropout off meanwhile)."""
        self.model.eval()
        try:
            return training.score_validation(self._generate(training.validation_requests))
        finally:
            self.model.train()

    # ------------------------------------------------------------------ predict

    def _generate(self, requests: list[TagRequest]) -> list[tuple[str, ...]]:
        """Constrained generation for ``requests``, in batches sorted by length; BIO tags per request. Greedy
        (``beams`` 1): :func:`greedy_decode`; a beam search: ``generate`` with :class:`GrammarProcessor`."""
        import torch
        from transformers import GenerationConfig

        from .grammar_processor import GrammarProcessor
        from .prompt_sharing import to_device

        order = sorted(range(len(requests)), key=lambda i: len(requests[i].words))
        out: list = [None] * len(requests)
        tokenizer, eos, pad = self.tokenizer, self.tokenizer.eos_token_id, self.tokenizer.pad_token_id
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            grammars = [self._grammar(requests[i]) for i in chunk]
            prompts = [self._prompt(requests[i].words) for i in chunk]
            width = max(map(len, prompts))
            ids = to_device([[pad] * (width - len(p)) + p for p in prompts], self.device)
            mask = to_device([[0] * (width - len(p)) + [1] * len(p) for p in prompts], self.device)
            longest = max(g.longest for g in grammars)
            if self.max_new_tokens is not None:
                longest = min(longest, self.max_new_tokens)
            with torch.inference_mode():
                if self._beams == 1:
                    rows = greedy_decode(self.model, ids, mask, grammars, eos, pad, longest)
                else:
                    config = GenerationConfig(num_beams=self._beams, do_sample=False, max_new_tokens=longest,
                                              eos_token_id=eos, pad_token_id=pad, bos_token_id=tokenizer.bos_token_id)
                    generated = self.model.generate(input_ids=ids, attention_mask=mask, generation_config=config,
                                                    logits_processor=[GrammarProcessor(grammars, width, self._beams, eos)])
                    rows = generated[:, width:].tolist()
            for i, grammar, new in zip(chunk, grammars, rows):
                tags, repaired = grammar.read(new)
                out[i] = tags
                self._counts["repaired_outputs"] += int(repaired)
                self._counts["generated_tokens"] += len(new[: new.index(eos) + 1] if eos in new else new)
        return out

    def predict(self, requests, seed):
        if self.model is None or self._seed != seed:
            raise AdapterError(f"model '{self.name}': predict(seed={seed}) before fit for that seed")
        started = time.perf_counter()
        tags = self._generate(list(requests))
        self._counts["predict_s"] += time.perf_counter() - started
        self._counts["predicted_items"] += len(requests)
        return tags


#: Decoding steps between two checks that every row has finished (the only host read of the decode loop).
CHECK_EVERY = 8


def greedy_decode(model, ids, mask, grammars: list[Grammar], eos: int, pad: int, max_new: int) -> list[list[int]]:
    """Greedy decoding of a left-padded batch under each row's grammar, the key/value cache carried from step to
    step and the grammar's state kept on the device (:class:`~metabench.models.grammar_processor.GrammarTables`):
    the ids ``generate`` with :class:`GrammarProcessor` writes (a finished row writes ``pad``), without its
    per-step host check. The host reads whether every row has finished only every :data:`CHECK_EVERY` steps,
    and only once no row can still be short of its grammar's shortest output; the loop never runs past
    ``max_new`` steps (at most the grammars' longest output). The ids come back in one read."""
    import inspect

    import torch

    from .grammar_processor import _DONE, GrammarTables

    device, rows = ids.device, ids.shape[0]
    tables = GrammarTables(grammars, eos, device)
    state = tables.starts
    positions = (mask.cumsum(-1) - 1).masked_fill_(mask == 0, 1)  # as generate numbers left-padded rows
    keep = {"logits_to_keep": 1} if "logits_to_keep" in inspect.signature(model.forward).parameters else {}
    out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **keep)
    argument, position = cache_argument(model), positions[:, -1:]
    generated = torch.full((rows, max_new), pad, dtype=torch.long, device=device)
    finished = torch.zeros(rows, dtype=torch.bool, device=device)
    ones = torch.ones((rows, 1), dtype=mask.dtype, device=device)
    first_check = max(g.shortest for g in grammars)  # no row can have finished before
    steps = 0
    for step in range(max_new):
        token = torch.where(finished, pad, tables.best(state, out.logits[:, -1].float()))
        generated[:, step] = token
        state = torch.where(finished, _DONE, tables.advance(state, token))
        finished |= token == eos
        steps = step + 1
        if steps == max_new or (steps >= first_check and (steps - first_check) % CHECK_EVERY == 0
                                and bool(finished.all())):
            break
        mask, position = torch.cat([mask, ones], 1), position + 1
        out = model(input_ids=token[:, None], attention_mask=mask, position_ids=position, use_cache=True,
                    **{argument: returned_cache(out)})
    return generated[:, :steps].tolist()
