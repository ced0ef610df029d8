"""What the Hugging Face adapters (encoder, decoder, vLLM) share: finding a model, fingerprinting it, arguments.

The one place for each of these, so two adapters never disagree on what a name means or whether a model
changed. Nothing here imports torch or transformers at module level: ``metabench ls`` and ``--help`` import
the adapter modules only to read class attributes.

- :func:`resolve_pretrained` turns ``pretrained=`` (a local folder, a short name registered through the
  ``metabench_register_pretrained`` hook, or a hub id) into a :class:`Pretrained`. A hub id is fetched with
  ``huggingface_hub.snapshot_download`` (honours ``HF_HUB_OFFLINE``) or, with ``download=False``, left for the
  backend (lm-eval, vLLM) to fetch itself.
- :func:`file_sha256` hashes a file once per (path, size, mtime), memoised on disk, so a 500 MB model is hashed
  once, not once per job. :func:`folder_fingerprint` (encoders) and :func:`folder_hashes` (decoders) select
  which files identify a model.
- :func:`parse_bool`, :func:`parse_int`, :func:`parse_float`, :func:`parse_dtype`, :func:`pick_device`: argument parsing.
- :func:`adapter_fingerprint`: what keys a fine-tuning adapter's answers, the same way for every trainer.
- :func:`model_family` reads ``config.json`` and says ``encoder`` or ``decoder`` (used by ``hf:``).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..atomic import write_atomically
from ..bounded_read import read_text
from ..cache import cache_root
from ..errors import AdapterError
from ..extras import missing_extra

#: Files that define what an encoder computes: hashed into its fingerprint (:func:`folder_fingerprint`).
FINGERPRINT_PATTERNS = (
    "config.json",
    "*.safetensors",
    "*.bin",
    "*.gguf",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "*.model",  # sentencepiece
)
_IGNORED_WEIGHTS = ("training_args.bin", "optimizer.bin", "scheduler.bin", "rng_state.bin")
#: Files that define what a decoder answers (:func:`folder_hashes`): every file with one of these suffixes.
#: Encoders and decoders select files differently because their adapters were written apart; both selections
#: are kept as they were, so that no fingerprint (and no cached answer or checkpoint keyed on one) changed
#: when the helpers were merged here. ``tests/core/test_fingerprints.py`` pins both.
DECODER_SUFFIXES = (".json", ".safetensors", ".bin", ".gguf", ".model", ".jinja", ".txt", ".tiktoken", ".pt")

#: Model types that are bidirectional encoders even though transformers also maps some to causal-LM heads.
ENCODER_TYPES = frozenset({
    "albert", "bert", "big_bird", "camembert", "canine", "convbert", "data2vec-text", "deberta", "deberta-v2",
    "distilbert", "electra", "ernie", "esm", "eurobert", "flaubert", "funnel", "ibert", "layoutlm", "longformer",
    "luke", "megatron-bert", "mobilebert", "modernbert", "mpnet", "mra", "neobert", "nezha", "nystromformer",
    "rembert", "roberta", "roberta-prelayernorm", "roc_bert", "roformer", "squeezebert", "xlm", "xlm-roberta",
    "xlm-roberta-xl", "xmod", "yoso",
})
_DECODER_SUFFIXES = ("ForCausalLM", "LMHeadModel")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


# ------------------------------------------------------------------------------------------- arguments


def parse_bool(value, name: str, adapter: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise AdapterError(f"model '{adapter}': {name}={value!r} is not a boolean", hint=f"use {name}=true or {name}=false")


def parse_int(value, name: str, adapter: str, minimum: int = 1, *, allow_auto: bool = False):
    """An integer argument of at least ``minimum``; ``allow_auto``: the string ``auto`` passes through."""
    if allow_auto and str(value).strip().lower() == "auto":
        return "auto"
    try:
        number = int(str(value).strip())
    except ValueError:
        extra = " or 'auto'" if allow_auto else ""
        raise AdapterError(f"model '{adapter}': {name}={value!r} is not an integer{extra}", hint=f"e.g. {name}=32") from None
    if number < minimum:
        raise AdapterError(f"model '{adapter}': {name}={number} must be at least {minimum}")
    return number


def parse_float(value, name: str, adapter: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise AdapterError(f"model '{adapter}': {name}={value!r} is not a number", hint=f"e.g. {name}=0.1") from None


DTYPES = ("float32", "bfloat16", "float16", "auto")
_DTYPE_ALIASES = {"fp32": "float32", "float": "float32", "bf16": "bfloat16", "fp16": "float16", "half": "float16"}


def parse_dtype(value: str | None, adapter: str) -> str:
    text = _DTYPE_ALIASES.get(str(value or "float32").lower(), str(value or "float32").lower())
    if text not in DTYPES:
        raise AdapterError(f"model '{adapter}': dtype={value!r} is not one of {', '.join(DTYPES)}", hint="e.g. dtype=bfloat16")
    return text


def torch_dtype(name: str, device: str):
    """The compute dtype for autocast: ``auto`` is bfloat16 on a GPU that supports it, else float32."""
    import torch

    if name == "auto":
        if device.startswith("cuda") and torch.cuda.is_available() and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    return getattr(torch, name)


def pick_device(value: str | None, adapter: str) -> str:
    import torch

    if value in (None, "", "auto"):
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    text = str(value)
    if text.startswith("cuda") and not torch.cuda.is_available():
        raise AdapterError(f"model '{adapter}': device={text} but no CUDA GPU is available", hint="use device=cpu")
    return text


def pick_device_and_threads(value: str | None, adapter: str, threads: int | None) -> str:
    """:func:`pick_device`, and torch's CPU threads set to ``threads`` when given (the in-suite trainers' choice)."""
    device = pick_device(value, adapter)
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    return device


# ---------------------------------------------------------------------------------------- model folders


@dataclass(frozen=True)
class Pretrained:
    """Where ``pretrained=`` points. ``folder``: the local model folder (None for a hub id left to the backend);
    ``short``: the registered short name, when ``name`` was one."""

    name: str
    folder: Path | None
    short: str | None = None

    @property
    def source(self) -> str:
        """What a loader is given: the folder, else the hub id."""
        return str(self.folder) if self.folder is not None else self.name


def resolve_pretrained(name: str, registry=None, revision: str | None = None, *, download: bool = True) -> Pretrained:
    """``pretrained=``: a path, a short name registered in ``registry``, or a hub id (fetched when ``download``).

    ``registry`` is None for an adapter used on its own: then only paths and hub ids resolve.
    """
    if not name:
        raise AdapterError("no model given", hint="e.g. --model hf:minilm-l6 or --model hf:pretrained=/path/to/model")
    path = Path(name).expanduser()
    if path.exists():
        if not path.is_dir() or not (path / "config.json").is_file():
            raise AdapterError(f"pretrained={name}: {path} is not a model folder (no config.json)",
                               hint="point at the folder save_pretrained() wrote")
        return Pretrained(name, path.resolve())
    if registry is not None and registry.has("pretrained", name):
        return Pretrained(name, _build_registered(registry, name), name)
    if "/" not in name and not revision:
        from ..errors import did_you_mean

        if registry is None:
            raise AdapterError(f"pretrained={name}: no such folder, and no registry to look up short names in",
                               hint="build the adapter with metabench.models.spec.build_adapter(spec, registry, settings)")
        hint_names = did_you_mean(name, registry.names("pretrained"))
        if hint_names:
            raise AdapterError(f"pretrained={name}: no such folder or registered model{hint_names}",
                               hint="`metabench ls pretrained` lists the registered short names")
    if not download:
        return Pretrained(name, None)
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise missing_extra(exc, f"pretrained={name} (not a local folder or a registered short name: a hub id)") or exc
    try:
        folder = snapshot_download(name, revision=revision, allow_patterns=[*FINGERPRINT_PATTERNS, "*.py", "*.txt"],
                                   ignore_patterns=["*.msgpack", "*.h5", "*.onnx", "*.ot", "onnx/*", "openvino/*"])
    except Exception as exc:  # noqa: BLE001 - the hub raises many kinds; all mean "cannot get it"
        raise AdapterError(
            f"pretrained={name}: not a local folder, not a registered short name, and not fetchable from the model "
            f"hub ({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''})",
            hint="`metabench ls pretrained` lists models that work offline; or pass pretrained=/path/to/folder",
        ) from None
    return Pretrained(name, Path(folder).resolve())


def _build_registered(registry, name: str) -> Path:
    entry = registry.get("pretrained", name)
    try:
        folder = Path(entry.load()())
    except AdapterError:
        raise
    except ImportError as exc:
        error = missing_extra(exc, f"pretrained model '{name}' (plugin '{entry.plugin}')")
        if error is None:
            raise AdapterError(f"pretrained model '{name}' could not be built: {type(exc).__name__}: {exc}",
                               hint=f"the plugin '{entry.plugin}' is broken; reinstall it") from exc
        raise error from None
    except Exception as exc:  # noqa: BLE001 - a broken builder is reported with the model's and plugin's name
        raise AdapterError(f"pretrained model '{name}' could not be built: {type(exc).__name__}: {exc}",
                           hint=f"the plugin '{entry.plugin}' is broken; reinstall it") from exc
    if not (folder / "config.json").is_file():
        raise AdapterError(f"pretrained model '{name}' built {folder}, which has no config.json",
                           hint=f"the plugin '{entry.plugin}' is broken; reinstall it")
    return folder.resolve()


def _fingerprint_files(folder: Path) -> list[Path]:
    files = set()
    for pattern in FINGERPRINT_PATTERNS:
        files.update(p for p in folder.glob(pattern) if p.is_file() and p.name not in _IGNORED_WEIGHTS)
    return sorted(files)


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_HASH_SECONDS = [0.0]  # time this process spent on model files' sha256 (a job charges it to model_hash_s)
_LOAD_SECONDS = [0.0]  # time this process spent loading models (a job charges it to model_load_s)


def model_hashing_seconds() -> float:
    """Wall seconds this process has spent hashing model folders (or finding their memoised hashes) so far."""
    return _HASH_SECONDS[0]


def model_loading_seconds() -> float:
    """Seconds this process has spent loading models (weights read and placed on their device) so far."""
    return _LOAD_SECONDS[0]


@contextmanager
def loading_model():
    """Charge the time of the ``with`` block to model loading (see :mod:`metabench.timings`)."""
    started = time.perf_counter()
    try:
        yield
    finally:
        _LOAD_SECONDS[0] += time.perf_counter() - started


def weights_placement(device: str) -> dict:
    """``from_pretrained`` keywords that read the weights straight onto an accelerator (no host copy of every
    tensor first, then a transfer); on the CPU, nothing: the weights are read where they stay."""
    return {} if device == "cpu" else {"device_map": {"": device}}


def file_sha256(path: Path) -> str:
    """sha256 of a file, memoised on disk by (real path, size, mtime, inode, inode change time) under the cache
    root: a 16 GB folder is read once per machine, then each run costs a stat per file
    (benchmarks/bench_model_hash.py). The change time catches weights edited in place with the mtime set back."""
    real = Path(os.path.realpath(path))
    stat = real.stat()
    stamp = f"{stat.st_size}\x00{stat.st_mtime_ns}\x00{stat.st_ino}\x00{stat.st_ctime_ns}"
    memo_key = hashlib.sha256(f"{real}\x00{stamp}".encode()).hexdigest()
    memo = cache_root() / "fingerprints" / f"{memo_key}.sha256"
    try:
        value = memo.read_text().strip()
        if len(value) == 64:
            return value
    except OSError:
        pass
    value = _hash_file(real)
    try:
        write_atomically(memo, value)
    except OSError:
        pass  # a read-only cache only costs re-hashing
    return value


def _hash_files(files: list[Path]) -> dict[str, str]:
    """sha256 per file name, the files hashed side by side: sha256 releases the GIL on large blocks, so the
    shards of a 16 GB folder are read by as many cores as there are shards the first time (later, the memo)."""
    started = time.perf_counter()
    try:
        if len(files) < 2:
            return {f.name: file_sha256(f) for f in files}
        with ThreadPoolExecutor(max_workers=min(len(files), os.cpu_count() or 1)) as pool:
            return dict(zip((f.name for f in files), pool.map(file_sha256, files)))
    finally:
        _HASH_SECONDS[0] += time.perf_counter() - started


#: What a model folder's weights are stored as (one file, or shards beside an index).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")


def _check_weights(folder: Path, files: list[Path]) -> None:
    """A folder with a config but no weights fails in ``from_pretrained`` after the run has started, as an
    internal error: refused here, when the model's fingerprint is first needed, naming what is missing."""
    if not any(f.suffix in WEIGHT_SUFFIXES and f.name not in _IGNORED_WEIGHTS for f in files):
        raise AdapterError(
            f"{folder}: a model folder without weights (no model.safetensors, pytorch_model.bin, shards or .gguf; "
            f"it holds {', '.join(sorted(f.name for f in files)) or 'no model file'})",
            hint="point pretrained= at the folder save_pretrained wrote, or copy the weight files into it")


def folder_hashes(folder: Path) -> dict[str, str]:
    """sha256 per file that decides a decoder's answers (config, tokenizer, chat template, weights)."""
    files = [path for path in sorted(folder.iterdir()) if path.is_file()
             and path.suffix in DECODER_SUFFIXES and not path.name.startswith("metabench-")]
    _check_weights(folder, files)
    return _hash_files(files)


def folder_fingerprint(folder: Path) -> str:
    """Hash of the files that define an encoder: config, weights, tokenizer."""
    files = _fingerprint_files(folder)
    if not any(f.name == "config.json" for f in files):
        raise AdapterError(f"{folder}: no config.json, so this is not a model folder")
    _check_weights(folder, files)
    payload = _hash_files(files)
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def adapter_fingerprint(adapter: str, trainer: str, base: str, args: dict) -> str:
    """The hash keying a fine-tuning adapter's answers: the adapter, its trainer's version, the base weights'
    fingerprint and the arguments that change what it learns (the caller leaves out those that cannot)."""
    payload = {"adapter": adapter, "trainer": trainer, "base": base, "args": args}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def read_config(folder: Path) -> dict:
    try:
        return json.loads(read_text(folder / "config.json", error=AdapterError))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AdapterError(f"{folder / 'config.json'}: cannot read the model config ({exc})") from None


def model_family(folder: Path) -> str:
    """``encoder`` or ``decoder``, from the folder's config.json (architectures first, then model_type)."""
    config = read_config(folder)
    model_type = str(config.get("model_type", ""))
    archs = [str(a) for a in config.get("architectures") or []]
    if config.get("is_encoder_decoder"):
        raise AdapterError(
            f"{folder}: '{model_type}' is an encoder-decoder (seq2seq) model, which metabench's hf adapters do not run",
            hint="use an encoder (BERT, RoBERTa, DeBERTa...) or a decoder-only LM",
        )
    if any(a.endswith(_DECODER_SUFFIXES) for a in archs) and model_type not in ENCODER_TYPES:
        return "decoder"
    if model_type in ENCODER_TYPES:
        return "encoder"
    if any(a.endswith(_DECODER_SUFFIXES) for a in archs) or config.get("is_decoder"):
        return "decoder"
    try:
        from transformers.models.auto.modeling_auto import (
            MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
            MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        )
    except ImportError:  # pragma: no cover
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES = MODEL_FOR_MASKED_LM_MAPPING_NAMES = {}
    if model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "encoder"
    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "decoder"
    raise AdapterError(
        f"{folder}: cannot tell whether model type '{model_type or '?'}' is an encoder or a decoder",
        hint="force one: --model hf-encoder:... or --model hf-decoder:...",
    )
