"""Agreement and speed of metabench's decoder path against lm-evaluation-harness itself (the anchor).

One MUNCH judgement subset is run three ways, each as a fresh process timed end to end (start-up, task and
data loading, model loading, scoring):

1. ``metabench --tasks TASK --model hf-decoder:FOLDER,batch_size=B --limit N`` with an empty answer cache;
2. ``lm_eval --model hf --model_args pretrained=FOLDER --batch_size B --device cpu --tasks TASK
   --include_path EXPORT --log_samples`` on the task as ``metabench export lm-eval`` writes it;
3. the metabench command again, now served from the per-item answer cache.

Steps 1 and 2 alternate ``--repeat`` times (the machine may be shared: medians and minima are reported).
It checks that both harnesses pick the same option for every item (and reports the largest difference in
per-option log-likelihood and the two accuracies), and prints the time ratios: metabench / lm-eval
(target <= 1.0) and fresh / cached metabench (target >= 20).

    python benchmarks/bench_decoder_vs_lmeval.py --limit 50              # SmolLM2-135M, munch_word_judge_implicit_p1
    python benchmarks/bench_decoder_vs_lmeval.py --model /path/to/hf/folder --task munch_sent_judge_mword_p2

Needs the MUNCH data (METABENCH_DATA_DIR) and, for the default model, the metabench-offline-models plugin.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _resolve_model(name: str) -> Path:
    path = Path(name)
    if path.is_dir():
        return path.resolve()
    from metabench.plugins import default_registry

    return Path(default_registry().resolve("pretrained", name)()).resolve()


def _timed(cmd: list[str], env: dict, log: Path) -> float:
    started = time.perf_counter()
    with open(log, "w") as handle:
        done = subprocess.run(cmd, env=env, stdout=handle, stderr=subprocess.STDOUT, cwd=REPO)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"command failed ({done.returncode}), see {log}:\n  {' '.join(cmd)}")
    return elapsed


def _metabench_answers(run_root: Path, task: str) -> dict[str, dict]:
    (samples,) = glob.glob(str(run_root / task / "*" / "samples.jsonl"))
    out = {}
    for line in open(samples, encoding="utf-8"):
        row = json.loads(line)
        out[row["id"]] = row
    return out


def _lmeval_answers(out_root: Path, task: str) -> dict[str, dict]:
    (samples,) = glob.glob(str(out_root / "**" / f"samples_{task}_*.jsonl"), recursive=True)
    out = {}
    for line in open(samples, encoding="utf-8"):
        row = json.loads(line)
        lls = [float(r[0]) for r in row["filtered_resps"]]
        best = max(range(len(lls)), key=lambda i: (lls[i], -i))
        out[row["doc"]["id"]] = {"index": best, "loglikelihoods": lls, "gold": int(row["target"])}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="munch_word_judge_implicit_p1")
    parser.add_argument("--model", default="smollm2-135m", help="registered short name or HF folder")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3, help="alternating metabench / lm-eval repetitions")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/metabench-bench-decoder"))
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)

    folder = _resolve_model(args.model)
    work = args.workdir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    (work / "cache" / "fingerprints").mkdir(parents=True)
    from metabench.cache import cache_root

    warm = cache_root() / "fingerprints" / "files.json"  # the model's file hashes, if metabench saw it before
    if warm.is_file():
        shutil.copy(warm, work / "cache" / "fingerprints" / "files.json")
    env = {**os.environ, "METABENCH_CACHE_DIR": str(work / "cache"), "HF_DATASETS_CACHE": str(work / "hf-datasets"),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}

    from metabench.export.lmeval import export_lmeval
    from metabench.plugins import default_registry

    export_lmeval(default_registry(), args.task, work / "export", limit=args.limit)

    def mb_cmd(rep: int) -> list[str]:
        return [str(BIN / "metabench"), "--tasks", args.task, "--model", f"hf-decoder:{folder},batch_size={args.batch_size}",
                "--limit", str(args.limit), "-o", str(work / f"runs{rep}"), "--no-progress"]

    def lm_cmd(rep: int) -> list[str]:
        return [str(BIN / "lm_eval"), "--model", "hf", "--model_args", f"pretrained={folder}", "--device", "cpu",
                "--batch_size", str(args.batch_size), "--tasks", args.task, "--include_path", str(work / "export"),
                "--log_samples", "--output_path", str(work / f"lmeval{rep}")]

    print(f"model {folder}\ntask {args.task}, {args.limit} items, batch size {args.batch_size}, "
          f"{args.repeat} alternating repetitions (the machine is shared: medians and minima are reported)\n")
    t_mb, t_lm = [], []
    for rep in range(args.repeat):
        cache = work / f"cache{rep}"  # an empty answer cache per repetition (model file hashes kept warm)
        shutil.copytree(work / "cache", cache)
        env_rep = {**env, "METABENCH_CACHE_DIR": str(cache)}
        t_mb.append(_timed(mb_cmd(rep), env_rep, work / f"metabench{rep}.log"))
        t_lm.append(_timed(lm_cmd(rep), env_rep, work / f"lmeval{rep}.log"))
        print(f"repetition {rep}: metabench (empty cache) {t_mb[-1]:7.1f} s   lm-eval CLI {t_lm[-1]:7.1f} s")
    env_cached = {**env, "METABENCH_CACHE_DIR": str(work / "cache0")}
    t_cached = _timed(mb_cmd(0), env_cached, work / "metabench-cached.log")
    print(f"metabench from the answer cache: {t_cached:.1f} s")
    med_mb, med_lm = statistics.median(t_mb), statistics.median(t_lm)

    ours = _metabench_answers(work / "runs0", args.task)
    theirs = _lmeval_answers(work / "lmeval0", args.task)
    common = sorted(set(ours) & set(theirs))
    same = sum(ours[i]["prediction"]["index"] == theirs[i]["index"] for i in common)
    max_diff = max(abs(a - b) for i in common
                   for a, b in zip(ours[i]["prediction"]["loglikelihoods"], theirs[i]["loglikelihoods"]))
    acc_ours = sum(ours[i]["prediction"]["index"] == ours[i]["gold"] for i in common) / len(common)
    acc_theirs = sum(theirs[i]["index"] == theirs[i]["gold"] for i in common) / len(common)
    gold_same = all(theirs[i]["gold"] == ours[i]["gold"] for i in common)
    summary = {
        "task": args.task, "items": len(common), "limit": args.limit, "model": str(folder), "batch_size": args.batch_size,
        "same_answers": same, "same_gold": gold_same, "max_abs_loglikelihood_diff": max_diff,
        "accuracy_metabench": acc_ours, "accuracy_lm_eval": acc_theirs,
        "seconds_metabench": t_mb, "seconds_lm_eval": t_lm, "seconds_metabench_cached": t_cached,
        "ratio_metabench_over_lm_eval_median": med_mb / med_lm, "ratio_metabench_over_lm_eval_min": min(t_mb) / min(t_lm),
        "speedup_cached_median": med_mb / t_cached,
    }
    print(f"\nitems compared:            {len(common)} (metabench {len(ours)}, lm-eval {len(theirs)})")
    print(f"same answer:               {same}/{len(common)}   same gold: {gold_same}")
    print(f"max |loglikelihood diff|:  {max_diff:.2e}")
    print(f"accuracy metabench/lm-eval: {acc_ours:.4f} / {acc_theirs:.4f}")
    print(f"time ratio metabench / lm-eval: {med_mb / med_lm:.2f} (medians), {min(t_mb) / min(t_lm):.2f} (minima)  (target <= 1.0)")
    print(f"cache speed-up fresh / cached:  {med_mb / t_cached:.1f}x (median fresh run)  (target >= 20)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    ok = same == len(common) and len(common) == args.limit and med_mb <= med_lm and med_mb / t_cached >= 20
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
