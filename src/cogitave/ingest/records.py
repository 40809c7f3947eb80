"""Records -> nodes: validation shared by every source, with file:line problem reports.

A source yields ``(file, line, object)``; :func:`collect` turns them into nodes and a list of
problems. The caller decides: refuse the whole batch (default: nothing half-written) or, with
``skip_bad``, keep the good nodes and list the bad ones.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cogitave.errors import CogitaveError, IngestError
from cogitave.nodes import DimValue, Edge, Node
from cogitave.schema import DIM_NAME, RESERVED_KEYS, Dimension, Schema

MAX_UID = 1024
MAX_LISTED = 50


@dataclass(frozen=True)
class Problem:
    """One rejected record."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


@dataclass
class Batch:
    """What a source produced: valid nodes, rejected records, and the inferred schema."""

    nodes: list[Node] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    schema: Schema | None = None

    def raise_if_bad(self) -> None:
        """Refuse the batch when any record was bad (the default: nothing half-written)."""
        if self.problems:
            shown = "; ".join(str(p) for p in self.problems[:5])
            more = f" (and {len(self.problems) - 5} more)" if len(self.problems) > 5 else ""
            raise IngestError(
                f"{len(self.problems)} bad record(s), nothing written: {shown}{more}. "
                "Fix them, or pass --skip-bad to write the good records only.",
                details={"errors": [p.__dict__ for p in self.problems[:MAX_LISTED]]},
            )


def check_uid(uid: Any) -> str:
    if not isinstance(uid, str) or not uid.strip():
        raise ValueError("'uid' must be a non-empty string")
    if len(uid) > MAX_UID:
        raise ValueError(f"'uid' is longer than {MAX_UID} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in uid):
        raise ValueError("'uid' contains control characters")
    return uid


def _value(key: str, v: Any) -> DimValue:
    if isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"dimension {key!r}: numbers must be finite")
        return v
    if isinstance(v, list):
        if not all(isinstance(x, str | int | float | bool) for x in v):
            raise ValueError(f"dimension {key!r}: a list may hold only strings and numbers")
        return tuple(v)
    raise ValueError(f"dimension {key!r}: unsupported value type {type(v).__name__}")


def to_node(obj: Any) -> Node:
    """Validate one JSON object as a node (format of ``cogitave index --format jsonl``)."""
    if not isinstance(obj, Mapping):
        raise ValueError("a record must be a JSON object")
    uid = check_uid(obj.get("uid"))
    kind = obj.get("kind", "node")
    if not isinstance(kind, str) or not kind:
        raise ValueError("'kind' must be a non-empty string")
    content = obj.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError("'content' must be a string")
    edges_raw = obj.get("edges", [])
    if not isinstance(edges_raw, list):
        raise ValueError("'edges' must be a list of {label, dst}")
    edges = []
    for e in edges_raw:
        if not isinstance(e, Mapping) or set(e) - {"label", "dst"}:
            raise ValueError("each edge must be an object {label, dst}")
        dst = check_uid(e.get("dst"))
        try:
            edges.append(Edge(str(e.get("label")), dst))
        except CogitaveError as err:
            raise ValueError(err.message) from err
    meta = obj.get("meta") or {}
    if not isinstance(meta, Mapping) or not all(isinstance(k, str) for k in meta):
        raise ValueError("'meta' must be an object (data kept with the node, not searched)")
    dims: dict[str, DimValue] = {}
    for key, v in obj.items():
        if key in RESERVED_KEYS or v is None:
            continue
        if not DIM_NAME.match(key):
            raise ValueError(f"{key!r} is not a valid dimension name (letters, digits, _)")
        dims[key] = _value(key, v)
    return Node(uid, kind, dims, content, tuple(edges), dict(meta))


def infer_schema(nodes: Iterable[Node], declared: Schema | None) -> Schema:
    """Declared dimensions, plus one per undeclared key: text -> semantic, else exact."""
    dims: dict[str, Dimension] = {d.name: d for d in (declared.dimensions if declared else ())}
    for node in nodes:
        for key, v in node.dims.items():
            if key in dims:
                continue
            items = v if isinstance(v, tuple) else (v,)
            is_text = bool(items) and all(isinstance(x, str) for x in items)
            dims[key] = Dimension(key, "semantic" if is_text else "exact")
    return Schema(tuple(dims.values()))


def collect(records: Iterable[tuple[str, int, Any]], declared: Schema | None = None) -> Batch:
    """Validate records into a batch; duplicate uids within a batch are problems too."""
    batch = Batch()
    seen: dict[str, str] = {}
    for file, line, obj in records:
        if isinstance(obj, Problem):
            batch.problems.append(obj)
            continue
        try:
            node = to_node(obj)
            if node.uid in seen:
                raise ValueError(f"duplicate uid {node.uid!r} (first at {seen[node.uid]})")
            if declared is not None:
                _check_declared(node, declared)
        except ValueError as e:
            batch.problems.append(Problem(file, line, str(e)))
            continue
        seen[node.uid] = f"{file}:{line}"
        batch.nodes.append(node)
    batch.schema = infer_schema(batch.nodes, declared)
    return batch


def _check_declared(node: Node, declared: Schema) -> None:
    for key, v in node.dims.items():
        d = declared.get(key)
        items = v if isinstance(v, tuple) else (v,)
        if d is not None and d.type == "semantic" and not all(isinstance(x, str) for x in items):
            raise ValueError(f"dimension {key!r} is semantic: its value must be text")
