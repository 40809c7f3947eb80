"""The typed arguments of every service operation: bounds, defaults and checks, in one place.

A surface builds one of these from its transport (JSON body, query string, GraphQL arguments,
MCP tool arguments, CLI options) and passes only what the caller gave: every default lives
here. Each checks itself when built, so a bad value is an :class:`~cogitave.errors.InputError`
(or a :class:`~cogitave.errors.QueryError`, ``QueryGraphError``) before any work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from cogitave.errors import InputError, QueryError, QueryGraphError
from cogitave.graph.traverse import MAX_DEPTH, MAX_ROWS
from cogitave.query.types import Mode, SearchRequest, valid_text
from cogitave.service.render import DEFAULT_FETCH_TOKENS, DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS

DEFAULT_LIMIT = 10
TOOL_MAX_LIMIT = 50
"""The agents' search tools return at most this many hits: short, readable answers."""
RELATED_DEFAULT_LIMIT = 50
RELATED_MAX_LIMIT = MAX_ROWS
XREF_DEFAULT_LIMIT = 5
XREF_MAX_LIMIT = 50
FACET_MAX_UIDS = 200
MAX_FETCH_OFFSET = 100_000
MAX_REF_CHARS = 2000
DIRECTIONS = ("out", "in", "both")

A = TypeVar("A")


def integer(name: str, value: Any, lo: int, hi: int, code: str | None = None) -> int:
    """``value`` if it is an integer (not a bool) within ``lo..hi``; else the error, coded
    ``code`` for the graph tools."""
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{name} must be an integer, not {value!r}"
    elif not lo <= value <= hi:
        msg = f"{name} must be between {lo} and {hi}, not {value}"
    else:
        return value
    raise QueryGraphError(code, msg) if code else QueryError(msg)


def text(name: str, value: Any, max_chars: int = MAX_REF_CHARS) -> str:
    """A non-empty string of valid Unicode, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{name} must be a non-empty string")
    if len(value) > max_chars:
        raise InputError(f"{name} is longer than {max_chars} characters")
    if not valid_text(value):
        raise InputError(f"{name} is not valid Unicode text (a lone surrogate or NUL)")
    return value.strip()


def names(what: str, value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``"a,b"`` or ``["a", "b"]`` -> ``("a", "b")``; empty or ``None`` means all."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    if not all(isinstance(x, str) for x in items):
        raise InputError(f"{what} must be a list of names")
    out = tuple(x.strip() for x in items if x.strip())
    return out or None


def from_mapping(
    cls: type[A],
    data: Any,
    *,
    required: Sequence[str] = (),
    error: type[InputError] = InputError,
) -> A:
    """Build ``cls`` from a JSON object; unknown fields are an ``error``, not dropped."""
    if not isinstance(data, Mapping):
        raise error("the request body must be a JSON object")
    known = {f.name for f in fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = sorted(set(data) - known)
    if unknown:
        raise error(
            f"unknown field(s) {unknown}; allowed: {sorted(known)}", details={"unknown": unknown}
        )
    for name in required:
        if name not in data:
            raise error(f"{name!r} is required")
    return cls(**data)


def library_refs(
    library: str | Sequence[str] | None, version: str | None
) -> tuple[str, ...] | None:
    """``library`` (names, or ``name@version``) and ``version`` as library references: a
    version applies to one library, and needs it."""
    libs = names("library", library)
    if version is None:
        return libs
    v = text("version", version, 100)
    if not libs or len(libs) != 1:
        raise InputError("version needs exactly one library: library=NAME, version=VERSION")
    return (f"{libs[0]}@{v}",)


def _listed(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


@dataclass(frozen=True)
class SearchArgs:
    """One search, as every surface asks it (the JSON body of ``POST /search`` has these
    fields). Beyond :class:`~cogitave.query.types.SearchRequest`: ``kind`` (shorthand for
    a ``kind`` filter), ``max_tokens`` (the Markdown answer's budget), and the surfaces'
    default of one hit per page (``group_by_page``; ``false`` lists sections apart)."""

    query: str
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    mode: Mode = "planned"
    kind: tuple[str, ...] | None = None
    dimensions: tuple[str, ...] | None = None
    filters: Mapping[str, Any] | None = None
    path_prefix: str | None = None
    group_by_page: bool = True
    include_kinds: tuple[str, ...] | None = None
    demote: bool = True
    backfill: bool = False
    explain: bool = False
    root: str | None = None
    max_tokens: int = DEFAULT_TOKENS
    library: tuple[str, ...] | None = None
    version: str | None = None
    request: SearchRequest = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.library, str):
            object.__setattr__(self, "library", (self.library,))
        for name in ("kind", "dimensions", "include_kinds", "library"):
            object.__setattr__(self, name, _listed(getattr(self, name)))
        for name in ("group_by_page", "demote", "backfill", "explain"):
            if not isinstance(getattr(self, name), bool):
                raise QueryError(f"{name} must be true or false")
        integer("max_tokens", self.max_tokens, MIN_TOKENS, MAX_TOKENS)
        if self.filters is not None and not isinstance(self.filters, Mapping):
            raise QueryError("filters must map an exact dimension to a value or list of values")
        filters: dict[str, Any] = dict(self.filters or {})
        if self.kind is not None and (kinds := names("kind", self.kind)):
            filters["kind"] = kinds
        req = SearchRequest(
            query=self.query,
            limit=self.limit,
            offset=self.offset,
            mode=self.mode,
            dimensions=self.dimensions,
            filters=filters,
            backfill=self.backfill,
            explain=self.explain,
            root=self.root,
            group_by_page=self.group_by_page,
            path_prefix=self.path_prefix,
            include_kinds=self.include_kinds,
            demote=self.demote,
            libraries=library_refs(self.library, self.version),
        )
        object.__setattr__(self, "request", req)

    @classmethod
    def from_dict(cls, data: Any) -> SearchArgs:
        """From a JSON object (``POST /search``); unknown fields are an error."""
        if isinstance(data, Mapping):
            data = {k: _listed(v) for k, v in data.items() if not (k == "filters" and v is None)}
        return from_mapping(cls, data, required=("query",), error=QueryError)


@dataclass(frozen=True)
class CodeSearchArgs:
    """Code samples for a task, optionally of one ``language`` (a fence name)."""

    query: str
    language: str | None = None
    limit: int = DEFAULT_LIMIT
    max_tokens: int = DEFAULT_TOKENS
    library: tuple[str, ...] | None = None
    version: str | None = None

    def search_args(self) -> SearchArgs:
        filters: dict[str, Any] = {"kind": "code_sample"}
        if self.language is not None:
            filters["language"] = text("language", self.language, 100).casefold()
        return SearchArgs(
            query=self.query,
            limit=self.limit,
            filters=filters,
            max_tokens=self.max_tokens,
            library=self.library,
            version=self.version,
        )


@dataclass(frozen=True)
class FetchArgs:
    """A page or one section (URL, path, uid, ``page#anchor``) from block ``offset``."""

    ref: str
    max_tokens: int = DEFAULT_FETCH_TOKENS
    offset: int = 0
    library: str | None = None
    version: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "ref", text("ref", self.ref))
        library_refs(self.library, self.version)
        integer("max_tokens", self.max_tokens, MIN_TOKENS, MAX_TOKENS)
        integer("offset", self.offset, 0, MAX_FETCH_OFFSET)


@dataclass(frozen=True)
class RelatedArgs:
    """Neighbours of ``uid`` within ``depth`` hops along ``labels`` (all nine: None)."""

    uid: str
    labels: tuple[str, ...] | None = None
    direction: str = "both"
    depth: int = 1
    limit: int = RELATED_DEFAULT_LIMIT
    library: str | None = None
    version: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "uid", text("uid", self.uid))
        library_refs(self.library, self.version)
        try:
            object.__setattr__(self, "labels", names("labels", self.labels))
        except InputError:
            raise QueryGraphError("label", "labels must be relationship type names") from None
        if self.direction not in DIRECTIONS:
            raise QueryGraphError(
                "syntax", f"direction must be out, in or both, not {self.direction!r}"
            )
        integer("depth", self.depth, 1, MAX_DEPTH, "depth")
        integer("limit", self.limit, 1, RELATED_MAX_LIMIT, "limit")


@dataclass(frozen=True)
class LearningPathArgs:
    """What to read before ``target`` (a uid, ``skill:<slug>``, ``role:<slug>``, a name)."""

    target: str
    library: str | None = None
    version: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "target", text("target", self.target))
        library_refs(self.library, self.version)


@dataclass(frozen=True)
class XrefArgs:
    """Node candidates for a reference, ``base`` the uid of the page it appears on."""

    ref: str
    base: str | None = None
    limit: int = XREF_DEFAULT_LIMIT
    library: str | None = None
    version: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "ref", text("ref", self.ref))
        library_refs(self.library, self.version)
        if self.base is not None:
            object.__setattr__(self, "base", text("base", self.base))
        integer("limit", self.limit, 1, XREF_MAX_LIMIT)


@dataclass(frozen=True)
class FacetsArgs:
    """Kinds, labels and exact values around up to 200 nodes (a comma list or a list)."""

    uids: tuple[str, ...]
    labels: tuple[str, ...] | None = None
    depth: int = 1

    def __post_init__(self) -> None:
        uids = names("uids", self.uids) or ()
        if not uids or len(uids) > FACET_MAX_UIDS:
            raise InputError(f"give between 1 and {FACET_MAX_UIDS} uids")
        object.__setattr__(self, "uids", tuple(text("uid", u) for u in uids))
        object.__setattr__(self, "labels", names("labels", self.labels))
        integer("depth", self.depth, 1, MAX_DEPTH, "depth")


@dataclass(frozen=True)
class GraphQueryArgs:
    """One bounded read-only ``MATCH ... RETURN`` with named parameters."""

    query: str
    params: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.query, str):
            raise QueryGraphError("syntax", "query must be a string: MATCH ... RETURN ...")
        if not valid_text(self.query):
            raise QueryGraphError("syntax", "query is not valid Unicode text (a lone surrogate)")
        if self.params is not None and not isinstance(self.params, Mapping):
            raise QueryGraphError("param", "params must be an object mapping names to values")
        stack: list[Any] = [self.params]
        while stack:  # names and string values, however nested
            v = stack.pop()
            if isinstance(v, Mapping):
                stack.extend(v.keys())
                stack.extend(v.values())
            elif isinstance(v, list | tuple):
                stack.extend(v)
            elif isinstance(v, str) and not valid_text(v.replace("\x00", "")):
                raise QueryGraphError("param", "a parameter is not valid Unicode text")

    @classmethod
    def from_dict(cls, data: Any) -> GraphQueryArgs:
        """From ``{"query": ..., "params": {...}}``; unknown fields are an error."""
        return from_mapping(cls, data, required=("query",))


@dataclass(frozen=True)
class LibraryArgs:
    """A library name to resolve ("fast api", "@tanstack/react-query")."""

    name: str
    limit: int = XREF_DEFAULT_LIMIT

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", text("name", self.name, 200))
        integer("limit", self.limit, 1, XREF_MAX_LIMIT)
