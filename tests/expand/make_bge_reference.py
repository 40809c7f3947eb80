"""Write ``tests/expand/bge_small_reference.npz``: bge-small-en-v1.5 vectors of the encoder
tests' fixed texts, from the graph ``compartment`` ships, run the plainest way.

    PYTHONPATH=src .venv/bin/python -m tests.expand.make_bge_reference

No fp32 weights of bge-small ship in a package that installs here, so the reference graph is
the shipped int8 one, run apart from the engine's encoder: onnxruntime with every graph
optimisation off, one text per call (no batching, no padding, no length sorting), the
tokenizer read straight from ``tokenizer.json`` (truncated at 512), the [CLS] row L2-normalised
in float64. Documents are the texts as they are; queries carry bge's query prefix. The tests
check the engine's encoder against this file (cosine >= 0.99).
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from tests.expand.helpers import SHORT, TOPK_QUERY_TEXTS, fixed_texts, text_key

REFERENCE_FILE = Path(__file__).with_name("bge_small_reference.npz")
QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
_DIR = "compartment/models/bge-small-en-v1.5-int8"


def query_texts() -> list[str]:
    return list(dict.fromkeys([*SHORT, *TOPK_QUERY_TEXTS]))


def _file(rel: str) -> Path:
    return Path(str(metadata.distribution("compartment").locate_file(f"{_DIR}/{rel}")))


def reference(texts: Iterable[str], prefix: str = "") -> dict[str, np.ndarray]:
    """text -> unit vector, one plain onnxruntime call per text."""
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(_file("model_quantized.onnx")), sess_options=opts)
    tok = Tokenizer.from_file(str(_file("tokenizer.json")))
    tok.no_padding()
    tok.enable_truncation(512)
    out: dict[str, np.ndarray] = {}
    for text in texts:
        ids = np.asarray([tok.encode(prefix + text).ids], np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feed["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = session.run(["last_hidden_state"], feed)
        cls = hidden[0, 0].astype(np.float64)
        out[text] = (cls / np.linalg.norm(cls)).astype(np.float32)
    return out


def main() -> None:
    docs = reference(fixed_texts())
    queries = reference(query_texts(), QUERY_PREFIX)
    arrays = {f"d{text_key(t)}": v for t, v in docs.items()}
    arrays.update({f"q{text_key(t)}": v for t, v in queries.items()})
    np.savez_compressed(REFERENCE_FILE, **arrays)
    print(f"wrote {len(docs)} document and {len(queries)} query vectors to {REFERENCE_FILE}")


if __name__ == "__main__":
    main()
