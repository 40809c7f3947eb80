"""Hits and pages -> Markdown for agents and people, cut to a token budget at block boundaries.

A budget is counted in estimated tokens: ``ceil(characters / 4)`` (:func:`estimate_tokens`).
The rule is the usual one for English under the BPE tokenizers MCP clients run (OpenAI's
cl100k/o200k average about four characters per token on prose), it is deterministic, costs
nothing and does not depend on which model reads the answer. The MiniLM WordPiece tokenizer the
engine loads would tie budgets to the embedding model and splits code and URLs differently
from the clients' tokenizers, so it is not used here.

Blocks are paragraphs, headings, lists and fenced code blocks: an answer is cut between blocks,
never inside a fence, and says how much it left out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from cogitave.expand import analysis
from cogitave.expand.lexicon import FUNCTION_WORDS
from cogitave.nodes import Node
from cogitave.query.types import Hit
from cogitave.service.clean import absolute_fragments, clean_block, demote, is_table

CHARS_PER_TOKEN = 4
MIN_TOKENS = 100
MAX_TOKENS = 10_000
DEFAULT_TOKENS = 2_000
DEFAULT_FETCH_TOKENS = 5_000
CRUMB = " › "
# Dimensions that are not prose: never rendered as the text of a node without content.
NOT_TEXT = frozenset({"title", "code", "language", "kind"})

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_FRONT_MATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n", re.S)


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: ``ceil(len(text) / 4)``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def blocks(markdown: str) -> list[str]:
    """Markdown -> blocks split at blank lines; a fenced code block is always one block (an
    unterminated fence is closed)."""
    out: list[str] = []
    cur: list[str] = []
    fence: str | None = None

    def flush() -> None:
        if cur:
            text = "\n".join(cur).strip("\n")
            if text.strip():
                out.append(text)
            cur.clear()

    for line in markdown.splitlines():
        m = _FENCE.match(line)
        if fence is None:
            if m:
                flush()
                fence = m.group(1)
                cur.append(line)
            elif not line.strip():
                flush()
            else:
                cur.append(line)
        else:
            cur.append(line)
            closes = m is not None and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
            if closes and m and not line.strip()[len(m.group(1)) :].strip():
                fence = None
                flush()
    if fence is not None:
        cur.append(fence)
    flush()
    return out


def fence(code: str, language: str | None) -> str:
    """``code`` in a backtick fence longer than any backtick run inside it."""
    longest = max((len(r) for r in re.findall(r"`+", code)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language or ''}\n{code.rstrip()}\n{ticks}"


def node_blocks(node: Node) -> list[str]:
    """A node's text as Markdown blocks: its content (front matter removed), a code sample's
    code fenced with its language, else its text dimensions."""
    code = node.dims.get("code")
    if node.kind == "code_sample" and isinstance(code, str):
        lang = node.dims.get("language")
        return [fence(code, lang if isinstance(lang, str) else None)]
    if node.content:
        raw = blocks(_FRONT_MATTER.sub("", node.content, count=1))
        out = [c for b in raw if (c := clean_block(b))]
    else:
        out = [
            v.strip()
            for k, v in node.dims.items()
            if k not in NOT_TEXT and isinstance(v, str) and v.strip()
        ]
    title = node.dims.get("title")
    if (
        out
        and isinstance(title, str)
        and re.fullmatch(r"#{1,6}\s+" + re.escape(title.strip()), out[0])
    ):
        out = out[1:]  # the heading the answer already gives
    return out


def crumbs(breadcrumb: Sequence[str], title: str, uid: str) -> str:
    """``Page › Section``: the breadcrumb, or the title alone when the source gave none."""
    parts = [str(x) for x in breadcrumb if str(x).strip()] or [title or uid]
    return CRUMB.join(parts)


def hit_blocks(hit: Hit, node: Node, label: str = "") -> list[str]:
    """One hit: a heading with its breadcrumb (and its library version's ``label``), where it
    lives, then its text, whose headings sit below the hit's and whose links that are only
    ``#fragment`` point at the hit's page."""
    head = "## " + crumbs(hit.breadcrumb, hit.title, hit.uid) + (f" ({label})" if label else "")
    where = hit.url or hit.path or hit.uid
    return [f"{head}\n{where}", *_shown_blocks(node, hit.url)]


def _shown_blocks(node: Node, url: str) -> list[str]:
    """A node's blocks as a hit shows them: headings below the hit's, fragment links made
    absolute with ``url`` (the hit's, else the node's own)."""
    own = node.meta.get("url") if isinstance(node.meta.get("url"), str) else ""
    return [absolute_fragments(demote(b, 3), url or own) for b in node_blocks(node)]


@dataclass(frozen=True)
class Cut:
    """Blocks that fit a budget, and what was left out."""

    kept: list[str]
    tokens: int
    omitted: int


def fit(items: Sequence[str], budget: int, *, at_least_one: bool = False) -> Cut:
    """The longest prefix of ``items`` whose joined text stays within ``budget`` tokens."""
    kept: list[str] = []
    used = 0
    for b in items:
        t = estimate_tokens(b) + 1  # the blank line between blocks
        if used + t > budget and not (at_least_one and not kept):
            break
        kept.append(b)
        used += t
    return Cut(kept, used, len(items) - len(kept))


NOTE_TOKENS = 40  # room kept for the closing note


@dataclass(frozen=True)
class AnswerBudget:
    """How a Markdown answer was cut: hits given and shown, blocks left out, its tokens."""

    hits: int
    shown: int
    omitted_blocks: int
    tokens: int
    max_tokens: int
    truncated: bool


SHARED_BY = 5
"""A search answer's budget is shared as if this many hits were shown: a 2,000-token answer
shows about five hits, each cut to the blocks that answer the query."""
LEAD_RATIO = 1.5
"""Hit 1 may take up to :data:`LEAD_SHARE` of the budget when its score is at least this many
times hit 2's: it is clearly the answer, and the others are far behind."""
LEAD_SHARE = 0.4
MORE_TOKENS = 15  # room for a hit's "more:" line
GROUP_READ = 3
"""How many of a grouped hit's other matches (``Hit.group``, best first) its answer may draw
on."""


def search_markdown(
    query: str,
    entries: Sequence[tuple[Hit, Node]],
    max_tokens: int,
    labels: Mapping[str, str] | None = None,
    group_nodes: Callable[[Hit], Sequence[Node]] | None = None,
) -> tuple[str, AnswerBudget]:
    """Hits as one Markdown answer within ``max_tokens``, the budget shared by the hits.

    Each hit gets a share (the budget over :data:`SHARED_BY` hits, or what is left over the
    hits still to show; hit 1 up to :data:`LEAD_SHARE` of it when it clearly leads); within
    its share it shows its heading and URL, then the blocks that hold the query's words (code
    that names them first among equals), in their order in the section, cut at a block
    boundary, and a ``more: docs_fetch <url>`` line when blocks were left out. A share a hit
    does not use goes to the next ones. ``labels``: library version -> how a heading names
    it. ``group_nodes``: a grouped hit -> the nodes of the first :data:`GROUP_READ` uids of its
    ``group`` (its page's other matches), whose blocks the hit may show too
    (:func:`_from_group`). Returns the text and a summary of the cut."""
    budget = max_tokens - NOTE_TOKENS
    words = [w for w in analysis.surface(query) if w not in FUNCTION_WORDS]
    terms = {analysis.stem(w) for w in words} or set(analysis.stems(query))
    labels = labels or {}
    parts: list[str] = []
    used = shown = omitted_blocks = 0
    n = len(entries)
    lead = n > 1 and entries[0][0].score >= LEAD_RATIO * max(entries[1][0].score, 1e-12)
    for i, (hit, node) in enumerate(entries):
        left = budget - used
        head, *body = hit_blocks(hit, node, labels.get(hit.library, ""))
        head_t = estimate_tokens(head) + 1
        if left < head_t + MORE_TOKENS:
            omitted_blocks += sum(len(node_blocks(nd)) for _, nd in entries[i:])
            break
        rest = [1.0 / (r + 1) for r in range(shown, min(n, SHARED_BY))] or [1.0]
        share = left * rest[0] / sum(rest)
        if i == 0:
            share = max(share, LEAD_SHARE * budget) if lead else share
        room = int(share) - head_t - MORE_TOKENS
        hard = left - head_t - MORE_TOKENS
        members = group_nodes(hit)[:GROUP_READ] if group_nodes and hit.group else ()
        chosen, dropped = _from_group(node, body, members, hit.url, terms, room, hard)
        block = [head, *chosen]
        if dropped:
            block.append(f"more: docs_fetch {hit.url or hit.path or hit.uid}")
        parts.extend(block)
        used += sum(estimate_tokens(b) + 1 for b in block)
        shown += 1
        omitted_blocks += dropped
    if not entries:
        parts.append(f"No results for “{query}”.")
    left_hits = n - shown
    truncated = bool(left_hits or omitted_blocks)
    if truncated:
        parts.append(
            f"_Cut at max_tokens={max_tokens}: {shown} of {n} hits shown, "
            f"{omitted_blocks} blocks left out. Raise max_tokens, or read a page whole with "
            "docs_fetch and its URL._"
        )
    text = "\n\n".join(parts)
    return text, AnswerBudget(
        hits=n,
        shown=shown,
        omitted_blocks=omitted_blocks,
        tokens=estimate_tokens(text),
        max_tokens=max_tokens,
        truncated=truncated,
    )


_HEADING = re.compile(r"^(#{1,6})\s")
_WRAPPER = re.compile(r"^(///|:::|!!!|\?\?\?)[^\n]*$")
"""A block that only opens or closes an admonition (``/// note``, ``:::tip``, ``!!! warning``):
never chosen on its own, it would stand empty around text left out."""


def _line(node: Node) -> int:
    """Where a node starts on its page (``meta.line``; a page, which has none, at 0)."""
    line = node.meta.get("line")
    return line if isinstance(line, int) else 0


def _from_group(
    node: Node,
    body: Sequence[str],
    members: Sequence[Node],
    url: str,
    terms: set[str],
    room: int,
    hard: int,
) -> tuple[list[str], int]:
    """A hit's blocks within ``room`` tokens (``hard``: what is left of the whole budget),
    drawing on its page's other matches ``members``; and how many of its own were left out.

    The hit's own blocks are chosen by :func:`_answering`. Then each member's blocks (not
    headings, and none already chosen or given by a member before it) are weighed: the
    query's stems they hold that the chosen blocks lack, plus half of those they share, plus
    one for code that holds a stem (half when the chosen blocks already have such code). The
    ranking may put a page or a neighbouring section first while the code sample that names
    the fix (``status_code=201``, ``jwt.encode``) is one of its matches. The member blocks that
    weigh most are added while they fit what the hit's own blocks leave of ``room``; when the
    best of them does not fit and the chosen blocks hold fewer of the query's stems than it
    does, or it is code and they have none that holds a stem, the hit's own blocks are chosen
    again in the room it leaves. Blocks are shown in page order (a member by ``meta.line``,
    the hit's own first on a tie) and a block is never cut.

    Tuned on the ``fastapi``, ``hugo`` and ``cogitave`` question sets of ``bench/questions/``
    (``bench/docs_quality.py``: must-contain of the answers, ranking untouched); the
    ``-errors`` sets were measured, not tuned on."""
    chosen, dropped = _answering(body, terms, room, hard)
    if not members or not terms:
        return chosen, dropped
    seen = set(chosen)
    pool: list[tuple[int, int, str]] = []  # (line, position, block) of the members' blocks
    for m in sorted(members, key=_line):
        for k, b in enumerate(_shown_blocks(m, url)):
            if b not in seen and not _WRAPPER.match(b) and not _HEADING.match(b):
                pool.append((_line(m), k, b))
            seen.add(b)
    if not pool:
        return chosen, dropped
    held_of = [terms & set(analysis.stems(b)) for _, _, b in pool]
    own_held = [terms & set(analysis.stems(b)) for b in body]
    df: dict[str, int] = {}
    for h in [*held_of, *own_held]:
        for t in h:
            df[t] = df.get(t, 0) + 1
    n = len(pool) + len(body)
    weight = {t: math.log1p(n / c) for t, c in df.items()}

    def shown_held(blocks_: Sequence[str]) -> tuple[set[str], bool]:
        held = set().union(*(terms & set(analysis.stems(b)) for b in blocks_)) if blocks_ else set()
        code = any(_FENCE.match(b) and terms & set(analysis.stems(b)) for b in blocks_)
        return held, code

    def gains(held: set[str], code: bool) -> list[tuple[float, int]]:
        out = []
        for j, ((_, _, b), h) in enumerate(zip(pool, held_of, strict=True)):
            g = sum(weight[t] for t in h - held) + sum(weight[t] for t in h & held) / 2
            if h and _FENCE.match(b):
                g += 0.5 if code else 1.0
            if g > 0:
                out.append((g, j))
        return sorted(out, key=lambda x: (-x[0], x[1]))

    held, code = shown_held(chosen)
    ranked = gains(held, code)
    if not ranked:
        return chosen, dropped
    used = sum(estimate_tokens(b) + 1 for b in chosen)
    best_t = estimate_tokens(pool[ranked[0][1]][2]) + 1
    if best_t > room - used and best_t <= min(room, hard):
        best_held = sum(weight[t] for t in held_of[ranked[0][1]])
        best_code = bool(_FENCE.match(pool[ranked[0][1]][2]))
        if sum(weight[t] for t in held) < best_held or (best_code and not code):
            chosen, dropped = _answering(body, terms, room - best_t, hard - best_t)
            held, code = shown_held(chosen)
            ranked = gains(held, code) or ranked[:1]
            used = sum(estimate_tokens(b) + 1 for b in chosen)
    extra: set[int] = set()
    for _, j in ranked:
        t = estimate_tokens(pool[j][2]) + 1
        if used + t <= min(room, hard) and pool[j][2] not in chosen:
            h = held_of[j]
            extra.add(j)
            used += t
            held |= h
            code = code or bool(_FENCE.match(pool[j][2]) and h)
    if not extra:
        return chosen, dropped
    at = _line(node)
    ordered = [(at, -1, k, b) for k, b in enumerate(chosen)]
    ordered += [(pool[j][0], 0, pool[j][1], pool[j][2]) for j in extra]
    return [b for *_, b in sorted(ordered, key=lambda x: x[:3])], dropped


def _answering(
    blocks_: Sequence[str], terms: set[str], room: int, hard: int
) -> tuple[list[str], int]:
    """The blocks of a hit that fit ``room`` tokens, most answering first, shown in their own
        order; and how many were left out.

        A block scores the query's stems it holds, each weighted by how few of the hit's blocks
        hold it (``log(1 + blocks / blocks holding it)``): in a page about path parameters
        "path" is everywhere and "greater" marks the one section that answers. A heading scores
        half its stems and lends half its score to every block under it (to the next heading of
        its level or above), so the text and code of the answering subsection come with it. A
        code block scores at least what the prose leading to it scores (since the last heading or
    code block: "you can type:"), and the
        hit's opening block and a code block that holds a stem get a little ahead of equals.
        When none fits, the best one is shown if it fits ``hard`` (what is left of the whole
        budget) and is no larger than twice ``room``, so a hit is rarely a bare heading."""
    blocks_ = [_rows_answering(b, terms, room) for b in blocks_]
    n = len(blocks_)
    held = [terms & set(analysis.stems(b)) if terms else set() for b in blocks_]
    df: dict[str, int] = {}
    for h in held:
        for t in h:
            df[t] = df.get(t, 0) + 1
    weight = {t: math.log1p(n / c) for t, c in df.items()}
    own = [sum(weight[t] for t in h) for h in held]
    score = [0.0] * n
    under: list[tuple[int, float]] = []  # the open headings: (level, score)
    for j, b in enumerate(blocks_):
        m = _HEADING.match(b)
        if m:
            level = len(m.group(1))
            while under and under[-1][0] >= level:
                under.pop()
            score[j] = own[j] / 2
            under.append((level, own[j] / 2))
        else:
            score[j] = own[j] + max((sc for _, sc in under), default=0.0) / 2
    lead = 0.0  # the best prose since the last heading or code block
    for j, b in enumerate(blocks_):
        if _FENCE.match(b):
            score[j] = max(score[j], lead) + (0.5 if own[j] else 0.0)
            lead = 0.0
        elif _HEADING.match(b):
            lead = 0.0
        else:
            lead = max(lead, score[j])
    if n:
        score[0] += 0.25
    first_code = next((j for j, b in enumerate(blocks_) if _FENCE.match(b)), None)
    if first_code is not None:
        score[first_code] += 0.25  # the hit's first example, as its opening block
    scored = [
        (sc, j, estimate_tokens(b) + 1)
        for j, (sc, b) in enumerate(zip(score, blocks_, strict=True))
        if not _WRAPPER.match(b)
    ]
    keep: set[int] = set()
    used = 0
    for sc, j, t in sorted(scored, key=lambda x: (-x[0], x[1])):
        if used + t <= room and (sc > 0 or not keep or used + t <= room // 2):
            keep.add(j)
            used += t
    if not keep and scored:
        best = min(scored, key=lambda x: (-x[0], x[1]))
        if best[2] <= min(max(room, 0) * 2, hard):
            keep.add(best[1])
    chosen = [b for j, b in enumerate(blocks_) if j in keep]
    cut_rows = sum(b.endswith(_MORE_ROWS) for b in chosen)
    return chosen, len(blocks_) - len(chosen) + cut_rows


_MORE_ROWS = "| … |"


def _rows_answering(block: str, terms: set[str], room: int) -> str:
    """A table larger than ``room`` tokens as its header and the rows that hold the query's
    stems (``| … |`` marks the rows left out); any other block as it is. A 20-row options
    table is one block: whole, it crowds out the rest of the hit, or is left out for the one
    row that answers."""
    if estimate_tokens(block) <= room or not terms or not is_table(block):
        return block
    head, rule, *rows = block.split("\n")
    kept = [r for r in rows if terms & set(analysis.stems(r))]
    if not kept or len(kept) == len(rows):
        return block
    return "\n".join([head, rule, *kept, _MORE_ROWS])


def page_markdown(
    node: Node,
    url: str,
    breadcrumb: Sequence[str],
    max_tokens: int,
    offset: int,
    note: str = "",
) -> tuple[str, int, int | None, int]:
    """A node's Markdown from block ``offset`` within ``max_tokens``: ``(text, blocks taken,
    next offset or None, total blocks)``; ``note`` (one line) follows the heading. At least
    one block is given, so a reader always moves on, even past a block larger than the
    budget."""
    title = node.dims.get("title")
    items = [demote(b, 2) for b in node_blocks(node)]
    head = "# " + crumbs(breadcrumb, title if isinstance(title, str) else "", node.uid)
    head += f"\n{url or node.uid}" + (f"\n\n{note}" if note else "")
    budget = max_tokens - NOTE_TOKENS - estimate_tokens(head)
    cut = fit(items[offset:], budget, at_least_one=True)
    nxt = offset + len(cut.kept)
    parts = [head, *cut.kept]
    more = nxt < len(items)
    if more:
        parts.append(
            f"_Continued: blocks {offset}-{nxt - 1} of {len(items)} shown; call again with "
            f"offset={nxt} for the rest._"
        )
    return "\n\n".join(parts), len(cut.kept), nxt if more else None, len(items)
