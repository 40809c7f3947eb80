"""What an agent reads: the ``must_contain`` of URL-graded questions checked against the
``docs_search`` Markdown answer of a tiny docs collection, through the library and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogitave.collection import Collection
from cogitave.eval.docs import (
    AnswerRead,
    UrlQuestion,
    docs_answer,
    evaluate_questions,
    evaluate_url_systems,
    read_answer,
    read_score,
)
from cogitave.ingest.docs import read_docs
from cogitave.query.types import Hit
from tests.helpers import run_cli, write_tree

SITE = {
    "mkdocs.yml": "site_name: Tiny\nnav:\n  - index.md\n  - cors.md\n  - errors.md\n",
    "docs/index.md": "# Tiny\n\nA web framework for small services.\n",
    "docs/cors.md": """# Cross-origin requests

Let a frontend served from another origin call the API.

## Allow origins

Add the middleware with the origins that may call you:

```python
app.add_middleware(CORSMiddleware, allow_origins=["https://front.example.org"])
```
""",
    "docs/errors.md": """# Errors

## Not found

Raise `HTTPException(status_code=404)` when an item does not exist.
""",
}
QUESTIONS = [
    {
        "qid": "cors",
        "query": "frontend on another origin calls my API cors",
        "judgments": [{"url": "/cors/", "grade": 2}],
        "must_contain": ["corsmiddleware", "allow_origins"],
    },
    {
        "qid": "404",
        "query": "return a 404 when the item does not exist",
        "judgments": [{"url": "/errors/", "grade": 2}],
        "must_contain": ["HTTPException", "status_code=404"],
    },
    {
        "qid": "never",
        "query": "cors origins",
        "judgments": [{"url": "/cors/", "grade": 2}],
        "must_contain": ["a string no page holds"],
    },
    {"qid": "free", "query": "small web framework", "judgments": [{"url": "/", "grade": 2}]},
]


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    root = write_tree(tmp_path_factory.mktemp("tiny"), SITE)
    batch = read_docs(root / "mkdocs.yml")
    c = Collection.create(tmp_path_factory.mktemp("col") / "col", batch.schema)
    c.add(batch.nodes)
    c.publish()
    return c


@pytest.fixture(scope="module")
def questions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("q") / "questions.jsonl"
    p.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return p


def test_an_answer_holds_every_string_in_any_case() -> None:
    md = "## Allow origins\n\n```python\napp.add_middleware(CORSMiddleware)\n```"
    assert read_answer(md, 1, 20, ["corsmiddleware", "Allow Origins"]).missing == ()
    assert read_answer(md, 1, 20, ["CORSMiddleware", "allow_origins"]).missing == ("allow_origins",)
    assert read_answer(md, 3, 20, []) == AnswerRead((), 3, 20)


def test_the_rate_counts_only_questions_with_must_contain() -> None:
    with_mc = UrlQuestion("a", "x", {"a": 2}, ("x",))
    without = UrlQuestion("b", "y", {"b": 2})
    reads = [
        (with_mc, AnswerRead((), 2, 100)),
        (with_mc, AnswerRead(("x",), 4, 300)),
        (without, AnswerRead((), 5, 200)),
    ]
    s = read_score(reads)
    assert (s.contains, s.judged, s.shown, s.tokens) == (0.5, 2, 4.0, 200.0)
    none = read_score([(without, AnswerRead((), 1, 10))])
    assert none.contains is None and none.judged == 0
    assert none.to_dict()["must_contain"] is None


def test_without_an_answer_nothing_is_read() -> None:
    hit = Hit(uid="a", rank=1, score=1.0, kind="page", title="a", snippet="", url="/a/")
    s = evaluate_questions("fake", [UrlQuestion("1", "q", {"a": 2}, ("x",))], lambda q: [hit])
    assert s.read is None and s.outcomes[0].read is None
    assert "must_contain" not in s.to_dict()


def test_a_refused_query_reads_nothing(col: Collection) -> None:
    answer = docs_answer(col, "bm25")
    assert answer("   ") is None
    q = UrlQuestion("1", "   ", {"cors": 2}, ("CORSMiddleware",))
    s = evaluate_questions("bm25", [q], lambda text: (), answer=answer)
    assert s.outcomes[0].read == AnswerRead(("CORSMiddleware",), 0, 0)
    assert s.read is not None and s.read.contains == 0.0


def test_the_docs_search_answer_is_read(col: Collection, questions: Path) -> None:
    (bm25,) = evaluate_url_systems(col, questions, ["bm25"], group_by_page=True)
    reads = {o.qid: o.read for o in bm25.outcomes}
    assert reads["cors"] is not None and reads["cors"].missing == ()
    assert reads["404"] is not None and reads["404"].missing == ()
    assert reads["never"] is not None and reads["never"].missing == ("a string no page holds",)
    assert all(r is not None and r.shown >= 1 and r.tokens > 0 for r in reads.values())
    assert bm25.read is not None
    assert (bm25.read.contains, bm25.read.judged) == (pytest.approx(2 / 3), 3)
    assert bm25.metrics["mrr"] > 0


def test_cli_prints_the_read_measure(col: Collection, questions: Path) -> None:
    args = ("eval", "--collection", str(col.store.path), "--queries", str(questions))
    body = json.loads(run_cli(*args, "--systems", "bm25,planned", "--json").stdout)
    for system in ("bm25", "planned"):
        got = body["systems"][system]
        assert got["must_contain_questions"] == 3
        assert 0 <= got["must_contain"] <= 1
        assert got["hits_shown"] >= 1 and got["tokens_read"] > 0
        assert {"mrr", "ndcg@5", "answer_tokens", "queries"} <= set(got)
    table = run_cli(*args, "--format", "urls", "--systems", "bm25").stdout
    assert "must-contain" in table and "tokens read" in table and "(3)" in table
