"""What the tagging grammar adds to a decoding step: constrained ``generate`` against an unconstrained ``generate``
of the same length, on the same model, batch and prompts (any machine; on a GPU it runs on the GPU).

The sentences are the first ``--sentences`` of Meta4XNLI's EN test split as the decoder tagger sends them
(``m4x_det_en_mono_decoder``: its instruction, its tags, the model's tokenizer). Per batch it times

1. ``generate`` with :class:`GrammarProcessor` (greedy, as the task decodes), which runs ``N`` steps;
2. ``generate`` with no processor and ``min_new_tokens = max_new_tokens = N``: the same steps, unconstrained
   (1 and 2 alternate ``--repeat`` times after a warm-up; the minimum of each is kept);
3. the processor's own calls (wall time inside ``__call__``, synchronised on a GPU);
4. the yardstick a constraint is usually written as, and metabench's before this tensor version: each step
   copies the ids to the host, and for every row looks up its prefix's allowed ids (``Grammar.allowed``) and
   writes the mask row by row; timed on the same recorded steps.

and prints the overhead ``(1 - 2) / 2`` per step, with the processor's share. Both sides decode the same
number of steps; their outputs differ (one is constrained), which is the point.

    python benchmarks/bench_grammar_overhead.py                       # SmolLM2-135M, 64 sentences, batch 64
    python benchmarks/bench_grammar_overhead.py --model /path/to/hf/folder --device cuda --dtype bfloat16
    python benchmarks/bench_grammar_overhead.py --json out.json

Needs the Meta4XNLI data (METABENCH_DATA_DIR) and, for the default model, the metabench-offline-models plugin.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


class _Timed:
    """Wraps a logits processor and adds up the wall time of its calls."""

    def __init__(self, inner, device: str):
        self.inner, self.device, self.seconds, self.calls = inner, device, 0.0, 0

    def __call__(self, input_ids, scores):
        _sync(self.device)
        started = time.perf_counter()
        out = self.inner(input_ids, scores)
        _sync(self.device)
        self.seconds += time.perf_counter() - started
        self.calls += 1
        return out


def host_mask_seconds(grammars, steps, start: int, eos: int, vocab: int, device: str) -> float:
    """The per-row host constraint (ids to the host, a prefix walk and a mask row per row) on recorded steps."""
    import torch

    total = 0.0
    for input_ids in steps:
        scores = torch.zeros(input_ids.shape[0], vocab, device=device)
        _sync(device)
        started = time.perf_counter()
        mask = torch.full_like(scores, float("-inf"))
        for row, ids in enumerate(input_ids[:, start:].tolist()):
            mask[row, sorted(grammars[row].allowed(ids) or {eos})] = 0.0
        _ = scores + mask
        _sync(device)
        total += time.perf_counter() - started
    return total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m", help="registered short name or HF folder")
    parser.add_argument("--sentences", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    parser.add_argument("--task", default="m4x_det_en_mono_decoder")
    parser.add_argument("--repeat", type=int, default=2, help="alternating repetitions of each side (minimum kept)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    import torch
    from transformers import GenerationConfig

    from metabench.config.index import TaskIndex
    from metabench.jobs import prepare
    from metabench.models.decoder_tagger import DecoderTagger
    from metabench.models.grammar_processor import GrammarProcessor
    from metabench.plugins import default_registry

    registry = default_registry()
    task = TaskIndex(registry).load(args.task)
    data = prepare(registry, task, limit=args.sentences)
    requests = [data.kind.request(item) for item in data.test.items]
    adapter = DecoderTagger({"pretrained": args.model, "finetune": "true", "device": args.device, "dtype": args.dtype},
                            registry=registry)
    adapter._protocol = task.config.protocol.decoder_finetune  # what fit() sets from the task
    adapter.tokenizer = adapter._load_tokenizer()
    model = adapter._load_base().eval()
    eos, pad = adapter.tokenizer.eos_token_id, adapter.tokenizer.pad_token_id
    vocab = model.get_output_embeddings().weight.shape[0]

    rows = []
    order = sorted(range(len(requests)), key=lambda i: len(requests[i].words))
    for first in range(0, len(order), args.batch_size):
        chunk = [requests[i] for i in order[first : first + args.batch_size]]
        grammars = [adapter._grammar(r) for r in chunk]
        prompts = [adapter._prompt(r.words) for r in chunk]
        width = max(map(len, prompts))
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=args.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=args.device)
        common = {"do_sample": False, "eos_token_id": eos, "pad_token_id": pad}
        steps: list = []

        def record(input_ids, scores, steps=steps):
            steps.append(input_ids.clone())
            return scores

        config = GenerationConfig(max_new_tokens=max(g.longest for g in grammars), **common)

        def generate(generation_config, processors=()):
            _sync(args.device)
            started = time.perf_counter()
            out = model.generate(input_ids=ids, attention_mask=mask, generation_config=generation_config,
                                 logits_processor=list(processors))
            _sync(args.device)
            return out, time.perf_counter() - started

        with torch.inference_mode():
            out, _ = generate(config, [GrammarProcessor(grammars, width, 1, eos)])  # warm-up; the length
            n = out.shape[1] - width
            fixed = GenerationConfig(max_new_tokens=n, min_new_tokens=n, **common)
            constrained = unconstrained = processor = float("inf")
            for repetition in range(args.repeat):  # alternating, the minimum of each side: a shared machine's noise
                steps.clear()
                timed = _Timed(GrammarProcessor(grammars, width, 1, eos), args.device)
                out, seconds = generate(config, [record, timed])
                constrained, processor = min(constrained, seconds), min(processor, timed.seconds)
                plain, seconds = generate(fixed)
                unconstrained = min(unconstrained, seconds)
        assert out.shape[1] - width == plain.shape[1] - width == n, "both sides must decode the same number of steps"
        host = host_mask_seconds(grammars, steps, width, eos, vocab, args.device)
        rows.append({"sentences": len(chunk), "steps": n, "constrained_s": constrained, "unconstrained_s": unconstrained,
                     "processor_s": processor, "host_constraint_s": host})
        print(f"batch of {len(chunk):3d}: {n:3d} steps  constrained {constrained:7.2f} s  unconstrained "
              f"{unconstrained:7.2f} s  processor {processor * 1e3 / n:6.2f} ms/step  "
              f"host-side constraint {host * 1e3 / n:6.2f} ms/step", flush=True)

    steps = sum(r["steps"] for r in rows)
    summary = {
        "model": args.model, "device": args.device, "dtype": args.dtype, "task": args.task,
        "sentences": len(requests), "batch_size": args.batch_size, "batches": rows,
        "overhead_generate": sum(r["constrained_s"] for r in rows) / sum(r["unconstrained_s"] for r in rows) - 1,
        "processor_ms_per_step": 1e3 * sum(r["processor_s"] for r in rows) / steps,
        "host_constraint_ms_per_step": 1e3 * sum(r["host_constraint_s"] for r in rows) / steps,
        "unconstrained_ms_per_step": 1e3 * sum(r["unconstrained_s"] for r in rows) / steps,
    }
    summary["processor_share_of_step"] = summary["processor_ms_per_step"] / summary["unconstrained_ms_per_step"]
    summary["host_constraint_share_of_step"] = summary["host_constraint_ms_per_step"] / summary["unconstrained_ms_per_step"]
    print(f"\n{len(requests)} sentences, {steps} decoding steps, {args.model} on {args.device} ({args.dtype})")
    print(f"unconstrained step: {summary['unconstrained_ms_per_step']:.2f} ms; grammar processor: "
          f"{summary['processor_ms_per_step']:.3f} ms/step ({summary['processor_share_of_step']:.1%} of a step); "
          f"host-side per-row constraint: {summary['host_constraint_ms_per_step']:.3f} ms/step "
          f"({summary['host_constraint_share_of_step']:.1%})")
    print(f"constrained generate / unconstrained generate - 1: {summary['overhead_generate']:+.1%} "
          f"(median batch {statistics.median(r['constrained_s'] / r['unconstrained_s'] - 1 for r in rows):+.1%})")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
