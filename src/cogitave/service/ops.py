"""The service operations: one function per thing a user can ask, over one reader.

Every surface (MCP, REST, GraphQL, the CLI, the web page through REST) translates its
transport into the typed arguments of :mod:`cogitave.service.args`, calls one of these and
translates the typed answer back (:func:`to_json` for the JSON surfaces). Ranking, filtering
and graph walks happen behind the :class:`~cogitave.reader.Reader`; the operations shape the
answers (compact hits, the Markdown answer within a token budget, pages to read), and the
defaults of every argument are in its argument type. So a question asked through any surface
gets the same hits in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from cogitave.config import Settings
from cogitave.errors import CogitaveError, InputError, NotFoundError, QueryError
from cogitave.graph.query import GraphQueryResult
from cogitave.graph.tools import Facets, LearningPath, RelatedResult, XrefResult
from cogitave.libraries.layout import version_order
from cogitave.libraries.names import MIN_SCORE, resolve, split_ref
from cogitave.nodes import Node, meta_str, uid_namespace
from cogitave.query.types import Hit, SearchResponse
from cogitave.reader import Reader
from cogitave.service import render
from cogitave.service.args import (
    CodeSearchArgs,
    FacetsArgs,
    FetchArgs,
    GraphQueryArgs,
    LearningPathArgs,
    LibraryArgs,
    RelatedArgs,
    SearchArgs,
    XrefArgs,
    library_refs,
)
from cogitave.service.render import AnswerBudget
from cogitave.store.roots import RootInfo

if TYPE_CHECKING:
    from cogitave.libraries.collection import LibraryCollection

NODES_PATH = "/nodes/"


def content_link(uid: str) -> str:
    """The content-API path of a node; ``#``, ``?`` and ``%`` in the uid are escaped."""
    return NODES_PATH + quote(uid, safe="/:@!$&'()*+,;=-._~")


# -- answers ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class HitSummary:
    """A compact hit for an agent: identity, where it lives, a snippet and its rank (the root
    and the content API are given once per answer, not per hit); a code sample's ``code``
    and ``language`` in a code search."""

    uid: str
    kind: str
    title: str
    snippet: str
    score: float
    rank: int
    url: str = ""
    path: str = ""
    breadcrumb: tuple[str, ...] = ()
    group: tuple[str, ...] = ()
    language: str | None = None
    code: str | None = None
    library: str | None = None
    """``name@version`` the hit comes from (a collection of libraries)."""
    version_match: str | None = None
    """How that version was chosen (:func:`version_choice`): ``exact``, ``nearest``,
    ``range``, ``latest`` or ``default`` (no project pin: the newest held)."""
    wanted: str | None = None
    """The version (or range) the project or the request asked for."""

    @classmethod
    def of(
        cls,
        hit: Hit,
        node: Node,
        *,
        with_code: bool = False,
        choice: tuple[str, str | None] | None = None,
    ) -> HitSummary:
        code = node.dims.get("code") if with_code else None
        lang = node.dims.get("language") if with_code else None
        return cls(
            uid=hit.uid,
            kind=hit.kind,
            title=hit.title,
            snippet=hit.snippet,
            score=round(hit.score, 6),
            rank=hit.rank,
            url=hit.url,
            path=hit.path,
            breadcrumb=hit.breadcrumb,
            group=hit.group,
            language=lang if isinstance(lang, str) else None,
            code=code if isinstance(code, str) else None,
            library=hit.library or None,
            version_match=choice[0] if choice else None,
            wanted=choice[1] if choice else None,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uid": self.uid, "kind": self.kind, "title": self.title}
        for key in ("url", "path"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.breadcrumb:
            out["breadcrumb"] = list(self.breadcrumb)
        if self.group:  # the page's other matching sections, when grouped by page
            out["group"] = list(self.group)
        out |= {"snippet": self.snippet, "score": self.score, "rank": self.rank}
        if self.code is not None or self.language is not None:
            out |= {"language": self.language, "code": self.code}
        for key in ("library", "version_match", "wanted"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


@dataclass(frozen=True)
class Provenance:
    """A library version: where its docs came from, and how a project chose it."""

    library: str
    """``name@version``."""
    name: str
    version: str
    source: str
    commit: str | None
    indexed_at: str
    version_match: str = "default"
    """How the version was chosen (:func:`version_choice`): ``exact`` (asked for, or what
    the project uses), ``nearest``, ``range``, ``latest`` (a project's pin that is not
    exact), ``default`` (no pin: the newest held)."""
    wanted: str | None = None
    """The version (or range) the project uses or the request named."""

    def describe(self) -> str:
        """``click@8.1.7 · nearest to 8.1.9 · /src/click @ 0123456789ab``: one line."""
        where = self.source or "unknown source"
        commit = f" @ {self.commit[:12]}" if self.commit else ""
        return f"{self.library} · {choice_text(self.version_match, self.wanted)} · {where}{commit}"


@dataclass(frozen=True)
class DocsAnswer:
    """A search shaped for an agent: ``markdown`` (the hits as Markdown within the token
    budget), the compact hits, the root once, the cut, and diagnostics (their summary unless
    ``explain``)."""

    markdown: str
    results: tuple[HitSummary, ...]
    root: str
    budget: AnswerBudget
    diagnostics: Mapping[str, Any]
    content: str = NODES_PATH + "{uid}"
    libraries: tuple[Provenance, ...] = ()
    """Where each library version among the hits came from (a collection of libraries)."""
    warnings: tuple[str, ...] = ()
    """What the reader's ``--project`` could not use (no manifest, nothing held, ...)."""

    def to_dict(self) -> dict[str, Any]:
        out = {
            "markdown": self.markdown,
            "results": [h.to_dict() for h in self.results],
            "root": self.root,
            "content": self.content,
            "budget": asdict(self.budget),
            "diagnostics": dict(self.diagnostics),
        }
        if self.libraries:
            out["libraries"] = [asdict(p) for p in self.libraries]
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


@dataclass(frozen=True)
class FetchAnswer:
    """A page or section as Markdown from block ``offset``; ``next_offset`` continues it."""

    uid: str
    kind: str
    title: str
    url: str
    markdown: str
    offset: int
    blocks: int
    total_blocks: int
    next_offset: int | None
    tokens: int
    max_tokens: int
    library: str | None = None
    """``name@version`` of the page (a collection of libraries)."""
    superseded_by: str | None = None
    """The same page in the next version held."""


@dataclass(frozen=True)
class RootsAnswer:
    """The root reads go to, and the retained roots, newest first."""

    current: str
    roots: tuple[RootInfo, ...]


# -- search -----------------------------------------------------------------------------------
def search(reader: Reader, args: SearchArgs) -> SearchResponse:
    """The ranking itself: hits with their lens ranks, the root, full diagnostics."""
    return reader.search(args.request)


@dataclass(frozen=True)
class SearchAnswer:
    """The ranking as JSON surfaces give it: every hit with its library version's provenance
    (``provenance``: library, version, how it was chosen, source, commit) and the project's
    warnings."""

    response: SearchResponse
    hits: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = self.response.to_dict(list(self.hits))
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


def search_answer(reader: Reader, args: SearchArgs) -> SearchAnswer:
    """:func:`search` with the provenance of every hit (the JSON of REST and the CLI)."""
    res = search(reader, args)
    hits = hit_provenance(reader, res, args.request.libraries)
    return SearchAnswer(res, tuple(hits), reader.project_warnings())


def docs_search(reader: Reader, args: SearchArgs) -> DocsAnswer:
    """The search as an agent reads it: Markdown within ``max_tokens`` and compact hits."""
    return _answer(reader, search(reader, args), args, with_code=False)


def code_sample_search(reader: Reader, args: CodeSearchArgs) -> DocsAnswer:
    """Code samples for a task (of one language when given), each hit with its code."""
    sargs = args.search_args()
    return _answer(reader, search(reader, sargs), sargs, with_code=True)


def _answer(
    reader: Reader, res: SearchResponse, args: SearchArgs, *, with_code: bool
) -> DocsAnswer:
    entries = list(zip(res.results, res.nodes, strict=True))
    asked = args.request.libraries
    provenance = provenance_of(reader, [h.library for h in res.results if h.library], asked)
    by_ref = {p.library: p for p in provenance}
    labels = {p.library: _label(p) for p in provenance}

    def group_nodes(hit: Hit) -> list[Node]:
        """The stored nodes of a grouped hit's first other matches, from the searched root."""
        out = []
        for uid in hit.group[: render.GROUP_READ]:
            try:
                out.append(reader.get(uid, root=res.root))
            except NotFoundError:
                continue
        return out

    text, cut = render.search_markdown(args.query, entries, args.max_tokens, labels, group_nodes)
    diag = dict(res.diagnostics) if args.explain else diagnostics_summary(res.diagnostics)

    def choice(ref: str) -> tuple[str, str | None] | None:
        p = by_ref.get(ref)
        return (p.version_match, p.wanted) if p is not None else None

    return DocsAnswer(
        markdown=text,
        results=tuple(
            HitSummary.of(h, n, with_code=with_code, choice=choice(h.library)) for h, n in entries
        ),
        root=res.root,
        budget=cut,
        diagnostics=diag,
        libraries=provenance,
        warnings=reader.project_warnings(),
    )


def choice_text(match: str, wanted: str | None) -> str:
    """How a version was chosen, in words: ``exact``, ``nearest to 8.1.9``, ``newest held``."""
    if match == "default":
        return "newest held"
    if match == "exact" or not wanted:
        return match
    return f"{match} to {wanted}"


def _label(p: Provenance) -> str:
    """How a Markdown hit names its library version: version, how it was chosen, commit."""
    label = f"{p.name} {p.version}, {choice_text(p.version_match, p.wanted)}"
    return label + (f", commit {p.commit[:12]}" if p.commit else "")


def version_choice(
    reader: Reader, ref: str, asked: Sequence[str] | None = None
) -> tuple[str, str | None]:
    """How library version ``ref`` came to be read, and what was wanted: a project's pin
    (``exact``, ``nearest``, ``range``, ``latest``; ``wanted`` what the project uses), else
    ``exact`` when ``asked`` named that version, else ``default`` (the newest held)."""
    pin = reader.pin_of(ref)
    if pin is not None:
        return pin.match, pin.wanted or (pin.version if pin.match == "exact" else None)
    for one in asked or ():
        if split_ref(one)[1] is not None and ref in (reader.namespaces([one]) or ()):
            return "exact", split_ref(one)[1]
    return "default", None


def provenance_of(
    reader: Reader, refs: Sequence[str], asked: Sequence[str] | None = None
) -> tuple[Provenance, ...]:
    """The provenance of each library version ``refs`` names, once each, in order (``asked``:
    the libraries the request named, see :func:`version_choice`)."""
    if not refs:  # hits of no library (a plain collection): nothing to look up
        return ()
    held = {e.ref: e for e in reader.libraries()}
    out: list[Provenance] = []
    for ref in dict.fromkeys(refs):
        e = held.get(ref)
        if e is None:
            continue
        match, wanted = version_choice(reader, ref, asked)
        out.append(
            Provenance(ref, e.name, e.version, e.source, e.commit, e.indexed_at, match, wanted)
        )
    return tuple(out)


def hit_provenance(
    reader: Reader, res: SearchResponse, asked: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Each hit as JSON with its library version's provenance (``provenance``: library,
    version, how it was chosen, source, commit); a hit of no library as it is."""
    prov = {
        p.library: asdict(p)
        for p in provenance_of(reader, [h.library for h in res.results if h.library], asked)
    }
    out = []
    for h in res.results:
        d = h.to_dict()
        if h.library in prov:
            d["provenance"] = prov[h.library]
        out.append(d)
    return out


def diagnostics_summary(diagnostics: Mapping[str, Any]) -> dict[str, Any]:
    """Total time and number of lenses: enough to spot a slow answer."""
    lenses = diagnostics.get("lenses") or ()
    return {
        "total_ms": diagnostics.get("total_ms"),
        "lenses": len(lenses) if isinstance(lenses, Sequence | Mapping) else 0,
    }


# -- reading ----------------------------------------------------------------------------------
def node(reader: Reader, uid: str, root: str | None = None) -> Node:
    """One live node by uid (the content API)."""
    return reader.get(uid, root=root)


def node_record(node: Node) -> dict[str, Any]:
    """The content API's view of a node: its stored record, its code if any, and links."""
    rec = node.to_record()
    code = node.dims.get("code")
    if isinstance(code, str):
        rec["code"] = code
    link = content_link(node.uid)
    rec["links"] = {"self": link, "related": link + "/related"}
    return rec


def fetch(reader: Reader, args: FetchArgs) -> FetchAnswer:
    """A page or one section (a URL, path, uid, ``page#anchor``) as Markdown within
    ``max_tokens``, from block ``offset``. The reference is resolved with the xref
    resolver; only an exact match is fetched."""
    libs = library_refs(args.library, args.version)
    res = reader.resolve_xref(args.ref, limit=5, libraries=libs)
    if not res.exact or not res.candidates:
        near = ", ".join(c.uid for c in res.candidates) or "none"
        raise NotFoundError(
            f"no page or section matches {args.ref!r}; closest: {near}",
            details={"candidates": [c.uid for c in res.candidates]},
        )
    found = reader.get(res.candidates[0].uid)
    url = meta_str(found, "url") or meta_str(found, "path")
    crumb = found.meta.get("breadcrumb")
    crumb = [str(x) for x in crumb] if isinstance(crumb, list | tuple) else []
    newer = successor(reader, found.uid)
    note = f"_A newer version of this page: {newer} (fetch it with that uid)._" if newer else ""
    text, taken, nxt, total = render.page_markdown(
        found, url, crumb, args.max_tokens, args.offset, note
    )
    if args.offset and args.offset >= total:
        raise QueryError(f"offset {args.offset} is past the end ({total} blocks)")
    title = found.dims.get("title")
    return FetchAnswer(
        uid=found.uid,
        kind=found.kind,
        title=title if isinstance(title, str) else "",
        url=url,
        markdown=text,
        offset=args.offset,
        blocks=taken,
        total_blocks=total,
        next_offset=nxt,
        tokens=render.estimate_tokens(text),
        max_tokens=args.max_tokens,
        library=uid_namespace(found.uid),
        superseded_by=newer,
    )


def successor(reader: Reader, uid: str) -> str | None:
    """The uid of the same page in the next version held (its ``supersededBy``), if any."""
    try:
        rel = reader.related(uid, ("supersededBy",), "out", 1, 1)
    except CogitaveError:
        return None
    return rel.items[0].uid if rel.items else None


# -- the graph --------------------------------------------------------------------------------
def related(reader: Reader, args: RelatedArgs) -> RelatedResult:
    """Neighbours of a node within ``depth`` hops, each with the path that reached it."""
    uid = reader.qualify(args.uid, library_refs(args.library, args.version))
    return reader.related(uid, args.labels, args.direction, args.depth, args.limit)  # type: ignore[arg-type]


def learning_path(reader: Reader, args: LearningPathArgs) -> LearningPath:
    """Steps to read before the target (prerequisites first, the target last)."""
    return reader.learning_path(
        reader.qualify(args.target, library_refs(args.library, args.version))
    )


def resolve_xref(reader: Reader, args: XrefArgs) -> XrefResult:
    """Candidates for a reference (uid, path, URL, ``page#anchor``, alias, title)."""
    libs = library_refs(args.library, args.version)
    base = reader.qualify(args.base, libs) if args.base else None
    return reader.resolve_xref(args.ref, base=base, limit=args.limit, libraries=libs)


def facets(reader: Reader, args: FacetsArgs) -> Facets:
    """Kinds, edge labels and exact values around a set of nodes."""
    return reader.facets(args.uids, args.labels, args.depth)


def query_graph(reader: Reader, args: GraphQueryArgs) -> GraphQueryResult:
    """One bounded read-only ``MATCH ... RETURN`` with named parameters."""
    return reader.query_graph(args.query, args.params)


@dataclass(frozen=True)
class LibraryVersion:
    """One version of a library: its size and provenance, and whether reads without a
    version cover it."""

    version: str
    pages: int
    nodes: int
    source: str
    commit: str | None
    indexed_at: str
    default: bool
    version_match: str | None = None
    """How a project's pin chose this version (``exact``, ``nearest``, ``range``,
    ``latest``); None: no project pins it."""
    wanted: str | None = None
    """The version (or range) the project uses."""


@dataclass(frozen=True)
class LibraryInfo:
    """A library and the versions held, newest first."""

    name: str
    key: str
    versions: tuple[LibraryVersion, ...]
    project: str | None = None
    """What a project's pin chose and why (``nearest: 8.1.9 is not held; ...``; ``none:
    ...`` when no version held fits and the library is read only by name@version)."""


@dataclass(frozen=True)
class LibrariesAnswer:
    """The libraries a collection holds."""

    libraries: tuple[LibraryInfo, ...]
    warnings: tuple[str, ...] = ()
    """What the reader's ``--project`` could not use."""
    sync: dict[str, Any] | None = None
    """With ``--sync``: what is being fetched, and the last run's outcome per dependency
    (:meth:`~cogitave.libraries.autosync.ProjectSync.status`); None without."""


@dataclass(frozen=True)
class LibraryMatch:
    """A held library and how well it matches a name (1.0: the same name)."""

    name: str
    key: str
    score: float
    why: str
    versions: tuple[str, ...]


@dataclass(frozen=True)
class ResolvedLibrary:
    """The libraries a name may mean, best first; ``found`` when the best is it."""

    query: str
    found: bool
    matches: tuple[LibraryMatch, ...]


def list_libraries(reader: Reader) -> LibrariesAnswer:
    """Every library held, with its versions (newest first), sizes and provenance, and how a
    project's pin chose each pinned version, and with ``--sync`` what is being fetched."""
    from cogitave.libraries import autosync

    entries = reader.libraries()
    try:
        defaults = set(reader.namespaces(None) or [e.ref for e in entries])
    except NotFoundError:  # a project that excludes every library: none is read by default
        defaults = set()
    pinned = {p.library: p for p in reader.project_pins()}
    infos: list[LibraryInfo] = []
    for key in dict.fromkeys(e.key for e in entries):
        mine = sorted((e for e in entries if e.key == key), key=lambda e: version_order(e.version))
        versions = []
        for e in reversed(mine):
            pin = reader.pin_of(e.ref)
            versions.append(
                LibraryVersion(
                    e.version,
                    e.pages,
                    e.nodes,
                    e.source,
                    e.commit,
                    e.indexed_at,
                    e.ref in defaults,
                    pin.match if pin is not None else None,
                    (pin.wanted or pin.version) if pin is not None else None,
                )
            )
        row = pinned.get(key)
        note = f"{row.match}: {row.reason}" if row is not None else None
        infos.append(LibraryInfo(mine[0].name, key, tuple(versions), note))
    return LibrariesAnswer(tuple(infos), reader.project_warnings(), autosync.status_of(reader))


def resolve_library(reader: Reader, args: LibraryArgs) -> ResolvedLibrary:
    """The held libraries ``name`` may mean ("fast api" -> fastapi), best first, each with
    its versions; ``found`` when the best has the same name (or the same letters). Names
    scoring below :data:`~cogitave.libraries.names.MIN_SCORE` are left out."""
    entries = reader.libraries()
    names = {e.key: e.name for e in entries}
    found = [m for m in resolve(args.name, list(names), limit=args.limit) if m.score >= MIN_SCORE]
    matches = tuple(
        LibraryMatch(
            names[m.name],
            m.name,
            m.score,
            m.why,
            tuple(sorted((e.version for e in entries if e.key == m.name), key=version_order)),
        )
        for m in found
    )
    return ResolvedLibrary(args.name, bool(matches) and matches[0].score >= 0.95, matches)


def roots(reader: Reader) -> RootsAnswer:
    """The root this reader reads and the retained roots, newest first."""
    return RootsAnswer(reader.root, tuple(reader.roots()))


@dataclass(frozen=True)
class SettingsAnswer:
    """A collection's settings, the root that holds them, and whether this call changed
    them (a new root)."""

    settings: Settings
    root: str
    changed: bool = False


def settings(reader: Reader, sets: Sequence[str] = (), file: Path | None = None) -> SettingsAnswer:
    """The collection's settings (a plain, sharded or library collection: every library of
    one carries the same); with ``sets`` (``section.key=value``) or a settings ``file``
    (replacing them all), published in a new root (nothing is re-indexed). A sharded
    collection's settings are the ones it was built with: they are shown, not changed."""
    current = reader.port().settings
    if file is None and not sets:
        return SettingsAnswer(current, reader.root)
    configure = getattr(reader, "configure", None)
    if configure is None:
        raise InputError(
            "a sharded collection keeps the settings it was built with: build it again "
            "with the settings changed (cogitave index --shards N)"
        )
    base = Settings.load(file) if file is not None else current
    before = reader.root
    rid = configure(base.with_sets(sets))
    return SettingsAnswer(reader.port().settings, rid, rid != before)


def library_settings(
    collection: LibraryCollection, sets: Sequence[str] = (), file: Path | None = None
) -> SettingsAnswer:
    """:func:`settings` of a collection of libraries: every library version carries them, so
    one that holds none yet has nowhere to keep them."""
    current = collection.settings()
    if file is None and not sets:
        return SettingsAnswer(current, collection.root)
    if not collection.manifest.libraries:
        raise InputError(
            f"{collection.path} holds no library yet: its settings are kept with its library "
            "versions (index or import one first)"
        )
    base = Settings.load(file) if file is not None else current
    before = collection.root
    rid = collection.configure(base.with_sets(sets))
    return SettingsAnswer(collection.settings(), rid, rid != before)


# -- JSON -------------------------------------------------------------------------------------
def to_json(answer: Any) -> Any:
    """An answer as the JSON the REST and MCP surfaces return."""
    if isinstance(answer, Node):
        return node_record(answer)
    if hasattr(answer, "to_dict"):
        return answer.to_dict()
    if isinstance(answer, RelatedResult):
        out = asdict(answer)
        for item in out["items"]:
            item["content"] = content_link(item["uid"])
        return out
    if is_dataclass(answer) and not isinstance(answer, type):
        return asdict(answer)
    return answer
