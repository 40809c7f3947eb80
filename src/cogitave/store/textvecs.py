"""Text vectors: (encoder, text) -> the vector it was given, kept with the collection.

A content-addressed cache in front of the encoder of the write path: every text a publish
embeds is stored under the hash of (encoder name, text), so a later publish of the same text
(an unchanged section of a re-indexed page, a renamed file, a node moved between sources)
reuses the vector instead of encoding it again. The cache is segments of two ``.npy``
objects (sorted 128-bit keys, float32 rows) named in the manifest under ``text_vectors``;
like every object, a segment lives while a retained root names it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cogitave.store.arrays import load_npy, npy_bytes
from cogitave.store.roots import RootStore

MAX_SEGMENTS = 6
"""More segments than this are merged into one on the next publish that adds one."""

EncodeFn = Callable[[list[str]], np.ndarray]


def text_keys(encoder: str, texts: Sequence[str]) -> np.ndarray:
    """(n, 2) uint64 keys: the first 128 bits of SHA-256(encoder NUL text)."""
    out = np.empty((len(texts), 2), np.uint64)
    prefix = encoder.encode() + b"\0"
    for i, t in enumerate(texts):
        d = hashlib.sha256(prefix + t.encode("utf-8", "surrogatepass")).digest()
        out[i] = np.frombuffer(d[:16], ">u8")
    return out


class TextVectors:
    """The cache of one publish: looks texts up in the base root's segments, encodes the
    misses once, and gives the manifest entry of the next root."""

    def __init__(self, store: RootStore, entry: dict[str, Any] | None, encoder: str) -> None:
        self.store = store
        self.encoder = encoder
        same = bool(entry) and entry.get("encoder") == encoder  # type: ignore[union-attr]
        self.segments: list[dict[str, Any]] = list(entry["segments"]) if same else []  # type: ignore[index]
        self.encoded = 0
        self.reused = 0
        self._new: dict[str, Any] | None = None

    def encode(self, texts: list[str], encode: EncodeFn, dim: int) -> np.ndarray:
        """float32 rows for ``texts`` (distinct), calling ``encode`` only on unseen texts."""
        out = np.zeros((len(texts), dim), np.float32)
        if not texts:
            return out
        keys = text_keys(self.encoder, texts)
        found = np.zeros(len(texts), bool)
        for seg in self.segments:
            if found.all():
                break
            seg_keys = load_npy(self.store, seg["keys_obj"])
            idx, hit = _lookup(seg_keys, keys)
            hit &= ~found
            if hit.any():
                rows = load_npy(self.store, seg["rows_obj"])
                out[hit] = rows[idx[hit]]
                found |= hit
        miss = np.flatnonzero(~found)
        self.reused += int(found.sum())
        self.encoded += len(miss)
        if len(miss):
            fresh = np.asarray(encode([texts[i] for i in miss]), np.float32)
            out[miss] = fresh
            self._new = self._segment(keys[miss], fresh)
        return out

    def _segment(self, keys: np.ndarray, rows: np.ndarray) -> dict[str, Any]:
        order = np.lexsort((keys[:, 1], keys[:, 0]))
        return {
            "keys_obj": self.store.put_bytes(npy_bytes(np.ascontiguousarray(keys[order]))),
            "rows_obj": self.store.put_bytes(npy_bytes(np.ascontiguousarray(rows[order]))),
            "count": len(order),
        }

    def entry(self) -> dict[str, Any] | None:
        """The ``text_vectors`` entry of the next root (None: nothing cached yet)."""
        segments = list(self.segments)
        if self._new is not None:
            segments.append(self._new)
            if len(segments) > MAX_SEGMENTS:
                segments = [self._merge(segments)]
        if not segments:
            return None
        return {"encoder": self.encoder, "segments": segments}

    def _merge(self, segments: list[dict[str, Any]]) -> dict[str, Any]:
        keys = np.concatenate([load_npy(self.store, s["keys_obj"]) for s in segments])
        rows = np.concatenate([load_npy(self.store, s["rows_obj"]) for s in segments])
        _, first = np.unique(keys, axis=0, return_index=True)
        return self._segment(keys[first], rows[first])


def _lookup(seg_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row index, found) of each key in a segment sorted by (hi, lo)."""
    n = len(seg_keys)
    if not n:
        return np.zeros(len(keys), np.int64), np.zeros(len(keys), bool)
    hi = np.ascontiguousarray(seg_keys[:, 0])
    left = np.searchsorted(hi, keys[:, 0], side="left")
    right = np.searchsorted(hi, keys[:, 0], side="right")
    idx = np.minimum(left, n - 1)
    found = (right > left) & (seg_keys[idx, 1] == keys[:, 1])
    # 64-bit prefixes practically never repeat; when they do, scan the short run
    for i in np.flatnonzero(~found & (right - left > 1)):
        for j in range(int(left[i]), int(right[i])):
            if seg_keys[j, 1] == keys[i, 1]:
                idx[i], found[i] = j, True
                break
    return idx, found
