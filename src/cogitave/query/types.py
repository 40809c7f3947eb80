"""Request and response values of a search: frozen, typed, JSON-ready."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from cogitave.errors import QueryError
from cogitave.nodes import Node
from cogitave.store.roots import is_root_id

Mode = Literal["planned", "hybrid", "bm25", "dense"]
MODES: tuple[str, ...] = ("planned", "hybrid", "bm25", "dense")
MAX_QUERY_CHARS = 4096
MAX_QUERY_TERMS = 256
WORDS = re.compile(r"\w+")
MAX_LIMIT = 1000
MAX_OFFSET = 10_000
MAX_PREFIX_CHARS = 1024
MAX_LIBRARIES = 50


def valid_text(s: str) -> bool:
    """Text every index and encoder can take: encodable as UTF-8 (no lone surrogate) and
    without NUL."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in s


@dataclass(frozen=True)
class SearchRequest:
    """One search.

    ``mode`` picks the system: ``planned`` (the full planner; the default), ``hybrid`` (RRF of
    whole-query BM25 and dense), ``bm25`` or ``dense`` alone. ``dimensions`` restricts the
    dimensions searched; ``filters`` keeps nodes whose exact dimension has one of the values.
    ``root`` pins a retained root id (default: the collection's HEAD at open time).

    Page-aware ranking (``query/pages.py``): ``group_by_page`` lists one hit per page, its
    other matching sections in ``Hit.group`` (None: the collection's ``[docs]`` default, off
    unless set; the ``docs_search`` tool turns it on);
    ``path_prefix`` keeps nodes whose path, URL path or uid starts with it; ``include_kinds``
    lets hidden kinds (navigation groups, source files) compete; ``demote=False`` turns off
    the demotion of release notes and of the ``[docs] demote`` globs.

    ``libraries`` (``name`` or ``name@version``) limits a collection of libraries to those
    (None: each library at its default version, see :mod:`cogitave.libraries.collection`).
    """

    query: str
    limit: int = 10
    offset: int = 0
    mode: Mode = "planned"
    dimensions: tuple[str, ...] | None = None
    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    backfill: bool = False
    explain: bool = False
    root: str | None = None
    group_by_page: bool | None = None
    path_prefix: str | None = None
    include_kinds: tuple[str, ...] | None = None
    demote: bool = True
    libraries: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.query, str):
            raise QueryError("query must be a string")
        q = self.query.strip()
        if not q:
            raise QueryError("query is empty: give some words to search for")
        if len(self.query) > MAX_QUERY_CHARS:
            raise QueryError(f"query is longer than {MAX_QUERY_CHARS} characters")
        if "\x00" in self.query:
            raise QueryError("query contains a NUL character")
        try:
            self.query.encode("utf-8")
        except UnicodeEncodeError:
            raise QueryError("query is not valid Unicode text (lone surrogate)") from None
        if len(WORDS.findall(self.query)) > MAX_QUERY_TERMS:
            raise QueryError(f"query has more than {MAX_QUERY_TERMS} words; shorten it")
        if self.root is not None and not (isinstance(self.root, str) and is_root_id(self.root)):
            raise QueryError("root must be a root id: 64 lowercase hex digits")
        for name, v, hi in (("limit", self.limit, MAX_LIMIT), ("offset", self.offset, MAX_OFFSET)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise QueryError(f"{name} must be an integer")
            if v < (1 if name == "limit" else 0) or v > hi:
                lo = 1 if name == "limit" else 0
                raise QueryError(f"{name} must be between {lo} and {hi}, not {v}")
        if self.mode not in MODES:
            raise QueryError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.dimensions is not None:
            if not isinstance(self.dimensions, list | tuple):
                raise QueryError(
                    f"dimensions must be a list of dimension names, not {self.dimensions!r}"
                )
            dims = tuple(self.dimensions)
            if not dims or not all(isinstance(d, str) for d in dims):
                raise QueryError("dimensions must be a non-empty list of dimension names")
            object.__setattr__(self, "dimensions", dims)
        if not isinstance(self.filters, Mapping):
            raise QueryError("filters must map an exact dimension to a value or list of values")
        norm: dict[str, tuple[str, ...]] = {}
        for k, v in self.filters.items():
            vals = v if isinstance(v, list | tuple) else (v,)
            if (
                not isinstance(k, str)
                or not vals
                or not all(
                    isinstance(x, str | int | float) and not isinstance(x, bool) for x in vals
                )
            ):
                raise QueryError(f"filter {k!r} needs a value or a non-empty list of values")
            norm[k] = tuple(str(x) for x in vals)
        object.__setattr__(self, "filters", norm)
        for name, texts in (
            ("filters", [*norm, *(v for vals in norm.values() for v in vals)]),
            ("path_prefix", [self.path_prefix] if isinstance(self.path_prefix, str) else []),
            ("dimensions", list(self.dimensions or ())),
        ):
            if not all(valid_text(t) for t in texts):
                raise QueryError(f"{name}: not valid Unicode text (a lone surrogate or NUL)")
        if self.group_by_page is not None and not isinstance(self.group_by_page, bool):
            raise QueryError("group_by_page must be true, false or null")
        if not isinstance(self.demote, bool):
            raise QueryError("demote must be true or false")
        if self.path_prefix is not None and (
            not isinstance(self.path_prefix, str) or len(self.path_prefix) > MAX_PREFIX_CHARS
        ):
            raise QueryError(
                f"path_prefix must be a string of at most {MAX_PREFIX_CHARS} characters"
            )
        if self.libraries is not None:
            libs = self.libraries
            if (
                not isinstance(libs, list | tuple)
                or not libs
                or len(libs) > MAX_LIBRARIES
                or not all(isinstance(x, str) and x.strip() and valid_text(x) for x in libs)
            ):
                raise QueryError(
                    f"libraries must be a list of 1-{MAX_LIBRARIES} names (NAME or NAME@VERSION)"
                )
            object.__setattr__(self, "libraries", tuple(x.strip() for x in libs))
        if self.include_kinds is not None:
            kinds = self.include_kinds
            if not isinstance(kinds, list | tuple) or not all(
                isinstance(k, str) and valid_text(k) for k in kinds
            ):
                raise QueryError("include_kinds must be a list of node kinds")
            object.__setattr__(self, "include_kinds", tuple(kinds))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchRequest:
        """Build from a JSON body; unknown fields are an error, not silently dropped."""
        if not isinstance(data, Mapping):
            raise QueryError("the request body must be a JSON object")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise QueryError(
                f"unknown field(s) {sorted(unknown)}; allowed: {sorted(known)}",
                details={"unknown": sorted(unknown)},
            )
        if "query" not in data:
            raise QueryError("'query' is required")
        kw = dict(data)
        for name in ("dimensions", "include_kinds", "libraries"):
            if isinstance(kw.get(name), list):
                kw[name] = tuple(kw[name])
        for b in ("backfill", "explain"):
            if b in kw and not isinstance(kw[b], bool):
                raise QueryError(f"{b} must be true or false")
        if kw.get("filters") is None:
            kw.pop("filters", None)
        return cls(**kw)


@dataclass(frozen=True)
class Hit:
    """One result. ``lenses`` maps lens name to the rank (from 1) the node had there.

    ``url``, ``path`` and ``breadcrumb`` come from the node as stored in the root that was
    searched (a surface never looks them up again elsewhere); they are empty when the source
    gave none. ``group`` lists the other matching nodes of the hit's page, best first, when
    results are grouped by page (left out of ``to_dict`` when empty)."""

    uid: str
    rank: int
    score: float
    kind: str
    title: str
    snippet: str
    lenses: Mapping[str, int] = field(default_factory=dict)
    url: str = ""
    path: str = ""
    breadcrumb: tuple[str, ...] = ()
    group: tuple[str, ...] = ()
    library: str = ""
    """``name@version`` of the library version the hit is from (a collection of libraries)."""

    def to_dict(self) -> dict[str, Any]:
        # Field by field: dataclasses.asdict deep-copies every value, and at 10 hits a query
        # that was 1.5 ms of a 5 ms query's CPU.
        out: dict[str, Any] = {
            "uid": self.uid,
            "rank": self.rank,
            "score": self.score,
            "kind": self.kind,
            "title": self.title,
            "snippet": self.snippet,
            "lenses": dict(self.lenses),
            "url": self.url,
            "path": self.path,
            "breadcrumb": list(self.breadcrumb),
        }
        if self.group:
            out["group"] = list(self.group)
        if self.library:
            out["library"] = self.library
        return out


@dataclass(frozen=True)
class SearchResponse:
    """Results, the root they came from, and diagnostics."""

    results: tuple[Hit, ...]
    root: str
    diagnostics: Mapping[str, Any]
    nodes: tuple[Node, ...] = field(default=(), repr=False, compare=False)
    """The stored nodes of ``results``, in order, as the searched root holds them (what a
    renderer reads; not part of the JSON answer)."""

    @property
    def uids(self) -> list[str]:
        return [h.uid for h in self.results]

    def to_dict(self, results: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The JSON answer; ``results``: the hits as the caller already made them."""
        return {
            "results": [h.to_dict() for h in self.results] if results is None else results,
            "root": self.root,
            "diagnostics": dict(self.diagnostics),
        }
