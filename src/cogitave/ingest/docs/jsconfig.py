"""Settings read from a site generator's config file without running it.

Docusaurus, VitePress and Astro configs are JavaScript/TypeScript, Sphinx's is Python: the
few settings that matter (site URL, base path, docs folder, route base, clean URLs, locales)
are read with patterns that match how the generators' own templates write them. A setting
that cannot be read keeps the generator's default, and the caller's note says so.
"""

from __future__ import annotations

import re
from pathlib import Path

from cogitave.errors import IngestError
from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.site import Site


def setting(text: str, key: str) -> str | None:
    """``key: 'value'`` (JS/TS object) or ``key = 'value'`` (Python), the first one written."""
    m = re.search(rf"(?m)(?:^|[{{,\s]){re.escape(key)}\s*[:=]\s*(['\"`])([^'\"`]*)\1", text)
    return m.group(2) if m else None


def string_list(text: str, key: str) -> list[str]:
    """The quoted strings of ``key: [...]`` in a JS/TS config (the first one written)."""
    m = re.search(rf"(?m)(?:^|[{{,\s]){re.escape(key)}\s*:\s*\[([^\]]*)\]", text)
    return [q[1] for q in re.findall(r"(['\"`])([^'\"`]*)\1", m.group(1))] if m else []


def object_body(text: str, key: str) -> str | None:
    """The text between the braces of the object literal ``key: { ... }`` (or a constant
    ``key = { ... }``) in a JS/TS config (the first one written), its comments blanked; None
    when there is none."""
    m = re.search(rf"(?m)(?:^|[{{,\s]){re.escape(key)}\s*[:=]\s*\{{", text)
    return braces_from(text, m.end()) if m else None


def braces_from(text: str, start: int) -> str | None:
    """The text from ``start`` (just past an opening brace) to its closing brace, comments
    blanked; None when it is not closed."""
    out: list[str] = []
    depth, i = 1, start
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


def top_level(body: str) -> str:
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


def object_entries(text: str, key: str) -> dict[str, str]:
    """The entries of the object literal ``key: { ... }`` (Docusaurus ``versions``): each
    top-level key, quoted or bare, -> the text of its value; {} when it is not written
    literally."""
    body = object_body(text, key)
    if body is None:
        return {}
    parts: list[str] = []
    depth, start, i = 0, 0, 0
    while i < len(body):
        ch = body[i]
        if ch in "'\"`":
            end = body.find(ch, i + 1)
            i = len(body) if end < 0 else end + 1
            continue
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
        i += 1
    parts.append(body[start:])
    entry = re.compile(r"^\s*(?:(['\"])([^'\"]+)\1|([A-Za-z_$][\w$-]*))\s*:\s*(.*)$", re.S)
    out: dict[str, str] = {}
    for part in parts:
        m = entry.match(part)
        if m:
            out.setdefault(m.group(2) or m.group(3), m.group(4).strip())
    return out


def outer_setting(text: str, key: str) -> str | None:
    """``key: 'value'`` nested least deep in a JS/TS config, the first one written among
    equals: the site's own ``title``, not a navbar's or a locale's. Comments and strings are
    skipped."""
    pattern = re.compile(rf"{re.escape(key)}\s*:\s*(['\"`])([^'\"`]*)\1")
    best: tuple[int, str] | None = None
    depth, i = 0, 0
    while i < len(text):
        ch = text[i]
        if text.startswith(("//", "/*"), i):
            line = text[i + 1] == "/"
            end = text.find("\n" if line else "*/", i + 2)
            i = len(text) if end < 0 else end + (1 if line else 2)
            continue
        if ch in "'\"`":
            end = text.find(ch, i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == key[0] and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_$.")):
            m = pattern.match(text, i)
            if m and (best is None or depth < best[0]):
                best = (depth, m.group(2))
        i += 1
    return best[1] if best else None


def string_pairs(text: str, key: str) -> list[tuple[str, str]]:
    """The ``'a': 'b'`` entries of the object literal ``key: { ... }`` (VitePress
    ``rewrites``), in order; a pair written any other way is not read."""
    body = object_body(text, key)
    pair = r"(['\"`])([^'\"`]+)\1\s*:\s*(['\"`])([^'\"`]+)\3"
    return [(a, b) for _, a, _, b in re.findall(pair, top_level(body))] if body else []


def object_keys(text: str, key: str) -> list[str]:
    """The top-level keys of the object literal ``key: { ... }`` in a JS/TS config (quoted,
    bare, or shorthand ``{ root, zh }``), in order; [] when it is not written literally."""
    body = object_body(text, key)
    if body is None:
        return []
    entry = re.compile(r"^\s*(?:(['\"])([^'\"]+)\1|([A-Za-z_$][\w$-]*))\s*(?::|$)")
    found = (entry.match(part) for part in top_level(body).split(","))
    return [m.group(2) or m.group(3) for m in found if m]


def read_text(reader: TreeReader, path: Path) -> str:
    """A config file's text ("" when it cannot be read or is refused: every setting keeps
    its default)."""
    try:
        return reader.read_text(path) or ""
    except (OSError, UnicodeDecodeError):
        return ""


def config_file(reader: TreeReader, folder: Path, names: tuple[str, ...]) -> Path | None:
    """The first of ``names`` that is a file of ``folder`` (inside the tree)."""
    return next((folder / n for n in names if reader.is_file(folder / n)), None)


def docs_folder(reader: TreeReader, config: Path, setting: str, folder: Path) -> Path:
    """A folder a config names; one outside the tree (and not allowed) is refused with a
    one-line error that says which ``--allow-outside`` reads it."""
    real = reader.real(folder)
    if not reader.allows(real) and real.is_dir():
        raise IngestError(
            f"{config}: {setting} {real} is outside the tree {reader.root}; to read it, "
            f"pass --allow-outside {real}"
        )
    return folder


def other_locales(site: Site, text: str, source: str) -> None:
    """VitePress and Starlight ``locales``: the root locale is the site's own language; every
    other key that is a folder of the docs root is a translation, left out."""
    others = [k for k in object_keys(text, "locales") if k != "root"]
    others = [k for k in others if site.tree().is_dir(site.docs_root / k)]
    if others:
        globs = [f"{k}/**" for k in others]
        site.leave_out("locales: another language", globs, others, source)
        site.notes.append(f"locales {others}: read the root locale only")
