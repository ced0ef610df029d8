"""hf-decoder's greedy generation against lm-eval's ``HFLM.generate_until`` on the same loaded model.

For each task the first N test items become the GenerateRequests the runner would send for the task's generated
way (``answer=generated``: the task's prompt, chat template as it says); then, alternating ``--repeat`` times:

- lm-eval's ``generate_until`` at each of ``--lmeval-batch`` sizes (default 8, metabench's CPU default for HFLM,
  and 32: a wider batch is lm-eval's strongest CPU setting for generation, since a decoding step reads every
  weight once whatever the batch);
- metabench's path (:mod:`metabench.models.prefix_generation`: the batch's shared prompt prefix forwarded once,
  finished rows dropped) at ``--batch`` (default: hf-decoder's CPU default for generation).

Timed around the generation call only (tokenisation included; model loading and one untimed warm-up excluded):
wall seconds and the process's CPU seconds. Agreement: how many answers are the same text as lm-eval's (greedy
answers differ only where floating-point order flips a near-tie). The ratio is lm-eval's best (fastest median)
over metabench's.

    OMP_NUM_THREADS=1 python benchmarks/bench_prefix_generation.py --task vua18_seq:64 --repeat 2

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


def run_task(adapter, registry, task_name: str, limit: int, repeat: int, lmeval_batches: list[int],
             batch: int) -> dict:
    from metabench import answering
    from metabench.config.index import TaskIndex
    from metabench.jobs import build_kind, prepare
    from metabench.models.lmeval_bridge import LMEvalDecoder
    from metabench.models.prefix_generation import shared_prefix_generate

    task = TaskIndex(registry).load(task_name)
    kind = build_kind(registry, task, answering.SECTIONS[answering.GENERATED],
                      answering.parse_args({"answer": "generated"}, "hf-decoder"))
    data = prepare(registry, task, limit=limit, kind=kind)
    requests = [data.kind.request(item) for item in data.test.items]
    lm = adapter.lm

    def lmeval_at(size):
        def generate(reqs):
            lm.batch_size_per_gpu = size  # HFLM.batch_size reads it
            return LMEvalDecoder.generate(adapter, reqs, 0)
        return generate

    def metabench_path(reqs):
        return shared_prefix_generate(lm, [adapter.context(r.prompt, r) for r in reqs], reqs[0], batch)

    paths = {f"lm_eval@{size}": lmeval_at(size) for size in lmeval_batches}
    paths[f"metabench@{batch}"] = metabench_path
    for generate in paths.values():  # warm-up, untimed
        generate(requests[:2])
    seconds = {name: {"wall": [], "cpu": []} for name in paths}
    answers = {}
    print(f"\n== {task_name}: {len(requests)} items, {repeat} alternating repetitions")
    for rep in range(repeat):
        for name, generate in paths.items():
            wall, cpu = time.perf_counter(), time.process_time()
            answers[name] = generate(requests)
            seconds[name]["wall"].append(time.perf_counter() - wall)
            seconds[name]["cpu"].append(time.process_time() - cpu)
        print(f"repetition {rep}: " + "   ".join(f"{n} {s['wall'][-1]:6.1f} s wall ({s['cpu'][-1]:6.1f} s CPU)"
                                                  for n, s in seconds.items())
              + f"   load {os.getloadavg()[0]:.2f}", flush=True)
    med = {name: {k: statistics.median(v) for k, v in s.items()} for name, s in seconds.items()}
    ours = f"metabench@{batch}"
    best = min((n for n in paths if n != ours), key=lambda n: med[n]["cpu"])
    reference = answers[f"lm_eval@{lmeval_batches[0]}"]
    summary = {
        "task": task_name, "items": len(requests), "seconds": seconds, "lm_eval_best": best,
        "same_text_as_lm_eval": {name: sum(a == b for a, b in zip(out, reference, strict=True))
                                 for name, out in answers.items()},
        "speedup_cpu_vs_best": med[best]["cpu"] / med[ours]["cpu"],
        "speedup_wall_vs_best": med[best]["wall"] / med[ours]["wall"],
        "speedup_cpu_vs_lm_eval_default": med[f"lm_eval@{lmeval_batches[0]}"]["cpu"] / med[ours]["cpu"],
    }
    print(f"same text as lm_eval@{lmeval_batches[0]}: {summary['same_text_as_lm_eval']}")
    print(f"speed-up, lm-eval's best ({best}) / metabench (medians): {summary['speedup_wall_vs_best']:.2f}x wall, "
          f"{summary['speedup_cpu_vs_best']:.2f}x CPU; against lm_eval@{lmeval_batches[0]}: "
          f"{summary['speedup_cpu_vs_lm_eval_default']:.2f}x CPU")
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", action="append", help="TASK[:LIMIT], repeatable (default: vua18_seq:64)")
    parser.add_argument("--model", default="smollm2-135m", help="registered short name or HF folder")
    parser.add_argument("--lmeval-batch", type=int, action="append", help="lm-eval batch sizes (default: 8 and 32)")
    parser.add_argument("--batch", type=int, help="metabench's batch (default: hf-decoder's CPU generation batch)")
    parser.add_argument("--repeat", type=int, default=2, help="alternating repetitions")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)

    from metabench.models.hf_decoder import CPU_GENERATION_BATCH, HFDecoder
    from metabench.plugins import default_registry

    registry = default_registry()
    adapter = HFDecoder({"pretrained": args.model, "batch_size": "8"}, registry=registry)
    adapter.lm  # noqa: B018 - load before timing anything
    info = {k: adapter.info().get(k) for k in ("path", "dtype", "device", "load_s", "torch_version")}
    print(f"model {info}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; load average {os.getloadavg()}")
    batch = args.batch or CPU_GENERATION_BATCH
    out = {"model": info, "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
           "load_average_start": os.getloadavg(), "tasks": []}
    for spec in args.task or ["vua18_seq:64"]:
        task, _, limit = spec.partition(":")
        out["tasks"].append(run_task(adapter, registry, task, int(limit or 64), args.repeat,
                                     args.lmeval_batch or [8, 32], batch))
    out["load_average_end"] = os.getloadavg()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0 if all(t["same_text_as_lm_eval"][f"metabench@{batch}"] >= 0.95 * t["items"] for t in out["tasks"]) else 1


if __name__ == "__main__":
    sys.exit(main())
