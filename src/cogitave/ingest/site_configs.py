"""Docs site generators other than MkDocs and Hugo: Docusaurus, VitePress, Next.js, Sphinx.

Each ``detect_*`` looks at a folder and returns a :class:`~cogitave.ingest.md_layout.Site` or
None. Config files are JavaScript/TypeScript or Python that this package does not run: the few
settings that matter (site URL, base path, docs folder, route base, clean URLs) are read with
patterns that match how the generators' own templates write them; a setting that cannot be
read keeps the generator's default and a note says so.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

from cogitave.ingest.md_layout import Site, glob_regex, rewrite_rule

DOCUSAURUS_CONFIGS = tuple(f"docusaurus.config.{e}" for e in ("ts", "js", "mjs", "cjs", "mts"))
VITEPRESS_CONFIGS = tuple(f"config.{e}" for e in ("ts", "js", "mjs", "mts", "cjs", "cts"))
NEXT_CONFIGS = tuple(f"next.config.{e}" for e in ("js", "mjs", "ts", "cjs"))
ASTRO_CONFIGS = tuple(f"astro.config.{e}" for e in ("mjs", "ts", "js", "mts", "cjs"))
SPHINX_DIRS = ("", "source", "doc", "docs", "Doc", "docs/source", "doc/source")


def _setting(text: str, key: str) -> str | None:
    """``key: 'value'`` (JS/TS object) or ``key = 'value'`` (Python), the first one written."""
    m = re.search(rf"(?m)(?:^|[{{,\s]){re.escape(key)}\s*[:=]\s*(['\"`])([^'\"`]*)\1", text)
    return m.group(2) if m else None


def _string_list(text: str, key: str) -> list[str]:
    """The quoted strings of ``key: [...]`` in a JS/TS config (the first one written)."""
    m = re.search(rf"(?m)(?:^|[{{,\s]){re.escape(key)}\s*:\s*\[([^\]]*)\]", text)
    return [q[1] for q in re.findall(r"(['\"`])([^'\"`]*)\1", m.group(1))] if m else []


def _object_body(text: str, key: str) -> str | None:
    """The text between the braces of the object literal ``key: { ... }`` (or a constant
    ``key = { ... }``) in a JS/TS config (the first one written), its comments blanked; None
    when there is none."""
    m = re.search(rf"(?m)(?:^|[{{,\s]){re.escape(key)}\s*[:=]\s*\{{", text)
    if not m:
        return None
    out: list[str] = []
    depth, i = 1, m.end()
    while i < len(text):
        ch = text[i]
        if text.startswith(("//", "/*"), i):
            line = text[i + 1] == "/"
            end = text.find("\n" if line else "*/", i + 2)
            stop = len(text) if end < 0 else end + (1 if line else 2)
            out.append(" ")
            i = stop
            continue
        if ch in "'\"`":
            end = text.find(ch, i + 1)
            stop = len(text) if end < 0 else end + 1
            out.append(text[i:stop])
            i = stop
            continue
        depth += ch in "{[("
        depth -= ch in "}])"
        if depth == 0:
            return "".join(out)
        out.append(ch)
        i += 1
    return None


def _top_level(body: str) -> str:
    """``body`` with every nested object, array and call blanked (strings kept whole), so a
    key read from it is a key of this object, not of one inside it."""
    out: list[str] = []
    depth, i = 0, 0
    while i < len(body):
        ch = body[i]
        if ch in "'\"`":
            end = body.find(ch, i + 1)
            stop = len(body) if end < 0 else end + 1
            out.append(body[i:stop] if depth == 0 else " ")
            i = stop
            continue
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif depth == 0:
            out.append(ch)
        i += 1
    return "".join(out)


def _string_pairs(text: str, key: str) -> list[tuple[str, str]]:
    """The ``'a': 'b'`` entries of the object literal ``key: { ... }`` (VitePress
    ``rewrites``), in order; a pair written any other way is not read."""
    body = _object_body(text, key)
    pair = r"(['\"`])([^'\"`]+)\1\s*:\s*(['\"`])([^'\"`]+)\3"
    return [(a, b) for _, a, _, b in re.findall(pair, _top_level(body))] if body else []


def _object_keys(text: str, key: str) -> list[str]:
    """The top-level keys of the object literal ``key: { ... }`` in a JS/TS config (quoted,
    bare, or shorthand ``{ root, zh }``), in order; [] when it is not written literally."""
    body = _object_body(text, key)
    if body is None:
        return []
    entry = re.compile(r"^\s*(?:(['\"])([^'\"]+)\1|([A-Za-z_$][\w$-]*))\s*(?::|$)")
    found = (entry.match(part) for part in _top_level(body).split(","))
    return [m.group(2) or m.group(3) for m in found if m]


def sphinx_exclude_patterns(conf: str) -> list[str] | None:
    """``exclude_patterns`` of a ``conf.py``, from its literal assignments (``=``, ``+=``,
    ``.extend``/``.append``) at module level; None when it is computed some other way."""
    try:
        tree = ast.parse(conf)
    except SyntaxError:
        return None
    out: list[str] = []
    for node in tree.body:
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "exclude_patterns" for t in node.targets
        ):
            out, value = [], node.value
        elif (
            isinstance(node, ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "exclude_patterns"
        ):
            value = node.value
        elif (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and isinstance(node.value.func.value, ast.Name)
            and node.value.func.value.id == "exclude_patterns"
            and node.value.func.attr in ("extend", "append")
            and len(node.value.args) == 1
        ):
            arg = node.value.args[0]
            value = ast.List([arg], ast.Load()) if node.value.func.attr == "append" else arg
        if value is None:
            continue
        try:
            items = ast.literal_eval(value)
        except ValueError:
            return None
        if not isinstance(items, list | tuple) or not all(isinstance(x, str) for x in items):
            return None
        out.extend(items)
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def detect_docusaurus(path: Path) -> Site | None:
    """A Docusaurus site: its config in ``path`` or ``path/website``."""
    for folder in (path, path / "website"):
        config = next((folder / n for n in DOCUSAURUS_CONFIGS if (folder / n).is_file()), None)
        if config is None:
            continue
        text = _read(config)
        # The docs plugin's options sit under `docs: {` in the classic preset; only its own
        # keys are read (`versions: { current: { path } }` is not the docs folder).
        block = _top_level(_object_body(text, "docs") or "")
        docs_path = _setting(block, "path") or "docs"
        route = _setting(block, "routeBasePath")
        route = "docs" if route is None else route
        docs_root = Path(os.path.abspath(folder / docs_path))
        if not docs_root.is_dir():
            continue
        released = _docusaurus_last_version(folder, block)
        site = Site("docusaurus", path, released or docs_root, "github", config_dir=folder)
        if released is not None:
            site.notes.append(
                f"versioned site: reading {released.name} (served at the docs route); the "
                f"unreleased {docs_path}/ is served under its own version path"
            )
        url, base_url = _setting(text, "url") or "", _setting(text, "baseUrl") or "/"
        site.site_url = url.rstrip("/") + "/" + base_url.strip("/") if url else ""
        # Links written in pages and URLs here are below baseUrl, which site_url carries.
        site.route_base = "/" + route.strip("/") if route.strip("/") else ""
        # `trailingSlash: true` serves every page at `.../page/`; unset or false, `.../page`.
        site.trailing_slash = bool(re.search(r"(?m)(?:^|[{,\s])trailingSlash\s*:\s*true\b", text))
        site.suffixes = (".md", ".mdx")
        site.order_key = "sidebar_position"
        site.group_titles = _category_labels(docs_root)
        return site
    return None


def _docusaurus_last_version(folder: Path, docs_options: str) -> Path | None:
    """The folder of the version Docusaurus serves at the docs route: with ``versions.json``,
    its first (newest) entry's ``versioned_docs/version-<name>``, unless the docs options set
    ``lastVersion`` (``'current'``: the ``docs/`` folder itself). None: serve ``docs/``."""
    try:
        versions = json.loads((folder / "versions.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(versions, list) or not versions or not isinstance(versions[0], str):
        return None
    last = _setting(docs_options, "lastVersion") or versions[0]
    if last == "current":
        return None
    candidate = folder / "versioned_docs" / f"version-{last}"
    return Path(os.path.abspath(candidate)) if candidate.is_dir() else None


def _category_labels(root: Path) -> dict[str, str]:
    """Folder (relative to the docs root) -> its ``_category_.json``/``.yml`` label."""
    import yaml

    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "_")) and d != "node_modules"]
        for name in ("_category_.json", "_category_.yml", "_category_.yaml"):
            if name in filenames:
                text = _read(Path(dirpath) / name)
                try:
                    data = json.loads(text) if name.endswith(".json") else yaml.safe_load(text)
                except (ValueError, yaml.YAMLError):
                    continue
                if isinstance(data, dict) and isinstance(data.get("label"), str):
                    rel = Path(dirpath).relative_to(root).as_posix()
                    out[rel] = data["label"]
    return out


def detect_vitepress(path: Path) -> Site | None:
    """A VitePress site: ``.vitepress/config.*`` in ``path`` or ``path/docs``."""
    for folder in (path, path / "docs"):
        config = next(
            (folder / ".vitepress" / n for n in VITEPRESS_CONFIGS
             if (folder / ".vitepress" / n).is_file()),
            None,
        )  # fmt: skip
        if config is None:
            continue
        text = _read(config)
        src = _setting(text, "srcDir") or "."
        docs_root = Path(os.path.abspath(folder / src))
        site = Site("vitepress", path, docs_root, "vitepress", config_dir=folder)
        base = _setting(text, "base") or "/"
        host = _setting(text, "hostname") or ""
        site.site_url = host.rstrip("/") + "/" + base.strip("/") if host else ""
        site.clean_urls = bool(re.search(r"(?m)^\s*cleanUrls\s*:\s*true", text))
        site.suffixes = (".md",)
        if excluded := _string_list(text, "srcExclude"):
            site.excludes.globs["srcExclude"] = [glob_regex(g) for g in excluded]
        site.rewrites = [rewrite_rule(a, b) for a, b in _string_pairs(text, "rewrites")]
        _other_locales(site, text)
        return site
    return None


def _other_locales(site: Site, text: str) -> None:
    """VitePress and Starlight ``locales``: the root locale is the site's own language; every
    other key that is a folder of the docs root is a translation, left out."""
    others = [k for k in _object_keys(text, "locales") if k != "root"]
    others = [k for k in others if (site.docs_root / k).is_dir()]
    if others:
        site.leave_out("locales: another language", [f"{k}/**" for k in others], others)
        site.notes.append(f"locales {others}: read the root locale only")


def detect_starlight(path: Path) -> Site | None:
    """An Astro Starlight site: ``astro.config.*`` using ``@astrojs/starlight``, in ``path`` or
    ``path/docs``; pages in ``src/content/docs``. Other locales' folders, ``draft: true``
    pages (left out of production builds) and a ``slug`` front matter are read as Starlight
    does; ``trailingSlash: 'never'`` drops the trailing slash Astro's directory URLs have."""
    for folder in (path, path / "docs"):
        config = next((folder / n for n in ASTRO_CONFIGS if (folder / n).is_file()), None)
        if config is None:
            continue
        text = _read(config)
        if "@astrojs/starlight" not in text:
            continue
        docs_root = Path(os.path.abspath(folder / "src" / "content" / "docs"))
        if not docs_root.is_dir():
            continue
        site = Site("starlight", path, docs_root, "github", config_dir=folder)
        site.suffixes = (".md", ".mdx")
        base = (_setting(text, "base") or "").strip("/")
        site.route_base = f"/{base}" if base else ""
        url = _setting(text, "site") or ""
        site.site_url = url.rstrip("/") if url.startswith("http") else ""
        site.trailing_slash = _setting(text, "trailingSlash") != "never"
        _other_locales(site, text)
        return site
    return None


def detect_nextjs(path: Path) -> Site | None:
    """A Next.js site with a Markdown content folder (React's docs: ``src/content``)."""
    if not any((path / n).is_file() for n in NEXT_CONFIGS):
        return None
    for rel in ("src/content", "content", "src/pages", "pages"):
        root = path / rel
        if root.is_dir():
            site = Site("nextjs", path, root, "github", config_dir=path)
            site.suffixes = (".md", ".mdx")
            return site
    return None


def detect_sphinx(path: Path) -> Site | None:
    """A Sphinx source tree (``conf.py``) or a built one (``_sources/*.rst.txt``)."""
    for rel in SPHINX_DIRS:
        folder = path / rel if rel else path
        if (folder / "conf.py").is_file():
            site = Site("sphinx", path, folder, "sphinx", config_dir=folder)
            conf = _read(folder / "conf.py")
            # MyST sites mix Markdown pages in; they follow the same .html URLs.
            site.suffixes = (".rst", ".md") if "myst" in conf else (".rst",)
            site.site_url = _setting(conf, "html_baseurl") or ""
            master = _setting(conf, "master_doc") or _setting(conf, "root_doc") or "index"
            site.root_doc = master
            patterns = sphinx_exclude_patterns(conf)
            if patterns is None:
                site.notes.append(
                    "exclude_patterns: conf.py computes it or does not parse; not applied"
                )
            elif patterns:
                site.excludes.globs["exclude_patterns"] = [glob_regex(g) for g in patterns]
            return site
    for folder in (path, path / "_sources", path / "html" / "_sources"):
        if folder.name == "_sources" and folder.is_dir():
            site = Site("sphinx", path, folder, "sphinx")
            site.suffixes = (".rst.txt",)
            site.notes.append("built Sphinx tree: reading _sources/*.rst.txt")
            return site
    return None
