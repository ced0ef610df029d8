"""Decoders fine-tuned as taggers, on a tiny random Llama built in code: the decoding constraint against
adversarial logits, fitting (LoRA and full) through the shared trainer, checkpoint reuse, the hf-decoder switch."""

from __future__ import annotations

import random

import pytest

from metabench.config.schema import DecoderFinetuneProtocol, Finetune
from metabench.errors import AdapterError
from metabench.models.base import AdapterSettings
from metabench.models.hf_decoder import HFDecoder
from metabench.models.tag_grammar import Grammar
from metabench.requests import TagRequest, Training
from needs import needs

pytestmark = needs("torch", "peft")

LABELS = ("O", "B-METAPHOR", "I-METAPHOR")
WORDS = "the company ladder golden light bathed red brick of house headline progress steps stairs".split()


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    from tiny import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def sentences(n: int, seed: int) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Random sentences in which the word after 'red' is a metaphor, and 'golden light' one after 'the'."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 7))]
        tags = ["B-METAPHOR" if i and words[i - 1] == "red" else "O" for i in range(len(words))]
        for i in range(1, len(words) - 1):
            if words[i - 1 : i + 2] == ["the", "golden", "light"] and tags[i] == "O":
                tags[i], tags[i + 1] = "B-METAPHOR", "I-METAPHOR"
        out.append((tuple(words), tuple(tags)))
    return out


def training(data, protocol: DecoderFinetuneProtocol, seed: int = 0) -> Training:
    return Training(requests=[TagRequest(w, LABELS) for w, _ in data], golds=[t for _, t in data], validation_requests=[],
                    validation_golds=[], labels=LABELS, protocol=protocol, seed=seed, data_hash=f"toy-{len(data)}")


def protocol(**changes) -> DecoderFinetuneProtocol:
    finetune = Finetune(lr=5e-3, batch_size=4, epochs=2, max_length=128, select_metric=None)
    return DecoderFinetuneProtocol(finetune=finetune, **changes)


def tagger(folder, tmp_path, **args):
    settings = AdapterSettings(use_cache=True, progress=False)
    return HFDecoder({"pretrained": str(folder), "finetune": "true", "device": "cpu", "batch_size": "5", **args},
                     settings=settings)


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


class Adversary:
    """Logits that prefer what the grammar forbids: +1e4 on every id the grammar does not allow next (eos while
    words remain, other words, repeated words, tags in the middle of a word), or on one random id."""

    def __init__(self, grammars, start, beams, rng, mode):
        self.grammars, self.start, self.beams, self.rng, self.mode = grammars, start, beams, rng, mode

    def __call__(self, input_ids, scores):
        import torch

        bias = torch.zeros_like(scores)
        for row, ids in enumerate(input_ids[:, self.start:].tolist()):
            if self.mode == "forbidden":
                bias[row] += 1e4
                bias[row, sorted(self.grammars[row // self.beams].allowed(ids))] = -1e4
            else:
                bias[row, self.rng.randrange(scores.shape[-1])] = 1e4
        return scores + bias


@pytest.mark.slow
@pytest.mark.parametrize("beams", [1, 3])
@pytest.mark.parametrize("mode", ["forbidden", "random"])
def test_constrained_decoding_copies_every_word_in_order_whatever_the_logits(tiny_llama, beams, mode):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    from metabench.models.grammar_processor import GrammarProcessor

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_llama))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_llama)).eval()
    eos, vocab = tokenizer.eos_token_id, model.config.vocab_size
    rng = random.Random(beams * 7 + len(mode))
    for _ in range(4):
        n = rng.randint(1, 6)
        batch = [[tuple(rng.choice([i for i in range(vocab) if i != eos]) for _ in range(rng.randint(1, 3)))
                  for _ in range(rng.randint(1, 8))] for _ in range(n)]
        grammars = [Grammar(words, {"METAPHOR": (11, 12)}, {"METAPHOR": (13,)}, eos) for words in batch]
        prompts = [[rng.randrange(vocab) for _ in range(rng.randint(2, 9))] for _ in range(n)]
        width = max(map(len, prompts))
        ids = torch.tensor([[eos] * (width - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        config = GenerationConfig(num_beams=beams, do_sample=False, max_new_tokens=max(g.longest for g in grammars),
                                  eos_token_id=eos, pad_token_id=eos)
        adversary = Adversary(grammars, width, beams, rng, mode)
        with torch.inference_mode():
            out = model.generate(input_ids=ids, attention_mask=mask, generation_config=config,
                                 logits_processor=[adversary, GrammarProcessor(grammars, width, beams, eos)])
        for row, (words, grammar) in enumerate(zip(batch, grammars)):
            generated = out[row, width:].tolist()
            tags, repaired = grammar.read(generated)
            assert not repaired
            assert len(tags) == len(words)
            # the output is exactly the tagged copy of these tags: every word once, in order, tags between words
            assert generated[: generated.index(eos) + 1] == grammar.target(tags)
            copied = [t for t in generated[: generated.index(eos)] if t not in (11, 12, 13)]
            assert copied == [t for word in words for t in word if t not in (11, 12, 13)]


def test_finetune_switch_builds_the_tagger_and_checks_its_arguments(tiny_llama, tmp_path):
    from metabench.models.decoder_tagger import DecoderTagger

    adapter = tagger(tiny_llama, tmp_path)
    assert isinstance(adapter, DecoderTagger) and adapter.family == "decoder_finetune"
    assert type(HFDecoder({"pretrained": str(tiny_llama), "finetune": "false"})) is HFDecoder
    with pytest.raises(AdapterError, match="takes no argument 'beam'"):
        tagger(tiny_llama, tmp_path, beam="2")
    with pytest.raises(AdapterError, match="method=qlora"):
        tagger(tiny_llama, tmp_path, method="qlora")
    # checked before any job is built: the tagger's arguments with finetune=true, the scorer's without
    HFDecoder.check_args({"pretrained": "x", "finetune": "true", "epochs": "1", "beams": "2"})
    with pytest.raises(AdapterError, match="takes no argument 'epochs'"):
        HFDecoder.check_args({"pretrained": "x", "epochs": "1"})
    from metabench.models.hf import HFAuto

    assert {"finetune", "beams", "method"} <= set(HFAuto.accepted_args())
    # budget knobs and beams change the answers' fingerprint; batch size and device do not
    base = adapter.fingerprint()
    assert tagger(tiny_llama, tmp_path, batch_size="2").fingerprint() == base
    assert tagger(tiny_llama, tmp_path, beams="2").fingerprint() != base
    assert tagger(tiny_llama, tmp_path, epochs="1").fingerprint() != base


@pytest.mark.slow
@pytest.mark.parametrize("method", ["lora", "full"])
def test_fit_predict_and_reuse_the_checkpoint(tiny_llama, tmp_path, cache, method):
    data = sentences(24, seed=0)
    adapter = tagger(tiny_llama, tmp_path, method=method)
    adapter.fit(training(data, protocol()))
    test = sentences(9, seed=1)
    preds = adapter.predict([TagRequest(w, LABELS) for w, _ in test], seed=0)
    assert [len(p) for p in preds] == [len(w) for w, _ in test]
    assert all(set(p) <= set(LABELS) for p in preds)
    info = adapter.info()
    record = info["checkpoints"]["0"]
    assert info["outputs"]["repaired_outputs"] == 0 and info["outputs"]["predicted_items"] == 9
    assert record["cached"] is False and record["train_examples"] == 24 and len(record["history"]) == 2
    assert info["method"] == method and "budget" not in info
    trainable, total = info["trainable_parameters"], info["parameters"]
    folder = cache / "checkpoints" / record["key"]
    if method == "lora":
        assert (folder / "adapter_model.safetensors").is_file() and not (folder / "model.safetensors").exists()
        assert 0 < trainable < total  # the adapters, counted before they were merged into the weights
    else:
        assert (folder / "model.safetensors").is_file() and trainable == total

    again = tagger(tiny_llama, tmp_path, method=method)
    again.fit(training(data, protocol()))
    assert again.info()["checkpoints"]["0"]["cached"] is True
    assert again.info()["trainable_parameters"] == trainable  # a checkpoint read back counts the same
    assert again.predict([TagRequest(w, LABELS) for w, _ in test], seed=0) == preds


@pytest.mark.slow
def test_training_targets_and_the_constraint_line_up(tiny_llama, tmp_path, cache):
    """Trained to a low loss on a few sentences, the model writes their tags back: the ids it was trained on are
    the ids the constraint lets it write (a shifted label or a different tokenisation would fail this)."""
    data = sentences(16, seed=2)
    assert sum(t != ("O",) * len(t) for _, t in data) >= 4
    adapter = tagger(tiny_llama, tmp_path, method="full")
    finetune = Finetune(lr=3e-3, batch_size=4, epochs=40, max_length=128, warmup_ratio=0.1)
    adapter.fit(training(data, DecoderFinetuneProtocol(finetune=finetune)))
    assert adapter.info()["checkpoints"]["0"]["history"][-1]["train_loss"] < 0.2
    preds = adapter.predict([TagRequest(w, LABELS) for w, _ in data], seed=0)
    assert sum(p == t for p, (_, t) in zip(preds, data)) >= 14, preds


@pytest.mark.slow
def test_selection_decodes_the_validation_split_after_every_epoch(tiny_llama, tmp_path, cache):
    data, dev = sentences(12, seed=0), sentences(6, seed=4)
    seen = []

    def score(preds):
        seen.append(list(preds))
        return {"span_f1": sum(p == t for p, (_, t) in zip(preds, dev)) / len(dev)}

    finetune = Finetune(lr=5e-3, batch_size=4, epochs=2, max_length=128, select_metric="span_f1")
    plan = training(data, DecoderFinetuneProtocol(finetune=finetune))
    plan.validation_requests, plan.validation_golds = [TagRequest(w, LABELS) for w, _ in dev], [t for _, t in dev]
    plan.score_validation = score
    adapter = tagger(tiny_llama, tmp_path)
    adapter.fit(plan)
    record = adapter.info()["checkpoints"]["0"]
    assert len(seen) == 2 and all(len(p) == len(dev) for p in seen)
    assert [h["validation"]["span_f1"] for h in record["history"]] == [score(p)["span_f1"] for p in seen[:2]]
    assert record["select_metric"] == "span_f1" and record["best_epoch"] in (1, 2)
    assert not adapter.model.training


def test_budget_knobs_are_recorded_and_cut_the_training(tiny_llama, tmp_path, cache):
    adapter = tagger(tiny_llama, tmp_path, max_train="8", epochs="1")
    adapter.fit(training(sentences(24, seed=0), protocol()))
    info = adapter.info()
    assert info["budget"] == {"max_train": "8", "epochs": "1"}
    assert info["checkpoints"]["0"]["train_examples"] == 8 and len(info["checkpoints"]["0"]["history"]) == 1


def test_predict_before_fit_and_no_training_split_are_clear_errors(tiny_llama, tmp_path):
    adapter = tagger(tiny_llama, tmp_path)
    with pytest.raises(AdapterError, match="before fit"):
        adapter.predict([TagRequest(("a",), LABELS)], seed=0)
    with pytest.raises(AdapterError, match="training split"):
        adapter.fit(None)


@pytest.mark.slow
def test_the_runner_fine_tunes_on_a_tagging_task_and_remembers_the_job(decoder_registry, tmp_path, tiny_llama):
    from metabench.runner import RunOptions, run
    from metabench.store import read_results, read_samples

    def go(tasks, model):
        return run(decoder_registry, tasks, [model], RunOptions(output_dir=tmp_path / "runs", progress=False))

    model = f"hf-decoder:{tiny_llama},finetune=true,batch_size=3"
    [outcome] = go("toy_tag_decoder", model)
    assert outcome.status == "ok", outcome.message
    results = read_results(outcome.run_dir)
    assert results["model"]["family"] == results["protocol"] == "decoder_finetune"
    info = results["model"]["info"]
    assert info["outputs"]["repaired_outputs"] == 0 and info["outputs"]["predicted_items"] == results["n_items"]
    assert info["method"] == "lora" and info["checkpoints"]["0"]["cached"] is False
    samples = read_samples(outcome.run_dir)
    assert all(len(s["prediction"]) == len(s["gold"]) for s in samples)
    [again] = go("toy_tag_decoder", model)
    assert read_samples(again.run_dir) == samples and read_results(again.run_dir)["timings"]["fit_s"] == 0
    # a task without protocol.decoder_finetune is skipped for the tagger, and the tagger's task for prompting
    [skipped] = go("toy_tag", model)
    assert skipped.status == "skipped" and "decoder_finetune" in skipped.message
    [prompted] = go("toy_tag_decoder", f"hf-decoder:{tiny_llama}")
    assert prompted.status == "skipped"
