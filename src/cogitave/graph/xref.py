"""resolve_xref: a reference (uid, alias, path, URL, ``page#anchor``, title, API symbol) ->
candidate nodes, best first, with the evidence for each.

Node-index lookups (uid -> id, titles, paths) read the segment directly; only the anchor search
inside a page walks the graph, through the bounded traversal.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cogitave.errors import QueryGraphError
from cogitave.graph.related import DEFAULT_TIMEOUT_MS, _deadline
from cogitave.graph.traverse import (
    traverse,
)
from cogitave.nodes import local_uid
from cogitave.store.graph import GraphSegment

PATH_EXTENSIONS = (".md", ".mdx", ".markdown", ".html", ".htm", ".rst", ".txt", ".ipynb")


# -- resolve_xref -----------------------------------------------------------------------------
@dataclass(frozen=True)
class XrefCandidate:
    uid: str
    kind: str
    title: str
    score: float
    evidence: str


@dataclass(frozen=True)
class XrefResult:
    """Candidates best first; ``exact`` when the best one matched (not just looked similar)."""

    ref: str
    exact: bool
    candidates: tuple[XrefCandidate, ...]


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/]*")
_SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+(\(\))?$")


def slug(text: str) -> str:
    """GitHub-style heading anchor: lower case, punctuation dropped, spaces to ``-``."""
    s = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return re.sub(r"\s+", "-", s)


def path_key(ref: str, *, keep_anchor: bool = False) -> tuple[str, ...]:
    """A path or URL reduced to comparable segments (no scheme/host, query, extension,
    ``index``/``README``, ``.``/``..``), case-folded. The ``#anchor`` is dropped, or kept as a
    last ``#anchor`` segment with ``keep_anchor`` (section uids must not collide with pages)."""
    s = _SCHEME.sub("", ref.strip())
    s, _, anchor = s.partition("#")
    s = s.split("?", 1)[0]
    segs = [p for p in s.split("/") if p and p not in (".", "..")]
    if segs:
        last = segs[-1]
        for ext in PATH_EXTENSIONS:
            if last.lower().endswith(ext):
                segs[-1] = last[: -len(ext)]
                break
        if segs[-1].lower() in ("index", "readme", "_index"):
            segs.pop()
    if keep_anchor and anchor:
        segs.append("#" + anchor)
    return tuple(x.casefold() for x in segs)


def _symbol_key(title: str) -> str:
    t = title.strip().strip("`").strip()
    t = re.sub(r"\(.*\)$", "", t)
    return t.casefold()


class _XrefIndex:
    def __init__(self, graph: GraphSegment) -> None:
        self.by_path: dict[tuple[str, ...], list[int]] = {}
        self.by_last: dict[str, list[int]] = {}
        self.by_title: dict[str, list[int]] = {}
        self.by_symbol: dict[str, list[int]] = {}
        self.by_symbol_tail: dict[str, list[int]] = {}
        self.by_uid_fold: dict[str, list[int]] = {}
        self.keys: list[tuple[str, ...]] = []
        for i, (uid, title) in enumerate(zip(graph.uids(), graph.titles(), strict=True)):
            key = path_key(local_uid(uid), keep_anchor=True)  # a page path in any version
            self.keys.append(key)
            self.by_path.setdefault(key, []).append(i)
            if key:
                self.by_last.setdefault(key[-1], []).append(i)
            self.by_uid_fold.setdefault(uid.casefold(), []).append(i)
            if (local := local_uid(uid)) != uid:  # the same page in every version held
                self.by_uid_fold.setdefault(local.casefold(), []).append(i)
            if title:
                self.by_title.setdefault(title.strip().casefold(), []).append(i)
                sym = _symbol_key(title)
                self.by_symbol.setdefault(sym, []).append(i)
                if _SYMBOL.match(sym):
                    self.by_symbol_tail.setdefault(sym.rsplit(".", 1)[-1], []).append(i)
        self.titles = list(self.by_title)
        self.paths = {"/".join(k): k for k in self.by_path if k}


def _index(graph: GraphSegment) -> _XrefIndex:
    out: _XrefIndex = graph.memo("xref-index", lambda: _XrefIndex(graph))
    return out


def resolve_xref(
    graph: GraphSegment,
    ref: str,
    *,
    aliases: Mapping[str, str] | None = None,
    base: str | None = None,
    limit: int = 5,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
) -> XrefResult:
    """Resolve a reference: a uid, an alias, a relative path (``../x.md``, against ``base``
    when given), a URL path (``/tutorial/x/``), ``page#anchor``, a title (any case) or an API
    symbol (``fastapi.Depends``). Unknown references get the closest titles and paths
    (difflib) with ``exact=False``."""
    if not isinstance(ref, str) or not ref.strip():
        raise QueryGraphError("syntax", "give a reference to resolve (a uid, path, title ...)")
    ref = ref.strip()
    found: dict[int, tuple[float, str]] = {}

    def add(ids: Iterable[int], score: float, evidence: str) -> None:
        for i in ids:
            if i not in found or found[i][0] < score:
                found[i] = (score, evidence)

    if (i := graph.id_of(ref)) is not None:
        add((i,), 1.0, "uid")
    page, _, anchor = ref.partition("#")
    if anchor:
        pages = _resolve_plain(graph, page, aliases or {}, base) if page else {}
        if not page and base is not None and (b := graph.id_of(base)) is not None:
            pages = {b: (1.0, "the base page")}
        hits, score, evidence = _anchor_candidates(graph, pages, anchor, timeout_ms)
        add(hits, score, evidence)
        for i, (s, ev) in pages.items():
            if hits:
                add((i,), min(s, 0.5), f"{ev}; the page holding #{anchor}")
            else:
                add((i,), s * 0.8, f"{ev}; anchor #{anchor} not found in it")
    else:
        for i, (s, ev) in _resolve_plain(graph, ref, aliases or {}, base).items():
            add((i,), s, ev)

    exact = bool(found)
    if not found:
        for i, (score, ev) in _similar(graph, page or ref).items():
            add((i,), score, ev)
    ranked = sorted(found.items(), key=lambda kv: (-kv[1][0], graph.uid(kv[0])))[: max(1, limit)]
    cands = tuple(
        XrefCandidate(graph.uid(i), graph.kind(i), graph.title(i), round(s, 3), ev)
        for i, (s, ev) in ranked
    )
    exact = exact and bool(cands) and "not found" not in cands[0].evidence
    return XrefResult(ref, exact, cands)


def _resolve_plain(
    graph: GraphSegment, ref: str, aliases: Mapping[str, str], base: str | None
) -> dict[int, tuple[float, str]]:
    ix = _index(graph)
    out: dict[int, tuple[float, str]] = {}

    def add(ids: Iterable[int], score: float, evidence: str) -> None:
        for i in ids:
            if i not in out or out[i][0] < score:
                out[i] = (score, evidence)

    if (i := graph.id_of(ref)) is not None:
        add((i,), 1.0, "uid")
    add(ix.by_uid_fold.get(ref.casefold(), ()), 0.97, "uid (case-insensitive)")
    if ref in aliases and (i := graph.id_of(aliases[ref])) is not None:
        add((i,), 0.98, f"alias of {aliases[ref]}")
    key = path_key(ref)
    if base is not None and not ref.startswith("/") and not _SCHEME.match(ref):
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(base), ref))
        bkey = path_key(joined)
        if bkey:
            add(ix.by_path.get(bkey, ()), 0.96, f"path relative to {base}")
    if key:
        add(ix.by_path.get(key, ()), 0.95, "path")
        if key not in ix.by_path:
            # An absolute URL under a site prefix (https://host/docs/tutorial/x/) or a source
            # path under the docs folder (docs/tutorial/x.md): the longest tail of it that is
            # a page's path.
            for k in range(1, len(key)):
                if key[k:] in ix.by_path:
                    add(ix.by_path[key[k:]], 0.93, f"path under {'/'.join(key[:k])}/")
                    break
        suffix = [i for i in ix.by_last.get(key[-1], ()) if ix.keys[i][-len(key) :] == key]
        if suffix:
            add(suffix, 0.85 if len(suffix) == 1 else 0.75, f"path ends with {'/'.join(key)}")
    add(ix.by_title.get(ref.casefold(), ()), 0.9, "title")
    sym = _symbol_key(ref)
    if _SYMBOL.match(ref):
        add(ix.by_symbol.get(sym, ()), 0.9, "API symbol")
        tail = sym.rsplit(".", 1)[-1]
        add(ix.by_symbol.get(tail, ()), 0.7, f"title is {ref.rsplit('.', 1)[-1]}")
    elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\(\))?", ref):
        add(ix.by_symbol_tail.get(sym, ()), 0.8, f"API symbol ending in .{ref}")
    return out


def _anchor_candidates(
    graph: GraphSegment, pages: Mapping[int, tuple[float, str]], anchor: str, timeout_ms: float
) -> tuple[list[int], float, str]:
    want = slug(anchor)
    hits: list[int] = []
    for p in pages:
        i = graph.id_of(f"{graph.uid(p)}#{anchor}")
        if i is not None:
            hits.append(i)
    if hits:
        # The section whose uid is page#anchor; a code sample titled like it is not it.
        return hits, 0.97, f"section #{anchor}"
    if pages:
        # Sections of the page: nodes that are partOf it (up to two levels down).
        tr = traverse(
            graph,
            list(pages),
            labels=("partOf",),
            direction="in",
            max_depth=2,
            deadline=_deadline(timeout_ms),
            node_filter=lambda v: (
                slug(graph.title(v)) == want or graph.uid(v).rsplit("#", 1)[-1] == anchor
            ),
        )
        hits.extend(r.node for r in tr.rows)
    return hits, 0.95, f"section #{anchor}"


def _similar(graph: GraphSegment, ref: str) -> dict[int, tuple[float, str]]:
    """Closest titles and paths by difflib ratio; scores stay below any exact match."""
    ix = _index(graph)
    out: dict[int, tuple[float, str]] = {}
    want = ref.casefold()
    for t in difflib.get_close_matches(want, ix.titles, n=5, cutoff=0.5):
        ratio = difflib.SequenceMatcher(None, want, t).ratio()
        for i in ix.by_title[t]:
            out[i] = max(out.get(i, (0.0, "")), (0.5 * ratio, f"similar title ({ratio:.2f})"))
    key = "/".join(path_key(ref))
    if key:
        for p in difflib.get_close_matches(key, list(ix.paths), n=5, cutoff=0.6):
            ratio = difflib.SequenceMatcher(None, key, p).ratio()
            for i in ix.by_path[ix.paths[p]]:
                out[i] = max(out.get(i, (0.0, "")), (0.5 * ratio, f"similar path ({ratio:.2f})"))
    return out
