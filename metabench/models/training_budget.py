"""What a fine-tuning adapter trains on: the training data's content hash and the budget knobs applied to it.

Shared by every trainer (the encoder and the decoder tagger), so that a checkpoint's key and a budget run's
training set mean the same thing whichever adapter made it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math

from ..errors import AdapterError
from ..limits import MAX_BEAMS, MAX_EPOCHS
from ..requests import Training

#: The budget and decoding arguments any adapter may take, with their bounds: (low, high, low excluded,
#: high excluded, whole number). Checked when ``--model`` is read (``Adapter.check_args``), before any model
#: loads: ``epochs=inf`` or ``beams=100000`` used to fail only after it had.
BOUNDS = {
    "epochs": (0, MAX_EPOCHS, True, False, False),
    "lr": (0, 1, True, False, False),
    "warmup_ratio": (0, 1, False, True, False),
    "beams": (1, MAX_BEAMS, False, False, True),
    "max_train": (1, None, False, False, True),
}


def content_hash(training: Training) -> str:
    """Hash of the training and validation inputs and answers (catches kind_args such as markers)."""
    digest = hashlib.sha256()
    for requests, golds in ((training.requests, training.golds), (training.validation_requests, training.validation_golds)):
        for request, gold in zip(requests, golds):
            pair = getattr(request, "text_pair", None)
            digest.update(json.dumps([request.key, pair, gold], ensure_ascii=False, default=list).encode())
        digest.update(b"\x00")
    return digest.hexdigest()


def apply_budget(training: Training, max_train: int | None, recipe: dict[str, float]) -> Training:
    """The budget knobs: the first ``max_train`` training examples; ``recipe`` (epochs, lr, warmup_ratio) instead of
    the task's values. A task's recipe is tuned for its full data; a run that can afford a fraction of it (one
    epoch instead of three) needs its own schedule, e.g. MelBERT's 2/3 warm-up over one epoch barely trains."""
    protocol = training.protocol
    if recipe:
        protocol = protocol.model_copy(update={"finetune": protocol.finetune.model_copy(update=recipe)})
    n = max_train if max_train is not None else len(training.requests)
    return dataclasses.replace(training, requests=training.requests[:n], golds=training.golds[:n], protocol=protocol)


def check_budget_args(args: dict[str, str]) -> None:
    """Every budget or decoding argument in ``args`` (``BOUNDS``) a finite number within its bounds; an
    AdapterError naming the argument, its value and the range otherwise (NaN and infinity included)."""
    for name, (low, high, low_open, high_open, whole) in BOUNDS.items():
        if name not in args:
            continue
        text = str(args[name]).strip()
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            value = math.nan
        fits = math.isfinite(value) and (value > low if low_open else value >= low) and (
            high is None or (value < high if high_open else value <= high))
        if not fits:
            kind = "a whole number" if whole else "a finite number"
            above = f"above {low}" if low_open else f"from {low}"
            below = "" if high is None else f" and {'below' if high_open else 'at most'} {high:g}"
            raise AdapterError(f"{name}={args[name]} must be {kind} {above}{below}",
                               hint=f"e.g. {name}={ {'epochs': 3, 'lr': 2e-5, 'warmup_ratio': 0.1, 'beams': 4, 'max_train': 400}[name] }")
