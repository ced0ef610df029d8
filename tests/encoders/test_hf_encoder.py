"""The hf-encoder adapter on a tiny random BERT: training, prediction, checkpoint cache, determinism, resume."""

from __future__ import annotations

import json

import pytest
from enc_helpers import TAGS, cls_data, make_adapter, tag_data, training

from metabench.errors import AdapterError
from metabench.metrics.tagging import span_f1, token_f1
from metabench.models.alignment import MARKERS
from metabench.models.checkpoints import META, CheckpointStore


def _state(adapter):
    return {k: v.clone() for k, v in adapter.model.state_dict().items()}


def _same_state(a, b) -> bool:
    import torch

    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_tagging_trains_selects_and_maps_back_to_words(tiny_bert, cache_dir):
    requests, golds = tag_data(96, seed=1)
    val = tag_data(24, seed=2)
    scored = []

    def score(preds):
        scored.append(len(preds))
        return {"span_f1": span_f1(val[1], preds)}

    adapter = make_adapter(tiny_bert)
    adapter.fit(training(requests, golds, val=val, score=score, epochs=3, select_metric="span_f1"))
    preds = adapter.predict(val[0], 0)
    assert [len(p) for p in preds] == [len(r.words) for r in val[0]]
    assert {t for p in preds for t in p} <= set(TAGS)
    assert token_f1(val[1], preds) > 0.8  # learnt which words are metaphors
    record = adapter.info()["checkpoints"]["0"]
    assert scored == [24, 24, 24] and len(record["history"]) == 3  # validated after every epoch
    best = max(record["history"], key=lambda h: h["validation"]["span_f1"])  # earliest best
    assert record["best_epoch"] == best["epoch"] and record["best_validation"] == best["validation"]["span_f1"]
    assert adapter.info()["head"] == "token" and adapter.info()["added_tokens"] == []


def test_classification_with_markers_and_pairs(tiny_bert, cache_dir):
    requests, golds = cls_data(96, seed=3, pairs=True)
    adapter = make_adapter(tiny_bert)
    adapter.fit(training(requests, golds, labels=("literal", "metaphorical"), epochs=3))
    info = adapter.info()
    assert info["head"] == "sequence" and info["added_tokens"] == list(MARKERS)
    base_vocab = json.loads((tiny_bert / "config.json").read_text())["vocab_size"]
    assert adapter.model.get_input_embeddings().weight.shape[0] == base_vocab + 2
    assert adapter.tokenizer.convert_tokens_to_ids("<PME>") >= base_vocab  # one token, not pieces
    test_requests, _ = cls_data(40, seed=4, pairs=True)
    preds = adapter.predict(test_requests, 0)
    assert len(preds) == 40 and set(preds) <= {"literal", "metaphorical"}
    history = info["checkpoints"]["0"]["history"]
    assert history[-1]["train_loss"] < history[0]["train_loss"]  # it trains (a random tiny BERT learns slowly)


def test_checkpoint_cache_hit_and_miss(tiny_bert, cache_dir):
    requests, golds = tag_data(60, seed=5)
    test_requests, _ = tag_data(20, seed=6)
    first = make_adapter(tiny_bert)
    first.fit(training(requests, golds))
    assert first.info()["checkpoints"]["0"]["cached"] is False
    (checkpoint,) = [p for p in (cache_dir / "checkpoints").iterdir() if p.is_dir()]
    assert (checkpoint / META).is_file() and not list((cache_dir / "checkpoints").glob("*.partial.pt"))

    again = make_adapter(tiny_bert)  # a new job (another task with the same training data): hit
    again.fit(training(requests, golds))
    assert again.info()["checkpoints"]["0"]["cached"] is True
    assert again.predict(test_requests, 0) == first.predict(test_requests, 0)
    assert _same_state(_state(again), _state(first))

    for changed in (dict(lr=1e-3), dict(seed=1), dict(data_hash="other"), dict(epochs=1)):
        other = make_adapter(tiny_bert)
        other.fit(training(requests, golds, **changed))
        assert other.info()["checkpoints"][str(changed.get("seed", 0))]["cached"] is False, changed
    other = make_adapter(tiny_bert, max_length=16)
    other.fit(training(requests, golds))
    assert other.info()["checkpoints"]["0"]["cached"] is False
    assert len([p for p in (cache_dir / "checkpoints").iterdir() if p.is_dir()]) == 6


def test_same_seed_same_weights_other_seed_other_weights(tiny_bert, cache_dir, monkeypatch, tmp_path):
    requests, golds = tag_data(48, seed=7)
    states = {}
    for run, seed in (("a", 0), ("b", 0), ("c", 1)):
        monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / run))  # no cache hit between runs
        adapter = make_adapter(tiny_bert)
        adapter.fit(training(requests, golds, seed=seed, dropout=0.2))
        assert adapter.info()["checkpoints"][str(seed)]["cached"] is False
        states[run] = _state(adapter)
    assert _same_state(states["a"], states["b"])
    assert not _same_state(states["a"], states["c"])


def test_resume_after_an_interrupt_gives_the_uninterrupted_weights(tiny_bert, monkeypatch, tmp_path):
    from metabench.models.hf_encoder import HFEncoder

    requests, golds = tag_data(48, seed=8)
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "straight"))
    straight = make_adapter(tiny_bert)
    straight.fit(training(requests, golds, epochs=3))

    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "killed"))

    def interrupt(self, epoch):
        if epoch == 1:
            raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(HFEncoder, "_after_epoch", interrupt)
        with pytest.raises(KeyboardInterrupt):
            make_adapter(tiny_bert).fit(training(requests, golds, epochs=3))
    store = tmp_path / "killed" / "checkpoints"
    assert len(list(store.glob("*.partial.pt"))) == 1  # epochs 1 and 2 finished and saved
    assert not [p for p in store.iterdir() if p.is_dir()]  # no finished checkpoint

    resumed = make_adapter(tiny_bert)
    resumed.fit(training(requests, golds, epochs=3))
    record = resumed.info()["checkpoints"]["0"]
    assert record["cached"] is False and record["resumed_after_epochs"] == 2
    assert [h["epoch"] for h in record["history"]] == [1, 2, 3]
    assert _same_state(_state(resumed), _state(straight))
    assert not list(store.glob("*.partial.pt"))


def test_a_half_written_checkpoint_is_never_used(tmp_path):
    store = CheckpointStore(tmp_path)
    (tmp_path / "k1").mkdir()  # a folder without the metadata file is not a checkpoint
    (tmp_path / "k1" / "model.safetensors").write_bytes(b"partial")
    assert store.find("k1") is None

    def crash(folder):
        (folder / "model.safetensors").write_bytes(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError):
        store.save("k2", crash)
    assert store.find("k2") is None and not list(tmp_path.glob(".tmp-*"))
    dead = tmp_path / ".tmp-k3-999999999-0"  # left by a killed process: cleaned on the next save
    dead.mkdir()
    store.save("k3", lambda folder: {"ok": True})
    assert not dead.exists() and store.meta("k3")["ok"] is True
    assert store.load_partial("k4") is None
    (tmp_path / "k4.partial.pt").write_bytes(b"garbage")
    assert store.load_partial("k4") is None and not (tmp_path / "k4.partial.pt").exists()


def test_no_cache_trains_in_a_temporary_store(tiny_bert, cache_dir):
    requests, golds = tag_data(32, seed=9)
    adapter = make_adapter(tiny_bert, cache="false")
    adapter.fit(training(requests, golds, epochs=1))
    assert not (cache_dir / "checkpoints").exists()
    assert adapter.info()["checkpoint_cache"].startswith("temporary")
    shared = make_adapter(tiny_bert, use_cache=False)  # what the runner builds for --no-cache
    shared.fit(training(requests, golds, epochs=1))
    assert shared.info()["checkpoints"]["0"]["cached"] is True  # same process: trained once
    assert not (cache_dir / "checkpoints").exists()


def test_selection_on_validation_loss_and_last_epoch_without_validation(tiny_bert, cache_dir):
    requests, golds = tag_data(40, seed=10)
    adapter = make_adapter(tiny_bert)
    adapter.fit(training(requests, golds, val=tag_data(16, seed=11), epochs=2, select_metric="loss"))
    record = adapter.info()["checkpoints"]["0"]
    assert all("loss" in h["validation"] for h in record["history"])
    assert record["best_validation"] == min(h["validation"]["loss"] for h in record["history"])
    plain = make_adapter(tiny_bert)
    plain.fit(training(requests, golds, epochs=2, select_metric="span_f1"))  # no validation split
    assert plain.info()["checkpoints"]["0"]["best_epoch"] == 2


def test_arguments_fingerprint_and_errors(tiny_bert, cache_dir):
    from metabench.models.hf_encoder import HFEncoder

    with pytest.raises(AdapterError, match="did you mean 'batch_size'"):
        HFEncoder({"pretrained": str(tiny_bert), "batchsize": "8"})
    with pytest.raises(AdapterError, match="dtype"):
        HFEncoder({"pretrained": str(tiny_bert), "dtype": "float8"})
    with pytest.raises(AdapterError, match="needs pretrained"):
        HFEncoder({})
    with pytest.raises(AdapterError, match="not a local folder"):
        make_adapter(tiny_bert.parent / "nope-org/nope-model").fingerprint()
    a, b = make_adapter(tiny_bert), make_adapter(tiny_bert, batch_size=4, device="cpu")
    assert a.fingerprint() == b.fingerprint()  # batch size and device do not change answers
    assert make_adapter(tiny_bert, max_length=64).fingerprint() != a.fingerprint()
    with pytest.raises(AdapterError, match="needs the task's training split"):
        a.fit(None)
    with pytest.raises(AdapterError, match="before fit"):
        a.predict(tag_data(1)[0], 0)


def test_hf_auto_picks_the_encoder_and_reads_decoders_from_config(tiny_bert, tmp_path):
    from metabench.models.hf import HFAuto
    from metabench.models.hf_common import model_family
    from metabench.models.hf_encoder import HFEncoder

    adapter = HFAuto({"pretrained": str(tiny_bert), "batch_size": "4"})
    assert isinstance(adapter, HFEncoder) and adapter.family == "encoder" and adapter.batch_size() == 4
    for config, family in (
        ({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]}, "decoder"),
        ({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}, "decoder"),
        ({"model_type": "xlm-roberta", "architectures": ["XLMRobertaForMaskedLM"]}, "encoder"),
        ({"model_type": "deberta-v2"}, "encoder"),
    ):
        folder = tmp_path / config["model_type"]
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config))
        assert model_family(folder) == family, config
    decoder = HFAuto({"pretrained": str(tmp_path / "gpt2")})
    assert decoder.family == "decoder" and type(decoder).__name__ == "HFDecoder"
    (tmp_path / "t5").mkdir()
    (tmp_path / "t5" / "config.json").write_text(json.dumps({"model_type": "t5", "is_encoder_decoder": True}))
    with pytest.raises(AdapterError, match="encoder-decoder"):
        model_family(tmp_path / "t5")


def test_hf_auto_resolves_a_registered_name_once(tiny_bert, tmp_path):
    from metabench.models.hf import HFAuto
    from metabench.models.hf_encoder import HFEncoder
    from metabench.registry import Entry, Registry

    (tmp_path / "gpt2").mkdir()
    (tmp_path / "gpt2" / "config.json").write_text(json.dumps({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]}))
    (tmp_path / "gpt2" / "model.safetensors").write_bytes(b"weights")  # fingerprinted, never loaded
    builds = []

    def builder(folder):
        return lambda: builds.append(folder) or folder

    registry = Registry()
    registry.add(Entry("pretrained", "tiny-gpt", builder(tmp_path / "gpt2"), "test", "0"))
    registry.add(Entry("pretrained", "tiny-enc", builder(tiny_bert), "test", "0", meta={"family": "encoder"}))
    decoder = HFAuto({"pretrained": "tiny-gpt"}, registry=registry)
    decoder.fingerprint()
    assert type(decoder).__name__ == "HFDecoder" and decoder.registry is registry
    assert builds == [tmp_path / "gpt2"]  # read the family, then handed the folder on: built once, not twice
    encoder = HFAuto({"pretrained": "tiny-enc"}, registry=registry)
    assert isinstance(encoder, HFEncoder) and builds == [tmp_path / "gpt2"]  # family= metadata: nothing built yet
    encoder.fingerprint()
    assert builds[-1] == tiny_bert
    with pytest.raises(AdapterError, match="no registry to look up short names"):
        HFAuto({"pretrained": "tiny-gpt"})


def test_recipe_knobs_replace_the_task_schedule_and_key_the_checkpoint(tiny_bert, cache_dir):
    requests, golds = tag_data(40, seed=12)
    plain = make_adapter(tiny_bert)
    plain.fit(training(requests, golds, epochs=3, lr=3e-5, warmup_ratio=0.667))
    tuned = make_adapter(tiny_bert, epochs=1, lr=1e-4, warmup_ratio=0.1)
    tuned.fit(training(requests, golds, epochs=3, lr=3e-5, warmup_ratio=0.667))
    record = tuned.info()["checkpoints"]["0"]
    assert record["cached"] is False and len(record["history"]) == 1  # one epoch, not the task's three
    finetune = CheckpointStore().meta(record["key"])["parts"]["finetune"]
    assert (finetune["lr"], finetune["warmup_ratio"], finetune["epochs"]) == (1e-4, 0.1, 1.0)
    assert record["key"] != plain.info()["checkpoints"]["0"]["key"]
    assert tuned.fingerprint() != plain.fingerprint()


@pytest.mark.parametrize(("arg", "value", "message"), [("lr", "0", "must be a finite number above 0"),
                                                       ("lr", "fast", "must be a finite number"),
                                                       ("warmup_ratio", "1", "from 0 and below 1"),
                                                       ("epochs", "nan", "must be a finite number above 0")])
def test_recipe_knobs_reject_bad_values(tiny_bert, arg, value, message):
    with pytest.raises(AdapterError, match=message.replace("[", r"\[").replace(")", r"\)")):
        make_adapter(tiny_bert, **{arg: value})
