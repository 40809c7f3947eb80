"""Library names: the key a library is stored and matched by, and the forgiving match of a
name a person or an agent types against the names a collection holds.

A key is the name lower-cased with every run of other characters than letters and digits made
one ``-`` (an npm scope's ``@`` and ``/`` too): ``FastAPI`` -> ``fastapi``,
``@tanstack/react-query`` -> ``tanstack-react-query``. :func:`resolve` scores every held name
against a query: the same key, the same letters without separators ("fast api" / "FastAPI"),
one name's words inside the other's ("tanstack-query" / "@tanstack/react-query"), then
similar spelling; best first.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cogitave.errors import InputError

_SEP = re.compile(r"[^a-z0-9]+")
MAX_NAME = 200
MAX_VERSION = 100
MIN_SCORE = 0.5
"""Below this a held name is not offered as a match (only as one of the closest names)."""


def library_key(name: str) -> str:
    """The key of a library name (see the module doc); never empty."""
    key = _SEP.sub("-", name.strip().casefold()).strip("-")
    if not key or len(name) > MAX_NAME:
        raise InputError(f"not a library name: {name!r}")
    return key


def check_version(version: str) -> str:
    """A library version label, stripped: at most :data:`MAX_VERSION` characters, no spaces,
    control characters, ``:``, ``/``, ``\\``, ``#`` or ``@`` (a version is part of uids and of
    a folder name)."""
    v = version.strip()
    if (
        not v
        or len(v) > MAX_VERSION
        or any(c in v for c in ":/#@\\ ")
        or not all(c.isprintable() for c in v)
    ):
        shown = repr(v[:MAX_VERSION]) + ("…" if len(v) > MAX_VERSION else "")
        raise InputError(f"not a version: {shown} (no spaces, ':', '/', '#' or '@')")
    return v


def split_ref(ref: str) -> tuple[str, str | None]:
    """``name@version`` -> (name, version); ``name`` -> (name, None). A scoped npm name keeps
    its leading ``@`` (``@tanstack/react-query@5.0.0``)."""
    ref = ref.strip()
    at = ref.rfind("@")
    if at > 0:
        name, version = ref[:at].strip(), ref[at + 1 :].strip()
        if not name or not version:
            raise InputError(f"not a library reference: {ref!r} (write NAME or NAME@VERSION)")
        return name, version
    if not ref:
        raise InputError("a library name is empty")
    return ref, None


@dataclass(frozen=True)
class NameMatch:
    """A held library name and how well it matches what was asked (1.0: the same key)."""

    name: str
    score: float
    why: str


def resolve(query: str, held: Sequence[str], limit: int = 5) -> list[NameMatch]:
    """Held names scored against ``query``, best first (every one, scores below
    :data:`MIN_SCORE` included: the caller decides what counts as found)."""
    q = library_key(query)
    q_letters = q.replace("-", "")
    q_words = set(q.split("-"))
    out: list[NameMatch] = []
    for name in held:
        k = library_key(name)
        words = set(k.split("-"))
        if k == q:
            m = NameMatch(name, 1.0, "same name")
        elif k.replace("-", "") == q_letters:
            m = NameMatch(name, 0.95, "same name without separators")
        elif q_words <= words or words <= q_words:
            share = len(q_words & words) / len(q_words | words)
            m = NameMatch(name, 0.6 + 0.3 * share, "its words are in the name")
        else:
            ratio = difflib.SequenceMatcher(None, q_letters, k.replace("-", "")).ratio()
            m = NameMatch(name, round(0.8 * ratio, 4), "similar spelling")
        out.append(m)
    out.sort(key=lambda m: (-m.score, m.name))
    return out[:limit]
