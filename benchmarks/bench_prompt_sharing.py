"""hf-decoder's two choice scorers on the same loaded model: lm-eval's ``HFLM.loglikelihood`` (``share_prompt=false``)
against the prompt-sharing scorer (``share_prompt=true``, :mod:`metabench.models.prompt_sharing`).

For each task the first N test items become the ChoiceRequests the runner would send (the task's prompt, chat
template applied as the task says); both scorers then answer exactly the same (context, options) lists in one
process, alternating (lm-eval, shared, lm-eval, shared, ...) ``--repeat`` times. Timed around the scoring
call only (tokenisation included; model loading, data and one untimed warm-up item excluded): wall seconds
and the process's CPU seconds (robust to other jobs on the machine). Reported per task:

- agreement over EVERY option of every item: max and mean |log-likelihood difference|, options over 1e-4,
  items with the same argmax, options with the same is-greedy flag;
- tokens forwarded (lm-eval's ``_encode_pair``, padding not counted): lm-eval one sequence per distinct
  ``(context + option)[:-1]``, the shared scorer each context once plus each option but its last token;
- the speed ratio lm-eval / shared (medians of the wall and CPU seconds).

    OMP_NUM_THREADS=1 /work/bin/quiet python benchmarks/bench_prompt_sharing.py \\
        --model /path/to/smollm2-folder --task mlp_m4x_original_nli_zero_ll:50 --repeat 2
    python benchmarks/bench_prompt_sharing.py --task moh_x_cv_fold0:64 --shots 5    # few-shot prompts

Needs the tasks' data (METABENCH_DATA_DIR) and, for a registered short name, its plugin.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path


def _timed(score, contexts, options) -> tuple[list, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = score(contexts, options)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def run_task(adapter, registry, task_name: str, limit: int, repeat: int, shots: int = 0) -> dict:
    from metabench import answering
    from metabench.config.index import TaskIndex
    from metabench.jobs import build_kind, prepare
    from metabench.models.lmeval_bridge import LMEvalDecoder
    from metabench.models.prompt_sharing import forwarded_tokens

    task = TaskIndex(registry).load(task_name)
    kind = None
    if shots:  # the runner's few-shot prompts: the benchmark's decoder section, seed 0's demonstrations
        kind = build_kind(registry, task, "decoder", answering.parse_args({"shots": str(shots)}, "hf-decoder"))
    data = prepare(registry, task, limit=limit, kind=kind)
    if shots:
        data.kind.reseed(0)
    requests = [data.kind.request(item) for item in data.test.items]
    contexts = [adapter.context(r.context, r) for r in requests]
    options = [tuple(r.options) for r in requests]
    paths = {"lm_eval": lambda c, o: LMEvalDecoder.option_scores(adapter, c, o), "shared": adapter.option_scores}
    seconds: dict[str, dict[str, list[float]]] = {p: {"wall": [], "cpu": []} for p in paths}
    answers = {}
    for score in paths.values():  # warm-up, untimed: first-call costs (allocator, kernels) hit neither side
        score(contexts[:1], options[:1])
    print(f"\n== {task_name}{f' ({shots}-shot)' if shots else ''}: {len(requests)} items, {sum(map(len, options))} options, "
          f"{repeat} alternating repetitions")
    for rep in range(repeat):
        for name, score in paths.items():
            answers[name], wall, cpu = _timed(score, contexts, options)
            seconds[name]["wall"].append(wall)
            seconds[name]["cpu"].append(cpu)
        print(f"repetition {rep}: lm-eval {seconds['lm_eval']['wall'][-1]:6.1f} s wall "
              f"({seconds['lm_eval']['cpu'][-1]:6.1f} s CPU)   shared {seconds['shared']['wall'][-1]:6.1f} s wall "
              f"({seconds['shared']['cpu'][-1]:6.1f} s CPU)   load {os.getloadavg()[0]:.2f}", flush=True)

    pairs = [(a, b) for ours, theirs in zip(answers["shared"], answers["lm_eval"], strict=True)
             for a, b in zip(ours, theirs, strict=True)]
    diffs = [abs(a[0] - b[0]) for a, b in pairs]

    def argmax(scores):
        return max(range(len(scores)), key=lambda i: (scores[i][0], -i))

    same = sum(argmax(a) == argmax(b) for a, b in zip(answers["shared"], answers["lm_eval"], strict=True))
    tokens = forwarded_tokens(adapter.lm, contexts, options)
    med = {p: {k: statistics.median(v) for k, v in s.items()} for p, s in seconds.items()}
    summary = {
        "task": task_name, "shots": shots, "items": len(requests), "options_compared": len(diffs),
        "max_abs_loglikelihood_diff": max(diffs), "mean_abs_loglikelihood_diff": statistics.fmean(diffs),
        "options_diff_over_1e-4": sum(d > 1e-4 for d in diffs), "same_argmax": same,
        "same_is_greedy": sum(a[1] == b[1] for a, b in pairs),
        **tokens, "tokens_ratio": tokens["tokens_lm_eval"] / tokens["tokens_shared_prompt"],
        "seconds": seconds,
        "speedup_wall_median": med["lm_eval"]["wall"] / med["shared"]["wall"],
        "speedup_cpu_median": med["lm_eval"]["cpu"] / med["shared"]["cpu"],
        "fallback_items": adapter.info().get("share_prompt_fallback_items", 0),
    }
    print(f"per-option |loglikelihood diff| over {len(diffs)} options: "
          f"max {summary['max_abs_loglikelihood_diff']:.2e}, "
          f"mean {summary['mean_abs_loglikelihood_diff']:.2e}, over 1e-4: {summary['options_diff_over_1e-4']}; "
          f"same argmax {same}/{len(requests)}; same is-greedy {summary['same_is_greedy']}/{len(pairs)}")
    print(f"tokens forwarded: lm-eval {tokens['tokens_lm_eval']}, shared {tokens['tokens_shared_prompt']} "
          f"({summary['tokens_ratio']:.2f}x)")
    print(f"speed-up lm-eval / shared (medians): {summary['speedup_wall_median']:.2f}x wall, "
          f"{summary['speedup_cpu_median']:.2f}x CPU")
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", action="append", help="TASK[:LIMIT], repeatable (default: "
                        "mlp_m4x_original_nli_zero_ll:50 and figqa_endings_dev:50)")
    parser.add_argument("--model", default="smollm2-135m", help="registered short name or HF folder")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--repeat", type=int, default=2, help="alternating lm-eval / shared repetitions")
    parser.add_argument("--shots", type=int, default=0, help="K demonstrations per prompt (the task's decoder "
                        "section, seed 0's draw): the shared scorer then forwards a batch's common demonstrations once")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    tasks = args.task or ["mlp_m4x_original_nli_zero_ll:50", "figqa_endings_dev:50"]

    from metabench.models.hf_decoder import HFDecoder
    from metabench.plugins import default_registry

    registry = default_registry()
    adapter = HFDecoder({"pretrained": args.model, "batch_size": str(args.batch_size), "dtype": args.dtype,
                         "share_prompt": "true"}, registry=registry)
    adapter.lm  # noqa: B018 - load before timing anything
    info = {k: adapter.info().get(k) for k in ("path", "dtype", "device", "load_s", "torch_version")}
    print(f"model {info}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; load average {os.getloadavg()}")
    out = {"model": info, "batch_size": args.batch_size, "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
           "load_average_start": os.getloadavg(), "tasks": []}
    for spec in tasks:
        task, _, limit = spec.partition(":")
        out["tasks"].append(run_task(adapter, registry, task, int(limit or 50), args.repeat, args.shots))
    out["load_average_end"] = os.getloadavg()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    ok = all(t["same_argmax"] == t["items"] and t["max_abs_loglikelihood_diff"] < 1e-3 for t in out["tasks"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
