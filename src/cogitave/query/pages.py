"""Page-aware ranking: (ranked nids, scores, node facts, options) -> pages, best section first.

A documentation page is indexed as a page node, its sections and its code samples; left alone,
five sections of one long page can fill the top five. This stage, run after the graph rerank
and before presentation:

1. drops what does not compete: navigation groups and source files (unless the request asks
   for those kinds, or filters on ``kind``) and paths the settings exclude (the request's
   ``path_prefix`` is a filter every leg applies, :class:`~cogitave.store.port.Where`);
2. demotes the site's history (release notes, changelogs, blog posts and announcements, found
   by path or title; not when the query asks for them: "changelog", "blog", "announcing")
   and the settings' ``demote`` globs: their score is multiplied by ``demote_factor``, and
   the list re-sorted (stable);
3. groups by page when asked (the docs tools ask; ``[docs] group_by_page`` makes it the
   collection's default): the best-ranked node of a page represents it, and the page's other
   matching nodes are listed in its ``group``.

A node's page is its stored ``path`` (the file it came from), or else its uid before ``#``.
Globs and prefixes are tried on the path, the URL path and the uid; ``*`` matches across
``/`` (``fnmatch``). Every step is counted in the diagnostics.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from cogitave import history
from cogitave.history import asks_for_history
from cogitave.nodes import page_names

if TYPE_CHECKING:
    from cogitave.config import Docs
    from cogitave.query.types import Hit, SearchRequest
    from cogitave.store.port import ReadPort

MAX_GROUP = 5  # other members listed under a page, best first
MAX_LISTED = 10  # uids named per step in the diagnostics


@dataclass(frozen=True)
class PageFacts:
    """What the stage needs of a node: cheap to keep per nid."""

    uid: str
    kind: str
    path: str = ""
    url: str = ""
    title: str = ""

    @property
    def page(self) -> str:
        """The page this node belongs to: its file, else its uid before ``#``."""
        return self.path or self.uid.split("#", 1)[0]

    def names(self) -> tuple[str, ...]:
        """The strings globs are tried on: path, URL path, uid."""
        return page_names(self.uid, self.path, self.url)

    @cached_property
    def history(self) -> bool:
        """Release notes or a blog post (:func:`is_history`), worked out once: facts are kept
        per node of a root, and the path tests cost 4 ms a query over 120 candidates."""
        return is_history(self)


@dataclass(frozen=True)
class PageOptions:
    """The stage's switches, resolved from a request and the ``[docs]`` settings."""

    group_by_page: bool = False
    hidden_kinds: frozenset[str] = frozenset({"nav_group", "source_file"})
    exclude: tuple[str, ...] = ()
    demote: tuple[str, ...] = ()
    demote_release_notes: bool = True
    """Demote the site's history: release notes, changelogs, blog posts, announcements."""
    demote_factor: float = 0.5

    @classmethod
    def of(cls, req: SearchRequest, docs: Docs) -> PageOptions:
        """Request fields over settings (``group_by_page`` None: the settings' default); a
        filter on ``kind`` or ``include_kinds`` lets hidden kinds compete."""
        hidden = frozenset(docs.hidden_kinds)
        if "kind" in req.filters:
            hidden = frozenset()
        elif req.include_kinds:
            hidden -= set(req.include_kinds)
        group = req.group_by_page
        return cls(
            group_by_page=docs.group_by_page if group is None else group,
            hidden_kinds=hidden,
            exclude=tuple(docs.exclude),
            demote=tuple(docs.demote) if req.demote else (),
            demote_release_notes=(
                docs.demote_release_notes and req.demote and not asks_for_history(req.query)
            ),
            demote_factor=docs.demote_factor,
        )


@dataclass(frozen=True)
class PagesResult:
    nids: np.ndarray
    scores: np.ndarray
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)


def is_release_notes(f: PageFacts) -> bool:
    """Release notes, changelogs, "what's new" (:func:`cogitave.history.is_release_notes`)."""
    return history.is_release_notes(f.uid, f.kind, f.path, f.url, f.title)


def is_blog_post(f: PageFacts) -> bool:
    """Blog posts and announcements (:func:`cogitave.history.is_blog_post`)."""
    return history.is_blog_post(f.uid, f.kind, f.path, f.url, f.title)


def is_history(f: PageFacts) -> bool:
    """What the history demotion demotes: release notes or a blog post."""
    return is_release_notes(f) or is_blog_post(f)


def _matches(f: PageFacts, globs: Sequence[str]) -> bool:
    return any(fnmatchcase(n, g.lstrip("/")) for g in globs for n in f.names())


def arrange(
    nids: np.ndarray,
    scores: np.ndarray,
    facts: Callable[[int], PageFacts],
    opts: PageOptions,
) -> PagesResult:
    """Filter, demote and group a ranked list (see the module doc); pure given ``facts``."""
    info: dict[str, Any] = {"grouped": opts.group_by_page}
    keep: list[int] = []
    fs: list[PageFacts] = []
    hidden: dict[str, int] = {}
    excluded = 0
    for i, nid in enumerate(nids.tolist()):
        f = facts(int(nid))
        if f.kind in opts.hidden_kinds:
            hidden[f.kind] = hidden.get(f.kind, 0) + 1
        elif opts.exclude and _matches(f, opts.exclude):
            excluded += 1
        else:
            keep.append(i)
            fs.append(f)
    info["hidden_kinds"] = hidden
    if opts.exclude:
        info["excluded"] = excluded
    out_nids = nids[keep]
    out_scores = np.asarray(scores, np.float64)[keep].copy()
    demoted: list[str] = []
    for j, f in enumerate(fs):
        if (opts.demote_release_notes and f.history) or (opts.demote and _matches(f, opts.demote)):
            out_scores[j] *= opts.demote_factor
            demoted.append(f.uid)
    if demoted:
        order = np.argsort(-out_scores, kind="stable")
        out_nids, out_scores = out_nids[order], out_scores[order]
        fs = [fs[k] for k in order.tolist()]
        info["demoted"] = {
            "count": len(demoted),
            "factor": opts.demote_factor,
            "uids": demoted[:MAX_LISTED],
        }
    groups: dict[str, tuple[str, ...]] = {}
    if opts.group_by_page:
        first: dict[str, int] = {}
        members: dict[int, list[str]] = {}
        reps: list[int] = []
        for j, f in enumerate(fs):
            lead = first.setdefault(f.page, j)
            if lead == j:
                reps.append(j)
            else:
                members.setdefault(lead, []).append(f.uid)
        folded = len(fs) - len(reps)
        groups = {fs[j].uid: tuple(m[:MAX_GROUP]) for j, m in members.items()}
        out_nids, out_scores = out_nids[reps], out_scores[reps]
        info.update({"pages": len(reps), "folded": folded})
    return PagesResult(out_nids, out_scores, groups, info)


# Facts per nid, kept per read port (a root's nodes never change), so a node's facts are read
# once per root rather than once per query.
_FACTS: weakref.WeakKeyDictionary[Any, dict[int, PageFacts]] = weakref.WeakKeyDictionary()


def port_facts(port: ReadPort, nids: Sequence[int]) -> Callable[[int], PageFacts]:
    """``id -> PageFacts`` for ``nids`` of a read port: the ones not yet memoised for the port
    are read in one call (:meth:`~cogitave.store.port.ReadPort.node_facts`: the store's facts
    lines, not the node records; one round trip per shard)."""
    memo = _FACTS.setdefault(port, {})
    missing = [n for n in dict.fromkeys(nids) if n not in memo]
    if missing:
        for n, f in zip(missing, port.node_facts(missing), strict=True):
            memo[n] = PageFacts(*f)
    return memo.__getitem__


def arrange_pages(
    snap: ReadPort, req: SearchRequest, docs: Docs, nids: np.ndarray, scores: np.ndarray
) -> tuple[np.ndarray, np.ndarray, Mapping[str, tuple[str, ...]], dict[str, Any]]:
    """The engine's entry: options from ``req`` and ``docs``, facts from ``snap``."""
    t0 = time.perf_counter()
    opts = PageOptions.of(req, docs)
    r = arrange(nids, scores, port_facts(snap, nids.tolist()), opts)
    return r.nids, r.scores, r.groups, {**r.info, "ms": round((time.perf_counter() - t0) * 1e3, 3)}


def attach_groups(hits: Sequence[Hit], groups: Mapping[str, tuple[str, ...]]) -> tuple[Hit, ...]:
    """Hits with their page's other matching uids in ``group``."""
    return tuple(replace(h, group=groups[h.uid]) if h.uid in groups else h for h in hits)
