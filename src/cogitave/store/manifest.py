"""A root's manifest as a typed value: JSON bytes <-> :class:`Manifest`.

The layout of ``roots/<id>.json`` (one JSON object, keys sorted, no spaces; ``<id>`` is the
SHA-256 of those bytes)::

    format        layout version (FORMAT_VERSION)
    created       when the root was written (ISO 8601, UTC, milliseconds)
    parent        the previous root's id (null in a collection's first root)
    schema        the schema (``Schema.to_dict``); schema_hash: its hash
    settings      the collection's settings (``Settings.to_dict``)
    encoder       the sentence encoder's identity, or null (BM25 only): {"name", "dim"},
                  and for a shipped model its pooling, max_length, query_prefix,
                  document_prefix, model and tokenizer files (``expand/models.py``)
    lexical       {"files": tantivy file name -> object}
    segments      node segment entries, oldest first (``store/nodes.py``)
    next_nid      the next node id a publish hands out
    stats_obj     the corpus statistics object                  (absent in a first root)
    vectors       dimension -> vector segment entries (``store/vectors.py``)
    graph         the graph segment entry (``store/graph.py``)   (absent in a first root)
    text_vectors  the text -> vector cache entry (``store/textvecs.py``), or null
                                                                (absent in a first root)
    sources       source name -> {"map_obj", "nodes"} (``sync.py``) (absent in a first root)
    counts        {"nodes", "edges", "vector_rows"}

Only this module spells these keys. The manifest's id is the hash of its bytes, so reading a
root and writing it back must give the same bytes: a key this version does not know is kept
in ``extra``, and a known key a root lacks is remembered in ``absent`` and left out again.
The entries inside ``segments``, ``vectors``, ``graph``, ``text_vectors`` and ``sources``
stay plain dicts, owned by the modules that write them; like the manifest, they are read-only
once loaded.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cogitave.errors import CorruptionError

FORMAT_VERSION = 1

# Required keys -> the JSON type of their value; optional keys -> (type, whether null is allowed).
_REQUIRED: dict[str, type] = {"schema": dict, "lexical": dict, "segments": list, "next_nid": int}
_OPTIONAL: dict[str, tuple[type, bool]] = {
    "format": (int, True),
    "created": (str, True),
    "parent": (str, True),
    "settings": (dict, True),
    "encoder": (dict, True),
    "schema_hash": (str, True),
    "stats_obj": (str, True),
    "vectors": (dict, False),
    "graph": (dict, True),
    "text_vectors": (dict, True),
    "sources": (dict, False),
    "counts": (dict, False),
}
_FIRST_ROOT_ABSENT = frozenset({"stats_obj", "graph", "text_vectors", "sources"})


@dataclass(frozen=True)
class Manifest:
    """One root's manifest. Build changed copies with :meth:`with_`."""

    schema: dict[str, Any]
    lexical_files: dict[str, str]
    segments: tuple[dict[str, Any], ...]
    next_nid: int
    format: int | None = None
    created: str | None = None
    parent: str | None = None
    settings: dict[str, Any] | None = None
    encoder: dict[str, Any] | None = None
    schema_hash: str | None = None
    stats_obj: str | None = None
    vectors: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    graph: dict[str, Any] | None = None
    text_vectors: dict[str, Any] | None = None
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    """Top-level keys this version does not know, written back as they were."""
    lexical_extra: dict[str, Any] = field(default_factory=dict)
    """Keys beside ``files`` under ``lexical`` (none today), written back as they were."""
    absent: frozenset[str] = frozenset()
    """Optional keys the root lacks: left out of :meth:`to_dict` while they hold their
    default (None or empty), so a first root reads and writes back byte for byte."""

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def first(
        cls,
        schema: dict[str, Any],
        schema_hash: str,
        settings: dict[str, Any],
        encoder: Mapping[str, Any] | tuple[str, int] | None,
    ) -> Manifest:
        """A collection's first root: schema, settings, encoder (or none), no nodes.
        ``encoder``: the encoder's identity (``EncoderSpec.identity``), or (name, width)."""
        if isinstance(encoder, tuple):
            encoder = {"name": encoder[0], "dim": encoder[1]}
        return cls(
            schema=schema,
            lexical_files={},
            segments=(),
            next_nid=0,
            parent=None,
            settings=settings,
            encoder=dict(encoder) if encoder else None,
            schema_hash=schema_hash,
            counts={"nodes": 0, "edges": 0},
            absent=_FIRST_ROOT_ABSENT | {"format", "created"},
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str | None = None) -> Manifest:
        """The manifest a root's JSON object holds; a missing required key or a value of the
        wrong type is a CorruptionError naming ``source`` (the file, when there is one)."""
        if not isinstance(d, Mapping):
            raise _corrupt(source, f"is a JSON {type(d).__name__}, not an object")
        for key, typ in _REQUIRED.items():
            if key not in d:
                raise _corrupt(source, f"has no {key!r}")
            _check(source, key, d[key], typ, nullable=False)
        for key, (typ, nullable) in _OPTIONAL.items():
            if key in d:
                _check(source, key, d[key], typ, nullable=nullable)
        lexical = d["lexical"]
        if not isinstance(lexical.get("files"), dict):
            raise _corrupt(source, "has no object 'lexical.files'")
        known = {k: d[k] for k in _OPTIONAL if k in d}
        return cls(
            schema=d["schema"],
            lexical_files=lexical["files"],
            segments=tuple(d["segments"]),
            next_nid=d["next_nid"],
            extra={k: v for k, v in d.items() if k not in _REQUIRED and k not in _OPTIONAL},
            lexical_extra={k: v for k, v in lexical.items() if k != "files"},
            absent=frozenset(k for k in _OPTIONAL if k not in d),
            **known,
        )

    @classmethod
    def from_json(cls, data: bytes, *, source: str) -> Manifest:
        """Parse a root file's bytes: JSON, a format this version reads, then the keys."""
        try:
            d = json.loads(data)
        except ValueError as e:
            raise _corrupt(source, "is not JSON") from e
        fmt = d.get("format") if isinstance(d, dict) else None
        if fmt != FORMAT_VERSION:
            raise _corrupt(source, f"has format {fmt}, this version reads {FORMAT_VERSION}")
        return cls.from_dict(d, source=source)

    def with_(self, **changes: Any) -> Manifest:
        """A copy with ``changes`` (field names); a changed key is written even when None."""
        return dataclasses.replace(self, **changes, absent=self.absent - changes.keys())

    # -- serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON object, keys sorted: exactly what :meth:`from_dict` was given."""
        out: dict[str, Any] = {
            **self.extra,
            "schema": self.schema,
            "lexical": {**self.lexical_extra, "files": self.lexical_files},
            "segments": list(self.segments),
            "next_nid": self.next_nid,
        }
        for key in _OPTIONAL:
            value = getattr(self, key)
            if key not in self.absent or value != _DEFAULTS[key]:
                out[key] = value
        return dict(sorted(out.items()))

    def to_json(self) -> bytes:
        """The bytes a root file holds (its id is their SHA-256)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":")).encode()

    # -- typed views --------------------------------------------------------------------------
    @property
    def node_count(self) -> int | None:
        """Live nodes as counted by the writer (None when the root does not say)."""
        n = self.counts.get("nodes")
        return n if isinstance(n, int) else None

    @property
    def edge_count(self) -> int | None:
        """Graph edges as counted by the writer (None when the root does not say)."""
        n = self.counts.get("edges")
        return n if isinstance(n, int) else None

    @property
    def vector_rows(self) -> dict[str, int]:
        """Stored vector rows per dimension, as counted by the writer."""
        return dict(self.counts.get("vector_rows") or {})

    @property
    def vector_segments(self) -> int:
        """Vector segments over every dimension."""
        return sum(len(v) for v in self.vectors.values())

    def with_counts(self, *, nodes: int, edges: int, vector_rows: dict[str, int]) -> Manifest:
        """A copy with new counts (any other count a newer writer recorded is kept)."""
        counts = {**self.counts, "nodes": nodes, "edges": edges, "vector_rows": vector_rows}
        return self.with_(counts=counts)

    @property
    def encoder_name(self) -> str | None:
        """The collection's sentence encoder (None: BM25 only)."""
        name = (self.encoder or {}).get("name")
        return name if isinstance(name, str) else None

    @property
    def encoder_dim(self) -> int | None:
        """The width of the encoder's vectors (None: BM25 only)."""
        dim = (self.encoder or {}).get("dim")
        return dim if isinstance(dim, int) else None

    def objects(self) -> Iterator[str]:
        """Every object hash the manifest names: the lexical file table, and every string
        value under a key ending in ``_obj`` anywhere else (segment, vector, graph, cache and
        source entries, and whatever a newer writer added)."""
        yield from self.lexical_files.values()
        rest = self.to_dict()
        rest.pop("lexical")
        yield from _objs(rest)


def parent_of(data: bytes) -> str | None:
    """The parent id a root file names, read leniently (None when unreadable): for walking a
    chain of roots that may be damaged."""
    try:
        d = json.loads(data)
    except ValueError:
        return None
    parent = d.get("parent") if isinstance(d, dict) else None
    return parent if isinstance(parent, str) else None


def _objs(x: Any) -> Iterator[str]:
    if isinstance(x, dict):
        for k, v in x.items():
            if k.endswith("_obj") and isinstance(v, str):
                yield v
            else:
                yield from _objs(v)
    elif isinstance(x, list):
        for v in x:
            yield from _objs(v)


def _defaults() -> dict[str, Any]:
    out = {}
    for f in dataclasses.fields(Manifest):
        if f.name in _OPTIONAL:
            factory = f.default_factory
            out[f.name] = factory() if factory is not dataclasses.MISSING else f.default
    return out


_DEFAULTS = _defaults()


def _check(source: str | None, key: str, value: Any, typ: type, *, nullable: bool) -> None:
    if value is None and nullable:
        return
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        names = {dict: "an object", list: "a list", int: "an integer", str: "a string"}
        raise _corrupt(source, f"{key!r} is not {names[typ]}")


def _corrupt(source: str | None, what: str) -> CorruptionError:
    if source is None:
        return CorruptionError(f"manifest {what}")
    return CorruptionError(f"manifest {source} {what}", details={"file": source})
