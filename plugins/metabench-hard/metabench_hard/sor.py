"""Sense-only representations (SOR): contrastive fine-tuning of an HF encoder on SemCor senses (Li et al. §4.2).

Each step draws ``senses_per_batch`` WordNet senses and ``instances_per_sense`` SemCor instances of each; the
target vector of an instance is the ``layer`` hidden state at the first sub-token of the target word,
L2-normalised. The loss is SimCSE/SimCLR's in-batch cross-entropy (Eq. 1): for each vector, its partner of
the same sense against every other vector of the batch, cosine similarity / ``tau``, the diagonal masked.
Metaphorical senses (MOH) are left out of training, as the paper says, so the model never learns to separate
the senses whose hardness is then measured.

Sense sampling follows the authors' code ([ext] in shared/papers/hard_metaphors.md §3.2): lemmas are drawn with
weight = their SemCor frequency clipped to [100, 1000] and all their eligible senses join the batch, so
negatives come from the same lemma (what phi measures) and from other lemmas. Differences from that code,
each an argument: the two instances of a sense are distinct (the code draws with replacement, which can pair
an instance with itself), a lemma qualifies with ``min_senses`` (2) senses of at least 2 instances (the code:
more than 5 senses with more than 2), and the paper's 900 steps and max length 128 (the code's submit files:
checkpoint 600, max length 256). Optimiser as in the code's HF Trainer: AdamW, lr 5e-5, weight decay 1e-5,
linear decay without warm-up, gradient norm clipped at 1.0.

The trained encoder is cached like fine-tuned checkpoints (:mod:`metabench.models.checkpoints`), keyed by the
base model's fingerprint, the training data hash and every setting.
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from metabench.plugin_api import MetabenchError, parse_pairs
from .pool import Instance

#: Bump whenever training changes what a key produces.
SOR_VERSION = "sor/1"


#: More SOR steps than this is a typo (the paper trains 900), not a budget: it would train for days.
MAX_STEPS = 1_000_000


@dataclass(frozen=True)
class SORSettings:
    """Every training setting; the defaults are the paper's (§4.2) or, where it is silent, the authors' code."""

    steps: int = 900  # paper: "converges quickly after 900 learning steps" (code: checkpoint-600)
    senses_per_batch: int = 32  # paper: batch 64 = code: 32 senses x 2 instances
    instances_per_sense: int = 2
    tau: float = 0.05  # paper: unstated; code: similarities x 20
    max_length: int = 128  # paper: 128 (code: 256)
    lr: float = 5e-5  # code (HF Trainer)
    weight_decay: float = 1e-5  # code
    warmup_ratio: float = 0.0  # code: linear schedule, no warm-up
    grad_clip: float = 1.0  # code (HF Trainer default)
    layer: int = -1  # code: last layer ("idx-last")
    min_senses: int = 2  # eligible lemma: this many senses with >= instances_per_sense instances (code: >5 with >2)
    exclude_metaphorical: bool = True  # paper: "we do not involve any metaphoric senses" (code: no such filter)
    context_words: int = 0  # training inputs: 0 = the whole sentence (paper); N = N words either side of the target
    seed: int = 0  # code: 1111

    @classmethod
    def parse(cls, text: str | None) -> SORSettings:
        """``steps=300,tau=0.1`` -> settings (every other value at its default); errors name the bad field."""
        known = {f.name: f.type for f in fields(cls)}
        values = {}
        for name, raw in parse_pairs(text, what="SOR setting", known=known).items():
            kind = known[name]
            try:
                if kind == "bool":
                    if raw.lower() not in ("true", "false", "1", "0"):
                        raise ValueError
                    values[name] = raw.lower() in ("true", "1")
                else:
                    values[name] = {"int": int, "float": float}[kind](raw)
            except ValueError:
                raise MetabenchError(f"SOR setting {name}={raw!r} is not a {kind}") from None
        settings = cls(**values)
        settings.check()
        return settings

    def check(self) -> None:
        for name in ("steps", "senses_per_batch", "max_length", "min_senses"):
            if getattr(self, name) < 1:
                raise MetabenchError(f"SOR setting {name}={getattr(self, name)} must be at least 1")
        if self.context_words < 0:
            raise MetabenchError("SOR setting context_words must be 0 (whole sentence) or positive")
        if self.instances_per_sense < 2:
            raise MetabenchError("SOR setting instances_per_sense must be at least 2 (a positive pair)")
        if not (0 < self.tau < math.inf and 0 < self.lr < math.inf):  # NaN too
            raise MetabenchError("SOR settings tau and lr must be positive numbers")
        if not (0 <= self.weight_decay < math.inf and 0 <= self.warmup_ratio < 1 and 0 < self.grad_clip < math.inf):
            raise MetabenchError("SOR settings need weight_decay >= 0, warmup_ratio in [0, 1) and grad_clip > 0")
        if self.steps > MAX_STEPS or max(self.senses_per_batch, self.instances_per_sense, self.max_length) > 100_000:
            raise MetabenchError(f"SOR settings: steps at most {MAX_STEPS:,}, and batch sizes and max_length at most "
                                 "100,000 (the paper trains 900 steps of 32 senses)")

    def changed(self) -> dict:
        """Settings that differ from the defaults (what a run's label should mention)."""
        default = SORSettings()
        return {k: v for k, v in asdict(self).items() if getattr(default, k) != v}


# ------------------------------------------------------------------------------------------ sampling


class SenseSampler:
    """Batches of (sense, instances) for contrastive training, lemma-grouped as in the authors' code."""

    def __init__(self, instances: list[Instance], settings: SORSettings, excluded: set[str] = frozenset()):
        by_sense: dict[str, list[Instance]] = defaultdict(list)
        for inst in instances:
            if inst.key not in excluded:
                by_sense[inst.key].append(inst)
        need = settings.instances_per_sense
        by_word: dict[str, list[str]] = defaultdict(list)
        frequency: dict[str, int] = defaultdict(int)
        for key, group in by_sense.items():
            word = group[0].word
            frequency[word] += len(group)
            if len(group) >= need:
                by_word[word].append(key)
        self.words = sorted(w for w, keys in by_word.items() if len(keys) >= settings.min_senses)
        if not self.words:
            raise MetabenchError("no lemma has enough senses with enough instances for contrastive batches",
                                 hint="lower min_senses or instances_per_sense")
        self.by_word = {w: sorted(by_word[w]) for w in self.words}
        self.weights = [min(max(frequency[w], 100), 1000) for w in self.words]
        self.by_sense = by_sense
        self.settings = settings

    @property
    def senses(self) -> int:
        return sum(len(v) for v in self.by_word.values())

    def batch(self, rng: random.Random) -> list[list[Instance]]:
        """``senses_per_batch`` distinct senses, each with ``instances_per_sense`` distinct instances."""
        chosen: list[str] = []
        seen: set[str] = set()
        while len(chosen) < self.settings.senses_per_batch:
            word = rng.choices(self.words, weights=self.weights, k=1)[0]
            keys = [k for k in self.by_word[word] if k not in seen]
            rng.shuffle(keys)
            for key in keys[: self.settings.senses_per_batch - len(chosen)]:
                chosen.append(key)
                seen.add(key)
        return [rng.sample(self.by_sense[k], self.settings.instances_per_sense) for k in chosen]


# ------------------------------------------------------------------------------------------ the model


def target_inputs(tokenizer, instances: list[Instance], max_length: int,
                  context_words: int = 0) -> tuple[list[list[int]], list[int]]:
    """Token ids and the position of each target's first sub-token (a window around it for long sentences).

    ``context_words`` > 0 keeps only that many words either side of the target (a cheaper training input).
    """
    from metabench.plugin_api import encode_words  # noqa: PLC0415

    ids, positions = [], []
    for inst in instances:
        words, index = inst.words, inst.index
        if context_words > 0:
            start = max(0, index - context_words)
            words, index = words[start : index + context_words + 1], index - start
        encoded = encode_words(tokenizer, words, max_length, overlap=0.5)
        window = encoded.windows[encoded.owner[index]]
        ids.append(window.input_ids)
        positions.append(window.first[index - window.start])
    return ids, positions


def target_vectors(model, tokenizer, ids: list[list[int]], positions: list[int], layer: int):
    """L2-normalised hidden states of ``layer`` at the given positions (a torch tensor, one row per input)."""
    import torch

    width = max(len(x) for x in ids)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    input_ids = torch.tensor([x + [pad] * (width - len(x)) for x in ids])
    mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids])
    out = model(input_ids=input_ids, attention_mask=mask, output_hidden_states=layer != -1)
    hidden = out.last_hidden_state if layer == -1 else out.hidden_states[layer]
    vectors = hidden[torch.arange(len(ids)), torch.tensor(positions)]
    return torch.nn.functional.normalize(vectors, dim=-1)


def contrastive_loss(vectors, group: int, tau: float):
    """In-batch SimCLR loss for rows laid out sense by sense (``group`` rows per sense), cosine / tau."""
    import torch

    n = vectors.shape[0]
    sims = vectors @ vectors.T / tau
    sims = sims.masked_fill(torch.eye(n, dtype=torch.bool), float("-inf"))
    sense = torch.arange(n) // group
    log_prob = sims.log_softmax(dim=-1)
    positive = (sense[:, None] == sense[None, :]) & ~torch.eye(n, dtype=torch.bool)
    # mean over each row's positives (one per row when group = 2: exactly SimCSE's cross-entropy)
    return -(log_prob.masked_fill(~positive, 0).sum(-1) / positive.sum(-1)).mean()


def load_tokenizer(folder: Path):
    from transformers import AutoTokenizer

    from metabench.plugin_api import read_config  # noqa: PLC0415

    kwargs = {"add_prefix_space": True} if read_config(folder).get("model_type") in _PREFIX_SPACE else {}
    return AutoTokenizer.from_pretrained(str(folder), **kwargs)


_PREFIX_SPACE = {"roberta", "roberta-prelayernorm", "longformer", "bart", "gpt2", "deberta", "data2vec-text",
                 "luke", "mpnet", "xmod"}


def _batched_vectors(model, tokenizer, ids, positions, layer: int, micro_batch: int):
    """Target vectors of one batch, computed in length-sorted slices of ``micro_batch`` inputs (rows in input order).

    Same vectors and gradients as one padded forward pass (padding is masked), without padding every input to the
    batch's longest sentence: on CPU that is most of the cost of a step.
    """
    import torch

    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    parts = [target_vectors(model, tokenizer, [ids[i] for i in order[s : s + micro_batch]],
                            [positions[i] for i in order[s : s + micro_batch]], layer)
             for s in range(0, len(order), micro_batch)]
    vectors = torch.cat(parts)
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order)] = torch.arange(len(order))
    return vectors[inverse]


def train_sor(base: Path, instances: list[Instance], excluded: set[str], settings: SORSettings, out: Path,
              log=None, micro_batch: int = 16) -> dict:
    """Train from the model folder ``base`` and save the encoder + tokenizer into ``out``; returns metadata.

    ``micro_batch`` only changes how a batch is computed (see :func:`_batched_vectors`), not what is learnt.
    """
    import torch
    from transformers import AutoModel, get_linear_schedule_with_warmup

    settings.check()
    rng = random.Random(settings.seed)
    torch.manual_seed(settings.seed)
    sampler = SenseSampler(instances, settings, excluded)
    tokenizer = load_tokenizer(base)
    model = AutoModel.from_pretrained(str(base))
    model.train()
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(t in n for t in no_decay)],
         "weight_decay": settings.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(t in n for t in no_decay)], "weight_decay": 0.0},
    ]
    optimiser = torch.optim.AdamW(groups, lr=settings.lr)
    schedule = get_linear_schedule_with_warmup(optimiser, int(settings.warmup_ratio * settings.steps), settings.steps)
    losses = []
    started = time.monotonic()
    for step in range(1, settings.steps + 1):
        batch = [inst for group in sampler.batch(rng) for inst in group]
        ids, positions = target_inputs(tokenizer, batch, settings.max_length, settings.context_words)
        loss = contrastive_loss(_batched_vectors(model, tokenizer, ids, positions, settings.layer, micro_batch),
                                settings.instances_per_sense, settings.tau)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        losses.append(loss.item())
        if log is not None and (step % 10 == 0 or step == 1):
            log(f"step {step}/{settings.steps} loss {sum(losses[-50:]) / len(losses[-50:]):.4f} "
                f"({time.monotonic() - started:.0f} s)")
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return {
        "settings": asdict(settings),
        "wall_seconds": round(time.monotonic() - started, 1),
        "loss_first_50": sum(losses[:50]) / min(50, len(losses)),
        "loss_last_50": sum(losses[-50:]) / min(50, len(losses)),
        "training_lemmas": len(sampler.words),
        "training_senses": sampler.senses,
        "excluded_senses": len(excluded),
        "torch_threads": torch.get_num_threads(),
    }


def embed(folder: Path, instances: list[Instance], *, max_length: int, layer: int = -1, batch_size: int = 64,
          log=None):
    """SOR vectors (numpy, L2-normalised) of ``instances`` with the encoder in ``folder``, in input order."""
    import numpy as np
    import torch
    from transformers import AutoModel

    tokenizer = load_tokenizer(folder)
    model = AutoModel.from_pretrained(str(folder)).eval()
    ids, positions = target_inputs(tokenizer, instances, max_length)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out = np.zeros((len(ids), model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            vectors = target_vectors(model, tokenizer, [ids[i] for i in chunk], [positions[i] for i in chunk], layer)
            out[chunk] = vectors.float().numpy()
            if log is not None and (start // batch_size) % 50 == 0:
                log(f"embedded {min(start + batch_size, len(order))}/{len(order)}")
    return out
