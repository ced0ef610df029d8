"""Fixtures for the encoder tests: a tiny random BERT (built once per session) and synthetic training data."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
REPO_ROOT = Path(__file__).resolve().parents[2]

from metabench.config.schema import EncoderProtocol, Finetune  # noqa: E402
from metabench.requests import ClassifyRequest, TagRequest, Training  # noqa: E402

TAGS = ("O", "B-METAPHOR", "I-METAPHOR")
METAPHORIC = {"grasped", "attack", "bright", "storm", "heart"}
VOCAB = "the war of ideas is a heart money grasped attack argument bright future cold storm zzq idea. x-ray".split()


@pytest.fixture(scope="session", autouse=True)
def one_thread():
    """One torch thread: these models are tiny, and several threads on a busy 2-core machine spin-wait badly."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    from tiny_bert import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture
def cache_dir(monkeypatch, tmp_path) -> Path:
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


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


def make_adapter(folder: Path, **args):
    from metabench.models.hf_encoder import HFEncoder

    adapter = HFEncoder({"pretrained": str(folder), **{k: str(v) for k, v in args.items()}})
    adapter.progress = False
    return adapter
