"""A GraphQL document -> the rows it could fetch, before it runs.

Each field that calls the engine fetches up to its ``limit`` rows per call (``search``,
``related``, ``resolveXref``), or a fixed number (``node`` 1; ``queryGraph`` and
``learningPath`` :data:`FIXED_ROWS`), and runs once per row of the engine field above it:
``search(limit: 100) { results { node { related(limit: 50) { ... } } } }`` costs
100 + 100 + 100 * 50. The cost is the sum of these products over the document, the number
the request's expansion bound is checked against (:class:`~cogitave.surfaces.cost.Budget`).
A limit given as a variable counts what the request gave for it, else the variable's default
in the operation (``query($n: Int = 1000)``), else the field's own default.

:func:`shape_error` bounds what validating a document costs, before it is validated: the
number of fields it holds and how often one response name repeats in one selection set
(graphql-core's check that fields of one name can merge compares them pairwise).
"""

from __future__ import annotations

from collections import Counter
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
    ValueNode,
    VariableNode,
    value_from_ast_untyped,
)

from cogitave.errors import TooCostlyError

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


def _defaults(op: OperationDefinitionNode) -> dict[str, Any]:
    """The operation's variable defaults (``$n: Int = 1000``)."""
    out: dict[str, Any] = {}
    for d in op.variable_definitions or ():
        value: ValueNode | None = d.default_value
        if value is not None:
            try:
                out[d.variable.name.value] = value_from_ast_untyped(value)
            except (ValueError, TypeError):  # a malformed default is validation's to refuse
                continue
    return out


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

    given = {k: v for k, v in variables.items() if v is not None}

    def walk(
        sel: SelectionSetNode | None, calls: int, seen: frozenset[str], values: Mapping[str, Any]
    ) -> None:
        nonlocal total
        if sel is None or total > limit:
            return
        for node in sel.selections:
            if isinstance(node, FieldNode):
                rows = _rows(node, values)
                if rows is None:
                    walk(node.selection_set, calls, seen, values)
                else:
                    fetched = calls * rows
                    total += fetched
                    walk(node.selection_set, fetched, seen, values)
            elif isinstance(node, InlineFragmentNode):
                walk(node.selection_set, calls, seen, values)
            elif isinstance(node, FragmentSpreadNode):
                name = node.name.value
                frag = fragments.get(name)
                if frag is not None and name not in seen:  # cycles are a validation error
                    walk(frag.selection_set, calls, seen | {name}, values)
            if total > limit:
                return

    for op in ops[:1] if operation_name is None and len(ops) == 1 else ops:
        walk(op.selection_set, 1, frozenset(), {**_defaults(op), **given})
    return total


MAX_FIELDS = 300
"""Fields a document may hold (every field node of its operations and fragments)."""
MAX_REPEATS = 8
"""How often one response name may occur in one selection set, through its inline fragments
and the fragments it spreads: merging checks compare them pairwise."""


def shape_error(doc: DocumentNode) -> TooCostlyError | None:
    """Why ``doc`` is too costly to validate (see the module doc), or None."""
    fragments = {d.name.value: d for d in doc.definitions if isinstance(d, FragmentDefinitionNode)}
    sets: list[SelectionSetNode] = []
    fields = 0
    for d in doc.definitions:
        if isinstance(d, OperationDefinitionNode | FragmentDefinitionNode):
            sets.append(d.selection_set)
    # every selection set of the document, and its field count
    stack = list(sets)
    all_sets: list[SelectionSetNode] = []
    while stack:
        sel = stack.pop()
        all_sets.append(sel)
        for node in sel.selections:
            if isinstance(node, FieldNode):
                fields += 1
                if fields > MAX_FIELDS:
                    return TooCostlyError(
                        "fields",
                        MAX_FIELDS,
                        f"this document has more than {MAX_FIELDS} fields; the bound is "
                        f"{MAX_FIELDS}",
                    )
            child = getattr(node, "selection_set", None)
            if child is not None:
                stack.append(child)
    names_of_fragment: dict[str, Counter[str]] = {}

    def names(sel: SelectionSetNode, seen: frozenset[str]) -> Counter[str]:
        out: Counter[str] = Counter()
        spread: set[str] = set()
        for node in sel.selections:
            if isinstance(node, FieldNode):
                out[(node.alias or node.name).value] += 1
            elif isinstance(node, InlineFragmentNode):
                out.update(names(node.selection_set, seen))
            elif isinstance(node, FragmentSpreadNode):
                spread.add(node.name.value)
        for name in spread:  # a fragment spread twice in one set is merged once
            frag = fragments.get(name)
            if frag is None or name in seen:
                continue
            if name not in names_of_fragment:
                names_of_fragment[name] = names(frag.selection_set, seen | {name})
            out.update(names_of_fragment[name])
        return out

    for sel in all_sets:
        for name, n in names(sel, frozenset()).items():
            if n > MAX_REPEATS:
                return TooCostlyError(
                    "fields",
                    MAX_REPEATS,
                    f"field {name!r} occurs {n} times in one selection; the bound is "
                    f"{MAX_REPEATS} (give each an alias, or ask once)",
                )
    return None
