"""The docs reader's report: the tally of links, includes, front matter and pages left out,
and the ``stats`` dict / text report built from it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from cogitave.ingest.docs.links import LinkKind, Resolution
from cogitave.ingest.records import MAX_LISTED
from cogitave.nodes import Node


@dataclass
class Tally:
    """Counts and lists for the report (lists are cut to ``MAX_LISTED`` only when reported)."""

    files: int = 0
    links: Counter[str] = field(default_factory=Counter)
    unresolved: list[str] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)
    missing_anchors: list[str] = field(default_factory=list)
    bad_front_matter: list[str] = field(default_factory=list)
    missing_includes: list[str] = field(default_factory=list)
    unpublished: list[str] = field(default_factory=list)
    autodoc_read: int = 0  # objects autodoc directives named, read from the source
    autodoc_missing: list[str] = field(default_factory=list)  # named, not found: where, why

    def link(self, res: Resolution, where: str, target: str, kind: LinkKind) -> None:
        """Count one link outcome; unresolved ones are listed with file:line and reason."""
        target = unquote(target)  # markdown-it percent-encodes hrefs; show what was written
        self.links[res.status] += 1
        if res.via_alias:
            self.links["via_alias"] += 1
        if res.missing_anchor:
            self.links["missing_anchor"] += 1
            self.missing_anchors.append(f"{where}: {target} (no anchor #{res.missing_anchor})")
        if res.status == "unresolved":
            self.unresolved.append(f"{where}: {target} ({res.reason})")
            category = "undefined reference" if kind == "undefined" else res.reason
            self.reasons[category.split(" at ", 1)[0]] += 1

    def stats(
        self,
        head: dict[str, Any],
        nodes: list[Node],
        edges: Counter[str],
        dropped: list[str],
        problems: list[str],
    ) -> dict[str, Any]:
        """The structured report: ``head`` (shape, root, ...) then counts and first lists."""
        resolved = self.links["resolved"] + self.links["self"]
        internal = resolved + self.links["unresolved"]
        return {
            **head,
            "files": self.files,
            "nodes": dict(sorted(Counter(n.kind for n in nodes).items())),
            "edges": dict(sorted(edges.items())),
            "links": {
                "internal": internal,
                "resolved": resolved,
                "unresolved": self.links["unresolved"],
                "resolved_share": round(resolved / internal, 4) if internal else 1.0,
                "via_alias": self.links["via_alias"],
                "missing_anchor": self.links["missing_anchor"],
                "external": self.links["external"],
                "outside": self.links["outside"],
                "asset": self.links["asset"],
                "dynamic": self.links["dynamic"],
            },
            "unresolved": self.unresolved[:MAX_LISTED],
            "unresolved_by_reason": dict(self.reasons.most_common()),
            "missing_anchors": self.missing_anchors[:MAX_LISTED],
            "unreadable_files": problems[:MAX_LISTED],
            "unreadable_files_count": len(problems),
            "bad_front_matter": self.bad_front_matter[:MAX_LISTED],
            "bad_front_matter_count": len(self.bad_front_matter),
            "missing_includes": self.missing_includes[:MAX_LISTED],
            "missing_includes_count": len(self.missing_includes),
            "unpublished": self.unpublished[:MAX_LISTED],
            "unpublished_count": len(self.unpublished),
            "autodoc": {"read": self.autodoc_read, "missing": len(self.autodoc_missing)},
            "autodoc_missing": self.autodoc_missing[:MAX_LISTED],
            "dropped_edges": dropped[:MAX_LISTED],
            "dropped_edges_count": len(dropped),
        }


def format_report(stats: dict[str, Any]) -> str:
    """A short human-readable summary of the ``stats`` dict."""
    links = stats["links"]
    lines = [
        f"markdown ({stats['shape']}) {stats['root']}: {stats['files']} files, "
        f"{sum(stats['nodes'].values())} nodes, {sum(stats['edges'].values())} edges "
        f"in {stats['seconds']:.2f} s",
        "nodes: " + _counts(stats["nodes"]),
        "edges: " + _counts(stats["edges"]),
        f"links: {links['internal']} internal, {links['resolved']} resolved "
        f"({links['resolved_share']:.1%}), {links['unresolved']} unresolved, "
        f"{links['missing_anchor']} missing anchors, {links['via_alias']} via aliases; "
        f"{links['external']} external, {links['outside']} to other language trees, "
        f"{links['asset']} assets, {links['dynamic']} dynamic",
    ]
    if "api_refs" in stats:
        api = stats["api_refs"]
        lines.append(
            f"python-domain roles: {api['resolved']} resolved to api nodes, {api['undeclared']} "
            "name objects the tree does not declare (Sphinx shows those as plain text)"
        )
    auto = stats.get("autodoc") or {}
    if auto.get("read") or auto.get("missing"):
        lines.append(
            f"autodoc: {auto['read']} directives read from the package source, "
            f"{auto['missing']} named but not found (their API reference is missing)"
        )
    if stats["unresolved_by_reason"]:
        lines.append("unresolved by reason: " + _counts(stats["unresolved_by_reason"]))
    listed = (
        ("unresolved", "unresolved links", links["unresolved"]),
        ("unreadable_files", "unreadable files", stats["unreadable_files_count"]),
        ("bad_front_matter", "bad front matter", stats["bad_front_matter_count"]),
        ("missing_includes", "missing includes", stats["missing_includes_count"]),
        ("unpublished", "pages the site leaves out (not indexed)", stats["unpublished_count"]),
        (
            "autodoc_missing",
            "autodoc objects not found",
            (stats.get("autodoc") or {}).get("missing", 0),
        ),
        ("nav_missing", "nav entries without a page", len(stats["nav_missing"])),
        ("refused", "not read (outside the tree, or past a bound)", stats.get("refused_count", 0)),
        ("dropped_edges", "dropped edges", stats["dropped_edges_count"]),
    )
    for key, title, total in listed:
        if stats.get(key):
            cut = f" (first {len(stats[key])})" if total > len(stats[key]) else ""
            lines.append(f"{title}: {total}{cut}")
            lines.extend(f"  {item}" for item in stats[key])
    lines.extend(f"note: {n}" for n in stats["notes"])
    if stats.get("allow_outside"):  # last: the command line that reads what was refused
        flags = " ".join(f"--allow-outside {p}" for p in stats["allow_outside"])
        lines.append(f"to read what the tree names outside it: {flags}")
    return "\n".join(lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"
