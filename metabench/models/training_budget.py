"""What a fine-tuning adapter trains on: the training data's content hash and the budget knobs applied to it.

Shared by every trainer (the encoder and the decoder tagger), so that a checkpoint's key and a budget run's
training set mean the same thing whichever adapter made it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

from ..requests import Training


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
