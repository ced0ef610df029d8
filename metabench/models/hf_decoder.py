"""Decoders through lm-evaluation-harness: ``hf-decoder`` (``lm_eval.models.huggingface.HFLM``).

``LMEvalDecoder`` is the bridge every decoder backend shares (``vllm_decoder``, ``openai_decoder``): it
turns metabench requests into ``lm_eval.api.instance.Instance`` objects and calls the lm-eval model's
public ``loglikelihood`` and ``generate_until``:

- ``ChoiceRequest``: one ``loglikelihood`` instance per option (``(context, option)``, exactly what an
  lm-eval ``multiple_choice`` task sends), answer = argmax of the summed log-likelihoods (first on ties),
  returned with every option's log-likelihood and is-greedy flag.
- ``GenerateRequest``: one ``generate_until`` instance with ``until``, ``max_gen_toks``, ``temperature``
  (``do_sample`` when > 0). Sampling is seeded per batch from the run seed.
- ``RankRequest`` (MUNCH generation): the backend's next-token top-k, then greedy word completions.

With ``request.chat`` the prompt becomes a user message (and ``system`` a system message) in the model's
chat template, through lm-eval's ``apply_chat_template``; a model without a chat template gets the raw
prompt and ``info()`` says so. lm-eval, torch and transformers are imported only when the model is first
needed, so ``metabench --help`` stays light and a rerun served entirely from the answer cache never loads
the model.

``hf-decoder`` arguments (``--model hf-decoder:PRETRAINED,key=value,...``):
``pretrained`` (a folder, a registered short name such as ``smollm2-135m``, or a hub id), ``batch_size``
(``auto``: lm-eval's detection on a GPU, 8 on the CPU, where detection would allocate the model's full
context for 64 sequences), ``max_batch_size``, ``device`` (default ``cuda`` when available, else ``cpu``),
``dtype`` (``auto``, ``bfloat16``, ``float16``, ``float32``), ``max_length``, ``revision``, ``tokenizer``,
``trust_remote_code``, ``add_bos_token``, ``gguf_file``, ``peft``, ``parallelize``, ``chat_template``
(``task``: as the task says, default; ``on``; ``off``), ``chunk_size`` (requests per runner batch,
i.e. per cache commit; default 64).

The fingerprint hashes the adapter, the answer-changing arguments (not batch size or device) and the
sha256 of the model folder's config, tokenizer and weight files (cached by path, size and mtime), so a
moved or renamed folder keeps its cached answers and a changed checkpoint never reuses them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any, ClassVar

from ..errors import AdapterError, UnsupportedError
from ..requests import ChoiceRequest, GenerateRequest, RankRequest
from .base import Adapter

log = logging.getLogger("metabench.models.decoder")

#: Arguments that change how fast answers come, never which answers: left out of fingerprints.
RUNTIME_ARGS = frozenset({
    "batch_size", "max_batch_size", "device", "chunk_size", "parallelize", "num_concurrent", "timeout",
    "max_retries", "gpu_memory_utilization", "tensor_parallel_size", "data_parallel_size", "api_key_env",
    "swap_space", "enforce_eager",
})
_HASHED_SUFFIXES = (".json", ".safetensors", ".bin", ".gguf", ".model", ".jinja", ".txt", ".tiktoken", ".pt")
_BOOL = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}
WORD_STOPS = ('"', "\n", "*", "”")
_SHARED: dict = {}  # (adapter class, args) -> (loaded lm-eval model, facts recorded at load)


def as_bool(name: str, value) -> bool:
    if isinstance(value, bool):
        return value
    try:
        return _BOOL[str(value).strip().lower()]
    except KeyError:
        raise AdapterError(f"argument {name}={value!r} is not a boolean", hint=f"use {name}=true or {name}=false") from None


def as_int(name: str, value, *, allow_auto: bool = False):
    if allow_auto and str(value).strip().lower() == "auto":
        return "auto"
    try:
        return int(value)
    except (TypeError, ValueError):
        extra = " or 'auto'" if allow_auto else ""
        raise AdapterError(f"argument {name}={value!r} is not an integer{extra}") from None


# --------------------------------------------------------------------------------------- fingerprints


def _hash_file(path: Path) -> str:
    """sha256 of a file, cached by (path, size, mtime) under the metabench cache."""
    from ..cache import cache_root

    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    store = cache_root() / "fingerprints" / "files.json"
    try:
        known = json.loads(store.read_text())
    except (OSError, ValueError):
        known = {}
    if key in known:
        return known[key]
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    value = digest.hexdigest()
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        known[key] = value
        tmp = store.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, indent=0, sort_keys=True))
        tmp.replace(store)
    except OSError:
        pass
    return value


def folder_hashes(folder: Path) -> dict[str, str]:
    """sha256 of the files that decide a model's answers (config, tokenizer, weights) in a folder."""
    out = {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.suffix in _HASHED_SUFFIXES and not path.name.startswith("metabench-"):
            out[path.name] = _hash_file(path)
    return out


def resolve_pretrained(name: str) -> tuple[str, str | None]:
    """(what transformers loads, the registered short name if ``name`` was one)."""
    path = Path(name).expanduser()
    if path.exists():
        return str(path.resolve()), None
    try:
        from ..plugins import default_registry

        registry = default_registry()
        if registry.has("pretrained", name):
            return str(registry.resolve("pretrained", name)()), name
    except AdapterError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken builder is reported with the model's name
        raise AdapterError(f"pretrained model '{name}' could not be built: {type(exc).__name__}: {exc}") from exc
    return name, None


# --------------------------------------------------------------------------------------- the bridge


class LMEvalDecoder(Adapter):
    """Answers choice, generation and ranking requests through an lm-eval ``LM`` (subclasses build it)."""

    family: ClassVar[str] = "decoder"
    serves: ClassVar[tuple[type, ...]] = (ChoiceRequest, GenerateRequest, RankRequest)
    seeded: ClassVar[bool] = True
    positional_arg: ClassVar[str | None] = "pretrained"
    backend: ClassVar[str] = ""

    def __init__(self, args: dict[str, str]):
        super().__init__(args)
        self._lm = None
        self._facts: dict[str, Any] = {}
        mode = str(self.args.get("chat_template", "task")).lower()
        if mode not in ("task", "on", "off", "true", "false"):
            raise AdapterError(f"model '{self.name}': chat_template={mode!r} is not task, on or off")
        self.chat_mode = {"true": "on", "false": "off"}.get(mode, mode)
        self.chunk = as_int("chunk_size", self.args.get("chunk_size", 64))

    # -- the lm-eval model -------------------------------------------------------------------------

    @property
    def lm(self):
        """The lm-eval model, loaded on first use. The last model loaded in this process is kept, so the
        jobs of one run (many tasks, one --model) share it instead of loading it once per task."""
        if self._lm is None:
            key = (type(self).__name__, json.dumps(self.args, sort_keys=True))
            shared = _SHARED.get(key)
            if shared is not None:
                self._lm, facts = shared
                self._facts.update(facts, reused_loaded_model=True)
            else:
                _SHARED.clear()  # at most one model in memory
                started = time.perf_counter()
                self._lm = self._load()
                self._facts["load_s"] = round(time.perf_counter() - started, 3)
                _SHARED[key] = (self._lm, dict(self._facts))
        return self._lm

    def _load(self):
        raise NotImplementedError

    def batch_size(self) -> int:
        return max(1, self.chunk)

    def fingerprint(self) -> str:
        payload = {
            "adapter": self.name,
            "model": self._model_identity(),
            "args": {k: v for k, v in sorted(self.args.items()) if k not in RUNTIME_ARGS and k != "pretrained"},
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def _model_identity(self) -> Any:
        return self.args.get("pretrained")

    def info(self) -> dict[str, Any]:
        import importlib.metadata as md

        facts: dict[str, Any] = {"backend": self.backend}
        for package in ("lm_eval", "transformers", "torch", "vllm"):
            try:
                facts[f"{package}_version"] = md.version(package.replace("_", "-") if package == "lm_eval" else package)
            except md.PackageNotFoundError:
                pass
        facts.update(self._facts)
        facts["model_loaded"] = self._lm is not None
        return facts

    # -- requests ----------------------------------------------------------------------------------

    def _use_chat(self, request) -> bool:
        if self.chat_mode == "off":
            return False
        return self.chat_mode == "on" or bool(getattr(request, "chat", False))

    def has_chat_template(self) -> bool:
        return True

    def context(self, text: str, request) -> str:
        """The prompt as the model sees it: raw, or wrapped in the chat template."""
        if not self._use_chat(request):
            return text
        if not self.has_chat_template():
            self._facts["chat_template_missing"] = True
            return text
        messages = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": text})
        self._facts["chat_template_applied"] = True
        return self.lm.apply_chat_template(messages, add_generation_prompt=True)

    def predict(self, requests: list, seed: int) -> list[Any]:
        out: list[Any] = [None] * len(requests)
        by_type: dict[type, list[int]] = {}
        for index, request in enumerate(requests):
            by_type.setdefault(type(request), []).append(index)
        for kind, indices in by_type.items():
            batch = [requests[i] for i in indices]
            if kind is ChoiceRequest:
                answers = self.choose(batch)
            elif kind is GenerateRequest:
                answers = self.generate(batch, seed)
            elif kind is RankRequest:
                answers = self.rank(batch)
            else:
                raise UnsupportedError(f"model '{self.name}' cannot answer {kind.__name__}")
            for index, answer in zip(indices, answers):
                out[index] = answer
        return out

    def choose(self, requests: list[ChoiceRequest]) -> list[dict]:
        from lm_eval.api.instance import Instance

        instances, owners = [], []
        for r_index, request in enumerate(requests):
            context = self.context(request.context, request)
            for o_index, option in enumerate(request.options):
                instances.append(Instance("loglikelihood", {}, (context, option), idx=o_index,
                                          metadata=("metabench", r_index, 1)))
                owners.append(r_index)
        results = self.lm.loglikelihood(instances, disable_tqdm=True) if instances else []
        per_request: list[list[tuple[float, bool]]] = [[] for _ in requests]
        for owner, (ll, greedy) in zip(owners, results):
            per_request[owner].append((float(ll), bool(greedy)))
        answers = []
        for scores in per_request:
            lls = [s[0] for s in scores]
            best = max(range(len(lls)), key=lambda i: (lls[i], -i))
            answers.append({"index": best, "loglikelihoods": lls, "is_greedy": [s[1] for s in scores]})
        return answers

    def gen_kwargs(self, request: GenerateRequest, seed: int) -> dict:
        kwargs: dict[str, Any] = {
            "until": list(request.until),
            "max_gen_toks": int(request.max_new_tokens),
            "do_sample": request.temperature > 0,
            "temperature": float(request.temperature),
        }
        return kwargs

    def seed_sampling(self, seed: int, requests: list) -> None:
        """Seed the backend's sampler for one batch (HF: torch's global generator)."""

    def generate(self, requests: list[GenerateRequest], seed: int) -> list[str]:
        from lm_eval.api.instance import Instance

        self.seed_sampling(seed, requests)
        instances = [
            Instance("generate_until", {}, (self.context(r.prompt, r), self.gen_kwargs(r, seed)), idx=0,
                     metadata=("metabench", i, 1))
            for i, r in enumerate(requests)
        ]
        return [str(text) for text in self.lm.generate_until(instances, disable_tqdm=True)]

    def rank(self, requests: list[RankRequest]) -> list[list]:
        raise UnsupportedError(f"model '{self.name}' cannot rank next tokens (RankRequest)")


def wanted(token_text: str, complete: tuple[str, ...] | None) -> bool:
    """Whether a ranked token is completed: always without a filter, else when it begins an answer."""
    if complete is None:
        return True
    start = token_text.lstrip().casefold()
    return bool(start) and any(answer.casefold().startswith(start) for answer in complete)


def word_of(text: str) -> str:
    from ..kinds.parsers import extract_word

    return extract_word(text.lstrip())


def seed_from(seed: int, requests: list) -> int:
    key = "\x00".join(getattr(r, "key", "") for r in requests[:4])
    return int.from_bytes(hashlib.sha256(f"{seed}\x00{key}".encode()).digest()[:4], "big")


# --------------------------------------------------------------------------------------------- HFLM


class HFDecoder(LMEvalDecoder):
    name = "hf-decoder"
    backend = "lm_eval.models.huggingface.HFLM"
    allowed_args = (
        "pretrained", "batch_size", "max_batch_size", "device", "dtype", "max_length", "revision", "tokenizer",
        "trust_remote_code", "add_bos_token", "gguf_file", "peft", "parallelize", "chat_template", "chunk_size",
    )

    def __init__(self, args: dict[str, str]):
        super().__init__(args)
        if not self.args.get("pretrained"):
            raise AdapterError(
                f"model '{self.name}' needs a model: --model {self.name}:PATH_OR_NAME",
                hint="e.g. --model hf-decoder:smollm2-135m (`metabench ls pretrained` lists short names)",
            )
        self.batch = as_int("batch_size", self.args.get("batch_size", "auto"), allow_auto=True)
        self._path: str | None = None
        self._short: str | None = None

    @property
    def path(self) -> str:
        if self._path is None:
            self._path, self._short = resolve_pretrained(self.args["pretrained"])
        return self._path

    def _model_identity(self) -> Any:
        folder = Path(self.path)
        if folder.is_dir():
            return {"files": folder_hashes(folder), "gguf_file": self.args.get("gguf_file")}
        return {"hub": self.path, "revision": self.args.get("revision", "main")}

    def _load(self):
        import torch
        from lm_eval.models.huggingface import HFLM

        device = self.args.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
        batch = self.batch
        if batch == "auto" and not str(device).startswith("cuda"):
            batch = 8
        kwargs: dict[str, Any] = {
            "pretrained": self.path,
            "device": device,
            "batch_size": batch,
            "max_batch_size": as_int("max_batch_size", self.args.get("max_batch_size", 64)),
            "dtype": self.args.get("dtype", "auto"),
            "trust_remote_code": as_bool("trust_remote_code", self.args.get("trust_remote_code", False)),
        }
        for key in ("revision", "tokenizer", "gguf_file", "peft"):
            if key in self.args:
                kwargs[key] = self.args[key]
        if "max_length" in self.args:
            kwargs["max_length"] = as_int("max_length", self.args["max_length"])
        if "add_bos_token" in self.args:
            kwargs["add_bos_token"] = as_bool("add_bos_token", self.args["add_bos_token"])
        if "parallelize" in self.args:
            kwargs["parallelize"] = as_bool("parallelize", self.args["parallelize"])
        try:
            lm = HFLM(**kwargs)
        except (OSError, ValueError) as exc:
            raise AdapterError(
                f"model '{self.name}': lm-eval could not load '{self.args['pretrained']}' ({self.path}): {exc}",
                hint="give a local folder or a registered short name (`metabench ls pretrained`); no hub is reachable offline",
            ) from exc
        model = lm.model
        self._facts.update({
            "pretrained": self.args["pretrained"],
            "path": self.path,
            "registered_name": self._short,
            "device": str(lm.device),
            "dtype": str(getattr(model, "dtype", "")),
            "batch_size": batch,
            "num_parameters": int(sum(p.numel() for p in model.parameters())),
            "architectures": list(getattr(model.config, "architectures", None) or []),
            "max_length": lm.max_length,
            "has_chat_template": bool(getattr(lm.tokenizer, "chat_template", None)),
        })
        return lm

    def has_chat_template(self) -> bool:
        return bool(getattr(self.lm.tokenizer, "chat_template", None))

    def seed_sampling(self, seed: int, requests: list) -> None:
        if any(getattr(r, "temperature", 0) > 0 for r in requests):
            import torch

            torch.manual_seed(seed_from(seed, requests))

    def rank(self, requests: list[RankRequest]) -> list[list]:
        """Top-k next tokens from the model's logits, each completed greedily from token ids (no
        re-tokenisation of prompt plus token text, so SentencePiece prefixes cannot shift the start). The
        prompt is encoded once; its key/value cache is shared by all the completions of the item."""
        import torch

        lm = self.lm
        tokenizer = lm.tokenizer
        answers = []
        for request in requests:
            ids = lm.tok_encode(self.context(request.prompt, request))
            ids = ids[-(lm.max_length - request.max_word_tokens - 1):]
            with torch.no_grad():
                out = lm.model(torch.tensor([ids], device=lm.device), use_cache=True)
            logits = out.logits[0, -1].float()
            top = torch.topk(torch.log_softmax(logits, dim=-1), k=min(request.k, logits.shape[-1]))
            tokens = [int(t) for t in top.indices]
            texts = [tokenizer.decode([t]) for t in tokens]
            todo = [i for i, text in enumerate(texts) if wanted(text, request.complete)]
            words: dict[int, str] = {}
            if todo:
                continued = greedy_words(lm.model, out.past_key_values, [tokens[i] for i in todo],
                                         request.max_word_tokens, tokenizer, lm.device)
                words = {i: word for i, word in zip(todo, continued)}
            answers.append([[texts[i], words.get(i)] for i in range(len(tokens))])
        return answers


def word_ended(text: str) -> bool:
    """Whether ``text`` (a token and its continuation) has gone past its first word."""
    import unicodedata

    body = text.lstrip()
    for ch in body:
        if ch.isspace() or ch in WORD_STOPS:
            return True
        if unicodedata.category(ch)[0] in "PS" and ch not in "-'’":
            return True
    return False


def greedy_words(model, cache, first_tokens: list[int], max_new: int, tokenizer, device) -> list[str]:
    """Greedy continuations of one prompt (its key/value ``cache``) after each of ``first_tokens``, as one
    batch, until every row has gone past its first word or ``max_new`` tokens; returns the first words."""
    import torch

    n = len(first_tokens)
    cache.batch_repeat_interleave(n)
    rows = [[t] for t in first_tokens]
    done = [word_ended(tokenizer.decode(row)) for row in rows]
    current = torch.tensor(first_tokens, device=device).view(n, 1)
    for _ in range(max_new):
        if all(done):
            break
        with torch.no_grad():
            out = model(current, past_key_values=cache, use_cache=True)
        cache = out.past_key_values
        nxt = out.logits[:, -1].argmax(-1).tolist()
        for row in range(n):
            if done[row]:
                continue
            rows[row].append(nxt[row])
            if nxt[row] == tokenizer.eos_token_id or word_ended(tokenizer.decode(rows[row], skip_special_tokens=False)):
                done[row] = True
        current = torch.tensor(nxt, device=device).view(n, 1)
    return [word_of(tokenizer.decode(row, skip_special_tokens=True)) for row in rows]
