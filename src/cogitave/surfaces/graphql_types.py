"""GraphQL object types made from the domain types the service operations return.

:func:`object_type` reads a frozen dataclass (a :class:`~cogitave.query.types.Hit`, a
:class:`~cogitave.graph.related.RelatedResult`, ...) and declares a Strawberry type with the
same fields: ``str``/``int``/``float``/``bool`` as themselves, ``X | None`` as nullable, a
tuple or list of dataclasses or scalars as a list of them, a nested dataclass as its own type
(made once), anything else (mappings, rows of mixed values) as the ``JSON`` scalar. Field
names are the dataclass's (Strawberry shows them in camelCase). Resolvers return the domain
objects themselves; extra fields (``Hit.node``, ``Node.related``) are resolvers added by name.
So a field added to a domain type appears in the schema, and none can be declared twice.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import strawberry
from strawberry.scalars import JSON

from cogitave.graph.query import GraphQueryResult
from cogitave.graph.tools import LearningPath, RelatedResult, XrefResult
from cogitave.query.types import SearchResponse

_SCALARS = (str, int, float, bool)
_MADE: dict[type, Any] = {}


def object_type(
    domain: type,
    name: str | None = None,
    *,
    exclude: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
    description: str | None = None,
) -> Any:
    """The Strawberry type of ``domain`` (a dataclass): its fields, less ``exclude``, plus
    the ``extra`` resolvers (``strawberry.field`` objects)."""
    hints = typing.get_type_hints(domain)
    annotations = {
        f.name: _field_type(hints[f.name])
        for f in dataclasses.fields(domain)
        if f.name not in exclude
    }
    ns: dict[str, Any] = {"__annotations__": annotations, "__module__": __name__}
    ns.update(extra or {})
    made = strawberry.type(
        type(name or domain.__name__, (), ns), description=description or _doc(domain)
    )
    if not exclude:  # the type other types' fields of this domain type refer to
        _MADE.setdefault(domain, made)
    return made


def _doc(domain: type) -> str | None:
    """The first paragraph of the domain type's docstring (not dataclass's generated one)."""
    doc = (domain.__doc__ or "").strip()
    if not doc or doc.startswith(domain.__name__ + "("):
        return None
    return " ".join(doc.split("\n\n")[0].split())


def _field_type(hint: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in _SCALARS:
        return hint
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _field_type(inner[0]) | None
        return JSON | None
    if origin in (tuple, list) or (origin is not None and origin is Sequence):
        item = args[0] if args else Any
        if item in _SCALARS or dataclasses.is_dataclass(item):
            return list[_field_type(item)]  # type: ignore[index]
        if typing.get_origin(item) in (tuple, list) and typing.get_args(item)[0] in _SCALARS:
            return list[list[typing.get_args(item)[0]]]  # type: ignore[index]
        return JSON
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _MADE.get(hint) or object_type(hint)
    return JSON


def rows_of(answer: Any) -> int:
    """How many rows an operation's answer holds (what a nested field multiplies)."""
    if isinstance(answer, SearchResponse):
        return len(answer.results)
    if isinstance(answer, RelatedResult):
        return len(answer.items)
    if isinstance(answer, GraphQueryResult):
        return len(answer.rows)
    if isinstance(answer, XrefResult):
        return len(answer.candidates)
    if isinstance(answer, LearningPath):
        return len(answer.steps)
    for key in ("results", "roots"):
        value = getattr(answer, key, None)
        if isinstance(value, tuple | list):
            return len(value)
    return 1
