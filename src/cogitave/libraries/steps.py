"""Where one dependency's docs come from: the source steps of ``index --project``, each one
object with one interface.

A step :meth:`~Step.plan` s a dependency at a version (:class:`Want`): a :class:`Candidate`
(where the docs will come from, why, and what to read), or :class:`NotHere` saying why the
step does not apply. :meth:`~Step.fetch` indexes a candidate into the collection of
libraries and returns what it did (:class:`Fetched`); a step that finds nothing there after
all raises, and the next step is tried. The steps, in the order they are tried
(:func:`default_steps`):

1. :class:`SourcesStep`: ``[libraries] sources`` names the package (``{version}``
   replaced): that source and no other (``exclusive``).
2. :class:`RegistryStep`: a registry of packs in ``[libraries] registries``
   (:mod:`cogitave.libraries.registry`) offers that version: its pack imported, nothing
   embedded again.
3. :class:`InstalledStep`: the project's environment holds the distribution at exactly
   that version: a Python package read statically (``pyapi``: API reference from the
   source, README from ``METADATA``) with a docs folder it ships (``PKG/docs``), an npm
   package's README and ``.d.ts`` declarations (:mod:`cogitave.ingest.dts`). Offline and
   exact.
4. :class:`RepositoryStep`: the package index's metadata names a repository with a tag
   for that version (``vX.Y.Z``, ``X.Y.Z``, ``NAME-X.Y.Z``, ``NAME@X.Y.Z``, listed with
   ``git ls-remote``): cloned at the tag, its docs folder read (``mkdocs.yml`` at the root,
   else ``docs/``, ``doc/``, ``documentation/``, ``website/``, else the checkout).
5. :class:`SiteStep`: the metadata names a documentation site: crawled at the version's
   URL (Read the Docs ``/en/X.Y.Z/``, then ``/en/stable/``), under the crawler's fetch
   policy.

What a package index says is untrusted: from a public index, a repository must be fetched
over http(s) or ssh and a site must not be on a private address; ``file://`` repositories
and private hosts are accepted only from an index that is itself on a private address (a
private index, a test's local server).

Each library version keeps where it came from as its ``source``: ``installed:<dist-info or
package.json>``, the ``git+URL@TAG[#SUBDIR]`` cloned, the site's URL, or the
``[libraries] sources`` value.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from cogitave.errors import CogitaveError, IngestError, PackageIndexError
from cogitave.ingest.remote import GitSource, Location, WebSource
from cogitave.libraries.environment import Environment
from cogitave.libraries.metadata import PackageMeta, package_meta
from cogitave.libraries.project import Dependency, normalise
from cogitave.printable import printable

NOT_A_SOURCE = "not in [libraries] sources"
"""Why :class:`SourcesStep` does not apply: the usual case, left out of reports."""
DOCS_FOLDERS = ("docs", "doc", "documentation", "website", "site")
"""Folders of a repository that hold its docs, in the order they are looked for."""


@dataclass(frozen=True)
class Want:
    """A dependency and the version of it to index, with where that version came from."""

    dep: Dependency
    version: str
    version_from: str  # "locked in uv.lock", "pinned in pyproject.toml", "installed", ...


@dataclass(frozen=True)
class Candidate:
    """Where one step would take a dependency's docs from."""

    step: str  # the step's name: "sources", "installed", "repository", "site"
    where: str  # the provenance recorded on the library version
    why: str  # one line for the plan
    location: Location | None = None  # what ``indexing.index`` reads
    fmt: str = "auto"
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class NotHere:
    """Why a step does not apply to a dependency."""

    step: str
    reason: str


@dataclass(frozen=True)
class Fetched:
    """What fetching a candidate did."""

    ref: str  # name@version
    source: str  # the provenance recorded
    nodes: int
    api_entries: int | None  # None: not counted (an imported pack)
    published: bool  # whether a root was published


@dataclass
class Context:
    """What every step may use: the collection, the project's environment, the package
    indexes, the progress callback, and what was already asked of the network."""

    collection: Path
    env: Environment
    bases: tuple[str, str]
    sources: dict[str, str]
    encoder: str | None = None
    registries: tuple[str, ...] = ()
    progress: Callable[[str, int, int], None] | None = None
    resolve: Callable[[str], list[str]] | None = None
    """Host name -> addresses (None: the system's resolver), for the private-address rule."""
    metas: dict[tuple[str, str, str], PackageMeta | str] = field(default_factory=dict)
    tags: dict[str, list[str] | str] = field(default_factory=dict)
    opened: dict[str, Any] = field(default_factory=dict)  # registry location -> it, or why not

    def meta(self, want: Want) -> PackageMeta | str:
        """The package index's metadata of ``want`` (asked once), or why there is none."""
        key = (want.dep.ecosystem, want.dep.key, want.version)
        if key not in self.metas:
            try:
                self.metas[key] = package_meta(want.dep, want.version, self.bases)
            except PackageIndexError as e:
                self.metas[key] = e.message
        return self.metas[key]

    def index_is_private(self, want: Want) -> bool:
        """Whether the package index of ``want``'s ecosystem is on a private address (its
        metadata may then name ``file://`` repositories and private hosts)."""
        base = self.bases[1] if want.dep.ecosystem == "npm" else self.bases[0]
        return self.private(urlsplit(base).hostname or "")

    def private(self, host: str) -> bool:
        """Whether ``host`` is, or resolves to, a non-public address."""
        from cogitave.ingest.web.scope import addresses, is_private

        return is_private(host, self.resolve or addresses)


class Step(Protocol):
    """One place a dependency's docs may come from (see the module doc)."""

    name: str
    exclusive: bool
    """A candidate of this step is the only one tried (an override)."""

    def plan(self, want: Want, ctx: Context) -> Candidate | NotHere:
        """Where this step would take ``want``'s docs from, or why it does not apply."""
        ...

    def fetch(self, want: Want, candidate: Candidate, ctx: Context) -> Fetched:
        """Index ``candidate`` into the collection as ``want``'s library version."""
        ...


# -- the steps --------------------------------------------------------------------------------
class SourcesStep:
    """``[libraries] sources``: a package's docs source named in the settings."""

    name = "sources"
    exclusive = True

    def plan(self, want: Want, ctx: Context) -> Candidate | NotHere:
        from cogitave.indexing import locate_source

        dep = want.dep
        found = next(
            (v for k, v in ctx.sources.items() if normalise(k, dep.ecosystem) == dep.key), None
        )
        if found is None:
            return NotHere(self.name, NOT_A_SOURCE)
        text = found.replace("{version}", want.version)
        try:
            where = locate_source(text)
        except CogitaveError as e:
            return NotHere(self.name, f"[libraries] sources: {e.message}")
        return Candidate(self.name, text, "named in [libraries] sources", where)

    def fetch(self, want: Want, candidate: Candidate, ctx: Context) -> Fetched:
        return index_location(want, candidate, ctx)


class RegistryStep:
    """A registry of packs (``[libraries] registries``, in order) that offers the version."""

    name = "registry"
    exclusive = False

    def plan(self, want: Want, ctx: Context) -> Candidate | NotHere:
        from cogitave.libraries.registry import open_registry

        if not ctx.registries:
            return NotHere(self.name, NOT_A_SOURCE)
        said: list[str] = []
        for location in ctx.registries:
            if location not in ctx.opened:
                try:
                    ctx.opened[location] = open_registry(location)
                except CogitaveError as e:
                    ctx.opened[location] = e.message
            reg = ctx.opened[location]
            if isinstance(reg, str):
                said.append(reg)
                continue
            if any(e.version == want.version for e in reg.versions(want.dep.name)):
                return Candidate(self.name, reg.source, f"a pack of {want.version} in it",
                                 extra={"location": location})  # fmt: skip
            said.append(f"{printable(location, 200)} holds no pack of {want.version}")
        return NotHere(self.name, "; ".join(said))

    def fetch(self, want: Want, candidate: Candidate, ctx: Context) -> Fetched:
        from cogitave.errors import NotFoundError
        from cogitave.libraries.registry import fetch_from_registries

        location = candidate.extra["location"]
        got = fetch_from_registries(
            ctx.collection, [location], want.dep.name, want.version, progress=ctx.progress
        )
        if got is None:  # only of another encoder: the next step indexes the docs
            where = printable(location, 200)
            raise NotFoundError(f"{where}: no pack for this collection's encoder")
        e = got.library
        return Fetched(e.ref, e.source, e.nodes, None, True)


class InstalledStep:
    """The distribution installed in the project's environment, at exactly that version."""

    name = "installed"
    exclusive = False

    def plan(self, want: Want, ctx: Context) -> Candidate | NotHere:
        got = ctx.env.find(want.dep)
        if got is None:
            return NotHere(self.name, f"not installed in {ctx.env.describe()}")
        if got.version != want.version:
            return NotHere(
                self.name,
                f"installed at {printable(got.version or 'no version', 100)}, not {want.version}",
            )
        npm = want.dep.ecosystem == "npm"
        where = "node_modules" if npm else "the environment"
        docs = None if npm else shipped_docs(got.path, got.marker)
        also = f", with its docs folder {docs.relative_to(got.path)}" if docs else ""
        return Candidate(
            self.name,
            f"installed:{got.marker}",
            f"installed in {where} at that version{also}",
            got.path,
            "npm" if npm else "pyapi",
            extra={"docs": docs},
        )

    def fetch(self, want: Want, candidate: Candidate, ctx: Context) -> Fetched:
        if candidate.fmt != "npm" and candidate.extra.get("docs") is not None:
            return _index_with_docs(want, candidate, ctx, candidate.extra["docs"])
        if candidate.fmt != "npm":
            return index_location(want, candidate, ctx)
        from cogitave.ingest.dts import npm_docs

        assert isinstance(candidate.location, Path)
        with tempfile.TemporaryDirectory(prefix="cogitave-npm-") as tmp:
            docs = Path(tmp) / "docs"
            api = npm_docs(candidate.location, want.dep.name, want.version, docs)
            got = index_location(want, replace(candidate, location=docs, fmt="docs"), ctx)
        return replace(got, api_entries=api)


def _named(step: str, want: Want, ctx: Context, field: str, *, git: bool) -> str | NotHere:
    """The URL the package index's metadata gives in ``field`` (``repository``,
    ``documentation``), or why this step cannot use it: no metadata, none named, or one
    the index may not point at."""
    meta = ctx.meta(want)
    if isinstance(meta, str):
        return NotHere(step, meta)
    url = getattr(meta, field)
    if url is None:
        what = "repository" if field == "repository" else "documentation site"
        return NotHere(step, f"the package index names no {what}")
    why = _refused(url, ctx, want, git=git)
    if why is not None:
        return NotHere(step, f"{printable(url, 200)}: {why}")
    return str(url)


class RepositoryStep:
    """The repository the package index names, cloned at the version's tag."""

    name = "repository"
    exclusive = False

    def plan(self, want: Want, ctx: Context) -> Candidate | NotHere:
        repository = _named(self.name, want, ctx, "repository", git=True)
        if isinstance(repository, NotHere):
            return repository
        tags = self._tags(repository, ctx)
        if isinstance(tags, str):
            return NotHere(self.name, tags)
        tag = version_tag(tags, want.dep.name, want.version)
        subdir = getattr(ctx.meta(want), "subdir", None)  # asked once: the same metadata
        if tag is None:
            return NotHere(self.name, f"{printable(repository, 200)} has no tag for {want.version}")
        sub = f"#{subdir}" if subdir else ""
        return Candidate(
            self.name,
            f"git+{repository}@{tag}{sub}",
            f"the package index names the repository; tag {printable(tag, 100)}",
            GitSource(repository, tag, None, f"git+{repository}@{tag}{sub}"),
            extra={"subdir": subdir},
        )

    def _tags(self, url: str, ctx: Context) -> list[str] | str:
        from cogitave.ingest.clone import remote_tags

        if url not in ctx.tags:
            try:
                ctx.tags[url] = remote_tags(url)
            except CogitaveError as e:
                ctx.tags[url] = e.message
        return ctx.tags[url]

    def fetch(self, want: Want, candidate: Candidate, ctx: Context) -> Fetched:
        from cogitave.ingest.clone import checkout, web_folder

        assert isinstance(candidate.location, GitSource)
        got = checkout(candidate.location)
        folder = docs_folder(got.root, candidate.extra.get("subdir"))
        rel = os.path.relpath(folder, got.root)
        where = candidate.where.split("#", 1)[0] + ("" if rel == "." else f"#{rel}")
        files = web_folder(candidate.location, got, folder)
        located = replace(candidate, location=folder, where=where)
        return index_location(want, located, ctx, commit=got.commit, files_url=files)


class SiteStep:
    """The documentation site the package index names, crawled at the version's URL."""

    name = "site"
    exclusive = False

    def plan(self, want: Want, ctx: Context) -> Candidate | NotHere:
        url = _named(self.name, want, ctx, "documentation", git=False)
        if isinstance(url, NotHere):
            return url
        urls = versioned_urls(url, want.version)
        return Candidate(self.name, urls[0], "the package index names its documentation site",
                         WebSource(urls[0]), extra={"urls": urls})  # fmt: skip

    def fetch(self, want: Want, candidate: Candidate, ctx: Context) -> Fetched:
        from cogitave.indexing import locate_source

        urls: list[str] = candidate.extra.get("urls") or [candidate.where]
        last: CogitaveError | None = None
        for url in urls:
            try:
                return index_location(
                    want, replace(candidate, where=url, location=locate_source(url)), ctx
                )
            except IngestError as e:  # no pages there: the next URL
                last = e
        assert last is not None
        raise last


def default_steps() -> list[Step]:
    """The steps in the order they are tried (see the module doc)."""
    return [SourcesStep(), RegistryStep(), InstalledStep(), RepositoryStep(), SiteStep()]


# -- helpers ----------------------------------------------------------------------------------
def index_location(
    want: Want,
    candidate: Candidate,
    ctx: Context,
    *,
    commit: str | None = None,
    files_url: str | None = None,
) -> Fetched:
    """Index ``candidate.location`` as ``want``'s library version, its provenance
    ``candidate.where`` (a clone's: its ``commit``, and ``files_url``, where its repository's
    web view shows the folder read)."""
    from cogitave import indexing
    from cogitave.indexing import Origin, SourceSpec

    assert candidate.location is not None
    kinds: dict[str, int] = {}

    def read(batch: Any) -> None:
        for n in batch.nodes:
            kinds[n.kind] = kinds.get(n.kind, 0) + 1

    fmt = candidate.fmt if candidate.fmt in indexing.FORMATS else "auto"
    spec = SourceSpec(
        candidate.location,
        ctx.collection,
        fmt,
        library=want.dep.name,
        version=want.version,
        encoder=ctx.encoder,
        origin=Origin(candidate.where, commit, None, files_url=files_url),
    )
    res = indexing.index(spec, progress=ctx.progress, on_read=read)
    published = res.published is not None and res.published.root is not None
    return Fetched(res.library or res.source, candidate.where, res.live, kinds.get("api", 0),
                   published)  # fmt: skip


def shipped_docs(site: Path, dist_info: Path) -> Path | None:
    """A docs folder an installed Python distribution ships inside one of its packages
    (``PKG/docs``, ``PKG/doc``) holding Markdown or reStructuredText pages, or None."""
    from cogitave.ingest.detect import has_pages
    from cogitave.ingest.pyapi.dist import read_dist_info

    for pkg in read_dist_info(dist_info).packages[:16]:
        for name in ("docs", "doc"):
            d = site / pkg / name
            if d.is_dir() and not d.is_symlink() and has_pages(d):
                return d
    return None


def _index_with_docs(want: Want, candidate: Candidate, ctx: Context, docs: Path) -> Fetched:
    """An installed distribution's API reference and the docs folder it ships, synced as one
    library version (a docs page whose uid an API page has is left out)."""
    from cogitave.errors import EncoderError
    from cogitave.expand.embed import DEFAULT_ENCODER, canonical_name
    from cogitave.indexing import SourceSpec, check_folder, read
    from cogitave.libraries.collection import LibraryCollection
    from cogitave.libraries.layout import is_library_collection
    from cogitave.libraries.names import library_key

    assert isinstance(candidate.location, Path)
    name = want.dep.name
    api = read(SourceSpec(candidate.location, ctx.collection, "pyapi", library=name))
    pages = read(SourceSpec(docs, ctx.collection, "docs"))
    taken = {n.uid for n in api.nodes}
    nodes = [*api.nodes, *(n for n in pages.nodes if n.uid not in taken)]
    check_folder(ctx.collection)
    if is_library_collection(ctx.collection):
        lib = LibraryCollection.open(ctx.collection)
    else:
        lib = LibraryCollection.create(ctx.collection, encoder=ctx.encoder or DEFAULT_ENCODER)
    if ctx.encoder and lib.manifest.encoder != canonical_name(ctx.encoder):
        raise EncoderError(
            f"{ctx.collection} embeds with {lib.manifest.encoder!r}, not {ctx.encoder!r}: "
            "the libraries of a collection share one encoder"
        )
    res = lib.sync_library(name, want.version, nodes, schema=api.schema, source=candidate.where,
                           progress=ctx.progress)  # fmt: skip
    e = lib.manifest.find(f"{library_key(name)}@{want.version}")
    assert e is not None
    api_count = sum(1 for n in nodes if n.kind == "api")
    return Fetched(e.ref, candidate.where, e.nodes, api_count, res.root is not None)


def version_tag(tags: list[str], name: str, version: str) -> str | None:
    """The tag naming ``version`` of package ``name``: ``vX.Y.Z``, ``X.Y.Z``, ``NAME-X.Y.Z``,
    ``NAME@X.Y.Z`` (the name as written, or its last part for a scoped npm name)."""
    have = set(tags)
    short = name.rsplit("/", 1)[-1]
    for t in (f"v{version}", version, f"{name}-{version}", f"{name}@{version}",
              f"{short}-{version}", f"{short}@{version}", f"{short}-v{version}"):  # fmt: skip
        if t in have:
            return t
    return None


def docs_folder(root: Path, subdir: str | None = None) -> Path:
    """The docs folder of a checkout (see the module doc); ``subdir``: the package's folder
    in a monorepo, looked in first."""
    real = os.path.realpath(root)
    bases = [root / subdir, root] if subdir else [root]
    for base in bases:
        if not os.path.realpath(base).startswith(real) or not base.is_dir():
            continue
        if (base / "mkdocs.yml").is_file() or (base / "mkdocs.yaml").is_file():
            return base
        for name in DOCS_FOLDERS:
            d = base / name
            if d.is_dir() and not d.is_symlink():
                return d
    return bases[0] if bases[0].is_dir() else root


def versioned_urls(url: str, version: str) -> list[str]:
    """The URLs of a docs site to try for ``version``: a Read the Docs site at
    ``/en/VERSION/`` then ``/en/stable/``; any other site as given."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    segs = [p for p in parts.path.split("/") if p]
    rtd = host.endswith((".readthedocs.io", ".readthedocs.org")) or (
        len(segs) >= 2 and segs[1] in ("latest", "stable") and len(segs[0]) <= 5
    )
    if not rtd:
        return [url]
    lang = segs[0] if segs and len(segs[0]) <= 5 else "en"
    base = f"{parts.scheme}://{parts.netloc}/{lang}"
    return [f"{base}/{version}/", f"{base}/stable/"]


def _refused(url: str, ctx: Context, want: Want, *, git: bool) -> str | None:
    """Why a URL a package index named may not be fetched (see the module doc), or None."""
    private_index = ctx.index_is_private(want)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return None if private_index and git else "a local path, from a public package index"
    allowed = ("http", "https", "ssh") if git else ("http", "https")
    if scheme not in allowed:
        return f"{scheme}:// is not fetched"
    if not private_index and ctx.private(parts.hostname or ""):
        return "a private address, from a public package index"
    return None
