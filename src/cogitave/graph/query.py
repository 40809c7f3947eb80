"""query_graph: the bounded, read-only openCypher profile over a graph segment.

text + params -> guard (:mod:`~cogitave.graph.cypher_guard`) -> syntax tree
(:mod:`~cogitave.graph.cypher_ast`) -> checked plan (:mod:`~cogitave.graph.cypher_plan`) ->
rows (:mod:`~cogitave.graph.cypher_exec`) -> JSON-ready rows (:func:`materialise`, here, with
the entry point). Every violation raises
:class:`~cogitave.errors.QueryGraphError` with a code and a message a model can act on, and
nothing else escapes :func:`query_graph`.

Where each bound is enforced:

===============  ============================================================================
bound            enforced by
===============  ============================================================================
read-only        the grammar (``cypher.lark`` has no write, CALL, UNWIND or schema
                 production); before parsing, :func:`guard` scans the text with comments
                 removed and string literals blanked, NFKC-normalised, for write/procedure
                 keywords to name the offending one (``read_only``)
ASCII            :func:`guard`: any non-ASCII character outside a string literal is
                 ``syntax`` (look-alike letters cannot smuggle a keyword past the scan)
size             :func:`guard`: ``MAX_QUERY_CHARS`` characters, ``MAX_NESTING`` brackets;
                 :func:`cypher_ast.parse`: parse-tree depth; :func:`plan`: clause, pattern
                 and hop counts (all ``syntax``)
labels           :func:`plan`: every relationship type (each ``|`` alternative) is in the
                 closed vocabulary (``label``)
depth            :func:`plan`: ``*a..d`` with ``d <= 4`` (``depth``); ``*``, ``*a..`` and
                 ``*..`` are ``unbounded``; :func:`traverse` re-checks at run time
rows             :func:`plan`: LIMIT defaults to 100 and is capped at ``MAX_LIMIT`` (1000);
                 the executor fetches one row more to set ``truncated``
total hops       :func:`plan`: the variable-length relationships of the whole query reach
                 at most ``MAX_DEPTH`` (4) hops together (``depth``)
bytes            :func:`materialise`: the JSON size of the rows, parameter values counted
                 each time they are written out, at most ``MAX_RESULT_BYTES`` (``limit``)
time             one monotonic deadline per query (``timeout_ms``, default 250, never above
                 ``MAX_TIMEOUT_MS``), checked in the traversal, the matcher's loops, the
                 projection and the materialisation of the rows
parameters       :func:`plan`: bound by name, only in value positions (grammar); values are
                 JSON scalars or lists of scalars; a missing one is ``param``
===============  ============================================================================
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cogitave.errors import QueryGraphError
from cogitave.graph.cypher_ast import parse, parser
from cogitave.graph.cypher_exec import Executor, NodeProps, Plan, json_size, to_json
from cogitave.graph.cypher_guard import MAX_NESTING, MAX_QUERY_CHARS, WRITE_KEYWORDS, guard, scan
from cogitave.graph.cypher_plan import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_PARAM_CHARS,
    MAX_PARAM_LIST,
    MAX_SKIP,
    check_params,
    plan,
)
from cogitave.graph.pause import collector_paused
from cogitave.graph.traverse import MAX_ROWS
from cogitave.store.graph import GraphSegment

DEFAULT_TIMEOUT_MS = 250
MAX_TIMEOUT_MS = 1000
MAX_RESULT_BYTES = 1_000_000

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_TIMEOUT_MS",
    "MAX_LIMIT",
    "MAX_NESTING",
    "MAX_PARAM_CHARS",
    "MAX_PARAM_LIST",
    "MAX_QUERY_CHARS",
    "MAX_RESULT_BYTES",
    "MAX_SKIP",
    "MAX_TIMEOUT_MS",
    "WRITE_KEYWORDS",
    "GraphQueryResult",
    "check_params",
    "guard",
    "materialise",
    "plan",
    "query_graph",
    "scan",
]


@dataclass(frozen=True)
class GraphQueryResult:
    """The answer of one query: columns, rows (lists in column order), and how it went."""

    columns: tuple[str, ...]
    rows: list[list[Any]]
    truncated: bool
    elapsed_ms: float
    stats: dict[str, Any] = field(default_factory=dict)

    def records(self) -> list[dict[str, Any]]:
        """Rows as ``{column: value}`` dicts."""
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "rows": self.rows,
            "truncated": self.truncated,
            "elapsed_ms": self.elapsed_ms,
            "stats": self.stats,
        }


# -- entry point ------------------------------------------------------------------------------
def query_graph(
    graph: GraphSegment,
    text: str,
    params: Mapping[str, Any] | None = None,
    *,
    limit_default: int = DEFAULT_LIMIT,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
    node_props: NodeProps | None = None,
) -> GraphQueryResult:
    """Run one bounded read-only query. ``node_props(id)`` adds node properties beyond
    ``uid``, ``kind`` and ``title`` (e.g. exact dimension values)."""
    parser()  # built once per process (~50 ms); not charged to the first query's budget
    t0 = time.monotonic()
    try:
        budget_ms = float(timeout_ms)
    except (TypeError, ValueError):
        budget_ms = DEFAULT_TIMEOUT_MS
    if not math.isfinite(budget_ms) or budget_ms <= 0:
        budget_ms = DEFAULT_TIMEOUT_MS
    budget_ms = min(budget_ms, MAX_TIMEOUT_MS)
    deadline = t0 + budget_ms / 1000.0
    if isinstance(limit_default, bool) or not isinstance(limit_default, int):
        limit_default = DEFAULT_LIMIT
    limit_default = max(0, min(limit_default, MAX_LIMIT))
    ex: Executor | None = None
    with collector_paused():
        try:
            query = parse(guard(text))
            bound = check_params(params)
            the_plan, requested = plan(query, bound, limit_default=limit_default)
            ex = Executor(graph, the_plan, deadline=deadline, node_props=node_props)
            page, truncated = ex.run()
            rows = materialise(graph, page, ex)
        except QueryGraphError as e:
            if e.code != "timeout":
                raise
            raise _timeout(budget_ms, t0, ex) from None
        except RecursionError:
            raise QueryGraphError("syntax", "query nests too deeply; simplify it") from None
        except Exception as e:  # nothing but QueryGraphError may leave query_graph
            raise QueryGraphError(
                "syntax", f"internal error: the query could not be evaluated ({type(e).__name__})"
            ) from e
    stats: dict[str, Any] = {
        "timeout_ms": budget_ms,
        "limit": the_plan.limit,
        "skip": the_plan.skip,
        "traversals": ex.traversals,
        "expansions": ex.expansions,
        "steps": ex.ticks,
    }
    warnings = _warnings(graph, the_plan, requested, ex)
    if warnings:
        stats["warnings"] = warnings
    return GraphQueryResult(
        columns=tuple(i.column for i in the_plan.items),
        rows=rows,
        truncated=truncated,
        elapsed_ms=round((time.monotonic() - t0) * 1000, 3),
        stats=stats,
    )


def materialise(graph: GraphSegment, page: list[list[Any]], ex: Executor) -> list[list[Any]]:
    """Rows -> JSON-ready rows, inside the query's budget: each row ticks the deadline and
    counts its JSON size (parameter strings and lists as often as they are written out)
    against ``MAX_RESULT_BYTES``."""
    out: list[list[Any]] = []
    size = 0
    for vals in page:
        ex.tick()
        size += json_size(vals, MAX_RESULT_BYTES - size) + 1
        if size > MAX_RESULT_BYTES:
            raise QueryGraphError(
                "limit",
                f"the result would be larger than {MAX_RESULT_BYTES} bytes (response bytes "
                "bound); return fewer or smaller columns, or lower LIMIT",
                details={"bound": "response_bytes", "max": MAX_RESULT_BYTES},
            )
        out.append([to_json(graph, v) for v in vals])
    return out


def _timeout(budget_ms: float, t0: float, ex: Executor | None) -> QueryGraphError:
    elapsed = (time.monotonic() - t0) * 1000
    return QueryGraphError(
        "timeout",
        f"query ran past its {budget_ms:g} ms budget ({elapsed:.0f} ms) and was aborted; "
        "anchor the pattern on a uid or a kind, name relationship types, lower the hop range, "
        "or avoid comma patterns that multiply (cross products)",
        details={
            "timeout_ms": budget_ms,
            "elapsed_ms": round(elapsed, 1),
            "traversals": ex.traversals if ex else 0,
            "steps": ex.ticks if ex else 0,
        },
    )


def _warnings(g: GraphSegment, p: Plan, requested: int, ex: Executor) -> list[str]:
    out: list[str] = []
    if requested > MAX_LIMIT:
        out.append(f"LIMIT {requested} was capped at {MAX_LIMIT}")
    if ex.capped:
        out.append(
            f"{ex.capped} expansions hit the {MAX_ROWS}-row traversal cap; results may be "
            "incomplete (anchor the pattern more narrowly)"
        )
    kinds = set(g.kind_names)
    for c in p.clauses:
        for path in c.paths:
            for n in path.nodes:
                for k in n.kinds:
                    if k not in kinds:
                        msg = f"no node has kind {k!r}; kinds in this graph: " + ", ".join(
                            sorted(kinds)[:20]
                        )
                        if msg not in out:
                            out.append(msg)
    return out
