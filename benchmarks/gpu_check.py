"""The GPU paths end to end (run through benchmarks/gpu_check.sh on a CUDA machine; never run in CI).

For one choice task (default: MUNCH word judgement, Implicit, prompt 1) and SmolLM2-135M it runs

1. ``metabench --tasks TASK --model hf-decoder:smollm2-135m,dtype=bfloat16,device=cuda,batch_size=64``;
2. ``metabench --tasks TASK --model vllm:smollm2-135m,dtype=bfloat16``;
3. raw vLLM on exactly the prompts and options metabench sends (``metabench export lm-eval`` rows):
   ``LLM.generate(prompt + option, SamplingParams(max_tokens=1, prompt_logprobs=0))`` and the summed
   log-probabilities of the option's tokens,

and prints, for each, the tokens scored per second (prompt + option tokens of every request over the time
spent scoring: ``timings.predict_s`` for metabench, the generate call for raw vLLM) and the agreement of the
answers: same argmax and the largest |log-likelihood difference| per option, against hf-decoder.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_metabench(task: str, model: str, limit: int, out: Path) -> tuple[dict, dict]:
    cmd = [sys.executable, "-m", "metabench.cli", "--tasks", task, "--model", model, "--limit", str(limit),
           "--no-cache", "--no-progress", "-o", str(out)]
    subprocess.run(cmd, check=True, cwd=REPO)
    (results,) = glob.glob(str(out / task / "*" / "results.json"))
    (samples,) = glob.glob(str(out / task / "*" / "samples.jsonl"))
    rows = [json.loads(line) for line in open(samples, encoding="utf-8")]
    return json.loads(Path(results).read_text()), {r["id"]: r["prediction"] for r in rows}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="munch_word_judge_implicit_p1")
    parser.add_argument("--limit", type=int, default=1492)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from metabench.export.lmeval import export_lmeval
    from metabench.plugins import default_registry

    registry = default_registry()
    folder = Path(registry.resolve("pretrained", "smollm2-135m")())
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    export_lmeval(registry, args.task, work / "export", limit=args.limit)
    (rows_file,) = glob.glob(str(work / "export" / "**" / f"{args.task}*.jsonl"), recursive=True)
    rows = [json.loads(line) for line in open(rows_file, encoding="utf-8")]

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    tokens = sum(len(tokenizer(r["query"] + option)["input_ids"]) for r in rows for option in r["choices"])

    report = {"task": args.task, "items": len(rows), "tokens": tokens, "paths": {}}
    answers = {}
    for name, model in (("hf-decoder bf16", f"hf-decoder:{folder},dtype=bfloat16,device=cuda,batch_size=64"),
                        ("vllm bf16", f"vllm:{folder},dtype=bfloat16")):
        results, answers[name] = run_metabench(args.task, model, args.limit, work / name.replace(" ", "_"))
        seconds = results["timings"]["predict_s"]
        report["paths"][name] = {"seconds": seconds, "tokens_per_s": tokens / seconds,
                                 "accuracy": results["metrics"]["aggregate"]["accuracy"]["mean"]}

    from vllm import LLM, SamplingParams

    llm = LLM(model=str(folder), dtype="bfloat16")
    prompts, spans = [], []
    for r in rows:  # lm-eval's split: the context's own tokens, the rest of (context + option) is the option
        context_len = len(tokenizer(r["query"], add_special_tokens=False)["input_ids"])
        for option in r["choices"]:
            prompts.append({"prompt_token_ids": tokenizer(r["query"] + option, add_special_tokens=False)["input_ids"]})
            spans.append(context_len)
    started = time.perf_counter()
    outputs = llm.generate(prompts, SamplingParams(max_tokens=1, prompt_logprobs=0), use_tqdm=False)
    seconds = time.perf_counter() - started
    sums = []
    for output, start in zip(outputs, spans):
        ids = output.prompt_token_ids
        sums.append(sum(output.prompt_logprobs[i][ids[i]].logprob for i in range(start, len(ids))))
    raw, k = {}, 0
    for r in rows:
        lls = sums[k : k + len(r["choices"])]
        k += len(r["choices"])
        raw[r["id"]] = {"index": max(range(len(lls)), key=lambda i: (lls[i], -i)), "loglikelihoods": lls}
    answers["raw vLLM bf16"] = raw
    report["paths"]["raw vLLM bf16"] = {"seconds": seconds, "tokens_per_s": tokens / seconds}

    reference = answers["hf-decoder bf16"]
    print(f"\n{args.task}: {len(rows)} items, {tokens} prompt+option tokens; GPU "
          f"{os.popen('nvidia-smi --query-gpu=name --format=csv,noheader').read().strip()}\n")
    print(f"{'path':18s} {'tokens/s':>10s} {'same argmax':>12s} {'max |dLL|':>10s}")
    for name, found in answers.items():
        common = [i for i in reference if i in found]
        same = sum(found[i]["index"] == reference[i]["index"] for i in common)
        diff = max(abs(a - b) for i in common
                   for a, b in zip(found[i]["loglikelihoods"], reference[i]["loglikelihoods"]))
        report["paths"][name].update({"same_argmax_as_hf": same, "max_abs_ll_diff_vs_hf": diff})
        print(f"{name:18s} {report['paths'][name]['tokens_per_s']:10.0f} {same:>6d}/{len(common):<5d} {diff:10.3f}")
    print("\nbfloat16 log-likelihoods differ between kernels; agreement is judged on the argmax.")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
