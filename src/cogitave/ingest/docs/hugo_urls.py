"""Hugo's URL settings -> the URL Hugo builds for a page: ``permalinks`` and ``uglyURLs``.

Input: the site's configuration (``hugo.toml``/``yaml``/``json`` or ``config.*``, at the site
root or in ``config/_default/``, where ``permalinks.*`` and ``uglyURLs.*`` may also be files
of their own) and, per page, its path under the content folder and its front matter.

- ``permalinks``, map form: a top-level section -> a URL pattern, for its regular pages
  (``[permalinks] posts = "/:year/:slug/"``), or keyed by kind (``[permalinks.page]``,
  ``[permalinks.section]``). Array form (``[[permalinks]]``): the first entry whose
  ``target.path`` glob matches the page's path (``{/articles/**}``), an entry without a
  target matching every page. An entry with other page matchers (sites, kinds) cannot be
  decided from the files alone: it is skipped and named in the site's notes.
- Tokens: ``:year :month :monthname :day :weekday :weekdayname :yearday`` from the front
  matter ``date``; Go layout parts (``:2006 :06 :01 :1 :02 :2 :January :Jan :Monday :Mon``);
  ``:section :sections`` (with Hugo's slices ``[1:]``, ``[:last]``, ``[last]``, ``[1:2]``),
  ``:sectionslug :sectionslugs``, ``:title :slug :contentbasename :slugorcontentbasename``
  and the older ``:filename :slugorfilename``.
- ``uglyURLs`` (true, or per top-level section): ``/posts/a.html`` instead of ``/posts/a/``,
  a section's own page ``/posts.html``; the home page stays ``/``.

The front matter ``url`` overrides both, as in Hugo (:func:`page_url`).
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

import yaml

from cogitave.errors import IngestError
from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.frontmatter import load_yaml
from cogitave.ingest.docs.paths import INDEX_STEMS, humanize, normalize_url
from cogitave.ingest.globs import GlobError, Matcher, compile_glob

Kind = Literal["page", "section"]
_CONFIG_NAMES = ("hugo", "config")
_EXTS = ("toml", "yaml", "yml", "json")
_TOKEN = re.compile(r":([A-Za-z]+|\d+)(\[[^\]]*\])?")
_SLUG_DROP = re.compile(r"[^\w\-./~]+")
_GO_LAYOUT = {
    "2006": "%Y",
    "06": "%y",
    "01": "%m",
    "1": "{month}",
    "02": "%d",
    "2": "{day}",
    "January": "%B",
    "Jan": "%b",
    "Monday": "%A",
    "Mon": "%a",
}


def _parse(file: Path, reader: TreeReader) -> Any:
    text = reader.read_text(file)
    if text is None:
        raise ValueError(f"{file}: refused")  # listed by the reader; passed over
    if file.suffix == ".toml":
        return tomllib.loads(text)
    if file.suffix == ".json":
        return json.loads(text)
    return load_yaml(text)


def hugo_config(base: Path, reader: TreeReader | None = None) -> dict[str, Any]:
    """The site's configuration with top-level keys lower-cased (Hugo's keys ignore case):
    the first ``hugo.*``/``config.*`` found at ``base`` or in ``config/_default/``, plus
    ``config/_default/<key>.*`` files for ``permalinks`` and ``uglyurls``. A file that
    cannot be read or parsed is passed over, as if absent. ``reader``: the tree's (by default
    one confined to ``base``)."""
    reader = reader or TreeReader(base)
    out: dict[str, Any] = {}
    default = base / "config" / "_default"
    files = (f / f"{n}.{e}" for f in (base, default) for n in _CONFIG_NAMES for e in _EXTS)
    for file in files:
        if not reader.is_file(file):
            continue
        try:
            data = _parse(file, reader)
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
            continue
        if isinstance(data, Mapping):
            out = {str(k).lower(): v for k, v in data.items()}
            break
    if reader.is_dir(default):
        for file in reader.listdir(default):
            key = file.stem.lower()
            if key in ("permalinks", "uglyurls") and file.suffix.lstrip(".") in _EXTS:
                try:
                    out.setdefault(key, _parse(file, reader))
                except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
                    continue
    return out


@dataclass(frozen=True)
class HugoUrls:
    """What a Hugo config says about URLs (see the module docstring)."""

    ugly: bool = False
    ugly_sections: Mapping[str, bool] = field(default_factory=dict)
    page: Mapping[str, str] = field(default_factory=dict)  # section -> pattern
    section: Mapping[str, str] = field(default_factory=dict)
    rules: tuple[tuple[Matcher | None, str], ...] = ()  # array form, in order
    notes: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, config: Mapping[str, Any], where: str = "the Hugo config") -> HugoUrls:
        """The URL settings of a config (``where`` names it for an error)."""
        ugly_cfg = config.get("uglyurls", False)
        ugly = ugly_cfg is True
        ugly_sections = (
            {str(k).lower(): v is True for k, v in ugly_cfg.items()}
            if isinstance(ugly_cfg, Mapping)
            else {}
        )
        perm = config.get("permalinks") or {}
        page: dict[str, str] = {}
        section: dict[str, str] = {}
        rules: list[tuple[Matcher | None, str]] = []
        notes: list[str] = []
        if isinstance(perm, Mapping):
            for key, value in perm.items():
                if isinstance(value, str):  # the older form: pages of a section
                    page[str(key).lower()] = value
                elif isinstance(value, Mapping) and str(key).lower() in ("page", "section"):
                    into = page if str(key).lower() == "page" else section
                    into.update({str(k).lower(): v for k, v in value.items() if isinstance(v, str)})
        elif isinstance(perm, Sequence):
            for entry in perm:
                if not isinstance(entry, Mapping) or not isinstance(entry.get("pattern"), str):
                    continue
                target = entry.get("target")
                if target is None:
                    rules.append((None, entry["pattern"]))
                elif (
                    isinstance(target, Mapping)
                    and set(target) == {"path"}
                    and isinstance(target["path"], str)
                ):
                    rules.append((_path_glob(target["path"], where), entry["pattern"]))
                else:
                    notes.append(
                        f"permalinks entry {entry['pattern']!r}: its target matches more "
                        "than paths (sites, kinds); not applied"
                    )
        return cls(ugly, ugly_sections, page, section, tuple(rules), tuple(notes))

    def is_ugly(self, top_section: str) -> bool:
        return self.ugly_sections.get(top_section.lower(), self.ugly)

    def pattern(self, logical_path: str, top_section: str, kind: Kind) -> str | None:
        """The permalink pattern for a page (``logical_path``: ``/posts/a``), if any."""
        for glob, pattern in self.rules:
            if glob is None or glob.fullmatch(logical_path):
                return pattern
        table = self.page if kind == "page" else self.section
        return table.get(top_section.lower())


def _path_glob(pattern: str, where: str) -> Matcher:
    try:
        return compile_glob(pattern, ignore_case=True)
    except GlobError as e:
        raise IngestError(
            f"{where}: permalinks: cannot read the pattern {pattern!r}: {e}"
        ) from None


def urlize(text: str) -> str:
    """Hugo's path form of a title: lower-cased, spaces to ``-``, punctuation dropped."""
    return _SLUG_DROP.sub("", re.sub(r"\s+", "-", text.strip().lower())).strip("-")


def _date(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, str) and value.strip():
        try:
            return datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            pass
    return datetime(1, 1, 1)  # Hugo's zero date: a page without one


def _slice(items: list[str], spec: str | None) -> list[str]:
    """Hugo's section slices: ``[1:]``, ``[:last]``, ``[last]``, ``[1:2]`` (both ends in)."""
    if not spec:
        return items
    inner = spec[1:-1].strip()
    n = len(items)

    def index(s: str, default: int) -> int:
        s = s.strip()
        if not s:
            return default
        return n - 1 if s == "last" else int(s) if s.isdigit() else default

    if ":" not in inner:
        i = index(inner, 0)
        return items[i : i + 1]
    lo, hi = inner.split(":", 1)
    start = index(lo, 0)
    if hi.strip() == "last":
        return items[start : n - 1]
    return items[start : index(hi, n - 1) + 1] if hi.strip() else items[start:]


def expand(
    pattern: str,
    *,
    sections: list[str],
    front: Mapping[str, Any],
    basename: str,
    title: str,
    section_titles: Mapping[str, str] | None = None,
) -> str:
    """``pattern`` with its tokens filled in for one page (see the module docstring)."""
    when = _date(front.get("date"))
    slug_fm = front.get("slug")
    slug_fm = slug_fm.strip() if isinstance(slug_fm, str) and slug_fm.strip() else ""
    fm_title = front.get("title")
    title = fm_title.strip() if isinstance(fm_title, str) and fm_title.strip() else title
    titles = section_titles or {}

    def value(m: re.Match[str]) -> str:
        name, spec = m.group(1), m.group(2)
        if name in _GO_LAYOUT:
            fmt = _GO_LAYOUT[name]
            return fmt.format(month=when.month, day=when.day) if "{" in fmt else when.strftime(fmt)
        simple = {
            "year": f"{when.year:04d}",
            "month": f"{when.month:02d}",
            "monthname": when.strftime("%B"),
            "day": f"{when.day:02d}",
            "weekday": str((when.weekday() + 1) % 7),
            "weekdayname": when.strftime("%A"),
            "yearday": str(when.timetuple().tm_yday),
            "section": sections[0] if sections else "",
            "sectionslug": urlize(titles.get(sections[0], sections[0])) if sections else "",
            "title": urlize(title),
            "slug": urlize(slug_fm or title),
            "contentbasename": basename,
            "filename": basename,
            "slugorcontentbasename": urlize(slug_fm) if slug_fm else basename,
            "slugorfilename": urlize(slug_fm) if slug_fm else basename,
        }
        if name in ("sections", "sectionslugs"):
            chosen = _slice(sections, spec)
            if name == "sectionslugs":
                chosen = [urlize(titles.get(s, s)) for s in chosen]
            return "/".join(chosen)
        return simple.get(name, m.group(0))

    return _TOKEN.sub(value, pattern)


def page_url(
    stem: str,
    front: Mapping[str, Any],
    urls: HugoUrls | None = None,
    section_titles: Mapping[str, str] | None = None,
) -> str:
    """A Hugo page's URL (``stem``: its path under the content folder, no suffix): the front
    matter ``url``, else its path with the front matter ``slug`` in place of a page's last
    segment, or the site's ``permalinks``; ``uglyURLs``."""
    url = front.get("url")
    if isinstance(url, str) and url.strip():
        return normalize_url(url if url.startswith("/") else "/" + url)
    urls = urls or HugoUrls()
    parts = stem.split("/")
    kind: Kind = "section" if parts[-1] == "_index" else "page"
    if parts[-1] in INDEX_STEMS:  # `_index.md` (a section), `index.md` (a leaf bundle)
        parts = parts[:-1]
    if not parts:
        return "/"
    sections = parts if kind == "section" else parts[:-1]
    top = sections[0] if sections else ""
    slug = front.get("slug")
    pattern = urls.pattern("/" + "/".join(parts).lower(), top, kind)
    if pattern is not None:
        path = expand(
            pattern,
            sections=sections,
            front=front,
            basename=parts[-1],
            title=humanize(stem),
            section_titles=section_titles,
        )
    else:
        if kind == "page" and isinstance(slug, str) and slug.strip():
            parts[-1] = slug.strip()
        path = "/".join(parts)
    # Hugo lower-cases paths and turns spaces into '-' unless configured otherwise.
    path = "/" + path.lower().replace(" ", "-").strip("/")
    if path != "/" and urls.is_ugly(top):
        return posixpath.normpath(path) + ".html"
    return normalize_url(path)
