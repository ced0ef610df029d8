"""Decoder tasks end to end through the runner on the tiny GPT-2: results, seeds, cache, fingerprints, chat."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from metabench.requests import ChoiceRequest, GenerateRequest
from metabench.runner import RunOptions, run
from metabench.store import read_results, read_samples


def _run(registry, tmp_path, tasks, models, **kw):
    return run(registry, tasks, list(models), RunOptions(output_dir=tmp_path / "runs", progress=False, **kw))


def test_prompted_tasks_run_and_rerun_from_the_cache(decoder_registry, tmp_path, tiny_gpt2, monkeypatch):
    # the first run must compute and load the model, whatever tests before it answered or loaded in this
    # process: a cache of its own, and no model kept from another test (lmeval_bridge shares the last one loaded)
    from metabench.models import lmeval_bridge

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(lmeval_bridge, "_SHARED", {})
    model = f"hf-decoder:{tiny_gpt2},batch_size=4"
    first = _run(decoder_registry, tmp_path, "toy_prompted", [model], limit=6)
    assert [o.status for o in first] == ["ok", "ok", "ok"], [o.message for o in first]
    by_task = {o.task: o for o in first}

    choice = read_results(by_task["toy_choice"].run_dir)
    assert choice["model"]["family"] == "decoder" and choice["protocol"] == "decoder"
    info = choice["model"]["info"]
    assert info["backend"].endswith("HFLM") and info["model_loaded"] and info["num_parameters"] > 0
    samples = read_samples(by_task["toy_choice"].run_dir)
    assert len(samples) == 6 and all(len(s["prediction"]["loglikelihoods"]) == 2 for s in samples)
    assert "accuracy" in choice["metrics"]["aggregate"]
    # the time before the first forward pass is shown apart: the model's files hashed, the model loaded
    timings = choice["timings"]
    assert timings["model_hash_s"] > 0 and timings["model_load_s"] > 0 and timings["predict_s"] > 0
    from metabench.timings import PHASES

    assert sum(timings[p] for p in PHASES) == pytest.approx(timings["total_s"], rel=1e-9)

    generate = read_results(by_task["toy_generate"].run_dir)
    assert generate["seeds"] == [0, 1]  # temperature 0.7, two sampled runs
    assert set(generate["metrics"]["per_seed"]) == {"0", "1"}
    assert "parse_rate" in generate["metrics"]["aggregate"]
    assert all("parse_ok" in s["scores"] for s in read_samples(by_task["toy_generate"].run_dir))

    rank = read_results(by_task["toy_rank"].run_dir)
    assert {"mrr", "recall_at_k[k=1]", "recall_at_k[k=5]"} <= set(rank["metrics"]["aggregate"])

    computed = {name: read_results(outcome.run_dir)["model"] for name, outcome in by_task.items()}
    again = _run(decoder_registry, tmp_path, "toy_prompted", [model], limit=6)
    for outcome in again:
        results = read_results(outcome.run_dir)
        timings = results["timings"]
        assert timings["cached_items"] == 6 * len(results["seeds"])
        assert timings["load_s"] == timings["fit_s"] == timings["predict_s"] == 0  # remembered: no data, no model
        # the model facts are the computing run's (a remembered job says how its answers were made)
        assert results["model"] == computed[outcome.task] and results["model"]["info"]["model_loaded"]
    assert read_samples(by_task["toy_choice"].run_dir) == samples


def test_sampling_is_reproducible_per_seed(decoder_registry, tmp_path, tiny_gpt2):
    model = f"hf-decoder:{tiny_gpt2}"
    (a,) = run(decoder_registry, "toy_generate", [model], RunOptions(output_dir=tmp_path / "a", progress=False, limit=4, use_cache=False))
    (b,) = run(decoder_registry, "toy_generate", [model], RunOptions(output_dir=tmp_path / "b", progress=False, limit=4, use_cache=False))
    assert read_samples(a.run_dir) == read_samples(b.run_dir)


def test_baselines_serve_choice_tasks_and_skip_generation(decoder_registry, tmp_path):
    outcomes = _run(decoder_registry, tmp_path, "toy_choice,toy_generate", ["constant:index=1", "random"])
    status = {(o.task, o.model): o.status for o in outcomes}
    assert status[("toy_choice", "constant:index=1")] == "ok" and status[("toy_choice", "random")] == "ok"
    assert status[("toy_generate", "constant:index=1")] == "skipped"
    constant = next(o for o in outcomes if o.model == "constant:index=1" and o.task == "toy_choice")
    gold = [s["gold"] for s in read_samples(constant.run_dir)]
    assert constant.record.raw["metrics"]["aggregate"]["accuracy"]["mean"] == pytest.approx(gold.count(1) / len(gold))


def test_fingerprint_follows_weights_not_batch_size(tiny_gpt2, tmp_path):
    from metabench.models.hf_decoder import HFDecoder

    base = HFDecoder({"pretrained": str(tiny_gpt2)}).fingerprint()
    assert HFDecoder({"pretrained": str(tiny_gpt2), "batch_size": "16", "device": "cpu"}).fingerprint() == base
    assert HFDecoder({"pretrained": str(tiny_gpt2), "dtype": "bfloat16"}).fingerprint() != base
    copy = shutil.copytree(tiny_gpt2, tmp_path / "moved")
    assert HFDecoder({"pretrained": str(copy)}).fingerprint() == base  # a moved folder keeps its cache
    config = json.loads((copy / "config.json").read_text())
    config["n_head"] = 4
    (copy / "config.json").write_text(json.dumps(config))
    assert HFDecoder({"pretrained": str(copy)}).fingerprint() != base


def test_softmax_dtype_reaches_lm_eval_and_keys_the_cache(tiny_gpt2):
    """The first GPU run found multi-token log-likelihoods 0.5 apart in bfloat16 (two bf16 steps near -50):
    ``softmax_dtype=float32`` is lm-eval's switch for that, passed through, and answers under it are cached apart."""
    import torch

    from metabench.models.hf_decoder import HFDecoder

    plain = HFDecoder({"pretrained": str(tiny_gpt2), "dtype": "bfloat16", "batch_size": "4", "device": "cpu"})
    wide = HFDecoder({"pretrained": str(tiny_gpt2), "dtype": "bfloat16", "batch_size": "4", "device": "cpu",
                      "softmax_dtype": "float32"})
    assert wide.fingerprint() != plain.fingerprint()
    assert wide.lm.softmax_dtype == torch.float32 and plain.lm.softmax_dtype is None
    contexts, options = ["The sky is", "A heart of"], [(" blue", " a very long option"), (" stone", " gold")]
    narrow, precise = plain.option_scores(contexts, options), wide.option_scores(contexts, options)
    # bf16 holds 8 significant bits: a bf16 log-probability is a multiple of its spacing; float32's need not be
    spacing = lambda v: 2.0 ** (math.floor(math.log2(abs(v))) - 7)
    assert all(score / spacing(score) == round(score / spacing(score)) for row in narrow for score, _ in row)
    assert any(score / spacing(score) != round(score / spacing(score)) for row in precise for score, _ in row)


def test_adapter_arguments_are_checked():
    from metabench.errors import AdapterError
    from metabench.models.hf_decoder import HFDecoder

    with pytest.raises(AdapterError, match="takes no argument 'batchsize'"):
        HFDecoder({"pretrained": "x", "batchsize": "8"})
    with pytest.raises(AdapterError, match="needs a model"):
        HFDecoder({})
    with pytest.raises(AdapterError, match="not an integer"):
        HFDecoder({"pretrained": "x", "batch_size": "many"})


def test_chat_template_wraps_prompts_and_falls_back_without_one(tiny_gpt2_chat, tiny_decoder):
    from metabench.models.hf_decoder import HFDecoder

    chat = HFDecoder({"pretrained": str(tiny_gpt2_chat)})
    request = ChoiceRequest("Is it literal?", (" yes", " no"), chat=True, system="Be brief.")
    assert chat.context(request.context, request) == "<|system|>Be brief.\n<|user|>Is it literal?\n<|assistant|>"
    (answer,) = chat.predict([request], seed=0)
    assert len(answer["loglikelihoods"]) == 2
    assert chat.info()["chat_template_applied"] is True
    off = HFDecoder({"pretrained": str(tiny_gpt2_chat), "chat_template": "off"})
    off._lm = chat.lm
    assert off.context("Q", request) == "Q"
    # the tiny model without a template: raw prompt, recorded
    plain = GenerateRequest("Q", chat=True)
    assert tiny_decoder.context("Q", plain) == "Q" and tiny_decoder.info()["chat_template_missing"] is True


def test_unparsed_outputs_are_one_warning_per_task_over_all_seeds(decoder_registry, tmp_path, tiny_gpt2, caplog):
    """Two seeds of a random model's generations: one warning line for the task, with both seeds' counts."""
    (outcome,) = _run(decoder_registry, tmp_path, "toy_generate", [f"hf-decoder:{tiny_gpt2}"], limit=4, use_cache=False)
    per_seed = read_results(outcome.run_dir)["metrics"]["per_seed"]
    unparsed = {seed: int(m["invalid_outputs"]) for seed, m in per_seed.items()}
    assert sum(unparsed.values()) > 0  # a random model's text: the warning below has something to say
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "unparsed" in r.getMessage()]
    assert len(warnings) == 1, warnings
    counts = ", ".join(f"seed {seed}: {n}" for seed, n in unparsed.items())
    assert warnings[0].startswith(f"toy_generate: {sum(unparsed.values())} of 8 outputs unparsed (4 items × 2 seeds; {counts})")
