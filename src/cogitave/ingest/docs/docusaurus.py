"""A Docusaurus site: ``docusaurus.config.*`` -> a :class:`~cogitave.ingest.docs.site.Site`.

Read: the docs plugin's ``path`` and ``routeBasePath`` (under ``docs: {`` in the classic
preset, else the options of ``'@docusaurus/plugin-content-docs'`` itself), ``url`` +
``baseUrl``, ``trailingSlash``, the versions (below) and ``_category_.json``/``.yml`` folder
labels. Pages are ``.md``/``.mdx``; ``_x`` files and folders are partials;
``sidebar_position`` orders a folder.

Versions, as the docs plugin routes them: ``versions.json`` names the released versions,
newest first, each in ``versioned_docs/version-<name>/``; the docs folder itself is the
version ``current`` (unreleased), listed first unless ``includeCurrentVersion: false``
(``disableVersioning: true`` keeps it alone, ``onlyIncludeVersions`` keeps those named). The
last version (``lastVersion``, by default the newest released one) is served at the docs
route (``/docs/``), ``current`` at ``/docs/next/``, any other at ``/docs/<name>/``;
``versions: { <name>: { label, path } }`` renames a version's URL segment. The site is read at
its last version unless another is asked for. ``versioned_sidebars/`` is not read (the docs'
sidebars are not read either: folders and ``sidebar_position`` give the order).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from cogitave.errors import InputError
from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.jsconfig import (
    braces_from,
    config_file,
    docs_folder,
    object_body,
    object_entries,
    read_text,
    setting,
    string_list,
    top_level,
)
from cogitave.ingest.docs.site import DocVersion, Site

CONFIGS = tuple(f"docusaurus.config.{e}" for e in ("ts", "js", "mjs", "cjs", "mts"))
CURRENT = "current"  # the docs plugin's name for the unreleased docs folder


@dataclass(frozen=True)
class Version:
    """A version of the docs as the docs plugin sees it."""

    name: str  # as ``versions.json`` names it; ``current`` for the docs folder
    label: str | None  # ``versions.<name>.label``, when the config sets it
    path: str  # the URL segment below the docs route ("": the route itself)
    root: Path  # its docs folder
    last: bool  # served by default (``lastVersion``)
    configured: bool  # the config gives it a label or a path

    @property
    def shown(self) -> str:
        """Its name for the reader of the docs: a released version's own; for ``current``,
        its label when that is one word, else its URL segment, else ``next``."""
        if self.name != CURRENT:
            return self.name
        if self.label and not re.search(r"\s", self.label):
            return self.label
        return self.path or "next"

    def answers(self, asked: str) -> bool:
        """Whether ``asked`` names this version (its name, label or URL segment)."""
        return asked in {self.shown, self.name, self.label, self.path} - {None, ""}


def detect_docusaurus(path: Path, reader: TreeReader, version: str | None = None) -> Site | None:
    """A Docusaurus site: its config in ``path`` or ``path/website``, read at ``version``
    (None: the version served at the docs route); an unknown version is an
    :class:`InputError` naming the versions held."""
    for folder in (path, path / "website"):
        config = config_file(reader, folder, CONFIGS)
        if config is None:
            continue
        text = read_text(reader, config)
        # The docs plugin's options: only its own keys are read (`versions: { current:
        # { path } }` is not the docs folder).
        options = docs_options(text)
        block = top_level(options)
        docs_path = setting(block, "path") or "docs"
        route = setting(block, "routeBasePath")
        route = "docs" if route is None else route
        docs_root = Path(os.path.abspath(folder / docs_path))
        docs_folder(reader, config, "docs.path", docs_root)
        if not reader.is_dir(docs_root):
            continue
        held = versions(reader, folder, docs_root, options)
        chosen = _choose(held, version, path)
        site = Site("docusaurus", path, chosen.root, "github", config_dir=folder)
        route_base = "/" + route.strip("/") if route.strip("/") else ""
        if len(held) > 1 or held[0].name != CURRENT:
            site.versions = tuple(
                DocVersion(v.shown, v.last, _prefix(route_base, v.path)) for v in held
            )
        if chosen.name != CURRENT or chosen.configured:
            site.version = chosen.shown
        if version is None and chosen.name != CURRENT:
            site.notes.append(
                f"versioned site: reading {chosen.root.name} (served at the docs route); the "
                f"unreleased {docs_path}/ is served under its own version path"
            )
        elif version is not None:
            where = os.path.relpath(chosen.root, path) if chosen.root != path else "."
            shown = _prefix(route_base, chosen.path)
            site.notes.append(f"version {chosen.shown}: reading {where}/ (served at {shown})")
        url, base_url = setting(text, "url") or "", setting(text, "baseUrl") or "/"
        site.site_url = url.rstrip("/") + "/" + base_url.strip("/") if url else ""
        # Links written in pages and URLs here are below baseUrl, which site_url carries.
        site.route_base = route_base + (f"/{chosen.path.strip('/')}" if chosen.path else "")
        # `trailingSlash: true` serves every page at `.../page/`; unset or false, `.../page`.
        site.trailing_slash = bool(re.search(r"(?m)(?:^|[{,\s])trailingSlash\s*:\s*true\b", text))
        site.suffixes = (".md", ".mdx")
        site.order_key = "sidebar_position"
        site.group_titles = _category_labels(reader, chosen.root)
        return site
    return None


def docs_options(text: str) -> str:
    """The text of the docs plugin's options: under ``docs: {`` in the classic preset, else
    those given to ``'@docusaurus/plugin-content-docs'`` itself (the default instance: one
    with another ``id`` keeps its own ``<id>_versions.json`` and is not read)."""
    body = object_body(text, "docs")
    if body is not None:
        return body
    for m in re.finditer(r"""(['"])@docusaurus/plugin-content-docs\1\s*,\s*\{""", text):
        found = braces_from(text, m.end())
        if found is None:
            continue
        plugin_id = setting(top_level(found), "id")
        if plugin_id in (None, "default"):
            return found
    return ""


def versions(reader: TreeReader, folder: Path, docs_root: Path, options: str) -> list[Version]:
    """The versions of the docs a site holds, as the docs plugin lists them: ``current``
    first (unless left out), then ``versions.json``'s, newest first; a version whose folder
    is missing is passed over. ``options``: the text of the docs plugin's options. Never
    empty: with nothing else, ``current`` alone (the docs folder at the docs route)."""
    block = top_level(options)
    names: list[str] = []
    try:
        listed = json.loads(read_text(reader, folder / "versions.json") or "null")
    except ValueError:
        listed = None
    if isinstance(listed, list) and all(isinstance(x, str) and x for x in listed):
        names = list(dict.fromkeys(listed))
    if re.search(r"(?m)(?:^|[{,\s])disableVersioning\s*:\s*true\b", block):
        names = []
    if CURRENT not in names and not re.search(
        r"(?m)(?:^|[{,\s])includeCurrentVersion\s*:\s*false\b", block
    ):
        names.insert(0, CURRENT)
    only = string_list(options, "onlyIncludeVersions")
    if only:
        names = [n for n in names if n in only]
    roots = {
        n: docs_root if n == CURRENT else folder / "versioned_docs" / f"version-{n}" for n in names
    }
    names = [n for n in names if reader.is_dir(roots[n])]
    if not names:
        names, roots = [CURRENT], {CURRENT: docs_root}
    last = setting(block, "lastVersion") or next((n for n in names if n != CURRENT), CURRENT)
    if last not in names:  # its folder is missing: the docs folder is served instead
        last = CURRENT if CURRENT in names else names[0]
    configured = object_entries(options, "versions")
    out: list[Version] = []
    for name in names:
        entry = configured.get(name, "")
        label, path = setting(entry, "label"), setting(entry, "path")
        named = label is not None or path is not None
        if path is None:
            path = "" if name == last else ("next" if name == CURRENT else name)
        root = Path(os.path.abspath(roots[name]))
        out.append(Version(name, label, path.strip("/"), root, name == last, named))
    return out


def _choose(held: list[Version], asked: str | None, path: Path) -> Version:
    """The version to read: the last one, or the one ``asked`` names."""
    if asked is None:
        return next(v for v in held if v.last)
    found = next((v for v in held if v.shown == asked), None)
    found = found or next((v for v in held if v.answers(asked)), None)
    if found is not None:
        return found
    if len(held) == 1 and held[0].name == CURRENT:
        raise InputError(f"{path}: its docs are not versioned: leave the version out")
    names = ", ".join(v.shown + (" (served by default)" if v.last else "") for v in held)
    raise InputError(f"{path}: no docs version {asked!r}; the versions it holds: {names}")


def _prefix(route_base: str, version_path: str) -> str:
    """The URL path a version's pages are served under: ``/docs/``, ``/docs/2.0/``."""
    segment = version_path.strip("/")
    return f"{route_base}/{segment}/" if segment else f"{route_base}/"


def _category_labels(reader: TreeReader, root: Path) -> dict[str, str]:
    """Folder (relative to the docs root) -> its ``_category_.json``/``.yml`` label."""
    out: dict[str, str] = {}
    names = ("_category_.json", "_category_.yml", "_category_.yaml")
    for dirpath, dirnames, filenames in reader.walk(root, want=names.__contains__):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "_")) and d != "node_modules"]
        for name in names:
            if name in filenames:
                text = read_text(reader, Path(dirpath) / name)
                try:
                    data = json.loads(text) if name.endswith(".json") else yaml.safe_load(text)
                except (ValueError, yaml.YAMLError):
                    continue
                if isinstance(data, dict) and isinstance(data.get("label"), str):
                    rel = Path(dirpath).relative_to(root).as_posix()
                    out[rel] = data["label"]
    return out
