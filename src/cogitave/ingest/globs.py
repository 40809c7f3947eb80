"""A path glob -> a regex over paths relative to a folder.

Used for the files a site's config keeps out (Sphinx ``exclude_patterns``, VitePress
``srcExclude``) and for Hugo's page matchers (``permalinks`` targets, ``{/docs/**}``).
"""

from __future__ import annotations

import re


def glob_regex(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``pattern`` as a regex: ``*`` and ``?`` stay inside one folder, ``**`` crosses folders
    (``**/`` also matches no folder), ``[...]`` is a class, ``{a,b}`` is either (a ``{``
    without its ``}`` is itself)."""
    out, i, depth = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "[" and (end := pattern.find("]", i + 1)) > i:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
            continue
        if c == "{" and "}" in pattern[i + 1 :]:
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append({"*": "[^/]*", "?": "[^/]"}.get(c) or re.escape(c))
        i += 1
    return re.compile("".join(out), flags)
