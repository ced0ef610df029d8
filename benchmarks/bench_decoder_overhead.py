"""What metabench's decoder code costs around the model's forward passes, against lm-eval doing the same job, on
any machine (the CPU included): the framework overhead a GPU run cannot hide behind compute.

The model is a stand-in whose forward pass costs next to nothing but which returns logits over a real vocabulary
(SmolLM2's tokenizer and its 49,152 ids; one layer of width 16, random weights, saved as a safetensors folder and
loaded from it as a user's model is), so that what is timed is the harness: tokenisation, batching, padding, tensor
building, the log-softmax over the vocabulary, gathers, and host round trips.

**Choice scoring.** The same requests (MUNCH word judgement, one-token options " A".." D"; Fig-QA endings,
multi-token options), in the same order, scored on one loaded lm-eval ``HFLM`` by

- metabench: the runner's own batching (``metabench.launch.execute._answer``: ``chunk_size`` requests per
  adapter call, in the order the adapter proposes) into ``hf-decoder``'s shared-prompt scorer;
- lm-eval: ``HFLM.loglikelihood`` over one instance per (context, option), as an lm-eval ``multiple_choice`` task
  sends them.

**The tagger's decode.** The same sentences (Meta4XNLI EN, as ``m4x_det_en_mono_decoder`` prompts them), in the
same batches, decoded greedily under the tagging grammar by

- metabench: ``DecoderTagger._generate`` (prompts, grammars, decode, reading the tags back);
- yardstick: a plain batched ``model.generate`` with :class:`GrammarProcessor` (the same constraint), prompts and
  grammars built beforehand and not timed.

Fairness: both sides are warmed first, then run alternately (the order flips each repetition) ``--repeat`` times
(at least 3); the minimum and the median are reported. Per side it reports

- framework seconds per 1,000 requests (per generated token for the tagger): wall time minus the time inside the
  model's ``forward``; and the share of it spent in ``log_softmax`` (lm-eval takes it over every position);
- host syncs: calls that read a tensor's value on the host (``item``, ``tolist``, ``bool``, ``float``, ``int``,
  ``cpu``, ``numpy``, ``torch.unique``, ``nonzero``), counted outside the model's forward, per batch (one batch =
  one model forward) and per 1,000 requests; and tensors built from host lists (``torch.tensor``), which on a GPU
  are host-to-device copies;
- padded-token share: 1 - real tokens / tokens forwarded (``input_ids`` sizes).

The closing line gives metabench / lm-eval framework time per request (goal <= 1.0):

    nice .venv/bin/python benchmarks/bench_decoder_overhead.py                  # 128 items per task, 64 sentences
    nice .venv/bin/python benchmarks/bench_decoder_overhead.py --items 64 --sentences 32 --repeat 3 --json out.json

Needs the MUNCH, Fig-QA and Meta4XNLI data (METABENCH_DATA_DIR) and the metabench-offline-models plugin
(SmolLM2's tokenizer). :func:`compare_scoring` is also what ``benchmarks/gpu_check.py`` runs on a real shape.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

#: The stand-in: SmolLM2's config (vocabulary, special ids) with a body that costs next to nothing.
STAND_IN = {"num_hidden_layers": 1, "hidden_size": 16, "intermediate_size": 32, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 8}
SCORING_TASKS = {"one_token": "munch_word_judge_implicit_p1", "multi_token": "figqa_endings_dev"}
TAGGER_TASK = "m4x_det_en_mono_decoder"
#: What counts as a host sync: reading a tensor's value (or its size, for data-dependent shapes) on the host.
_SYNC_METHODS = ("item", "tolist", "__bool__", "__float__", "__int__", "cpu", "numpy", "nonzero", "unique")
_SYNC_FUNCTIONS = ("unique", "nonzero")


class Probe:
    """Counts host syncs and host-built tensors outside the model's forward, and times the forwards.

    ``timer`` is ``"wall"`` (perf_counter around each forward: exact on the CPU) or ``"cuda"`` (CUDA events around
    each forward, read once at the end: what a GPU run uses, as a perf_counter would only time the launch)."""

    def __init__(self, model, timer: str = "wall"):
        self.model, self.timer = model, timer
        self.depth = 0
        self.reset()

    def reset(self) -> None:
        self.syncs = self.builds = self.forwards = self.tokens = 0
        self.forward_s = self.softmax_s = 0.0
        self._events: list = []

    def model_seconds(self) -> float:
        if self.timer == "cuda":
            import torch

            torch.cuda.synchronize()
            return sum(a.elapsed_time(b) for a, b in self._events) / 1e3
        return self.forward_s

    @contextmanager
    def active(self):
        """Patches in place while the block runs; everything restored after."""
        import torch
        import torch.nn.functional as F

        saved: list[tuple[object, str, object]] = []

        def patch(owner, name, wrapper):
            original = getattr(owner, name)
            saved.append((owner, name, original))
            setattr(owner, name, wrapper(original))

        def counter(field: str):
            def wrap(original):
                @functools.wraps(original)
                def call(*args, **kwargs):
                    if not self.depth:
                        setattr(self, field, getattr(self, field) + 1)
                    return original(*args, **kwargs)
                return call
            return wrap

        def timed_softmax(original):
            @functools.wraps(original)
            def call(*args, **kwargs):
                if self.depth:
                    return original(*args, **kwargs)
                started = time.perf_counter()
                out = original(*args, **kwargs)
                self.softmax_s += time.perf_counter() - started
                return out
            return call

        def timed_forward(original):
            @functools.wraps(original)
            def call(*args, **kwargs):
                ids = kwargs.get("input_ids", args[0] if args else None)
                self.forwards += 1
                self.tokens += int(ids.numel()) if ids is not None else 0
                self.depth += 1
                try:
                    if self.timer == "cuda":
                        import torch

                        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        start.record()
                        out = original(*args, **kwargs)
                        end.record()
                        self._events.append((start, end))
                    else:
                        started = time.perf_counter()
                        out = original(*args, **kwargs)
                        self.forward_s += time.perf_counter() - started
                finally:
                    self.depth -= 1
                return out
            return call

        for name in _SYNC_METHODS:
            patch(torch.Tensor, name, counter("syncs"))
        for name in _SYNC_FUNCTIONS:
            patch(torch, name, counter("syncs"))
        patch(torch, "tensor", counter("builds"))
        patch(F, "log_softmax", timed_softmax)
        self.model.forward = timed_forward(self.model.forward)  # an instance attribute: keeps the signature
        try:
            yield self
        finally:
            del self.model.forward
            for owner, name, original in reversed(saved):
                setattr(owner, name, original)


def alternate(sides: dict, repeat: int, probe: Probe, sync=lambda: None, warm: bool = True) -> dict:
    """Each side warmed once (``warm``), then run ``repeat`` times, the order flipping each repetition; per run the
    wall seconds, model seconds and probe counts."""
    names = list(sides)
    runs: dict[str, list[dict]] = {name: [] for name in names}
    for name in names if warm else ():
        sides[name]()
    for rep in range(repeat):
        for name in names if rep % 2 == 0 else reversed(names):
            probe.reset()
            sync()
            with probe.active():
                started = time.perf_counter()
                result = sides[name]()
                sync()
                wall = time.perf_counter() - started
            model = probe.model_seconds()
            runs[name].append({"wall_s": wall, "model_s": model, "framework_s": wall - model,
                               "softmax_s": probe.softmax_s, "syncs": probe.syncs, "builds": probe.builds,
                               "forwards": probe.forwards, "tokens": probe.tokens, "result": result})
    return runs


def _summary(runs: list[dict], requests: int, real_tokens: int) -> dict:
    framework = [r["framework_s"] for r in runs]
    last = runs[-1]
    return {
        "framework_s_per_1000_min": 1e3 * min(framework) / requests,
        "framework_s_per_1000_median": 1e3 * statistics.median(framework) / requests,
        "softmax_share_of_framework": statistics.median(r["softmax_s"] / r["framework_s"] for r in runs),
        # what a GPU cannot hide: the framework time outside the vocabulary-wide log-softmax
        "host_s_per_1000_median": 1e3 * statistics.median(r["framework_s"] - r["softmax_s"] for r in runs) / requests,
        "model_s_median": statistics.median(r["model_s"] for r in runs),
        "wall_s_median": statistics.median(r["wall_s"] for r in runs),
        "wall_s_min": min(r["wall_s"] for r in runs),
        "forwards": last["forwards"], "syncs": last["syncs"], "host_builds": last["builds"],
        "syncs_per_batch": last["syncs"] / max(1, last["forwards"]),
        "syncs_per_1000_requests": 1e3 * last["syncs"] / requests,
        "padded_share": 1 - real_tokens / max(1, last["tokens"]),
        "repetitions": len(runs),
    }


# ---------------------------------------------------------------------------------------------- choice scoring

def compare_scoring(lm, contexts: list[str], options: list[tuple[str, ...]], *, repeat: int, chunk: int,
                    timer: str = "wall", warm: bool = True, profile=None) -> dict:
    """metabench's runner + shared-prompt scorer against ``HFLM.loglikelihood`` on the loaded ``lm``, the same
    (context, options) lists in the same order; returns both sides' summaries, their agreement and the ratios.
    ``profile(side, run)``, if given, is called once per side after the timed runs (the GPU check profiles there)."""
    from lm_eval.api.instance import Instance

    from metabench.cache import AnswerCache
    from metabench.launch.execute import _answer
    from metabench.models.hf_decoder import HFDecoder
    from metabench.models.prompt_sharing import forwarded_tokens
    from metabench.requests import ChoiceRequest

    adapter = HFDecoder({"pretrained": "stand-in", "chat_template": "off", "chunk_size": str(chunk)})
    adapter._lm = lm  # the one loaded model both sides score with
    requests = {i: ChoiceRequest(context=c, options=tuple(o)) for i, (c, o) in enumerate(zip(contexts, options))}
    keys = [f"item-{i}" for i in requests]
    instances = [Instance("loglikelihood", {}, (c, o), idx=j, metadata=("bench", i, 1))
                 for i, (c, opts) in enumerate(zip(contexts, options)) for j, o in enumerate(opts)]
    n_requests = len(instances)

    def metabench():
        answers: dict = {}
        _answer(adapter, requests, keys, list(range(len(keys))), answers, AnswerCache(None), 0, "bench", None)
        return [answers[k]["loglikelihoods"] for k in keys]

    def lm_eval():
        flat = [ll for ll, _ in lm.loglikelihood(instances, disable_tqdm=True)]
        out, at = [], 0
        for opts in options:
            out.append(flat[at:at + len(opts)])
            at += len(opts)
        return out

    sync = (lambda: __import__("torch").cuda.synchronize()) if timer == "cuda" else (lambda: None)
    probe = Probe(lm.model, timer)
    runs = alternate({"metabench": metabench, "lm_eval": lm_eval}, repeat, probe, sync, warm)
    for name, run in (("metabench", metabench), ("lm_eval", lm_eval)) if profile is not None else ():
        profile(name, run)
    tokens = forwarded_tokens(lm, contexts, options)
    ours = _summary(runs["metabench"], n_requests, tokens["tokens_shared_prompt"])
    theirs = _summary(runs["lm_eval"], n_requests, tokens["tokens_lm_eval"])
    diffs = [abs(a - b) for x, y in zip(runs["metabench"][-1]["result"], runs["lm_eval"][-1]["result"])
             for a, b in zip(x, y)]
    argmax = lambda lls: max(range(len(lls)), key=lambda i: (lls[i], -i))  # noqa: E731
    same = sum(argmax(x) == argmax(y) for x, y in zip(runs["metabench"][-1]["result"], runs["lm_eval"][-1]["result"]))
    return {
        "items": len(contexts), "requests": n_requests, "metabench": ours, "lm_eval": theirs,
        "max_abs_loglikelihood_diff": max(diffs, default=0.0), "same_argmax": same,
        "ratio_framework_min": ours["framework_s_per_1000_min"] / theirs["framework_s_per_1000_min"],
        "ratio_framework_median": ours["framework_s_per_1000_median"] / theirs["framework_s_per_1000_median"],
        "ratio_wall_median": ours["wall_s_median"] / theirs["wall_s_median"],
        "ratio_host_median": ours["host_s_per_1000_median"] / theirs["host_s_per_1000_median"],
    }


# ---------------------------------------------------------------------------------------------- tagger decode

def compare_tagger(adapter, requests: list, *, repeat: int, batch: int) -> dict:
    """``DecoderTagger._generate`` against a plain batched ``generate`` with the same constraint, the same
    sentences in the same batches (sorted by length, as the tagger sorts them)."""
    import torch
    from transformers import GenerationConfig

    from metabench.models.grammar_processor import GrammarProcessor

    tokenizer, model = adapter.tokenizer, adapter.model
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    order = sorted(range(len(requests)), key=lambda i: len(requests[i].words))
    prepared = []
    for start in range(0, len(order), batch):
        chunk = [requests[i] for i in order[start:start + batch]]
        grammars = [adapter._grammar(r) for r in chunk]
        prompts = [adapter._prompt(r.words) for r in chunk]
        width = max(map(len, prompts))
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=model.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=model.device)
        prepared.append((grammars, ids, mask, width, sum(map(len, prompts))))

    def plain():
        out = []
        for grammars, ids, mask, width, _ in prepared:
            config = GenerationConfig(do_sample=False, max_new_tokens=max(g.longest for g in grammars),
                                      eos_token_id=eos, pad_token_id=pad)
            with torch.inference_mode():
                generated = model.generate(input_ids=ids, attention_mask=mask, generation_config=config,
                                           logits_processor=[GrammarProcessor(grammars, width, 1, eos)])
            out += [g.read(row)[0] for g, row in zip(grammars, generated[:, width:].tolist())]
        return out

    def metabench():
        tags = adapter._generate(requests)
        return [tags[i] for i in order]

    probe = Probe(model)
    runs = alternate({"metabench": metabench, "generate": plain}, repeat, probe)
    same = sum(a == b for a, b in zip(runs["metabench"][-1]["result"], runs["generate"][-1]["result"]))
    tokens = _tagged_tokens(adapter, requests)
    out = {"sentences": len(requests), "same_tags": same, "generated_tokens": tokens}
    for name, rs in runs.items():
        framework = [r["framework_s"] for r in rs]
        last = rs[-1]
        out[name] = {
            "framework_ms_per_token_min": 1e3 * min(framework) / tokens,
            "framework_ms_per_token_median": 1e3 * statistics.median(framework) / tokens,
            "model_s_median": statistics.median(r["model_s"] for r in rs),
            "wall_s_median": statistics.median(r["wall_s"] for r in rs),
            "steps": last["forwards"], "syncs": last["syncs"], "host_builds": last["builds"],
            "syncs_per_step": last["syncs"] / max(1, last["forwards"]), "repetitions": len(rs),
        }
    out["ratio_framework_median"] = (out["metabench"]["framework_ms_per_token_median"]
                                     / out["generate"]["framework_ms_per_token_median"])
    return out


def _tagged_tokens(adapter, requests) -> int:
    """Generated ids up to and including eos, summed over sentences, from one metabench decode."""
    adapter._counts["generated_tokens"] = 0
    adapter._generate(requests)
    return adapter._counts["generated_tokens"]


# ---------------------------------------------------------------------------------------------- main

def stand_in_folder(out: Path) -> Path:
    """SmolLM2's tokenizer and config with :data:`STAND_IN`'s body, random weights, saved as safetensors."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from metabench.models.hf_common import resolve_pretrained
    from metabench.plugins import default_registry

    source = resolve_pretrained("smollm2-135m", default_registry(), None, download=False).folder
    config = AutoConfig.from_pretrained(str(source))
    for key, value in STAND_IN.items():
        setattr(config, key, value)
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config).save_pretrained(str(out))
    for path in source.iterdir():
        if path.is_file() and path.name != "config.json" and path.suffix not in (".safetensors", ".bin", ".gguf"):
            (out / path.name).write_bytes(path.read_bytes())
    return out


def _task_requests(registry, name: str, limit: int) -> list:
    from metabench.config.index import TaskIndex
    from metabench.jobs import prepare

    task = TaskIndex(registry).load(name)
    data = prepare(registry, task, limit=limit)
    return task, [data.kind.request(item) for item in data.test.items]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=128, help="test items per scoring task")
    parser.add_argument("--sentences", type=int, default=64, help="tagger sentences")
    parser.add_argument("--batch-size", type=int, default=8, help="model batch (hf-decoder's CPU default)")
    parser.add_argument("--chunk-size", type=int, default=64, help="requests per runner batch (hf-decoder's default)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions per side (at least 3)")
    parser.add_argument("--only", choices=("scoring", "tagger"), help="one half")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.repeat < 3:
        parser.error("--repeat must be at least 3 (min and median of alternating runs)")

    import torch
    from lm_eval.models.huggingface import HFLM

    from metabench.models.decoder_tagger import DecoderTagger
    from metabench.plugins import default_registry

    torch.set_num_threads(1)
    registry = default_registry()
    report: dict = {"torch": torch.__version__, "stand_in": STAND_IN, "batch_size": args.batch_size,
                    "chunk_size": args.chunk_size, "repeat": args.repeat}
    with tempfile.TemporaryDirectory(prefix="metabench-overhead-") as tmp:
        folder = stand_in_folder(Path(tmp) / "stand-in")
        if args.only in (None, "scoring"):
            lm = HFLM(pretrained=str(folder), device="cpu", batch_size=args.batch_size, dtype="float32")
            for label, task_name in SCORING_TASKS.items():
                _, requests = _task_requests(registry, task_name, args.items)
                contexts = [r.context for r in requests]  # both tasks score raw prompts (no chat template)
                options = [tuple(r.options) for r in requests]
                report[label] = {"task": task_name, **compare_scoring(lm, contexts, options, repeat=args.repeat,
                                                                      chunk=args.chunk_size)}
            del lm
        if args.only in (None, "tagger"):
            task, requests = _task_requests(registry, TAGGER_TASK, args.sentences)
            adapter = DecoderTagger({"pretrained": str(folder), "finetune": "true", "device": "cpu",
                                     "batch_size": str(args.chunk_size)}, registry=registry)
            adapter._protocol = task.config.protocol.decoder_finetune  # what fit() sets from the task
            adapter.tokenizer = adapter._load_tokenizer()
            adapter.model = adapter._load_base().eval()
            report["tagger"] = {"task": TAGGER_TASK, **compare_tagger(adapter, requests, repeat=args.repeat,
                                                                      batch=args.chunk_size)}
    print_table(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return 0


def print_table(report: dict) -> None:
    rows = []
    for label in ("one_token", "multi_token"):
        if label not in report:
            continue
        r = report[label]
        for side in ("metabench", "lm_eval"):
            s = r[side]
            rows.append((f"{label} ({r['items']} items, {r['requests']} requests)", side,
                         f"{s['framework_s_per_1000_min']:.3f} / {s['framework_s_per_1000_median']:.3f}",
                         f"{s['softmax_share_of_framework']:.0%}", f"{s['host_s_per_1000_median']:.3f}",
                         f"{s['syncs_per_batch']:.1f}",
                         f"{s['syncs_per_1000_requests']:.0f}", f"{s['host_builds']}", f"{s['padded_share']:.1%}"))
    if rows:
        print("\nchoice scoring: framework s per 1,000 requests (min / median), log-softmax share of it, framework s "
              "per 1,000 without the log-softmax (median), host syncs per batch (= per forward) and per 1,000 "
              "requests, tensors built from host lists, padded-token share")
        print(_table(("requests", "side", "framework s/1k", "softmax", "w/o softmax", "syncs/batch", "syncs/1k", "host builds",
                      "padded"), rows))
        for label in ("one_token", "multi_token"):
            if label in report:
                r = report[label]
                print(f"{label}: max |Δ log-likelihood| {r['max_abs_loglikelihood_diff']:.2e}, same argmax "
                      f"{r['same_argmax']}/{r['items']}, framework ratio metabench / lm-eval min "
                      f"{r['ratio_framework_min']:.2f}, median {r['ratio_framework_median']:.2f}, without the "
                      f"log-softmax {r['ratio_host_median']:.2f}")
    if "tagger" in report:
        t = report["tagger"]
        print(f"\ntagger decode ({t['sentences']} sentences, {t['generated_tokens']} generated tokens, same tags "
              f"{t['same_tags']}/{t['sentences']}): framework ms per generated token (min / median), syncs per step")
        print(_table(("side", "framework ms/token", "steps", "syncs/step", "host builds", "model s", "wall s"),
                     [(side, f"{t[side]['framework_ms_per_token_min']:.3f} / {t[side]['framework_ms_per_token_median']:.3f}",
                       t[side]["steps"], f"{t[side]['syncs_per_step']:.2f}", t[side]["host_builds"],
                       f"{t[side]['model_s_median']:.2f}", f"{t[side]['wall_s_median']:.2f}")
                      for side in ("metabench", "generate")]))
        print(f"tagger: framework time per token metabench / generate {t['ratio_framework_median']:.2f} (median)")
    ratios = [(label, report[label]["ratio_framework_median"], report[label]["ratio_host_median"])
              for label in ("one_token", "multi_token") if label in report]
    if ratios:
        print("framework time per request, metabench / lm-eval HFLM (median; goal <= 1.0): " + ", ".join(
            f"{label.replace('_', '-')} {total:.2f} ({host:.2f} without the log-softmax)" for label, total, host in ratios))


def _table(header, rows) -> str:
    cells = [tuple(map(str, header))] + [tuple(map(str, row)) for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in cells]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])


if __name__ == "__main__":
    sys.exit(main())
