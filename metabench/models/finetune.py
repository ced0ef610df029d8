"""The fine-tuning loop every in-suite trainer shares: the ``hf-encoder`` adapter and any trainer a plugin adds.

A plain PyTorch loop, equivalent to ``transformers.Trainer`` with the same settings (AdamW with decoupled
weight decay, no decay on biases and LayerNorm weights, linear schedule with ``ceil(warmup_ratio * steps)``
warm-up steps, gradient clipping, gradient accumulation) and cheaper: no accelerate wrapping, no per-step
callbacks. It knows nothing about tokenizers, heads or tasks: a caller hands it the model, its training
examples already encoded (``features``), a ``collate`` that turns a list of features into a batch, and a
``loss`` (default: the loss the model computes from a batch with labels), and gets back a summary.

- **Seeds**: the data order of each epoch comes from a generator seeded by (seed, epoch) and dropout from
  torch's global generator reseeded by (seed, epoch) at each epoch start. Together with a seeded model
  initialisation (the caller's job), a seed gives identical weights on every CPU run.
- **Length grouping** (``lengths`` given): batches are drawn from length-sorted mega-batches of 50 batches, as
  transformers' LengthGroupedSampler does, so padding stays small.
- **Model selection** (``selection`` given): after every epoch ``selection.evaluate()`` scores the model; the
  best epoch wins (earliest on ties; lowest for ``loss``). Without it the last epoch is kept.
- **Resume** (``store`` and ``key`` given): after every epoch but the last the training state (weights,
  optimiser, schedule, best-so-far, history) is saved with ``store.save_partial(key, ...)``; an interrupted
  fit resumes from the last finished epoch and ends with the same weights as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

MEGABATCH = 50
#: Optimizer steps between two reads of the running loss for the progress line (each read waits for the device).
LOSS_SHOWN_EVERY = 20


@dataclass(frozen=True)
class Schedule:
    """Optimiser and schedule settings (a task's ``protocol.encoder.finetune`` maps onto it one to one)."""

    lr: float
    epochs: float
    batch_size: int
    grad_accum: int = 1
    warmup_ratio: float = 0.0
    weight_decay: float = 0.0
    max_grad_norm: float | None = 1.0

    @classmethod
    def from_finetune(cls, finetune, max_grad_norm: float | None = 1.0) -> Schedule:
        return cls(lr=finetune.lr, epochs=finetune.epochs, batch_size=finetune.batch_size,
                   grad_accum=finetune.grad_accum, warmup_ratio=finetune.warmup_ratio,
                   weight_decay=finetune.weight_decay, max_grad_norm=max_grad_norm)


@dataclass(frozen=True)
class Selection:
    """Per-epoch model selection: ``evaluate()`` scores the current model; ``metric`` is the score compared."""

    metric: str
    evaluate: Callable[[], dict[str, float]]

    @property
    def lower_is_better(self) -> bool:
        return self.metric == "loss"


def mix(*numbers: int) -> int:
    """A 63-bit seed derived from several integers (e.g. run seed, epoch, purpose)."""
    digest = hashlib.sha256("/".join(str(n) for n in numbers).encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)


def length_grouped_batches(lengths: list[int], batch_size: int, generator, group: bool) -> list[list[int]]:
    """Indices per batch for one epoch: a seeded permutation, optionally grouped by length."""
    import torch

    n = len(lengths)
    perm = torch.randperm(n, generator=generator).tolist()
    if not group:
        return [perm[i : i + batch_size] for i in range(0, n, batch_size)]
    batches: list[list[int]] = []
    mega = batch_size * MEGABATCH
    for start in range(0, n, mega):
        chunk = sorted(perm[start : start + mega], key=lambda i: -lengths[i])
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    order = torch.randperm(len(batches), generator=generator).tolist()
    return [batches[i] for i in order]


def model_loss(model, batch):
    """The default loss: what a transformers model computes itself from a batch that carries ``labels``."""
    return model(**batch).loss


def make_optimizer(model, schedule: Schedule):
    """AdamW with no weight decay on biases and normalisation weights (Trainer's parameter groups)."""
    import torch

    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if name.endswith("bias") or "norm" in name.lower() else decay).append(param)
    groups = [{"params": decay, "weight_decay": schedule.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    try:  # the fused kernel (Trainer's default optimiser, adamw_torch_fused): same update, ~10x cheaper on CPU
        return torch.optim.AdamW(groups, lr=schedule.lr, betas=(0.9, 0.999), eps=1e-8, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(groups, lr=schedule.lr, betas=(0.9, 0.999), eps=1e-8)


def train(
    model,
    features: Sequence,
    *,
    collate: Callable[[list], Any],
    schedule: Schedule,
    seed: int,
    loss: Callable[[Any, Any], Any] = model_loss,
    lengths: list[int] | None = None,
    selection: Selection | None = None,
    store=None,
    key: str | None = None,
    autocast=None,
    progress: bool = False,
    label: str = "fine-tune",
    after_epoch: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Train ``model`` in place on ``features``; leave it in eval mode with the selected epoch's weights.

    ``collate(features) -> batch`` builds one micro-batch (on the model's device); ``loss(model, batch)``
    returns a scalar tensor. ``lengths`` (one per feature) turns on length grouping. ``store``/``key``: a
    :class:`~metabench.models.checkpoints.CheckpointStore` and the checkpoint key, for resume. ``autocast``:
    a context manager around each forward pass (mixed precision). ``after_epoch(epoch)`` runs after each
    epoch's state is saved (tests use it to simulate an interrupt).

    Returns the summary recorded in results.json: ``best_epoch``, ``select_metric``, ``best_validation``,
    ``history`` (per epoch: ``epoch``, ``step``, ``train_loss`` and ``validation`` scores), ``steps``,
    timings and ``resumed_after_epochs``.
    """
    import contextlib

    import torch
    from transformers import get_linear_schedule_with_warmup

    from .. import progress as shown

    autocast = autocast if autocast is not None else contextlib.nullcontext()
    batch_size, accum = schedule.batch_size, schedule.grad_accum
    micro_per_epoch = math.ceil(len(features) / batch_size)
    steps_per_epoch = math.ceil(micro_per_epoch / accum)
    total_steps = max(1, math.ceil(schedule.epochs * steps_per_epoch))
    n_epochs = math.ceil(schedule.epochs)
    warmup = math.ceil(schedule.warmup_ratio * total_steps)
    optimizer = make_optimizer(model, schedule)
    scheduler = get_linear_schedule_with_warmup(optimizer, warmup, total_steps)
    order_lengths = lengths if lengths is not None else [0] * len(features)

    best_score, best_state, best_epoch, history, start_epoch, step = None, None, None, [], 0, 0
    resumed = store.load_partial(key) if store is not None else None
    if resumed is not None:
        model.load_state_dict(resumed["model"])
        optimizer.load_state_dict(resumed["optimizer"])
        scheduler.load_state_dict(resumed["scheduler"])
        best_score, best_state, best_epoch = resumed["best_score"], resumed["best_state"], resumed["best_epoch"]
        history, start_epoch, step = resumed["history"], resumed["epoch"] + 1, resumed["step"]

    # a bar where the caller draws bars; else, in a run whose stderr is a log, a line every interval
    bar = shown.meter(total_steps, label, "step", bars=progress, initial=step)
    examples_seen = 0
    train_started, train_cpu_started = time.perf_counter(), time.process_time()
    try:
        for epoch in range(start_epoch, n_epochs):
            model.train()
            torch.manual_seed(mix(seed, epoch, 1))  # dropout
            generator = torch.Generator().manual_seed(mix(seed, epoch, 2))  # data order
            batches = length_grouped_batches(order_lengths, batch_size, generator, lengths is not None)
            running, counted = 0.0, 0
            optimizer.zero_grad(set_to_none=True)
            for index, batch_ids in enumerate(batches):
                if step >= total_steps:
                    break
                batch = collate([features[i] for i in batch_ids])
                with autocast:
                    value = loss(model, batch)
                (value / accum).backward()
                running = running + value.detach()  # on the device: no host read per step
                counted += 1
                examples_seen += len(batch_ids)
                if (index + 1) % accum == 0 or index + 1 == len(batches):
                    if schedule.max_grad_norm is not None:
                        torch.nn.utils.clip_grad_norm_(model.parameters(), schedule.max_grad_norm)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad(set_to_none=True)
                    step += 1
                    bar.update(1)
                    if step % LOSS_SHOWN_EVERY == 0:  # reading the loss waits for the device
                        bar.set_postfix(epoch=f"{epoch + 1}/{n_epochs}", loss=f"{float(running) / counted:.4f}",
                                        examples=examples_seen)
            running = float(running)
            entry: dict[str, Any] = {"epoch": epoch + 1, "step": step, "train_loss": running / max(counted, 1)}
            if selection is not None:
                shown = {"epoch": f"{epoch + 1}/{n_epochs}", "loss": f"{running / max(counted, 1):.4f}",
                         "examples": examples_seen}
                bar.set_postfix(**shown, now="scoring the validation split")
                scores = selection.evaluate()
                bar.set_postfix(**shown)
                entry["validation"] = scores
                value = scores[selection.metric]
                if best_score is None or (value < best_score if selection.lower_is_better else value > best_score):
                    best_score, best_epoch = value, epoch + 1
                    best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            history.append(entry)
            if store is not None and epoch + 1 < n_epochs:
                store.save_partial(key, {
                    "epoch": epoch, "step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "best_score": best_score, "best_state": best_state,
                    "best_epoch": best_epoch, "history": history,
                })
            if after_epoch is not None:
                after_epoch(epoch)
    finally:
        bar.close()
    train_s = time.perf_counter() - train_started
    train_cpu_s = time.process_time() - train_cpu_started
    if best_state is not None:
        model.load_state_dict(best_state)
    else:
        best_epoch = n_epochs
    model.eval()
    return {
        "best_epoch": best_epoch,
        "select_metric": selection.metric if selection is not None else None,
        "best_validation": best_score,
        "history": history,
        "steps": step,
        "train_s": round(train_s, 3),
        "train_cpu_s": round(train_cpu_s, 3),
        "train_examples_per_s": round(examples_seen / train_s, 2) if train_s > 0 and examples_seen else None,
        "resumed_after_epochs": start_epoch if resumed is not None else None,
    }
