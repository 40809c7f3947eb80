"""TypeScript declarations (``.d.ts``) -> the API entries they export, with their JSDoc, and
an installed npm package -> a Markdown docs folder (its README and one API page).

Not a TypeScript parser: a bounded line scanner that follows brace depth (strings, template
literals and comments skipped), reads a ``/** ... */`` comment and the declaration after it,
and keeps what is exported: functions, classes, interfaces, types, enums, constants and
namespaces at the top level or inside ``declare module``/``namespace`` blocks, plus the
members of exported classes and interfaces. Everything is capped (:data:`MAX_FILE_BYTES`,
:data:`MAX_FILES`, :data:`MAX_ENTRIES`, :data:`MAX_LINE`, :data:`MAX_DOC`), so a hostile
file costs linear time and bounded memory, never an exception.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 2 * 1024 * 1024
"""A declaration file larger than this is read up to this size."""
MAX_TOTAL_BYTES = 16 * 1024 * 1024
MAX_FILES = 400
MAX_ENTRIES = 5000
MAX_LINE = 2000
"""A longer line is cut (a minified declaration)."""
MAX_DOC = 8000
MAX_SIGNATURE = 600
MAX_SIGNATURE_LINES = 30
MAX_DEPTH = 64
"""Folders below the package read for declarations."""
MAX_README_BYTES = 2 * 1024 * 1024

_DECL = re.compile(
    r"^(export\s+)?(declare\s+)?(default\s+)?(abstract\s+)?(async\s+)?"
    r"(function\*?|class|interface|type|const|let|var|enum|namespace|module)\s+"
    r"([A-Za-z_$][\w$]*)"
)
_MEMBER = re.compile(
    r"^(?:(?:public|protected|static|readonly|abstract|async|get|set|declare)\s+)*"
    r"([A-Za-z_$][\w$]*)\??\s*[(:<]"
)
_BLOCK = re.compile(r"^(export\s+)?(declare\s+)?(module|namespace|global)\b")
_KINDS = {"function*": "function", "let": "const", "var": "const", "module": "namespace"}


@dataclass(frozen=True)
class DtsEntry:
    """One exported declaration (or a member of one: ``Client.get``)."""

    name: str
    kind: str  # function, class, interface, type, const, enum, namespace, member
    signature: str
    doc: str
    file: str


def read_declarations(
    text: str, file: str = "index.d.ts", limit: int = MAX_ENTRIES
) -> list[DtsEntry]:
    """The exported entries of one declaration file's text (see the module doc)."""
    out: list[DtsEntry] = []
    lines = text[:MAX_FILE_BYTES].splitlines()
    depth = 0
    in_comment = False
    doc: str | None = None
    blocks: list[int] = []  # depths of open declare module / namespace blocks (transparent)
    owner: tuple[str, int] | None = None  # the exported class/interface whose body we are in
    ambient = "export" not in text[:MAX_FILE_BYTES]
    i = 0
    while i < len(lines) and len(out) < limit:
        raw = lines[i][:MAX_LINE]
        line = raw.strip()
        i += 1
        if in_comment:
            in_comment = "*/" not in line
            continue
        if line.startswith("/**"):
            body = [line]
            while "*/" not in body[-1] and i < len(lines) and len(body) < 400:
                body.append(lines[i][:MAX_LINE].strip())
                i += 1
            doc = _jsdoc(body)
            continue
        if line.startswith("/*"):
            in_comment = "*/" not in line
            continue
        if not line or line.startswith(("//", "@")):
            continue
        top = depth == 0 or (blocks and depth == blocks[-1] + 1)
        m = _DECL.match(line) if top else None
        if m and (m.group(1) or ambient or blocks):
            kind = _KINDS.get(m.group(6), m.group(6))
            sig, _ = _signature(lines, i - 1)
            if kind != "namespace":
                out.append(DtsEntry(m.group(7), kind, sig, doc or "", file))
            elif "{" in _code(line):
                blocks.append(depth)
            if kind in ("class", "interface") and "{" in _code(line):
                owner = (m.group(7), depth)
        elif top and _BLOCK.match(line) and "{" in _code(line):
            blocks.append(depth)
        elif owner is not None and depth == owner[1] + 1:
            mm = _MEMBER.match(line)
            if mm and not line.startswith(("private ", "#")):
                sig, _ = _signature(lines, i - 1)
                out.append(DtsEntry(f"{owner[0]}.{mm.group(1)}", "member", sig, doc or "", file))
        doc = None
        code = _code(raw)
        depth = max(0, min(depth + code.count("{") - code.count("}"), 10_000))
        if owner is not None and depth <= owner[1]:
            owner = None
        while blocks and depth <= blocks[-1]:
            blocks.pop()
    return out


def _code(line: str) -> str:
    """A line without its strings, template literals and comments (for brace counting)."""
    out: list[str] = []
    quote = ""
    j = 0
    n = len(line)
    while j < n:
        c = line[j]
        if quote:
            if c == "\\":
                j += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'`":
            quote = c
        elif c == "/" and j + 1 < n and line[j + 1] in "/*":
            if line[j + 1] == "/":
                break
            end = line.find("*/", j + 2)
            if end < 0:
                break
            j = end + 2
            continue
        else:
            out.append(c)
        j += 1
    return "".join(out)


def _signature(lines: list[str], start: int) -> tuple[str, int]:
    """The declaration starting at ``lines[start]``: up to its body's ``{`` or its ``;``,
    parentheses balanced, at most :data:`MAX_SIGNATURE_LINES` lines."""
    parts: list[str] = []
    parens = 0
    for k in range(start, min(len(lines), start + MAX_SIGNATURE_LINES)):
        code = _code(lines[k][:MAX_LINE]).strip()
        parens += code.count("(") - code.count(")")
        if parens <= 0 and "{" in code and not code.startswith("{"):
            head = code.split("{", 1)[0].rstrip()
            if not re.search(r"[:=]\s*$", head):  # a type literal: keep its brace line
                parts.append(head)
                break
        parts.append(code)
        if parens <= 0 and (code.endswith((";", "}")) or code.endswith(",")):
            break
    sig = " ".join(p for p in parts if p)
    sig = re.sub(r"\s+", " ", sig).rstrip(";").strip()
    if len(sig) > MAX_SIGNATURE:
        sig = sig[:MAX_SIGNATURE] + " …"
    return sig, len(parts)


def _jsdoc(body: list[str]) -> str:
    """A ``/** ... */`` comment's text: the markers dropped, ``@param`` and the other tags
    as list items."""
    text: list[str] = []
    for line in body:
        s = line.strip().removeprefix("/**").removesuffix("*/").strip()
        s = s.removeprefix("*").strip() if s.startswith("*") else s
        if s.startswith("@"):
            tag, _, rest = s[1:].partition(" ")
            s = f"- **@{tag}** {rest.strip()}".rstrip()
        text.append(s)
    doc = "\n".join(text).strip()
    return doc[:MAX_DOC]


# -- an installed npm package -----------------------------------------------------------------
def declaration_files(package: Path) -> list[Path]:
    """The package's ``.d.ts`` files: its ``types``/``typings`` entry first, then the rest
    below it (nested ``node_modules`` skipped), at most :data:`MAX_FILES`."""
    first: list[Path] = []
    try:
        text = _read_bounded(package / "package.json", 1 << 20)
        meta = json.loads(text) if text else {}
    except (ValueError, RecursionError):
        meta = {}
    entry = meta.get("types") or meta.get("typings") if isinstance(meta, dict) else None
    if isinstance(entry, str) and entry.endswith(".d.ts") and ".." not in entry.split("/"):
        first.append(package / entry)
    found: list[Path] = []
    root = os.path.realpath(package)
    for folder, dirs, files in os.walk(package, followlinks=False):
        rel = os.path.relpath(folder, package)
        dirs[:] = sorted(d for d in dirs if d != "node_modules" and not d.startswith("."))
        if rel.count(os.sep) >= MAX_DEPTH:
            dirs[:] = []
        for f in sorted(files):
            if f.endswith(".d.ts"):
                found.append(Path(folder) / f)
        if len(found) >= MAX_FILES:
            break
    out: list[Path] = []
    for p in [*first, *found]:
        real = os.path.realpath(p)
        if p not in out and real.startswith(root + os.sep) and os.path.isfile(real):
            out.append(p)
    return out[:MAX_FILES]


def npm_docs(package: Path, name: str, version: str, dest: Path) -> int:
    """Write the Markdown docs of the npm package installed at ``package`` into ``dest``:
    its README (``README.md``) and one page of its declarations (``api.md``). Returns the
    API entries written."""
    dest.mkdir(parents=True, exist_ok=True)
    readme = next(
        (package / n for n in ("README.md", "readme.md", "Readme.md", "README.markdown")
         if (package / n).is_file() and not (package / n).is_symlink()),
        None,
    )  # fmt: skip
    if readme is not None:
        text = _read_bounded(readme, MAX_README_BYTES)
        (dest / "README.md").write_text(text or f"# {name}\n", encoding="utf-8")
    entries: list[DtsEntry] = []
    total = 0
    for f in declaration_files(package):
        if total >= MAX_TOTAL_BYTES or len(entries) >= MAX_ENTRIES:
            break
        text = _read_bounded(f, MAX_FILE_BYTES)
        total += len(text)
        rel = os.path.relpath(f, package).replace(os.sep, "/")
        entries.extend(read_declarations(text, rel, MAX_ENTRIES - len(entries)))
    if entries:
        (dest / "api.md").write_text(api_markdown(name, version, entries), encoding="utf-8")
    elif readme is None:
        (dest / "README.md").write_text(f"# {name}\n\nVersion {version}.\n", encoding="utf-8")
    return len(entries)


def api_markdown(name: str, version: str, entries: list[DtsEntry]) -> str:
    """One Markdown page: a section per exported entry, its members below it."""
    out = [f"# {name} API reference\n", f"The declarations of {name} {version}.\n"]
    seen: set[str] = set()
    for e in entries:
        key = f"{e.file}:{e.name}"
        if key in seen:
            continue
        seen.add(key)
        level = "###" if e.kind == "member" else "##"
        out.append(f"{level} {e.name}\n")
        out.append(f"*{e.kind}* in `{e.file}`\n")
        fence = "````" if "```" in e.signature else "```"
        out.append(f"{fence}ts\n{e.signature}\n{fence}\n")
        if e.doc:
            out.append(e.doc + "\n")
    return "\n".join(out)


def _read_bounded(path: Path, limit: int) -> str:
    """At most ``limit`` bytes of a regular file, as text ("" for anything else: a FIFO or a
    device is opened without blocking and refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""
    finally:
        os.close(fd)
