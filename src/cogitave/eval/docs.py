"""Questions judged by page URL: a JSONL file -> MRR, Hit@1/3/5, nDCG@5 over the pages returned,
and what the Markdown answer an agent reads holds.

One question per line::

    {"qid": "cors", "query": "how do I add CORS", "judgments": [
        {"url": "/tutorial/cors/", "grade": 2}, {"url": "/advanced/middleware/", "grade": 1}],
     "must_contain": ["CORSMiddleware", "allow_origins"]}

``qid`` is optional (default: the line number). ``grade`` 2 marks the page that answers the
question, 1 a useful one (any positive integer is a gain). A judgment's ``url`` names a page by
its URL (relative, or absolute: scheme and host are dropped), by its path as stored, or by its
uid, in any case; a fragment (``#anchor``) or query string is ignored, so a section counts as
its page. ``must_contain`` (optional) lists the words or code an answer must show to be
useful: short strings of the answering page's text, matched case-insensitively.

A query is scored on the top ``k`` (5) hits exactly as the engine returned them, mapped to
pages: several hits of one page count once, at the first one's rank. MRR and Hit@k count the
answering pages (grade >= ``relevant_grade``, 2 by default); nDCG@5 uses every grade. The
answer size is the compact JSON of those hits in characters / 4, an estimate of tokens.

What an agent reads is measured on the Markdown answer of ``docs_search`` at its default
budget (:func:`docs_answer`): the share of questions with ``must_contain`` whose answer holds
every string of it, the median number of hits the answer shows and the mean tokens it takes.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytrec_eval

from cogitave.errors import IngestError, QueryError
from cogitave.query.types import MAX_QUERY_CHARS, Hit, SearchRequest

if TYPE_CHECKING:
    from cogitave.reader import Reader
    from cogitave.service.ops import DocsAnswer

K = 5
METRICS = ("mrr", "hit@1", "hit@3", "hit@5", "ndcg@5")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://[^/]*")
_TREC = {"recip_rank": "mrr", "success_1": "hit@1", "success_3": "hit@3", "success_5": "hit@5"}


@dataclass(frozen=True)
class UrlQuestion:
    """One question and its graded pages (normalised keys -> gain)."""

    qid: str
    query: str
    grades: Mapping[str, int]
    must_contain: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerRead:
    """What the Markdown answer of one question held: the ``must_contain`` strings it lacks,
    the hits it showed and its tokens."""

    missing: tuple[str, ...]
    shown: int
    tokens: int


@dataclass(frozen=True)
class QueryOutcome:
    """What one question got: the pages in rank order, its metrics and the answer size (and
    what its Markdown answer held, when read)."""

    qid: str
    query: str
    pages: tuple[str, ...]
    metrics: Mapping[str, float]
    tokens: int
    read: AnswerRead | None = None


@dataclass(frozen=True)
class ReadScore:
    """What an agent reads over a question set: the share of questions with ``must_contain``
    whose answer holds all of it (None when no question has any; ``judged`` of them), the
    median hits shown and the mean tokens of the answers."""

    contains: float | None
    judged: int
    shown: float
    tokens: float

    def to_dict(self) -> dict[str, float | int | None]:
        rate = None if self.contains is None else round(self.contains, 4)
        return {
            "must_contain": rate,
            "must_contain_questions": self.judged,
            "hits_shown": self.shown,
            "tokens_read": round(self.tokens, 1),
        }


@dataclass(frozen=True)
class UrlScore:
    """Mean metrics of one system over a question set, and every question's outcome."""

    system: str
    metrics: Mapping[str, float]
    tokens: float
    outcomes: tuple[QueryOutcome, ...] = field(default=())
    read: ReadScore | None = None

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            **{k: round(v, 4) for k, v in self.metrics.items()},
            "answer_tokens": round(self.tokens, 1),
            **(self.read.to_dict() if self.read is not None else {}),
            "queries": len(self.outcomes),
        }


def normalise(ref: str) -> str:
    """A URL, path or uid -> its page key: no scheme/host, fragment, query or edge slashes,
    case folded (the site's root page is ``/``).

    Case is folded because generators lowercase URLs (Hugo) while paths and uids keep the
    file's case, and a hit without a URL (a code sample) is known by its path and uid only."""
    raw = ref.strip().split("#", 1)[0].split("?", 1)[0].casefold()
    s = _SCHEME.sub("", raw)
    if not s.strip("/") and (s.startswith("/") or raw != s):
        return "/"
    s = s.strip("/")
    for tail in ("/index.html", "index.html", ".html"):
        if s.endswith(tail):
            s = s[: -len(tail)].rstrip("/")
            break
    return s


_LIBRARY_PREFIX = re.compile(r"^[^:/#]+@[^:/#]+:")
"""``name@version:`` before a uid in a collection of libraries: a judgment names the page as
the library's own collection does."""


def hit_keys(hit: Hit) -> tuple[str, set[str]]:
    """A hit's page identity and every key a judgment may name its page by (a uid without
    its library's ``name@version:``)."""
    uid = _LIBRARY_PREFIX.sub("", hit.uid)
    keys = {normalise(x) for x in (hit.url, hit.path, uid) if x}
    keys.discard("")
    ident = normalise(hit.path) or normalise(hit.url) or normalise(uid) or uid
    return ident, keys


def read_url_questions(path: str | Path) -> list[UrlQuestion]:
    """Parse a URL-graded JSONL file; a bad line is an error naming ``file:line``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise IngestError(f"cannot read {p}: {e.strerror or e}") from e
    out: list[UrlQuestion] = []
    seen: set[str] = set()
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{p}:{i}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise IngestError(f"{where}: not JSON: {e.msg}") from e
        if not isinstance(obj, dict) or not isinstance(obj.get("query"), str):
            raise IngestError(f"{where}: expected an object with a 'query' string")
        qid = str(obj.get("qid", i))
        if qid in seen:
            raise IngestError(f"{where}: duplicate qid {qid!r}")
        seen.add(qid)
        js = obj.get("judgments")
        if not isinstance(js, list) or not js:
            raise IngestError(f"{where}: 'judgments' must be a non-empty list of {{url, grade}}")
        grades: dict[str, int] = {}
        for j in js:
            ok = isinstance(j, dict) and isinstance(j.get("url"), str)
            g = j.get("grade", 1) if ok else None
            if not ok or isinstance(g, bool) or not isinstance(g, int) or g < 0:
                raise IngestError(f"{where}: a judgment is {{'url': str, 'grade': int >= 0}}")
            key = normalise(j["url"])
            if not key:
                raise IngestError(f"{where}: empty url in a judgment")
            grades[key] = max(grades.get(key, 0), g)
        out.append(UrlQuestion(qid, obj["query"], grades, _must_contain(obj, where)))
    if not out:
        raise IngestError(f"{p}: no questions")
    return out


def _must_contain(obj: Mapping[str, Any], where: str) -> tuple[str, ...]:
    """A question's ``must_contain``: absent, or a list of non-blank strings."""
    mc = obj.get("must_contain", [])
    if not isinstance(mc, list) or not all(isinstance(x, str) and x.strip() for x in mc):
        raise IngestError(f"{where}: 'must_contain' must be a list of non-empty strings")
    return tuple(mc)


def page_run(hits: Sequence[Hit], grades: Mapping[str, int], k: int = K) -> list[str]:
    """The top ``k`` hits as pages, first occurrence only; a judged page is named by its key."""
    pages: list[str] = []
    for h in hits[:k]:
        ident, keys = hit_keys(h)
        judged = sorted(keys & grades.keys())
        page = judged[0] if judged else ident
        if page not in pages:
            pages.append(page)
    return pages


def answer_tokens(hits: Sequence[Hit], k: int = K) -> int:
    """Estimated tokens (characters / 4) of the top ``k`` hits as compact JSON."""
    text = json.dumps([h.to_dict() for h in hits[:k]], separators=(",", ":"), ensure_ascii=False)
    return len(text) // 4


def score_pages(
    runs: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    relevant_grade: int = 2,
) -> dict[str, dict[str, float]]:
    """Per-question metrics of ranked page lists (trec_eval through pytrec-eval-terrier)."""
    judged = {q: dict(d) for q, d in qrels.items() if any(g > 0 for g in d.values())}
    if not judged:
        return {}
    # trec_eval sorts by score: distinct descending scores keep the returned order.
    trec_run = {
        q: {p: float(len(pages) - i) for i, p in enumerate(pages)} or {"__none__": 0.0}
        for q in judged
        for pages in [list(runs.get(q, ()))]
    }
    strict = pytrec_eval.RelevanceEvaluator(
        judged, {"recip_rank", "success.1,3,5"}, relevance_level=relevant_grade
    ).evaluate(trec_run)
    graded = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.5"}).evaluate(trec_run)
    out: dict[str, dict[str, float]] = {}
    for q in judged:
        m = {name: strict[q][t] for t, name in _TREC.items()}
        m["ndcg@5"] = graded[q]["ndcg_cut_5"]
        out[q] = m
    return out


def read_answer(markdown: str, shown: int, tokens: int, must_contain: Sequence[str]) -> AnswerRead:
    """What one Markdown answer holds of ``must_contain`` (case-insensitive), its hits shown
    and its tokens."""
    text = markdown.casefold()
    missing = tuple(s for s in must_contain if s.casefold() not in text)
    return AnswerRead(missing, shown, tokens)


def read_score(reads: Sequence[tuple[UrlQuestion, AnswerRead]]) -> ReadScore:
    """The share of questions with ``must_contain`` whose answer lacks none of it, the median
    hits shown and the mean tokens read, over every question read."""
    judged = [r for q, r in reads if q.must_contain]
    contains = sum(not r.missing for r in judged) / len(judged) if judged else None
    shown = statistics.median(r.shown for _, r in reads) if reads else 0.0
    tokens = sum(r.tokens for _, r in reads) / len(reads) if reads else 0.0
    return ReadScore(contains, len(judged), float(shown), tokens)


def evaluate_questions(
    system: str,
    questions: Sequence[UrlQuestion],
    search: Callable[[str], Sequence[Hit]],
    *,
    k: int = K,
    relevant_grade: int = 2,
    answer: Callable[[str], DocsAnswer | None] | None = None,
) -> UrlScore:
    """Run ``search`` on every question and score the top ``k`` hits by page; with
    ``answer`` (:func:`docs_answer`), also read every question's Markdown answer."""
    runs: dict[str, list[str]] = {}
    tokens: dict[str, int] = {}
    reads: dict[str, AnswerRead] = {}
    for q in questions:
        hits = list(search(q.query))
        runs[q.qid] = page_run(hits, q.grades, k)
        tokens[q.qid] = answer_tokens(hits, k)
        if answer is not None:
            got = answer(q.query)
            reads[q.qid] = (
                read_answer(got.markdown, got.budget.shown, got.budget.tokens, q.must_contain)
                if got is not None
                else AnswerRead(q.must_contain, 0, 0)
            )
    per_q = score_pages(runs, {q.qid: q.grades for q in questions}, relevant_grade=relevant_grade)
    scored = [q for q in questions if q.qid in per_q]
    outcomes = tuple(
        QueryOutcome(
            q.qid, q.query, tuple(runs[q.qid]), per_q[q.qid], tokens[q.qid], reads.get(q.qid)
        )
        for q in scored
    )
    n = len(outcomes) or 1
    means = {m: sum(o.metrics[m] for o in outcomes) / n for m in METRICS}
    read = read_score([(q, reads[q.qid]) for q in scored]) if answer is not None else None
    return UrlScore(system, means, sum(o.tokens for o in outcomes) / n, outcomes, read)


def collection_search(
    col: Reader, mode: str, *, limit: int = K, **request: Any
) -> Callable[[str], Sequence[Hit]]:
    """``search`` for :func:`evaluate_questions`: ``mode`` on ``col``; bad queries find nothing."""

    def search(text: str) -> Sequence[Hit]:
        try:
            req = SearchRequest(query=text[:MAX_QUERY_CHARS], limit=limit, mode=mode, **request)  # type: ignore[arg-type]
            return col.search(req).results
        except QueryError:
            return ()

    return search


def docs_answer(col: Reader, mode: str, **args: Any) -> Callable[[str], DocsAnswer | None]:
    """``answer`` for :func:`evaluate_questions`: the ``docs_search`` answer in ``mode`` at its
    default budget (``args``: more :class:`~cogitave.service.args.SearchArgs`); a query the
    search refuses gets None."""
    from cogitave.service.args import SearchArgs
    from cogitave.service.ops import docs_search

    def answer(text: str) -> DocsAnswer | None:
        try:
            return docs_search(col, SearchArgs(query=text[:MAX_QUERY_CHARS], mode=mode, **args))  # type: ignore[arg-type]
        except QueryError:
            return None

    return answer


def evaluate_url_systems(
    col: Reader, questions: Path, systems: Sequence[str], *, group_by_page: bool = False
) -> list[UrlScore]:
    """Every system of ``systems`` on a URL-graded question file: the page metrics of its hits
    (``group_by_page`` as docs_search) and what its ``docs_search`` answer holds."""
    qs = read_url_questions(questions)
    opts = {"group_by_page": True} if group_by_page else {}
    return [
        evaluate_questions(n, qs, collection_search(col, n, **opts), answer=docs_answer(col, n))
        for n in systems
    ]
