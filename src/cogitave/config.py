"""Typed, frozen settings of a collection, stored in every root and loadable from TOML.

Every tunable constant of the planner lives here under a name, with its default and the reason
for it; nothing reads a string-keyed dict. A settings file looks like::

    lexicon = "default"            # real-word gate: default | wordfreq[:zipf] | conceptnet:PATH
                                   # | system[:PATH] | none

    [routing]
    df_guard = 0.6667              # df above this share of a dimension's points: no signal
    fallback_min_sim = 0.30        # embedding fallback routes only above this top-1 cosine

    [coherence]
    dense_top_share = 0.15         # "sits in the dimension's dense top-15%"

    [boost]
    residual_factor = 4.0          # rrf * (1 + factor * sim_norm)
    min_known_terms = 2            # a dropped real-word phrase has at least this many terms

    [rerank]
    enabled = true

    [feedback]
    enabled = false                # the planner's feedback lens, opt-in (see query/feedback.py)
    top = 5                        # fused candidates whose stored vectors form the centroid
    weight = 0.3                   # feedback query = normalise(query + weight * centroid)

    [fusion]
    score_weight = 0.5             # planned: a lens's hit also adds weight * scaled score/(k+1)

    [anchor]                       # the planner's whole-query BM25 lens
    function_word_weight = 0.25    # a function word ("what", "of", "must") scores this share
    phrase_weight = 0.5            # "one-to-many", "a quoted phrase": adjacent words add this

    [smoothing]                    # the BM25 anchor's scores borrow from like hits
    enabled = true                 # (query/smooth.py)
    neighbours = 5                 # nearest candidates (cosine of stored vectors) per hit
    weight = 0.35                  # score + weight * mean of the neighbours' scores
    candidates = 200               # the first hits compared with one another

    [docs]                         # page-aware ranking of documentation (query/pages.py)
    group_by_page = false          # one hit per page for every search (docs_search always)
    hidden_kinds = ["nav_group", "source_file"]   # kinds that compete only when asked for
    exclude = ["drafts/*"]         # globs on path, URL path or uid: never returned
    demote = ["blog/*"]            # globs: score * demote_factor
    demote_release_notes = true    # release notes, changelogs, blog posts (path or title)
    demote_factor = 0.5

    [libraries]                    # a project's packages -> the libraries held (--project)
    aliases = {"react-dom" = "react"}   # by normalised name, else through this table
    sources = {"mylib" = "git+https://git.example.com/mylib@v{version}#docs"}  # index --project
    pypi_url = ""                  # "" = https://pypi.org/pypi ($COGITAVE_PYPI_URL wins)
    npm_url = ""                   # "" = https://registry.npmjs.org ($COGITAVE_NPM_URL wins)
    registries = ["https://docs.example.internal/packs/"]   # registries of packs, in order

A retired setting (:data:`RETIRED`) in a root written by an older version is dropped when the
root is read: the root opens and ranks as before. Given now, in a settings file or by
``--set``, it is an error that says why it went and what to do.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from cogitave.errors import SchemaError

RETIRED: dict[tuple[str, str], str] = {
    ("routing", "learned_enabled"): (
        "there is no learned router: terms route by IDF (query/route.py), "
        "and nothing ever read this switch"
    ),
}
"""(section, key) -> why the setting was removed. Stored roots may still hold these keys."""


def _retired(section: str, key: str, source: str) -> SchemaError:
    why = RETIRED[(section, key)]
    return SchemaError(
        f"{source}: [{section}] {key} was removed ({why}); delete it from your settings"
    )


@dataclass(frozen=True)
class Routing:
    df_guard: float = 2.0 / 3.0
    fallback_min_sim: float = 0.30


@dataclass(frozen=True)
class Coherence:
    dense_top_share: float = 0.15


@dataclass(frozen=True)
class Boost:
    residual_factor: float = 4.0
    min_known_terms: int = 2


@dataclass(frozen=True)
class Rerank:
    enabled: bool = True


@dataclass(frozen=True)
class Feedback:
    enabled: bool = False
    top: int = 5
    weight: float = 0.3


@dataclass(frozen=True)
class Anchor:
    """The planner's whole-query BM25 lens. A function word of the query (the closed class of
    :data:`~cogitave.expand.lexicon.FUNCTION_WORDS`: "what", "of", "must", "how") scores
    ``function_word_weight`` times its BM25 when the query has a content word too; a query of
    function words alone keeps full weights. Its df says how rare the word is in the corpus,
    not whether a document is about it: "what" is rare in scientific abstracts, so a
    question's "what", "must" and "when" pulled the few abstracts that hold them to the top.

    0.25 is the best mean of planned over every judged set (nDCG@10; nDCG@5 over pages on the
    docs questions) among 1 (no down-weighting) / 0.5 / 0.25 / 0 (the words left out):
    0.6604 / 0.6647 / 0.6651 / 0.6634, with a plateau from 0.15 (0.6648) to 0.3 (0.6645).
    At 0.25 against 1: SciFact 0.7324 / 0.7312, Cranfield 0.4292 / 0.4241, CISI 0.4333 /
    0.4232, CACM 0.5564 / 0.5362, MED 0.8089 / 0.8093, ADI 0.5200 / 0.5143, FastAPI docs
    0.8176 / 0.8189, Hugo docs 0.6718 / 0.6789, this project's docs 0.8927 / 0.9005, the
    Debian facet set 0.7432 / 0.7295, its fields-only control 0.7104 / 0.6982. Leaving them
    out cost the docs questions most (Hugo 0.6683: "why", "where" and "before" carry
    meaning in a short question)."""

    function_word_weight: float = 0.25
    phrase_weight: float = 0.5
    """A compound of the query (``one-to-many``, ``async/await``) or a quoted phrase of two
    words or more is also matched as a whole: the words adjacent and in order (tantivy's
    phrase query over the positions every text field indexes) add ``phrase_weight`` times
    the phrase's BM25, so a page that says one-to-many outranks one that says many-to-many
    and "one" apart. 0: off."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.function_word_weight <= 1.0:
            raise SchemaError("[anchor] function_word_weight must be between 0 and 1")
        if not 0.0 <= self.phrase_weight <= 10.0:
            raise SchemaError("[anchor] phrase_weight must be between 0 and 10")


@dataclass(frozen=True)
class Smoothing:
    """Neighbour smoothing of the planner's BM25 anchor (:mod:`cogitave.query.smooth`): each
    of the first ``candidates`` hits adds ``weight`` times the mean score of its
    ``neighbours`` nearest hits (cosine of stored whole-node vectors)."""

    enabled: bool = True
    neighbours: int = 5
    weight: float = 0.35
    candidates: int = 200

    def __post_init__(self) -> None:
        if not 1 <= self.neighbours <= 50:
            raise SchemaError("[smoothing] neighbours must be between 1 and 50")
        if not 0.0 <= self.weight <= 10.0:
            raise SchemaError("[smoothing] weight must be between 0 and 10")
        if not 2 <= self.candidates <= 1000:
            raise SchemaError("[smoothing] candidates must be between 2 and 1000")


@dataclass(frozen=True)
class Fusion:
    """Score evidence in the planner's fusion (:func:`cogitave.query.fuse.rrf`): besides its
    RRF term, each lens adds ``score_weight * scaled(score) / (k + 1)`` for every hit, so a
    lens's clear winner keeps its margin. 0 is plain RRF.

    0.5 is the best mean over every collection measured (planned nDCG@10, or nDCG@5 on the
    docs question sets, at 0 / 0.5 / 1): SciFact 0.7121 / 0.7290 / 0.7308, Cranfield
    0.4185 / 0.4179 / 0.4182, FastAPI docs 0.823 / 0.809 / 0.805, Hugo docs 0.665 / 0.664 /
    0.660, this project's docs 0.890 / 0.899 / 0.895, the Debian facet set 0.736 / 0.733 /
    0.732 and its fields-only control 0.701 / 0.702 / 0.701; mean 0.7065 / 0.7077 / 0.7061.
    Without it planned is below hybrid on SciFact (0.7121 against 0.7125)."""

    score_weight: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 <= self.score_weight <= 10.0:
            raise SchemaError("[fusion] score_weight must be between 0 and 10")


@dataclass(frozen=True)
class Docs:
    group_by_page: bool = False
    hidden_kinds: tuple[str, ...] = ("nav_group", "source_file")
    exclude: tuple[str, ...] = ()
    demote: tuple[str, ...] = ()
    demote_release_notes: bool = True
    # Half the fused score: a release note still answers when nothing else does, but a page
    # that matches about as well comes first.
    demote_factor: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 <= self.demote_factor <= 1.0:
            raise SchemaError("[docs] demote_factor must be between 0 and 1")


@dataclass(frozen=True)
class Libraries:
    """How a project's packages map to the libraries a collection holds: by normalised name,
    and through ``aliases`` (package name -> library name) for the rest
    (``aliases = {"react-dom" = "react", "pydantic-core" = "pydantic"}``). ``registries``:
    the registries of packs (folders or URLs, :mod:`cogitave.libraries.registry`) a library
    version is imported from, in order, when none is named."""

    aliases: Mapping[str, str] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    """Package name -> where its docs come from, over every other step of ``index
    --project`` (a path, a site URL, ``git+URL[@REF][#SUBDIR]``; ``{version}`` is replaced by
    the version the project uses)."""
    pypi_url: str = ""
    """PyPI's JSON API base URL ("": https://pypi.org/pypi; ``$COGITAVE_PYPI_URL`` wins)."""
    npm_url: str = ""
    """The npm registry's base URL ("": https://registry.npmjs.org; ``$COGITAVE_NPM_URL``)."""
    registries: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("aliases", "sources"):
            value = getattr(self, name)
            if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) and k and v and len(v) <= 2000
                for k, v in value.items()
            ):
                what = "library names" if name == "aliases" else "docs sources"
                raise SchemaError(f"[libraries] {name} must map package names to {what}")
            object.__setattr__(self, name, dict(value))
        for name in ("pypi_url", "npm_url"):
            value = getattr(self, name)
            if not isinstance(value, str) or not (
                value == "" or (value.startswith(("http://", "https://")) and len(value) <= 2000)
            ):
                raise SchemaError(f"[libraries] {name} must be an http(s) URL")
        regs = self.registries
        if (
            not isinstance(regs, list | tuple)
            or len(regs) > 32
            or not all(isinstance(r, str) and 0 < len(r.strip()) <= 2048 for r in regs)
        ):
            raise SchemaError("[libraries] registries must be a list of at most 32 folders or URLs")
        object.__setattr__(self, "registries", tuple(r.strip() for r in regs))


@dataclass(frozen=True)
class Settings:
    lexicon: str = "default"
    routing: Routing = field(default_factory=Routing)
    coherence: Coherence = field(default_factory=Coherence)
    boost: Boost = field(default_factory=Boost)
    rerank: Rerank = field(default_factory=Rerank)
    feedback: Feedback = field(default_factory=Feedback)
    fusion: Fusion = field(default_factory=Fusion)
    anchor: Anchor = field(default_factory=Anchor)
    smoothing: Smoothing = field(default_factory=Smoothing)
    docs: Docs = field(default_factory=Docs)
    libraries: Libraries = field(default_factory=Libraries)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def with_sets(self, sets: Sequence[str], *, source: str = "--set") -> Settings:
        """These settings with each ``section.key=value`` applied (the value read as a TOML
        value, else as a string: ``feedback.enabled=false``, ``docs.demote=["blog/*"]``);
        a malformed item, an unknown key or a wrong type is a :class:`SchemaError` naming it."""
        data = {k: dict(v) if isinstance(v, dict) else v for k, v in self.to_dict().items()}
        for item in sets:
            key, sep, raw = item.partition("=")
            key = key.strip()
            if not sep or not key:
                raise SchemaError(f"{source} {item!r}: expected section.key=value")
            try:
                value = tomllib.loads(f"v = {raw.strip()}")["v"]
            except tomllib.TOMLDecodeError:
                value = raw.strip()
            section, dot, name = key.partition(".")
            if (section, name) in RETIRED:
                raise _retired(section, name, f"{source} {item!r}")
            if not dot:
                data[section] = value
            elif not isinstance(data.get(section), dict):
                raise SchemaError(f"{source} {item!r}: no settings section {section!r}")
            else:
                data[section][name] = value
        return Settings.from_dict(data, source=source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, source: str = "settings") -> Settings:
        """Build from a mapping; unknown keys and wrong types are errors naming the key. A
        retired key (:data:`RETIRED`, from a root an older version wrote) is dropped."""
        data = {
            k: {n: x for n, x in v.items() if (k, n) not in RETIRED}
            if isinstance(v, Mapping)
            else v
            for k, v in (data or {}).items()
        }
        kw: dict[str, Any] = {}
        sections = {
            "routing": Routing,
            "coherence": Coherence,
            "boost": Boost,
            "rerank": Rerank,
            "feedback": Feedback,
            "fusion": Fusion,
            "anchor": Anchor,
            "smoothing": Smoothing,
            "docs": Docs,
            "libraries": Libraries,
        }
        for key, value in data.items():
            if key == "lexicon":
                if not isinstance(value, str):
                    raise SchemaError(f"{source}: lexicon must be a string")
                kw[key] = value
            elif key in sections:
                kw[key] = _section(sections[key], value, f"{source}: [{key}]")
            else:
                raise SchemaError(f"{source}: unknown setting {key!r}")
        return cls(**kw)

    @classmethod
    def load(cls, path: str | Path) -> Settings:
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
            for section, key in RETIRED:
                if isinstance(data.get(section), Mapping) and key in data[section]:
                    raise _retired(section, key, str(p))
            return cls.from_dict(data, source=str(p))
        except FileNotFoundError as e:
            raise SchemaError(f"settings file not found: {p}") from e
        except tomllib.TOMLDecodeError as e:
            raise SchemaError(f"{p}: not valid TOML: {e}") from e


def _section(cls: type, value: Any, where: str) -> Any:
    if not isinstance(value, Mapping):
        raise SchemaError(f"{where} must be a table")
    types = {f.name: f.type for f in fields(cls)}
    kw: dict[str, Any] = {}
    for k, v in value.items():
        if k not in types:
            raise SchemaError(f"{where}: unknown key {k!r}; known: {', '.join(types)}")
        if str(types[k]) == "Mapping[str, str]":
            if not isinstance(v, Mapping):
                raise SchemaError(f"{where}: {k} must be a table of names")
            kw[k] = dict(v)
            continue
        if str(types[k]) == "tuple[str, ...]":
            if not isinstance(v, list | tuple) or not all(isinstance(x, str) for x in v):
                raise SchemaError(f"{where}: {k} must be a list of strings")
            kw[k] = tuple(v)
            continue
        want = {"bool": bool, "float": (int, float), "int": int, "str": str}[str(types[k])]
        if isinstance(v, bool) != (want is bool) or not isinstance(v, want):
            raise SchemaError(f"{where}: {k} must be {types[k]}")
        kw[k] = v
    return cls(**kw)
