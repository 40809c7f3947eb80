"""Graph rerank: after fusion, the gate and the boost, bounded graph evidence reorders the top.

Design (all through the one bounded traversal, on the top :data:`WINDOW` candidates only):

1. **supersededBy**: a candidate with a ``supersededBy`` successor (followed up to
   :data:`MAX_CHAIN` hops to the newest version) is demoted (score x :data:`SUPERSEDED_FACTOR`),
   and the successor takes the candidate's original score: inserted if no lens found it (the
   one case where the graph brings in a node), raised if it is already a candidate.
2. **Neighbourhood support**: a candidate linked by ``xref``, ``partOf`` or ``implementedBy``
   (either direction, one hop) to other candidates of the window gains
   ``score x (1 + SUPPORT_MAX * min(links, SUPPORT_CAP) / SUPPORT_CAP)``: at most +15%, so the
   graph can reorder near neighbours in the ranking but never lift an unrelated node past a
   clearly better one, and never inject anything.

Each result's change is reported (``moves``). With no edges it is an exact no-op: nothing runs.

The rerank is bounded by work, never by a clock, so the same request on the same root gets
the same ranking on any machine at any load: both walks share :data:`EXPANSIONS_PER_SEED` edge
expansions per candidate of the window (``max_expansions``; walking stops where the cap is
reached, in the same place every time, and ``truncated`` says so; ``expansions`` is the work
done). The cap is also the time bound: a full cap (30 x 256 expansions, 30 candidates each
linked to 5,000 others) measured ~14 ms on a quiet two-core box. The docs trees of
``shared/data`` never reach it: their busiest nodes have 228 and 300 support links, and the
30 busiest together fewer than 2,000.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cogitave.graph.traverse import traverse
from cogitave.query.ranked import Ranked
from cogitave.store.port import ReadPort

WINDOW = 30
MAX_CHAIN = 4
SUPERSEDED_FACTOR = 0.5
SUPPORT_LABELS = ("xref", "partOf", "implementedBy")
SUPPORT_MAX = 0.15
SUPPORT_CAP = 3
EXPANSIONS_PER_SEED = 256
"""Edge expansions per candidate of the window, both walks together (a supersededBy chain is
at most :data:`MAX_CHAIN` hops; support is one hop; 256 covers a page with its sections and
references; a hub past it is cut deterministically)."""


def graph_rerank(port: ReadPort, ranked: Ranked) -> tuple[Ranked, dict[str, Any]]:
    """Reorder the candidates by bounded graph evidence; see the module docstring."""
    graph = port.graph
    nids, scores = ranked.nids, ranked.scores
    if graph.n_edges == 0 or not len(nids):
        return ranked, {"applied": False, "reason": "no edges"}
    top = min(WINDOW, len(nids))
    cap = EXPANSIONS_PER_SEED * top
    used = 0
    new_scores = scores.astype(np.float64).copy()
    gids = [graph.id_of(port.uid_of(int(n))) for n in nids[:top]]
    seed_pos = {g: i for i, g in enumerate(gids) if g is not None}
    extra: dict[int, float] = {}
    notes: dict[int, list[str]] = {}
    truncated = False
    succ = traverse(
        graph,
        seed_pos,
        labels=("supersededBy",),
        direction="out",
        max_depth=MAX_CHAIN,
        max_expansions=cap,
    )
    truncated |= succ.truncated
    used += succ.expansions
    newest: dict[int, tuple[int, int]] = {}
    for row in succ.rows:
        if row.seed not in newest or row.depth > newest[row.seed][1]:
            newest[row.seed] = (row.node, row.depth)
    for seed, (s_gid, _) in newest.items():
        i = seed_pos[seed]
        s_nid = port.id_of(graph.uid(s_gid))
        if s_nid is None:
            continue
        base = float(scores[i])
        new_scores[i] = base * SUPERSEDED_FACTOR
        notes.setdefault(int(nids[i]), []).append(f"superseded by {graph.uid(s_gid)}")
        pos = np.flatnonzero(nids == s_nid)
        if len(pos):
            new_scores[pos[0]] = max(new_scores[pos[0]], base)
        else:
            extra[s_nid] = max(extra.get(s_nid, 0.0), base)
        notes.setdefault(s_nid, []).append(f"successor of {graph.uid(gids[i])}")

    near = traverse(
        graph,
        seed_pos,
        labels=SUPPORT_LABELS,
        direction="both",
        max_depth=1,
        node_filter=seed_pos.__contains__,  # rows only for links between candidates
        max_expansions=cap - used,
    )
    truncated |= near.truncated
    used += near.expansions
    links: dict[int, set[int]] = {}
    for row in near.rows:
        if row.node != row.seed:
            links.setdefault(row.seed, set()).add(row.node)
    for seed, linked in links.items():
        i = seed_pos[seed]
        bonus = SUPPORT_MAX * min(len(linked), SUPPORT_CAP) / SUPPORT_CAP
        new_scores[i] *= 1.0 + bonus
        notes.setdefault(int(nids[i]), []).append(
            f"linked to {len(linked)} other candidate(s): +{bonus:.0%}"
        )

    all_nids = np.concatenate([nids, np.asarray(list(extra), np.uint64)])
    all_scores = np.concatenate([new_scores, np.asarray(list(extra.values()), np.float64)])
    order = np.argsort(-all_scores, kind="stable")
    before = {int(n): i + 1 for i, n in enumerate(nids)}
    out_nids = all_nids[order]
    moves = []
    for rank, n in enumerate(out_nids.tolist(), 1):
        if n in notes:
            moves.append(
                {
                    "uid": port.uid_of(n),
                    "from": before.get(n),
                    "to": rank,
                    "why": "; ".join(notes[n]),
                }
            )
    info = {
        "applied": True,
        "window": top,
        "moves": moves,
        "injected": len(extra),
        "truncated": truncated,
        "expansions": used,
        "max_expansions": cap,
    }
    return Ranked(out_nids, all_scores[order]), info
