"""Model fingerprints did not change when the HF helpers were merged into hf_common (answer caches, fine-tuned
checkpoints and committed runs are keyed on them). The pinned values were computed by the code before the merge
(main at 97a87da) on the synthetic folder below, whose bytes are fixed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metabench.models.hf_common import folder_fingerprint, resolve_pretrained

FILES = {
    "config.json": json.dumps({"model_type": "bert", "architectures": ["BertModel"]}),
    "model.safetensors": "weights-bytes",
    "pytorch_model.bin": "bin-bytes",
    "training_args.bin": "ignored-by-encoder",
    "tokenizer.json": "{}",
    "tokenizer_config.json": '{"a": 1}',
    "special_tokens_map.json": "{}",
    "vocab.txt": "a\nb\n",
    "merges.txt": "m",
    "generation_config.json": '{"g": 1}',
    "chat_template.jinja": "{{x}}",
    "spm.model": "spm",
    "README.md": "not hashed",
    "metabench-info.json": "not hashed by decoder",
}
PINNED = {
    "encoder_base": "c21432d3fd43bf24691d392e0a3ec0d7c5b3cee0cf7c988e9732d1ee197fac76",
    "encoder": "6b2581143f5326e98109cef8f766ceff65e590c8329edc64734d1261d48cfb89",
    "hf_decoder": "5472d52343442eed21fec6723bcccc8cfe134a236f21f8cc5886e35581584152",
    "vllm": "35a1be11ebc41e4a659b8c4bbc5cda178142234adb2d72be26c002744c31bcd2",
    "openai": "9b169839b0a3163ca55b01aac82f24c1cf6215581e1ad32aa52314939a1e9283",
}


@pytest.fixture
def model_folder(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "model"
    folder.mkdir()
    for name, text in FILES.items():
        (folder / name).write_text(text)
    return folder


def _fingerprints(folder: Path) -> dict[str, str]:
    from metabench.models.hf_decoder import HFDecoder
    from metabench.models.hf_encoder import HFEncoder
    from metabench.models.openai_decoder import OpenAIDecoder
    from metabench.models.vllm_decoder import VLLMDecoder

    encoder = HFEncoder({"pretrained": str(folder), "max_length": "64", "batch_size": "8"})
    return {
        "encoder_base": encoder.base_fingerprint(),
        "encoder": encoder.fingerprint(),
        # lm-eval's own choice path: its answers cached before share_prompt existed (and became the default) stay valid
        "hf_decoder": HFDecoder({"pretrained": str(folder), "dtype": "float32", "batch_size": "4",
                                 "share_prompt": "false"}).fingerprint(),
        "vllm": VLLMDecoder({"pretrained": str(folder), "dtype": "auto"}).fingerprint(),
        "openai": OpenAIDecoder({"model": "gpt-x", "base_url": "http://localhost:1/v1", "api": "completions"}).fingerprint(),
    }


def test_fingerprints_are_the_ones_the_old_code_computed(model_folder):
    assert _fingerprints(model_folder) == PINNED
    assert _fingerprints(model_folder) == PINNED  # again, now read from the memo


def test_one_memo_format_and_a_changed_file_changes_both(model_folder, tmp_path):
    _fingerprints(model_folder)
    memo = tmp_path / "cache" / "fingerprints"
    assert {p.suffix for p in memo.iterdir()} == {".sha256"}  # one memo file per hashed file, no second format
    (model_folder / "model.safetensors").write_text("other weights")
    changed = _fingerprints(model_folder)
    assert changed["encoder"] != PINNED["encoder"] and changed["hf_decoder"] != PINNED["hf_decoder"]
    assert changed["openai"] == PINNED["openai"]


def test_short_names_resolve_only_through_the_registry_passed_in(model_folder, toy_registry):
    from metabench.errors import AdapterError
    from metabench.registry import Entry

    toy_registry.add(Entry("pretrained", "tiny-fixed", lambda: model_folder, "test", "0"))
    resolved = resolve_pretrained("tiny-fixed", toy_registry)
    assert resolved.folder == model_folder.resolve() and resolved.short == "tiny-fixed"
    assert folder_fingerprint(resolved.folder) == PINNED["encoder_base"]
    with pytest.raises(AdapterError, match="no registry to look up short names"):
        resolve_pretrained("tiny-fixed", None)
    hub = resolve_pretrained("org/some-model", toy_registry, download=False)
    assert hub.folder is None and hub.source == "org/some-model"


@pytest.mark.parametrize("family", ["encoder", "decoder"])
def test_a_folder_without_weights_is_an_error_naming_it_before_any_work(model_folder, family):
    """It failed inside from_pretrained, after the run had started, as 'a bug in metabench' (#36)."""
    from metabench.errors import AdapterError
    from metabench.models.hf_decoder import HFDecoder
    from metabench.models.hf_encoder import HFEncoder

    for name in ("model.safetensors", "pytorch_model.bin"):
        (model_folder / name).unlink()
    adapter = (HFEncoder if family == "encoder" else HFDecoder)({"pretrained": str(model_folder)})
    with pytest.raises(AdapterError, match=f"{model_folder}: a model folder without weights") as raised:
        adapter.fingerprint()
    assert "config.json" in str(raised.value)  # what the folder holds (training_args.bin is not taken for weights)
    assert "save_pretrained" in raised.value.hint
