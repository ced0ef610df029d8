"""What hashing a model folder costs before a run's first forward pass: cold (a new machine, an empty hash memo)
and warm (the memo keyed by each file's real path, size and mtime), for a folder the size of an 8B model.

The folder is a config.json and ``--shards`` safetensors-named files adding up to ``--gigabytes``, written as
sparse files (no disk space, and reading them costs what sha256 costs, not what the disk costs: a real folder
on a slow disk is slower cold, never warm). It times ``folder_hashes`` (what ``hf-decoder`` keys its answers
with) in a fresh cache, then again, and prints both and the sha256 rate.

    python benchmarks/bench_model_hash.py                 # 16 GB in 4 shards (a Llama-3.1-8B bf16 folder)
    python benchmarks/bench_model_hash.py --gigabytes 2
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gigabytes", type=float, default=16.0)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-model-hash-") as tmp:
        folder, cache = Path(tmp) / "model", Path(tmp) / "cache"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}))
        size = int(args.gigabytes * 1e9 / args.shards)
        for shard in range(args.shards):
            with open(folder / f"model-{shard + 1:05d}-of-{args.shards:05d}.safetensors", "wb") as handle:
                handle.truncate(size)  # sparse: reads as zeros
        os.environ["METABENCH_CACHE_DIR"] = str(cache)
        from metabench.models.hf_common import folder_hashes

        started = time.perf_counter()
        cold = folder_hashes(folder)
        cold_s = time.perf_counter() - started
        started = time.perf_counter()
        warm = folder_hashes(folder)
        warm_s = time.perf_counter() - started
    assert cold == warm and len(cold) == args.shards + 1
    total = size * args.shards
    out = {"gigabytes": total / 1e9, "files": args.shards + 1, "cold_s": cold_s, "warm_s": warm_s,
           "sha256_gb_per_s": total / 1e9 / cold_s, "cpu": os.cpu_count()}
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    print(f"{total / 1e9:.1f} GB in {args.shards} shards: cold {cold_s:.1f} s ({out['sha256_gb_per_s']:.2f} GB/s sha256), "
          f"warm {warm_s * 1e3:.1f} ms (memo by path, size, mtime)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
