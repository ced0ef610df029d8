"""The bridge from metabench requests to lm-evaluation-harness models, shared by every decoder backend.

``LMEvalDecoder`` turns metabench requests into ``lm_eval.api.instance.Instance`` objects and calls the lm-eval
model's public ``loglikelihood`` and ``generate_until``; a backend (``hf_decoder``, ``vllm_decoder``,
``openai_decoder``) only builds the lm-eval model (``_load``) and says what identifies it:

- ``ChoiceRequest``: one ``loglikelihood`` instance per option (``(context, option)``, exactly what an
  lm-eval ``multiple_choice`` task sends), answer = argmax of the summed log-likelihoods (first on ties),
  returned with every option's log-likelihood and is-greedy flag.
- ``GenerateRequest``: one ``generate_until`` instance with ``until``, ``max_gen_toks``, ``temperature``
  (``do_sample`` when > 0). Sampling is seeded per batch from the run seed (:func:`seed_from`).
- ``RankRequest`` (MUNCH generation): backend-specific (``rank``); :func:`wanted` and :func:`word_of` are the
  shared rules for which ranked tokens are completed and what word a completion gives.

With ``request.chat`` the prompt becomes a user message (and ``system`` a system message) in the model's
chat template, through lm-eval's ``apply_chat_template``; a model without a chat template gets the raw
prompt and ``info()`` says so. ``PretrainedDecoder`` adds what the HF and vLLM backends share: a model given as
``pretrained=`` (folder, registered short name or hub id, resolved by :mod:`metabench.models.hf_common`) and
fingerprinted by its files.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any, ClassVar

from .. import answering
from ..errors import AdapterError, UnsupportedError
from ..requests import ChoiceRequest, GenerateRequest, RankRequest, first_word
from .base import Adapter, AdapterSettings
from .hf_common import Pretrained, folder_hashes, loading_model, parse_int, resolve_pretrained

#: Arguments that change how fast answers come, never which answers: left out of fingerprints.
RUNTIME_ARGS = frozenset({
    "batch_size", "max_batch_size", "device", "chunk_size", "parallelize", "num_concurrent", "timeout",
    "max_retries", "gpu_memory_utilization", "tensor_parallel_size", "data_parallel_size", "api_key_env",
    "swap_space", "enforce_eager",
})
#: Where a ranked word ends, besides whitespace.
WORD_STOPS = ('"', "\n", "*", "”")
_SHARED: dict = {}  # (adapter class, args) -> (loaded lm-eval model, facts recorded at load)


class LMEvalDecoder(Adapter):
    """Answers choice, generation and ranking requests through an lm-eval ``LM`` (subclasses build it)."""

    family: ClassVar[str] = "decoder"
    serves: ClassVar[tuple[type, ...]] = (ChoiceRequest, GenerateRequest, RankRequest)
    seeded: ClassVar[bool] = True
    positional_arg: ClassVar[str | None] = "pretrained"
    backend: ClassVar[str] = ""
    #: Arguments that choose the scorer: out of the fingerprint's ``args``, in :meth:`_scorer_identity`.
    scorer_args: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def accepted_args(cls) -> tuple[str, ...]:
        """The backend's own arguments and how the model answers a task (``answer=``, ``shots=``, ``parse=``:
        read by the runner, `metabench.answering`)."""
        return tuple(cls.allowed_args) + answering.ARGS

    @classmethod
    def check_args(cls, args: dict[str, str]) -> None:
        super().check_args(args)
        answering.parse_args(args, cls.name)

    def default_answer(self) -> str:
        """The way this model answers a task that offers several, unless ``answer=`` says (a chat API: generated)."""
        return answering.SCORED

    def __init__(self, args: dict[str, str], *, registry=None, settings: AdapterSettings | None = None):
        super().__init__(args, registry=registry, settings=settings)
        self._lm = None
        self._facts: dict[str, Any] = {}
        mode = str(self.args.get("chat_template", "task")).lower()
        if mode not in ("task", "on", "off", "true", "false"):
            raise AdapterError(f"model '{self.name}': chat_template={mode!r} is not task, on or off")
        self.chat_mode = {"true": "on", "false": "off"}.get(mode, mode)
        self.chunk = parse_int(self.args.get("chunk_size", 64), "chunk_size", self.name)

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
                with loading_model():
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
            "args": {k: v for k, v in sorted(self.args.items())
                     if k not in RUNTIME_ARGS and k not in self.scorer_args and k != "pretrained"},
            **self._scorer_identity(),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def _model_identity(self) -> Any:
        return self.args.get("pretrained")

    def _scorer_identity(self) -> dict[str, Any]:
        """How this adapter computes answers when it departs from the lm-eval model's own methods (hashed into
        the fingerprint, so answers computed differently are never served for each other); lm-eval's own
        path adds nothing, which keeps the fingerprints of answers cached before a departure existed."""
        return {}

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
        scores = self.option_scores([self.context(r.context, r) for r in requests], [r.options for r in requests])
        answers = []
        for per_option in scores:
            lls = [float(ll) for ll, _ in per_option]
            best = max(range(len(lls)), key=lambda i: (lls[i], -i))
            answers.append({"index": best, "loglikelihoods": lls, "is_greedy": [bool(g) for _, g in per_option]})
        return answers

    def option_scores(self, contexts: list[str], options: list[tuple[str, ...]]) -> list[list[tuple[float, bool]]]:
        """``(log-likelihood, is_greedy)`` of each option of each context, by the lm-eval model's own
        ``loglikelihood``: one instance per (context, option), exactly what a ``multiple_choice`` task sends."""
        from lm_eval.api.instance import Instance

        instances, owners = [], []
        for r_index, (context, opts) in enumerate(zip(contexts, options, strict=True)):
            for o_index, option in enumerate(opts):
                instances.append(Instance("loglikelihood", {}, (context, option), idx=o_index,
                                          metadata=("metabench", r_index, 1)))
                owners.append(r_index)
        results = self.lm.loglikelihood(instances, disable_tqdm=True) if instances else []
        per_request: list[list[tuple[float, bool]]] = [[] for _ in contexts]
        for owner, (ll, greedy) in zip(owners, results):
            per_request[owner].append((float(ll), bool(greedy)))
        return per_request

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
    """The word a ranked token and its continuation give (the ``RankRequest`` answer's second element)."""
    return first_word(text.lstrip())


def seed_from(seed: int, requests: list) -> int:
    """A 32-bit sampling seed for one batch, from the run seed and the batch's first requests."""
    key = "\x00".join(getattr(r, "key", "") for r in requests[:4])
    return int.from_bytes(hashlib.sha256(f"{seed}\x00{key}".encode()).digest()[:4], "big")


class PretrainedDecoder(LMEvalDecoder):
    """A decoder loaded from ``pretrained=``; fingerprinted by its folder's files (a hub id: by id and revision)."""

    #: Arguments besides the files that identify the model (e.g. which GGUF file of a folder is loaded).
    identity_args: ClassVar[tuple[str, ...]] = ()
    #: The revision recorded for a hub id given without ``revision=``.
    default_revision: ClassVar[str | None] = None

    def __init__(self, args: dict[str, str], *, registry=None, settings: AdapterSettings | None = None):
        super().__init__(args, registry=registry, settings=settings)
        if not self.args.get("pretrained"):
            raise AdapterError(
                f"model '{self.name}' needs a model: --model {self.name}:PATH_OR_NAME",
                hint=f"e.g. --model {self.name}:smollm2-135m (`metabench ls pretrained` lists short names)",
            )
        self._pretrained: Pretrained | None = None

    @property
    def pretrained(self) -> Pretrained:
        """The resolved model (a hub id is left for the backend to fetch)."""
        if self._pretrained is None:
            self._pretrained = resolve_pretrained(self.args["pretrained"], self.registry,
                                                  self.args.get("revision") or None, download=False)
        return self._pretrained

    def use_resolved(self, pretrained: Pretrained) -> None:
        """Take a resolution already made (``hf:`` resolves the name to read the model's family)."""
        self._pretrained = pretrained

    @property
    def path(self) -> str:
        return self.pretrained.source

    def _model_identity(self) -> Any:
        folder = self.pretrained.folder
        if folder is not None and folder.is_dir():
            return {"files": folder_hashes(folder), **{k: self.args.get(k) for k in self.identity_args}}
        return {"hub": self.path, "revision": self.args.get("revision", self.default_revision)}

    def has_chat_template(self) -> bool:
        return bool(getattr(self.lm.tokenizer, "chat_template", None))

    def _loaded_facts(self) -> dict[str, Any]:
        return {"pretrained": self.args["pretrained"], "path": self.path, "registered_name": self.pretrained.short}
