"""``hf-decoder``: causal LMs through lm-evaluation-harness's ``lm_eval.models.huggingface.HFLM``.

Requests reach the model through the shared bridge (:mod:`metabench.models.lmeval_bridge`); this module builds
the HFLM, seeds torch's sampler per batch, and answers ``RankRequest`` from the model's logits (top-k next
tokens, each completed greedily from token ids, sharing the prompt's key/value cache). lm-eval, torch and
transformers are imported only when the model is first needed, so ``metabench --help`` stays light and a
rerun served entirely from the answer cache never loads the model.

``hf-decoder`` arguments (``--model hf-decoder:PRETRAINED,key=value,...``):
``pretrained`` (a folder, a registered short name such as ``smollm2-135m``, or a hub id), ``batch_size``
(``auto``: lm-eval's detection on a GPU, 8 on the CPU, where detection would allocate the model's full
context for 64 sequences), ``max_batch_size``, ``device`` (default ``cuda`` when available, else ``mps``, else ``cpu``),
``dtype`` (``auto``, ``bfloat16``, ``float16``, ``float32``), ``max_length``, ``revision``, ``tokenizer``,
``trust_remote_code``, ``add_bos_token``, ``gguf_file``, ``peft``, ``parallelize``, ``softmax_dtype`` (the
log-softmax's dtype, lm-eval's switch: by default the model's, so in bfloat16 a multi-token option's
log-likelihood near -50 is rounded to bf16's spacing there, 0.25; ``float32`` keeps the logits' precision),
``chat_template``
(``task``: as the task says, default; ``on``; ``off``), ``chunk_size`` (requests per runner batch,
i.e. per cache commit; default 64), ``share_prompt`` (choice requests: ``true``, default, forwards each prompt
once and scores every option from its key/value cache, :mod:`metabench.models.prompt_sharing`, 2.2x faster on
the scored NLI tasks, log-likelihoods within 3e-5 of lm-eval's, and generates greedily forwarding a batch's shared
prompt prefix once, :mod:`metabench.models.prefix_generation`; ``false``: lm-eval's own ``loglikelihood`` and
``generate_until``).

The fingerprint hashes the adapter, the answer-changing arguments (not batch size or device; the shared-prompt
scorer, which is not bit-identical to lm-eval's, as its own entry, so neither path's cached answers serve the
other, and ``share_prompt=false`` keeps the fingerprint of answers cached before the option existed) and the
sha256 of the model folder's config, tokenizer and weight files (:func:`metabench.models.hf_common.folder_hashes`),
so a moved or renamed folder keeps its cached answers and a changed checkpoint never reuses them.
"""

from __future__ import annotations

from typing import Any

from ..errors import AdapterError
from ..requests import ChoiceRequest, GenerateRequest, RankRequest
from .base import AdapterSettings
from .hf_common import parse_bool, parse_int, pick_device
from .kv_cache import cache_argument, returned_cache
from .lmeval_bridge import WORD_STOPS, PretrainedDecoder, seed_from, wanted, word_of
from .prefix_generation import plain_greedy, shared_prefix_generate
from .prompt_sharing import request_order, shared_prompt_scores

#: ``share_prompt`` when not given (decided from benchmarks/bench_prompt_sharing.py; see docs/decoders.md).
SHARE_PROMPT_DEFAULT = True
#: Greedy generation's batch on a CPU with ``batch_size=auto`` (decided from benchmarks/bench_prefix_generation.py;
#: see docs/decoders.md).
CPU_GENERATION_BATCH = 32


class HFDecoder(PretrainedDecoder):
    name = "hf-decoder"
    backend = "lm_eval.models.huggingface.HFLM"
    allowed_args = (
        "pretrained", "batch_size", "max_batch_size", "device", "dtype", "max_length", "revision", "tokenizer",
        "trust_remote_code", "add_bos_token", "gguf_file", "peft", "parallelize", "chat_template", "chunk_size",
        "share_prompt", "finetune", "softmax_dtype",
    )
    scorer_args = ("share_prompt",)

    identity_args = ("gguf_file",)
    default_revision = "main"

    def __new__(cls, args: dict[str, str] | None = None, *, registry=None, settings: AdapterSettings | None = None):
        """``finetune=true`` asks for the fine-tuned tagger (:mod:`metabench.models.decoder_tagger`): the same
        models under the task's ``protocol.decoder_finetune``, so one model name covers both uses."""
        if args and parse_bool(args.get("finetune", False), "finetune", cls.name):
            from .decoder_tagger import DecoderTagger

            return DecoderTagger(args, registry=registry, settings=settings)
        return super().__new__(cls)

    @classmethod
    def check_args(cls, args: dict[str, str]) -> None:
        """With ``finetune=true`` the tagger's arguments are the ones checked (it is what gets built)."""
        if parse_bool(args.get("finetune", False), "finetune", cls.name):
            from .decoder_tagger import DecoderTagger

            return DecoderTagger.check_args(args)
        return super().check_args(args)

    def __init__(self, args: dict[str, str], *, registry=None, settings: AdapterSettings | None = None):
        super().__init__(args, registry=registry, settings=settings)
        self.batch = parse_int(self.args.get("batch_size", "auto"), "batch_size", self.name, allow_auto=True)
        self.share_prompt = parse_bool(self.args.get("share_prompt", SHARE_PROMPT_DEFAULT), "share_prompt", self.name)

    def _scorer_identity(self) -> dict[str, Any]:
        return {"choice_scorer": "shared_prompt_kv", "generator": "shared_prefix_kv"} if self.share_prompt else {}

    def request_order(self, requests: list) -> list[int] | None:
        """The order the runner hands requests over in (``metabench.launch.execute._answer``): with
        ``share_prompt``, choice requests longest first over the whole split, so that each ``chunk_size`` batch
        holds items of similar length (one global sort, as lm-eval's HFLM sorts its requests); ``None`` (the
        runner's order) otherwise: generation is seeded per batch, so its batches keep their composition."""
        if not self.share_prompt or not all(isinstance(r, ChoiceRequest) for r in requests):
            return None
        return request_order([(r.system or "") + r.context for r in requests], [tuple(r.options) for r in requests])

    def option_scores(self, contexts: list[str], options: list[tuple[str, ...]]) -> list[list[tuple[float, bool]]]:
        """With ``share_prompt``: each context forwarded once, its options scored from its key/value cache
        (:mod:`metabench.models.prompt_sharing`); the items it leaves (empty context, window overflow) and
        ``share_prompt=false`` go through lm-eval's ``loglikelihood``."""
        if not self.share_prompt:
            return super().option_scores(contexts, options)
        lm = self.lm
        batch = lm.batch_size if isinstance(lm.batch_size, int) else lm.max_batch_size
        scores = shared_prompt_scores(lm, contexts, options, batch)
        left = [i for i, s in enumerate(scores) if s is None]
        if left:
            self._facts["share_prompt_fallback_items"] = self._facts.get("share_prompt_fallback_items", 0) + len(left)
            for i, s in zip(left, super().option_scores([contexts[i] for i in left], [options[i] for i in left])):
                scores[i] = s
        return scores

    def generate(self, requests: list[GenerateRequest], seed: int) -> list[str]:
        """With ``share_prompt``, greedy requests through :mod:`metabench.models.prefix_generation` (the batch's
        shared prompt prefix forwarded once, finished rows dropped); sampling, what it leaves (a context over the
        window, a model whose generation config adds logits processors) and ``share_prompt=false`` through lm-eval's
        ``generate_until``."""
        lm = self.lm if self.share_prompt else None
        if lm is None or not plain_greedy(lm):
            return super().generate(requests, seed)
        batch = self.generation_batch(lm)
        out: list[str | None] = [None] * len(requests)
        groups: dict[tuple, list[int]] = {}
        for index, request in enumerate(requests):
            if request.temperature <= 0:
                groups.setdefault((tuple(request.until), request.max_new_tokens), []).append(index)
        for indices in groups.values():
            texts = shared_prefix_generate(lm, [self.context(requests[i].prompt, requests[i]) for i in indices],
                                           requests[indices[0]], batch)
            for index, text in zip(indices, texts, strict=True):
                out[index] = text
        left = [i for i, text in enumerate(out) if text is None]
        if left:
            greedy_left = sum(requests[i].temperature <= 0 for i in left)
            if greedy_left:
                self._facts["share_prompt_fallback_items"] = self._facts.get("share_prompt_fallback_items", 0) + greedy_left
            for index, text in zip(left, super().generate([requests[i] for i in left], seed), strict=True):
                out[index] = text
        return [str(text) for text in out]

    def generation_batch(self, lm) -> int:
        """Rows generated together: ``batch_size`` when given; with ``auto`` on a CPU :data:`CPU_GENERATION_BATCH`
        (a decoding step reads every weight once whatever the batch, so on a CPU wider batches cost little more per
        step; scoring keeps 8, where a wider batch only adds padding), else lm-eval's batch."""
        if self.batch == "auto" and str(lm.device) == "cpu":
            return CPU_GENERATION_BATCH
        return lm.batch_size if isinstance(lm.batch_size, int) else lm.max_batch_size

    def _load(self):
        from lm_eval.models.huggingface import HFLM

        device = pick_device(self.args.get("device"), self.name)
        batch = self.batch
        if batch == "auto" and not str(device).startswith("cuda"):
            batch = 8
        kwargs: dict[str, Any] = {
            "pretrained": self.path,
            "device": device,
            "batch_size": batch,
            "max_batch_size": parse_int(self.args.get("max_batch_size", 64), "max_batch_size", self.name),
            "dtype": self.args.get("dtype", "auto"),
            "trust_remote_code": parse_bool(self.args.get("trust_remote_code", False), "trust_remote_code", self.name),
        }
        for key in ("revision", "tokenizer", "gguf_file", "peft", "softmax_dtype"):
            if key in self.args:
                kwargs[key] = self.args[key]
        if "max_length" in self.args:
            kwargs["max_length"] = parse_int(self.args["max_length"], "max_length", self.name)
        for key in ("add_bos_token", "parallelize"):
            if key in self.args:
                kwargs[key] = parse_bool(self.args[key], key, self.name)
        try:
            lm = HFLM(**kwargs)
        except (OSError, ValueError) as exc:
            raise AdapterError(
                f"model '{self.name}': lm-eval could not load '{self.args['pretrained']}' ({self.path}): {exc}",
                hint="give a local folder or a registered short name (`metabench ls pretrained`); no hub is reachable offline",
            ) from exc
        model = lm.model
        self._facts.update({
            **self._loaded_facts(),
            "device": str(lm.device),
            "dtype": str(getattr(model, "dtype", "")),
            "batch_size": batch,
            "num_parameters": int(sum(p.numel() for p in model.parameters())),
            "architectures": list(getattr(model.config, "architectures", None) or []),
            "max_length": lm.max_length,
            "has_chat_template": bool(getattr(lm.tokenizer, "chat_template", None)),
            "choice_scorer": "shared_prompt_kv" if self.share_prompt else "lm_eval_loglikelihood",
        })
        return lm

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
                continued = greedy_words(lm.model, returned_cache(out), [tokens[i] for i in todo],
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
            out = model(current, use_cache=True, **{cache_argument(model): cache})
        cache = returned_cache(out)
        nxt = out.logits[:, -1].argmax(-1).tolist()
        for row in range(n):
            if done[row]:
                continue
            rows[row].append(nxt[row])
            if nxt[row] == tokenizer.eos_token_id or word_ended(tokenizer.decode(rows[row], skip_special_tokens=False)):
                done[row] = True
        current = torch.tensor(nxt, device=device).view(n, 1)
    return [word_of(tokenizer.decode(row, skip_special_tokens=True)) for row in rows]
