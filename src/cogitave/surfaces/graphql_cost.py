"""A GraphQL document -> the rows it could fetch, before it runs.

Each field that calls the engine fetches up to its ``limit`` rows per call (``search``,
``related``, ``resolveXref``), or a fixed number (``node`` 1; ``queryGraph`` and
``learningPath`` :data:`FIXED_ROWS`), and runs once per row of the engine field above it:
``search(limit: 100) { results { node { related(limit: 50) { ... } } } }`` costs
100 + 100 + 100 * 50. The cost is the sum of these products over the document, the number
the request's expansion bound is checked against (:class:`~cogitave.surfaces.cost.Budget`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    VariableNode,
)

# field name -> (argument holding its row count, rows when the argument is absent)
LIMITED: Mapping[str, tuple[str | None, int]] = {
    "search": ("limit", 10),
    "related": ("limit", 50),
    "resolveXref": ("limit", 5),
    "fetch": (None, 1),
    "searchMarkdown": ("limit", 10),
    "node": (None, 1),
    "roots": (None, 1),
}
FIXED_ROWS = 100  # queryGraph and learningPath: one call, its own row and byte bounds
MAX_FIELD_ROWS = 1000  # no field returns more; a larger limit is the field's own error
LIMITED = {**LIMITED, "queryGraph": (None, FIXED_ROWS), "learningPath": (None, FIXED_ROWS)}


def _rows(field: FieldNode, variables: Mapping[str, Any]) -> int | None:
    spec = LIMITED.get(field.name.value)
    if spec is None:
        return None
    arg, default = spec
    for a in field.arguments or ():
        if a.name.value != arg:
            continue
        v = a.value
        if isinstance(v, IntValueNode):
            return max(0, min(int(v.value), MAX_FIELD_ROWS))
        if isinstance(v, VariableNode):
            given = variables.get(v.name.value)
            if isinstance(given, int) and not isinstance(given, bool):
                return max(0, min(given, MAX_FIELD_ROWS))
    return default


def estimate_cost(
    doc: DocumentNode,
    variables: Mapping[str, Any],
    operation_name: str | None = None,
    *,
    stop: int = 10**9,
) -> int:
    """Rows the chosen operation of ``doc`` could fetch (counting stops a little past
    ``stop``)."""
    fragments = {d.name.value: d for d in doc.definitions if isinstance(d, FragmentDefinitionNode)}
    ops = [d for d in doc.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is not None:
        ops = [o for o in ops if o.name is not None and o.name.value == operation_name]
    total = 0
    limit = stop * 10

    def walk(sel: SelectionSetNode | None, calls: int, seen: frozenset[str]) -> None:
        nonlocal total
        if sel is None or total > limit:
            return
        for node in sel.selections:
            if isinstance(node, FieldNode):
                rows = _rows(node, variables)
                if rows is None:
                    walk(node.selection_set, calls, seen)
                else:
                    fetched = calls * rows
                    total += fetched
                    walk(node.selection_set, fetched, seen)
            elif isinstance(node, InlineFragmentNode):
                walk(node.selection_set, calls, seen)
            elif isinstance(node, FragmentSpreadNode):
                name = node.name.value
                frag = fragments.get(name)
                if frag is not None and name not in seen:  # cycles are a validation error
                    walk(frag.selection_set, calls, seen | {name})
            if total > limit:
                return

    for op in ops[:1] if operation_name is None and len(ops) == 1 else ops:
        walk(op.selection_set, 1, frozenset())
    return total
