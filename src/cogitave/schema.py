"""Collection schema: named dimensions, derived enum tails, and the closed edge vocabulary.

A dimension is ``semantic`` (text: a BM25 leg and a dense leg) or ``exact`` (values: binary
match).

Semantic dimensions are *fields* of the node's one text by default (a title and a body, a
page's description and its headings): the planner searches them together, as one text unit
(the whole node, :data:`WHOLE`), and never holds a candidate to one field against another. A
semantic dimension declared ``facet = true`` is an independent facet instead (a product's
material and its colour, a trial's population and its intervention): terms route to it, it
gets its own lenses, and the coherence gate requires evidence in every routed facet. Exact
dimensions are always facets.

An exact dimension may carry *derived enum tails*: rules computed at write time that map a
value (``sex: M -> male``) or a numeric range (``age >= 65 -> elderly``) to words. The words are
indexed as searchable text beside the value, so the planner can route ``elderly`` to ``age``.

Schema file (TOML)::

    [dimensions.title]
    type = "semantic"              # a field of the node's text

    [dimensions.material]
    type = "semantic"
    facet = true                   # an independent facet: routed to and gated on

    [dimensions.age]
    type = "exact"
    tails = [
      { gte = 65, words = ["elderly", "senior"] },
      { lt = 18, words = ["child"] },
    ]

    [dimensions.sex]
    type = "exact"
    tails = [{ equals = "M", words = ["male"] }, { equals = "F", words = ["female"] }]

``kind`` is always an exact dimension (every node has one; default ``node``).
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cogitave.errors import EdgeLabelError, SchemaError

EDGE_LABELS: tuple[str, ...] = (
    "partOf",
    "dependsOn",
    "xref",
    "appliesTo",
    "forRole",
    "teachesSkill",
    "supersededBy",
    "implementedBy",
    "derivedFrom",
)
EDGE_LABEL_SET = frozenset(EDGE_LABELS)

DimensionType = Literal["semantic", "exact"]
DIM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
RESERVED_KEYS = frozenset({"uid", "kind", "content", "edges", "meta", "_all"})
WHOLE = "_all"
"""The whole node: the BM25 ``all`` field and the ``_all`` vector (all semantic text)."""
Scalar = str | int | float | bool


def check_edge_label(label: str) -> str:
    """Return ``label`` if it is in the closed vocabulary, else raise naming the allowed ones."""
    if label not in EDGE_LABEL_SET:
        raise EdgeLabelError(
            f"unknown edge label {label!r}; allowed labels are: {', '.join(EDGE_LABELS)}",
            details={"label": label, "allowed": list(EDGE_LABELS)},
        )
    return label


@dataclass(frozen=True)
class TailRule:
    """One derived-enum-tail rule: ``equals`` a value, or a numeric range ``[gte, lt)``."""

    words: tuple[str, ...]
    equals: str | None = None
    gte: float | None = None
    gt: float | None = None
    lte: float | None = None
    lt: float | None = None

    def matches(self, value: Scalar) -> bool:
        """True when the rule applies to ``value`` (string compare is case-insensitive)."""
        if self.equals is not None:
            return str(value).strip().casefold() == self.equals.casefold()
        if isinstance(value, bool):
            return False
        try:
            x = float(value)
        except (TypeError, ValueError):
            return False
        return (
            (self.gte is None or x >= self.gte)
            and (self.gt is None or x > self.gt)
            and (self.lte is None or x <= self.lte)
            and (self.lt is None or x < self.lt)
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"words": list(self.words)}
        for key in ("equals", "gte", "gt", "lte", "lt"):
            if (v := getattr(self, key)) is not None:
                out[key] = v
        return out


@dataclass(frozen=True)
class Dimension:
    """A named field of a node."""

    name: str
    type: DimensionType
    tails: tuple[TailRule, ...] = ()
    facet: bool = False

    @property
    def is_facet(self) -> bool:
        """Routed to and gated on independently (exact dimensions always are)."""
        return self.facet or self.type == "exact"

    def tail_words(self, values: Iterable[Scalar]) -> list[str]:
        """Words the tails derive from ``values`` (write time only)."""
        out: list[str] = []
        for v in values:
            for rule in self.tails:
                if rule.matches(v):
                    out.extend(rule.words)
        return out


@dataclass(frozen=True)
class Schema:
    """Dimensions by name, in declaration order."""

    dimensions: tuple[Dimension, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        names = [d.name for d in self.dimensions]
        if len(set(names)) != len(names):
            raise SchemaError(f"duplicate dimension names in schema: {names}")
        if "kind" not in names:
            object.__setattr__(self, "dimensions", (*self.dimensions, Dimension("kind", "exact")))

    def get(self, name: str) -> Dimension | None:
        for d in self.dimensions:
            if d.name == name:
                return d
        return None

    def __getitem__(self, name: str) -> Dimension:
        d = self.get(name)
        if d is None:
            raise SchemaError(
                f"unknown dimension {name!r}; the schema has: {', '.join(self.names)}"
            )
        return d

    @property
    def names(self) -> list[str]:
        return [d.name for d in self.dimensions]

    @property
    def semantic(self) -> list[str]:
        return [d.name for d in self.dimensions if d.type == "semantic"]

    @property
    def exact(self) -> list[str]:
        return [d.name for d in self.dimensions if d.type == "exact"]

    @property
    def fields(self) -> list[str]:
        """Semantic dimensions that are fields of the node's one text (not facets)."""
        return [d.name for d in self.dimensions if d.type == "semantic" and not d.facet]

    @property
    def facets(self) -> list[str]:
        """Dimensions routed to and gated on on their own: semantic facets, exact ones."""
        return [d.name for d in self.dimensions if d.is_facet]

    def with_dimensions(self, extra: Iterable[Dimension]) -> Schema:
        return Schema((*self.dimensions, *extra))

    def to_dict(self) -> dict[str, Any]:
        # ``facet`` only when set, so that schemas written before facets hash the same
        return {
            "dimensions": {
                d.name: {"type": d.type, "tails": [t.to_dict() for t in d.tails]}
                | ({"facet": True} if d.facet else {})
                for d in self.dimensions
            }
        }

    def hash(self) -> str:
        """Stable SHA-256 of the schema's canonical JSON."""
        blob = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "schema") -> Schema:
        dims_raw = data.get("dimensions")
        if not isinstance(dims_raw, Mapping) or not dims_raw:
            raise SchemaError(f"{source}: needs a [dimensions.<name>] table for each dimension")
        dims: list[Dimension] = []
        for name, spec in dims_raw.items():
            if not DIM_NAME.match(name) or name in RESERVED_KEYS - {"kind"}:
                raise SchemaError(
                    f"{source}: invalid dimension name {name!r} (letters, digits, _; "
                    f"not one of {sorted(RESERVED_KEYS - {'kind'})})"
                )
            if not isinstance(spec, Mapping):
                raise SchemaError(f"{source}: dimension {name!r} must be a table")
            unknown = set(spec) - {"type", "tails", "facet"}
            if unknown:
                raise SchemaError(
                    f"{source}: dimension {name!r} has unknown keys {sorted(unknown)}"
                )
            typ = spec.get("type", "semantic")
            if typ not in ("semantic", "exact"):
                raise SchemaError(
                    f"{source}: dimension {name!r} type must be 'semantic' or 'exact', not {typ!r}"
                )
            tails = tuple(
                _tail_rule(r, f"{source}: dimension {name!r}") for r in spec.get("tails", [])
            )
            if tails and typ != "exact":
                raise SchemaError(f"{source}: dimension {name!r}: tails need type = 'exact'")
            facet = spec.get("facet", False)
            if not isinstance(facet, bool):
                raise SchemaError(f"{source}: dimension {name!r}: facet must be true or false")
            dims.append(Dimension(name, typ, tails, facet=facet and typ == "semantic"))
        return cls(tuple(dims))

    @classmethod
    def load(cls, path: str | Path) -> Schema:
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError as e:
            raise SchemaError(f"schema file not found: {p}") from e
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise SchemaError(f"{p}: not valid TOML: {e}") from e
        return cls.from_dict(data, source=str(p))


def _tail_rule(raw: Any, where: str) -> TailRule:
    if not isinstance(raw, Mapping):
        raise SchemaError(f"{where}: each tail must be a table like {{ gte = 65, words = [...] }}")
    unknown = set(raw) - {"words", "equals", "gte", "gt", "lte", "lt"}
    if unknown:
        raise SchemaError(f"{where}: tail has unknown keys {sorted(unknown)}")
    words = raw.get("words")
    if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
        raise SchemaError(f'{where}: a tail needs words = ["..."]')
    bounds = {k: raw[k] for k in ("gte", "gt", "lte", "lt") if k in raw}
    if ("equals" in raw) == bool(bounds):
        raise SchemaError(f"{where}: a tail needs either equals = ... or a range (gte/gt/lte/lt)")
    for k, v in bounds.items():
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise SchemaError(f"{where}: tail bound {k} must be a number")
    equals = raw.get("equals")
    return TailRule(
        words=tuple(words),
        equals=None if equals is None else str(equals),
        **{k: float(v) for k, v in bounds.items()},
    )
