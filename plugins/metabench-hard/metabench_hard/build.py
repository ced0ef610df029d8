"""Building the pipeline's products on demand: the SOR encoder of a model, then its HARD(M) set.

Each product is found in the cache by its key (:mod:`.store`) and built only when missing, so ``metabench hard
mine`` after ``metabench hard train`` reuses the trained encoder, and a repeated command costs the look-ups.
"""

from __future__ import annotations

import json
import platform
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from .mine import mine_word_phi
from .pool import files_hash, moh_sense_labels, pool_instances, semcor_instances
from .sor import SORSettings, embed, train_sor
from .store import (
    MineSettings,
    build_dir,
    build_key,
    record_build,
    resolve_model,
    sor_key,
    sor_store,
)


def _say(log, text: str) -> None:
    if log is not None:
        log(text)


def ensure_sor(registry, model: str, settings: SORSettings, log=None) -> tuple[str, Path, dict]:
    """(key, folder, metadata) of the SOR encoder of ``model`` under ``settings``, trained if missing."""
    base = resolve_model(model, registry)
    semcor, files = semcor_instances(registry)
    labels = moh_sense_labels(registry)
    excluded = labels.metaphorical() if settings.exclude_metaphorical else set()
    data_hash = files_hash(files, labels.files)
    key = sor_key(base, data_hash, settings)
    store = sor_store()
    folder = store.find(key)
    if folder is not None:
        _say(log, f"SOR encoder found in the cache: {folder}")
        return key, folder, store.meta(key)
    _say(log, f"training the SOR encoder of {base.name} ({settings.steps} steps) into {store.root / key}")

    def write(tmp: Path) -> dict:
        meta = train_sor(base.folder, semcor, excluded, settings, tmp, log=log)
        return {"model": base.name, "base_fingerprint": base.fingerprint, "data_hash": data_hash,
                "machine": platform.machine(), **meta}

    folder = store.save(key, write)
    return key, folder, store.meta(key)


def ensure_hard(registry, model: str, settings: SORSettings, mine: MineSettings, log=None) -> Path:
    """The build folder of HARD(model): phi and nearest literal of every pool instance of a MOH verb."""
    key_sor, sor_folder, sor_meta = ensure_sor(registry, model, settings, log)
    pool, pool_files = pool_instances(registry)
    labels = moh_sense_labels(registry)
    key = build_key(key_sor, files_hash(pool_files, labels.files), mine)
    folder = build_dir(key)
    if (folder / "build.json").is_file():
        _say(log, f"HARD set found in the cache: {folder}")
        record_build(sor_meta["base_fingerprint"], settings, mine, key, model)
        return folder
    words = labels.words
    instances = [i for i in pool if i.word in words]
    if mine.inventory == "moh":
        instances = [i for i in instances if i.key in labels.labels]
    if mine.words == "candidates":  # only these verbs can yield a hard metaphor: phi is computed per verb
        counts, metaphorical = Counter(i.key for i in instances), labels.metaphorical()
        candidates = {i.word for i in instances if i.key in metaphorical and counts[i.key] >= mine.rate_min_instances}
        instances = [i for i in instances if i.word in candidates]
    _say(log, f"embedding {len(instances)} pool instances of {len({i.word for i in instances})} MOH verbs")
    started = time.monotonic()
    vectors = embed(sor_folder, instances, max_length=mine.max_length, layer=settings.layer, log=log)
    embed_seconds = time.monotonic() - started
    rows = mine_word_phi(instances, vectors, labels, mine)
    tmp = folder.with_name(folder.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    import numpy as np

    np.save(tmp / "vectors.npy", vectors)
    with open(tmp / "instances.jsonl", "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, sort_keys=True) + "\n")
    meta = {"model": model, "base_fingerprint": sor_meta["base_fingerprint"], "sor_key": key_sor,
            "sor_settings": asdict(settings), "sor_wall_seconds": sor_meta.get("wall_seconds"),
            "mine_settings": asdict(mine), "pool_files": pool_files, "label_files": labels.files,
            "instances": len(rows), "embed_seconds": round(embed_seconds, 1)}
    (tmp / "build.json").write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    tmp.replace(folder)
    record_build(sor_meta["base_fingerprint"], settings, mine, key, model)
    return folder
