"""Page files -> pages of the builder: each file decoded, its uid checked, the files the site
leaves out listed with why, front matter split, MDX and containers turned into Markdown,
MkDocs snippets expanded, MyST targets found; reStructuredText parsed, then rendered once the
whole tree's labels are known (:mod:`~cogitave.ingest.docs.sphinx`).

A page the generator builds nowhere (a Hugo draft, a headless snippet, a section's
``cascade``) gets no node, but links and includes still find it; a problem with a file
(unreadable, not UTF-8, a bad or duplicate uid) leaves the page out as a
:class:`~cogitave.ingest.records.Problem`.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from cogitave.ingest.docs.builder import Builder, Page
from cogitave.ingest.docs.frontmatter import (
    FrontMatter,
    Unbuilt,
    hugo_cascade,
    split_front_matter,
    unpublished,
)
from cogitave.ingest.docs.includes import expand_snippets
from cogitave.ingest.docs.mdx import to_markdown
from cogitave.ingest.docs.myst import myst_markdown
from cogitave.ingest.docs.parse import myst_targets
from cogitave.ingest.docs.paths import RST_SUFFIXES, strip_md
from cogitave.ingest.docs.rst import parse_rst
from cogitave.ingest.docs.rst_markdown import render_markdown
from cogitave.ingest.docs.sphinx import RstSource, render_all
from cogitave.ingest.records import Problem, check_uid


def read_pages(b: Builder) -> None:
    """Read every page file of the site into ``b`` (reStructuredText: parsed only)."""
    nav_titles = b.site.nav.page_titles() if b.site.nav else {}
    files = b.site.files()
    if b.site.shape == "hugo":
        _hugo_cascades(b, files)
    for file in files:
        b.tally.files += 1
        _read(b, file, nav_titles)
    b.resolver.labels.update({k: uid for k, (uid, _, _) in b.myst_labels.items()})


def add_rst_pages(b: Builder) -> None:
    """Render the parsed reStructuredText pages and add them, with their API objects'
    anchors, the roles' outcomes and the includes not found."""
    md_pages = {uid: (page.rel, page.title) for uid, page in b.pages.items()}
    done = render_all(b.rst, md_pages, b.myst_labels, b.url_of, b.read_include, b.shown)
    b.api_refs.update(done.api_refs)
    for res, where, written in done.links:
        b.tally.link(res, where, written, "link")
    b.tally.missing_includes.extend(done.missing_includes)
    for rendered in done.pages:
        front = FrontMatter({}, rendered.markdown, 0)
        page = b.add_page(
            rendered.uid, rendered.rel, rendered.file, rendered.markdown, front, {}, rendered.parsed
        )
        page.api = rendered.api
        anchors = b.resolver.anchors[page.uid]
        for entry in rendered.api:
            anchors[entry.obj.anchor] = entry.uid


def _read(b: Builder, file: Path, nav_titles: dict[str, str]) -> None:
    site = b.site
    rel = file.relative_to(site.docs_root).as_posix()
    shown = b.shown(file)
    excluded = site.excludes.why(rel)
    if excluded:
        b.tally.unpublished.append(f"{shown}: {excluded}")
        return
    try:
        data = b.reader.read_bytes(file)
        if data is None:
            return  # refused (too large, not a regular file): listed by the reader
        text = data.decode("utf-8-sig")
    except OSError as e:
        b.problems.append(Problem(shown, 0, f"unreadable file: {e.strerror or e}"))
        return
    except UnicodeDecodeError as e:
        b.problems.append(Problem(shown, 0, f"not valid UTF-8 (byte {e.start})"))
        return
    uid = strip_md(rel)
    try:
        check_uid(uid)
    except ValueError as e:
        b.problems.append(Problem(shown, 0, str(e)))
        return
    if uid in b.pages:
        b.problems.append(Problem(shown, 0, f"duplicate page uid {uid!r}"))
        return
    text = text.replace("\r\n", "\n")
    b.texts[file] = text
    if rel.endswith(RST_SUFFIXES):

        def found(path: str, line: int) -> str | None:
            included = b.read_include(file, path, line)
            return included[0] if included else None

        doc = parse_rst(text, uid, shown, found, b.site.substitutions, b.site.api)
        for path, line, reason in doc.refused:
            b.reader.refuse(f"{shown}:{line}", path, reason)
        for name, line, why in doc.autodoc:
            if why:
                b.tally.autodoc_missing.append(f"{shown}:{line}: {name} ({why})")
            else:
                b.tally.autodoc_read += 1
        b.rst[uid] = RstSource(file, rel, doc)
        return
    front = split_front_matter(text)
    if front.error:
        b.tally.bad_front_matter.append(f"{shown}: {front.error}")
    unbuilt = unpublished(site.shape, front.data) or _cascaded(b, rel)
    body = front.body
    if site.shape not in ("mkdocs", "hugo", "plain") or rel.endswith(".mdx"):
        body = to_markdown(body, mdx=site.shape != "vitepress" or rel.endswith(".mdx"))
    if "8<-" in body:
        body = expand_snippets(body, lambda p: b.read_include(file, p))
    if site.shape == "sphinx" and ("{" in body):
        body = _myst(b, body, uid, file, shown)
    targets: dict[int, str] = {}
    if site.shape == "sphinx" and ")=" in body:
        body, targets = myst_targets(body)
    front = FrontMatter(front.data, body, front.offset, front.error)
    listed = unbuilt is not None and unbuilt.listed
    page = b.add_page(uid, rel, file, text, front, nav_titles, in_section=listed)
    for line, label in targets.items():
        b.myst_labels[label.lower()] = _target_of(page, line)
    if unbuilt is not None and not listed:
        # Built nowhere: no node. Links and includes still find it (an include shows its
        # text on the includer, whose anchors its headings become).
        del b.pages[uid]
        b.snippets.add(uid)
        b.tally.unpublished.append(f"{shown}: {unbuilt.reason}")


def _myst(b: Builder, body: str, uid: str, file: Path, shown: str) -> str:
    """A MyST page's directives and roles as Markdown; ``{eval-rst}`` blocks rendered as the
    tree's reStructuredText pages are (roles as code: the page's links are its own)."""

    def read(path: str, line: int = 0) -> str | None:
        found = b.read_include(file, path, line)
        return found[0] if found else None

    def render_rst(text: str) -> str:
        doc = parse_rst(text, uid, shown, read, b.site.substitutions)
        return render_markdown(doc, lambda _x: None, lambda _d, p: b.read_include(file, p)).markdown

    return myst_markdown(body, render_rst, lambda p: b.read_include(file, p))


def _target_of(page: Page, line: int) -> tuple[str, str, str]:
    """(node uid, anchor, title) of the heading a MyST ``(label)=`` on body ``line`` names:
    the first heading after it; the node is the section holding that heading."""
    for i, h in enumerate(page.parsed.headings):
        if h.line > line:
            return page.container(i), h.anchor, h.text
    return page.uid, "", page.title


def _hugo_cascades(b: Builder, files: list[Path]) -> None:
    """Section folders whose ``_index`` cascades "not built" onto every page below."""
    for file in files:
        if file.name.partition(".")[0] != "_index":
            continue
        try:
            raw = b.reader.read_bytes(file)
            data = split_front_matter(raw.decode("utf-8-sig")).data if raw else {}
        except (OSError, UnicodeDecodeError):
            continue  # reported when the page itself is read
        found = hugo_cascade(data)
        if found:
            folder = file.parent.relative_to(b.site.docs_root).as_posix()
            reason = f"{found.reason} (from {b.shown(file)})"
            b.cascades[folder] = Unbuilt(reason, found.listed)


def _cascaded(b: Builder, rel: str) -> Unbuilt | None:
    """The cascade of an ancestor section that keeps the page at ``rel`` from being built
    (a section's own cascade is for the pages below it, not for itself)."""
    if not b.cascades:
        return None
    folder = posixpath.dirname(rel)
    if posixpath.basename(rel).partition(".")[0] == "_index":
        folder = posixpath.dirname(folder) if folder else None
    while folder is not None:
        key = folder or "."
        if key in b.cascades:
            return b.cascades[key]
        folder = posixpath.dirname(folder) if folder else None
    return None
