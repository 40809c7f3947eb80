"""Nodes and edges: the values every ingest source produces and every store consumes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from cogitave.schema import Scalar, check_edge_label

DimValue = Scalar | tuple[Scalar, ...]


@dataclass(frozen=True)
class Edge:
    """A directed edge ``src -[label]-> dst``; ``label`` is in the closed vocabulary."""

    label: str
    dst: str

    def __post_init__(self) -> None:
        check_edge_label(self.label)


@dataclass(frozen=True)
class Node:
    """One retrievable thing with a stable ``uid``.

    ``dims`` maps dimension name to a value (text for semantic dimensions; a scalar or a tuple
    of scalars for exact ones). ``content`` is what the content API returns; it is stored, not
    indexed (index text by putting it in a semantic dimension).
    """

    uid: str
    kind: str = "node"
    dims: Mapping[str, DimValue] = field(default_factory=dict)
    content: str | None = None
    edges: tuple[Edge, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        """JSON-ready record, the format of the node store and of ``GET /nodes/{uid}``."""
        rec: dict[str, Any] = {"uid": self.uid, "kind": self.kind, "dims": dict(self.dims)}
        if self.content is not None:
            rec["content"] = self.content
        if self.edges:
            rec["edges"] = [{"label": e.label, "dst": e.dst} for e in self.edges]
        if self.meta:
            rec["meta"] = dict(self.meta)
        return rec

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> Node:
        dims = {k: tuple(v) if isinstance(v, list) else v for k, v in rec.get("dims", {}).items()}
        return cls(
            uid=rec["uid"],
            kind=rec.get("kind", "node"),
            dims=dims,
            content=rec.get("content"),
            edges=tuple(Edge(e["label"], e["dst"]) for e in rec.get("edges", ())),
            meta=rec.get("meta", {}),
        )

    def text(self, dim: str) -> str:
        """The dimension's value as text ('' when absent)."""
        v = self.dims.get(dim)
        if v is None:
            return ""
        if isinstance(v, tuple):
            return "\n".join(str(x) for x in v)
        return str(v)


class NodeFacts(NamedTuple):
    """What ranking reads of a node besides its text: uid, kind, stored ``path`` and ``url``
    (from ``meta``) and the ``title`` dimension ('' where absent or not a string). The node
    store keeps them beside each record, so a ranking stage reads them without parsing it."""

    uid: str
    kind: str
    path: str = ""
    url: str = ""
    title: str = ""

    @classmethod
    def of_record(cls, rec: Mapping[str, Any]) -> NodeFacts:
        """The facts of a stored record (:meth:`Node.to_record`)."""
        meta = rec.get("meta")
        meta = meta if isinstance(meta, Mapping) else {}
        dims = rec.get("dims")
        title = dims.get("title") if isinstance(dims, Mapping) else None
        return cls(
            rec["uid"],
            rec.get("kind", "node"),
            _str(meta.get("path")),
            _str(meta.get("url")),
            _str(title),
        )


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


_URL_HOST = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://[^/]*")


def strip_host(url: str) -> str:
    """A URL without its scheme and host, and without a leading ``/`` (``docs/x/#y``)."""
    return _URL_HOST.sub("", url).lstrip("/")


def url_path(url: str) -> str:
    """A URL's path without scheme, host, fragment or leading ``/`` (``docs/x/``)."""
    return strip_host(url).split("#", 1)[0]


def page_names(uid: str, path: str, url: str) -> tuple[str, ...]:
    """The names a node answers to in path filters and globs: its stored path, its URL's
    path, its uid (the empty ones left out)."""
    return tuple(x for x in (path, url_path(url), uid) if x)


def meta_str(node: Node, key: str) -> str:
    """A string of the node's ``meta`` ('' when absent or not a string)."""
    value = node.meta.get(key) if isinstance(node.meta, Mapping) else None
    return value if isinstance(value, str) else ""


_NAMESPACE = re.compile(r"^([a-z0-9][a-z0-9-]*@[^:/#\s]+):")


def uid_namespace(uid: str) -> str | None:
    """The library version a uid belongs to in a collection of libraries (``fastapi@0.115.0``
    of ``fastapi@0.115.0:tutorial/query``), or None."""
    m = _NAMESPACE.match(uid)
    return m.group(1) if m else None


def local_uid(uid: str) -> str:
    """A uid without its library namespace: the page path its source gave it."""
    m = _NAMESPACE.match(uid)
    return uid[m.end() :] if m else uid
