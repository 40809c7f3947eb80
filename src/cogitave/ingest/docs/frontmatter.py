"""Front matter of Markdown pages (YAML ``---`` or TOML ``+++``) and the mapping of its keys.

:class:`FrontMatterMapping` says which front-matter keys name what. Its TOML form is a table
whose keys are the field names and whose values are a key or a list of keys, e.g.::

    [front_matter]
    products = ["products", "product", "appliesTo"]
    roles = "audience"
    skills = ["skills"]
    paths = ["learning_path"]
    prerequisites = ["prerequisites", "requires"]
    superseded_by = ["supersededBy", "deprecated_by"]

Fields left out keep their defaults; an unknown field is an error (a typo would otherwise
silently map nothing).

:func:`unpublished` reads the keys by which a site generator builds no page of a file (Hugo:
``draft``, ``headless``, future or expired dates, ``build.render``, and the same in an
ancestor's ``cascade``; Docusaurus: ``draft``). Such a file has no URL a reader could open:
it is not indexed, unless its section still lists it (Hugo ``build.list``), and then it is
indexed at its section's page.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml

from cogitave.errors import IngestError

# libyaml's parser when PyYAML was built with it: several times faster on a thousand pages.
_SafeBase: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LenientLoader(_SafeBase):  # type: ignore[misc, valid-type]
    """A SafeLoader that reads unknown tags (``!!python/name:``, ``!ENV``) as plain values.

    MkDocs configs carry such tags; building Python objects from them would be unsafe and we
    only need the plain structure (``nav``, ``docs_dir``, ``plugins``).
    """


def _untagged(loader: yaml.SafeLoader, _suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    return None


# The empty prefix matches every tag that has no exact constructor.
LenientLoader.add_multi_constructor("", _untagged)


def load_yaml(text: str) -> Any:
    """Parse YAML with :class:`LenientLoader` (raises ``yaml.YAMLError`` on bad syntax)."""
    return yaml.load(text, Loader=LenientLoader)  # a SafeLoader subclass: no objects


@dataclass(frozen=True)
class FrontMatter:
    """A page split into front matter and body; ``offset`` = lines before the body."""

    data: Mapping[str, Any]
    body: str
    offset: int
    error: str | None = None


_FENCE = {"---": "yaml", "+++": "toml"}


def split_front_matter(text: str) -> FrontMatter:
    """Split leading ``---`` YAML or ``+++`` TOML front matter; a bad block is reported, kept."""
    first, sep, rest = text.partition("\n")
    opener = first.rstrip()
    fmt = _FENCE.get(opener)
    if fmt is None or not sep:
        return FrontMatter({}, text, 0)
    closers = {"---", "..."} if fmt == "yaml" else {"+++"}
    lines = rest.split("\n")
    end = next((i for i, ln in enumerate(lines) if ln.rstrip() in closers), None)
    if end is None:
        return FrontMatter({}, text, 0, f"unterminated {fmt.upper()} front matter")
    raw = "\n".join(lines[:end])
    body = "\n".join(lines[end + 1 :])
    offset = end + 2
    try:
        data = load_yaml(raw) if fmt == "yaml" else tomllib.loads(raw)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        return FrontMatter({}, body, offset, f"bad YAML front matter{where}: {_first_line(e)}")
    except tomllib.TOMLDecodeError as e:
        return FrontMatter({}, body, offset, f"bad TOML front matter: {_first_line(e)}")
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        return FrontMatter({}, body, offset, "front matter is not a key/value mapping")
    return FrontMatter(data, body, offset)


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def _true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


@dataclass(frozen=True)
class Unbuilt:
    """A page the site generator builds no page of: why, and whether its section still lists
    it (Hugo ``build.list`` not ``never``: the section's page shows it, as Hugo's own glossary
    shows its terms)."""

    reason: str
    listed: bool = False


def _first_date(data: Mapping[str, Any], keys: tuple[str, ...]) -> datetime | None:
    """The first of ``keys`` that holds a date (YAML/TOML date or datetime, or an ISO string),
    as an aware datetime (a date alone, or no zone: UTC)."""
    for key in keys:
        value = data.get(key)
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value.strip())
            except ValueError:
                continue
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=UTC)
        if isinstance(value, date):
            return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return None


def hugo_unrendered(data: Mapping[str, Any]) -> Unbuilt | None:
    """Why Hugo builds no page from this front matter (or a cascade entry), else None.
    Hugo's defaults leave out drafts, pages published in the future (``publishDate``, else
    ``date``) and expired ones (``expiryDate``). ``build.render`` (``_build`` before Hugo
    0.145) ``never``/``false`` writes no file, and ``link`` gives a permalink without one:
    nothing to open at that URL either. Hugo reads front-matter keys in any case."""
    data = {str(k).lower(): v for k, v in data.items()}
    if _true(data.get("draft")):
        return Unbuilt("draft")
    if _true(data.get("headless")):
        return Unbuilt("headless")
    now = datetime.now(UTC)
    published = _first_date(data, ("publishdate", "pubdate", "published", "date"))
    if published is not None and published > now:
        return Unbuilt("publishDate in the future")
    expires = _first_date(data, ("expirydate", "unpublishdate"))
    if expires is not None and expires <= now:
        return Unbuilt("expiryDate passed")
    for key in ("build", "_build"):
        opts = data.get(key)
        if isinstance(opts, Mapping):
            render = str(opts.get("render", "always")).strip().lower()
            if render in ("never", "link", "false"):
                listed = str(opts.get("list", "always")).strip().lower() not in ("never", "false")
                return Unbuilt(f"{key}.render: {render}", listed)
    return None


def hugo_cascade(data: Mapping[str, Any]) -> Unbuilt | None:
    """What a section's ``cascade`` makes of the pages below it when they are not built, else
    None. Entries with a ``_target``/``target`` apply to some pages only and are not followed."""
    raw = data.get("cascade")
    entries = [raw] if isinstance(raw, Mapping) else raw if isinstance(raw, list) else []
    for entry in entries:
        if isinstance(entry, Mapping) and not ({"_target", "target"} & entry.keys()):
            found = hugo_unrendered(entry)
            if found:
                return Unbuilt(f"cascade {found.reason}", found.listed)
    return None


def unpublished(shape: str, data: Mapping[str, Any]) -> Unbuilt | None:
    """Why the site generator of ``shape`` builds no page from this front matter, else None
    (for Hugo, the page's own keys; cascades are the caller's)."""
    if shape == "hugo":
        return hugo_unrendered(data)
    if shape in ("docusaurus", "starlight") and _true(data.get("draft")):
        return Unbuilt("draft")
    return None


def strings(data: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Values of the first present keys as strings, plus complaints about unusable values."""
    out: list[str] = []
    bad: list[str] = []
    for key in keys:
        if key not in data or data[key] is None:
            continue
        raw = data[key]
        items = raw if isinstance(raw, list | tuple) else [raw]
        for item in items:
            if isinstance(item, str):
                if item.strip():
                    out.append(item.strip())
            elif isinstance(item, int | float) and not isinstance(item, bool):
                out.append(str(item))
            else:
                bad.append(
                    f"{key}: expected a string or a list of strings, got {type(item).__name__}"
                )
    return out, bad


@dataclass(frozen=True)
class FrontMatterMapping:
    """Which front-matter keys hold titles, entities and page references (first key wins order)."""

    title: tuple[str, ...] = ("title",)
    description: tuple[str, ...] = ("description", "summary")
    keywords: tuple[str, ...] = ("keywords", "tags")
    aliases: tuple[str, ...] = ("aliases", "redirect_from")
    products: tuple[str, ...] = ("products", "product", "appliesTo")
    roles: tuple[str, ...] = ("roles", "role", "audience")
    skills: tuple[str, ...] = ("skills", "skill")
    paths: tuple[str, ...] = ("paths", "learning_path", "learning_paths")
    prerequisites: tuple[str, ...] = ("prerequisites", "requires")
    superseded_by: tuple[str, ...] = ("supersededBy", "superseded_by", "deprecated_by")

    @classmethod
    def from_dict(
        cls, table: Mapping[str, Any], *, source: str = "front_matter"
    ) -> FrontMatterMapping:
        """Build from a ``{field: key | [keys]}`` table; unknown fields raise IngestError."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(table) - known)
        if unknown:
            raise IngestError(
                f"{source}: unknown front-matter mapping field(s) {unknown}; "
                f"known fields: {', '.join(sorted(known))}"
            )
        values: dict[str, tuple[str, ...]] = {}
        for name, raw in table.items():
            keys = [raw] if isinstance(raw, str) else raw
            if not isinstance(keys, list) or not all(isinstance(k, str) and k for k in keys):
                raise IngestError(f"{source}: {name} must be a key or a list of keys")
            values[name] = tuple(keys)
        return cls(**values)

    @classmethod
    def load(cls, path: str | Path, table: str = "front_matter") -> FrontMatterMapping:
        """Read the mapping from the dotted ``table`` of a TOML file (missing table: defaults)."""
        p = Path(path)
        try:
            data: Any = tomllib.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise IngestError(f"cannot read front-matter mapping {p}: {e}") from e
        for part in (t for t in table.split(".") if t):
            data = data.get(part, {}) if isinstance(data, Mapping) else {}
        if not isinstance(data, Mapping):
            raise IngestError(f"{p}: [{table}] must be a table")
        return cls.from_dict(data, source=f"{p} [{table}]")


_SLUG_DROP = re.compile(r"[^\w\s-]")
_SLUG_JOIN = re.compile(r"[\s_-]+")


def entity_slug(name: str) -> str:
    """Readable, stable slug for an entity name ('Data Engineer' -> 'data-engineer')."""
    slug = _SLUG_JOIN.sub("-", _SLUG_DROP.sub("", name.casefold())).strip("-")
    return slug or "-"
