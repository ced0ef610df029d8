"""Synthetic data and helpers for the encoder tests (imported by name: tests run with --import-mode=importlib)."""

from __future__ import annotations

import random
from pathlib import Path

from metabench.config.schema import EncoderProtocol, Finetune
from metabench.requests import ClassifyRequest, TagRequest, Training

REPO_ROOT = Path(__file__).resolve().parents[2]
TAGS = ("O", "B-METAPHOR", "I-METAPHOR")
METAPHORIC = {"grasped", "attack", "bright", "storm", "heart"}
VOCAB = "the war of ideas is a heart money grasped attack argument bright future cold storm zzq idea. x-ray".split()


def tag_data(n: int, seed: int = 0):
    rng = random.Random(seed)
    requests, golds = [], []
    for _ in range(n):
        words = [rng.choice(VOCAB) for _ in range(rng.randint(3, 10))]
        tags, previous = [], False
        for w in words:
            met = w in METAPHORIC
            tags.append(("I-METAPHOR" if previous else "B-METAPHOR") if met else "O")
            previous = met
        requests.append(TagRequest(tuple(words), TAGS))
        golds.append(tuple(tags))
    return requests, golds


def cls_data(n: int, seed: int = 0, *, marked: bool = True, pairs: bool = False):
    rng = random.Random(seed)
    requests, golds = [], []
    for _ in range(n):
        words = [rng.choice(VOCAB) for _ in range(rng.randint(3, 8))]
        target = rng.randrange(len(words))
        label = "metaphorical" if words[target] in METAPHORIC else "literal"
        if marked:
            words[target] = f"<PME>{words[target]}</PME>"
        pair = " ".join(rng.choice(VOCAB) for _ in range(4)) if pairs else None
        requests.append(ClassifyRequest(" ".join(words), ("literal", "metaphorical"), pair))
        golds.append(label)
    return requests, golds


def protocol(**finetune) -> EncoderProtocol:
    settings = {"lr": 2e-3, "batch_size": 8, "epochs": 2, "max_length": 32, "warmup_ratio": 0.1, "weight_decay": 0.01}
    settings.update(finetune)
    return EncoderProtocol(finetune=Finetune(**settings), seeds=1)


def training(requests, golds, *, seed=0, val=None, labels=TAGS, data_hash="data", score=None, **finetune) -> Training:
    val_requests, val_golds = val if val is not None else ([], [])
    return Training(
        requests=requests, golds=golds, validation_requests=val_requests, validation_golds=val_golds,
        labels=labels, protocol=protocol(**finetune), seed=seed, data_hash=data_hash, score_validation=score,
    )


def make_adapter(folder: Path, *, use_cache: bool = True, **args):
    from metabench.models.base import AdapterSettings
    from metabench.models.hf_encoder import HFEncoder

    settings = AdapterSettings(use_cache=use_cache, progress=False)
    return HFEncoder({"pretrained": str(folder), **{k: str(v) for k, v in args.items()}}, settings=settings)
