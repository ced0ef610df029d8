"""Agreement and speed of metabench's decoder path against lm-evaluation-harness itself (the anchor).

Each task (a MUNCH judgement subset with one-token options " A".." D", and Fig-QA endings, whose options are
whole sentences, i.e. multi-token) is run three ways, each as a fresh process timed end to end (start-up,
task and data loading, model loading, scoring):

1. ``metabench --tasks TASK --model hf-decoder:FOLDER,batch_size=B,share_prompt=S --limit N`` with an empty
   answer cache;
2. ``lm_eval --model hf --model_args pretrained=FOLDER --batch_size B --device cpu --tasks TASK
   --include_path EXPORT --log_samples`` on the task as ``metabench export lm-eval`` writes it;
3. the metabench command again, now served from the per-item answer cache.

Steps 1 and 2 alternate (ABAB) ``--repeat`` times (the machine may be shared: medians and minima). Both sides
start from the same converted model folder; the one-off conversion of SmolLM2's GGUF weights into that
folder (what a first ``hf-decoder:smollm2-135m`` on a new machine pays) is timed on its own, in a fresh cache.

Agreement is checked on the log-likelihood of EVERY option of every item, not only the argmax (SmolLM2
answers "D" on all 50 MUNCH items, so argmax agreement alone cannot tell two scorers apart): the number of
options compared, the largest and mean |difference|, and how many items get the same argmax.

Redundant tokens: lm-eval forwards each (prompt, option) pair as its own sequence and merges only pairs whose
``(prompt + option)[:-1]`` is identical (one-token options). The script counts, with lm-eval's own
tokenisation (``HFLM._encode_pair``) on the contexts metabench sends (chat template applied where the task
says), the tokens lm-eval forwards and the tokens hf-decoder's prompt-sharing scorer (``share_prompt=true``,
its default) forwards: each prompt once plus each option minus its last token. ``--share-prompt false`` runs
metabench on lm-eval's own scoring path instead; ``benchmarks/bench_prompt_sharing.py`` times the two
scorers on one loaded model. Tasks whose protocol applies the chat template (e.g. the scored NLI tasks,
``--task mlp_m4x_original_nli_zero_ll:50``) are run by lm-eval with ``--apply_chat_template``.

    python benchmarks/bench_decoder_vs_lmeval.py                      # SmolLM2-135M; MUNCH (50) + Fig-QA (100)
    python benchmarks/bench_decoder_vs_lmeval.py --task munch_sent_judge_mword_p2:50 --model /path/to/hf/folder
    python benchmarks/bench_decoder_vs_lmeval.py --tokens-only --model /path/to/hf/folder \\
        --task mlp_m4x_original_nli_zero_ll:50 --task figqa_endings_dev:1094

Needs the MUNCH and Fig-QA data (METABENCH_DATA_DIR) and, for the default model, the metabench-offline-models
plugin.
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


def _resolve_model(name: str, env: dict, log: Path) -> tuple[Path, float | None]:
    """The model folder, and the seconds a fresh process took to build it (GGUF conversion) in ``env``'s empty
    cache (None for a folder given as a path)."""
    path = Path(name)
    if path.is_dir():
        return path.resolve(), None
    code = ("from metabench.plugins import default_registry; "
            f"print(default_registry().resolve('pretrained', {name!r})())")
    seconds = _timed([sys.executable, "-c", code], env, log)
    return Path(log.read_text().strip().splitlines()[-1]).resolve(), seconds


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


def redundant_tokens(folder: Path, task: str, limit: int) -> dict:
    """Tokens lm-eval forwards for the task's first ``limit`` items vs a scorer sharing each prompt's forward pass
    (hf-decoder's ``share_prompt``), on the contexts metabench sends (chat template applied where the task says)."""
    from metabench.config.index import TaskIndex
    from metabench.jobs import prepare
    from metabench.models.hf_decoder import HFDecoder
    from metabench.models.prompt_sharing import forwarded_tokens
    from metabench.plugins import default_registry

    registry = default_registry()
    data = prepare(registry, TaskIndex(registry).load(task), limit=limit)
    adapter = HFDecoder({"pretrained": str(folder), "batch_size": "1"}, registry=registry)
    requests = [data.kind.request(item) for item in data.test.items]
    contexts = [adapter.context(r.context, r) for r in requests]
    counts = forwarded_tokens(adapter.lm, contexts, [r.options for r in requests])
    multi = sum(any(len(adapter.lm._encode_pair(c, o)[1]) > 1 for o in r.options) for c, r in zip(contexts, requests))
    return {**counts, "items_with_multi_token_options": multi,
            "saving_upper_bound": counts["tokens_lm_eval"] / counts["tokens_shared_prompt"]}


def _uses_chat(task: str) -> bool:
    from metabench.config.index import TaskIndex
    from metabench.plugins import default_registry

    decoder = TaskIndex(default_registry()).load(task).config.protocol.decoder
    return bool(decoder is not None and decoder.chat_template)


def run_task(task: str, limit: int, folder: Path, args, work: Path, env: dict) -> dict:
    from metabench.export.lmeval import export_lmeval
    from metabench.plugins import default_registry

    export = work / "export"
    export_lmeval(default_registry(), task, export, limit=limit)
    chat = ["--apply_chat_template"] if _uses_chat(task) else []  # as metabench applies it (the task's protocol)

    device, dtype = getattr(args, "device", "cpu"), getattr(args, "dtype", None)  # gpu_check.py sets both
    placement = f",device={device}" + (f",dtype={dtype}" if dtype else "")

    def mb_cmd(rep: int) -> list[str]:
        model = f"hf-decoder:{folder},batch_size={args.batch_size},share_prompt={args.share_prompt}{placement}"
        return [sys.executable, "-m", "metabench.cli", "--tasks", task, "--model", model,
                "--limit", str(limit), "-o", str(work / f"runs{rep}"), "--no-progress"]

    def lm_cmd(rep: int) -> list[str]:
        model_args = f"pretrained={folder}" + (f",dtype={dtype}" if dtype else "")
        return [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args", model_args, "--device", device,
                "--batch_size", str(args.batch_size), "--tasks", task, "--include_path", str(export),
                "--log_samples", "--output_path", str(work / f"lmeval{rep}")] + chat

    print(f"\n== {task}: {limit} items, batch size {args.batch_size}, {args.repeat} alternating repetitions")
    t_mb, t_lm = [], []
    for rep in range(args.repeat):
        cache = work / f"cache{rep}"  # an empty answer cache per repetition (model file hashes kept warm)
        shutil.copytree(work.parent / "cache", cache)
        env_rep = {**env, "METABENCH_CACHE_DIR": str(cache)}
        t_mb.append(_timed(mb_cmd(rep), env_rep, work / f"metabench{rep}.log"))
        t_lm.append(_timed(lm_cmd(rep), env_rep, work / f"lmeval{rep}.log"))
        print(f"repetition {rep}: metabench (empty cache) {t_mb[-1]:7.1f} s   lm-eval CLI {t_lm[-1]:7.1f} s"
              f"   (load {os.getloadavg()[0]:.1f})", flush=True)
    t_cached = None
    if getattr(args, "cached_rerun", True):  # gpu_check.py reads runs0's own timings: it skips this rerun
        t_cached = _timed(mb_cmd(0), {**env, "METABENCH_CACHE_DIR": str(work / "cache0")}, work / "metabench-cached.log")
        print(f"metabench from the answer cache: {t_cached:.1f} s")

    ours = _metabench_answers(work / "runs0", task)
    theirs = _lmeval_answers(work / "lmeval0", task)
    common = sorted(set(ours) & set(theirs))
    diffs = [abs(a - b) for i in common
             for a, b in zip(ours[i]["prediction"]["loglikelihoods"], theirs[i]["loglikelihoods"], strict=True)]
    same = sum(ours[i]["prediction"]["index"] == theirs[i]["index"] for i in common)
    med_mb, med_lm = statistics.median(t_mb), statistics.median(t_lm)
    summary = {
        "task": task, "items": len(common), "limit": limit, "options_compared": len(diffs),
        "same_argmax": same, "same_gold": all(theirs[i]["gold"] == ours[i]["gold"] for i in common),
        "max_abs_loglikelihood_diff": max(diffs), "mean_abs_loglikelihood_diff": statistics.fmean(diffs),
        "options_diff_over_1e-3": sum(d > 1e-3 for d in diffs),
        "accuracy_metabench": sum(ours[i]["prediction"]["index"] == ours[i]["gold"] for i in common) / len(common),
        "accuracy_lm_eval": sum(theirs[i]["index"] == theirs[i]["gold"] for i in common) / len(common),
        "seconds_metabench": t_mb, "seconds_lm_eval": t_lm, "seconds_metabench_cached": t_cached,
        "ratio_metabench_over_lm_eval_median": med_mb / med_lm, "ratio_metabench_over_lm_eval_min": min(t_mb) / min(t_lm),
        "speedup_cached_median": med_mb / t_cached if t_cached else None,
        "share_prompt": args.share_prompt,
        **(redundant_tokens(folder, task, limit) if getattr(args, "count_tokens", True) else {}),
    }
    print(f"items compared: {len(common)} (metabench {len(ours)}, lm-eval {len(theirs)}); options compared: {len(diffs)}")
    print(f"per-option |loglikelihood diff|: max {summary['max_abs_loglikelihood_diff']:.2e}, "
          f"mean {summary['mean_abs_loglikelihood_diff']:.2e}, over 1e-3: {summary['options_diff_over_1e-3']}")
    print(f"same argmax: {same}/{len(common)}   same gold: {summary['same_gold']}   accuracy metabench/lm-eval: "
          f"{summary['accuracy_metabench']:.4f} / {summary['accuracy_lm_eval']:.4f}")
    print(f"time ratio metabench / lm-eval: {med_mb / med_lm:.2f} (medians), {min(t_mb) / min(t_lm):.2f} (minima)")
    if t_cached:
        print(f"cache speed-up fresh / cached: {med_mb / t_cached:.1f}x")
    if "tokens_lm_eval" not in summary:
        return summary
    print(f"tokens forwarded: lm-eval {summary['tokens_lm_eval']}, shared prompt {summary['tokens_shared_prompt']} "
          f"(items with a multi-token option: {summary['items_with_multi_token_options']}); sharing the prompt's "
          f"forward pass saves at most {summary['saving_upper_bound']:.2f}x (bench_prompt_sharing.py times it)")
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", action="append", help="TASK[:LIMIT], repeatable (default: "
                        "munch_word_judge_implicit_p1:50 and figqa_endings_dev:100)")
    parser.add_argument("--model", default="smollm2-135m", help="registered short name or HF folder")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2, help="alternating metabench / lm-eval repetitions")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/metabench-bench-decoder"))
    parser.add_argument("--share-prompt", choices=("true", "false"), default="true",
                        help="hf-decoder's choice scorer (true: its default, the shared prompt; false: lm-eval's own)")
    parser.add_argument("--tokens-only", action="store_true",
                        help="only count the tokens each scorer forwards (no runs, no timing)")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    tasks = args.task or ["munch_word_judge_implicit_p1:50", "figqa_endings_dev:100"]
    if args.tokens_only:
        counts = []
        for spec in tasks:
            task, _, limit = spec.partition(":")
            n = int(limit or 50)
            counts.append({"task": task, "limit": n, **redundant_tokens(Path(args.model), task, n)})
            print(json.dumps(counts[-1]))
        if args.json:
            args.json.write_text(json.dumps(counts, indent=2) + "\n")
        return 0

    work = args.workdir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    (work / "cache").mkdir(parents=True)
    env = {**os.environ, "METABENCH_CACHE_DIR": str(work / "cache"), "HF_DATASETS_CACHE": str(work / "hf-datasets"),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    folder, convert_s = _resolve_model(args.model, {**env, "METABENCH_CACHE_DIR": str(work / "convert")},
                                       work / "convert.log")
    print(f"model {folder}; load average {os.getloadavg()}")
    if convert_s is not None:
        print(f"one-off model conversion (GGUF -> HF folder, fresh cache, own process): {convert_s:.1f} s; not counted below")
    out = {"model": str(folder), "conversion_seconds": convert_s, "batch_size": args.batch_size, "tasks": []}
    for spec in tasks:
        task, _, limit = spec.partition(":")
        out["tasks"].append(run_task(task, int(limit or 50), folder, args, work / task, env))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    ok = all(t["same_argmax"] == t["items"] == t["limit"] for t in out["tasks"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
