"""URL-graded questions: parsing, page keys, page runs and metrics on hand-made runs."""

from __future__ import annotations

import json
import math

import pytest

from cogitave.errors import IngestError
from cogitave.eval.docs import (
    UrlQuestion,
    answer_tokens,
    evaluate_questions,
    hit_keys,
    normalise,
    page_run,
    read_url_questions,
    score_pages,
)
from cogitave.query.types import Hit


def hit(uid: str, url: str = "", path: str = "", rank: int = 1) -> Hit:
    return Hit(
        uid=uid, rank=rank, score=1.0, kind="section", title=uid, snippet="", url=url, path=path
    )


@pytest.mark.parametrize(
    "ref, key",
    [
        ("/tutorial/cors/", "tutorial/cors"),
        ("tutorial/cors", "tutorial/cors"),
        ("https://fastapi.tiangolo.com/tutorial/cors/#use-corsmiddleware", "tutorial/cors"),
        ("/a/b/?x=1", "a/b"),
        ("/a/index.html", "a"),
        ("functions/time/Format", "functions/time/format"),
        ("/", "/"),
        ("https://example.org", "/"),
        ("docs/en/docs/tutorial/cors.md", "docs/en/docs/tutorial/cors.md"),
    ],
)
def test_normalise(ref, key):
    assert normalise(ref) == key


def test_sections_count_once_at_the_first_rank():
    hits = [
        hit("a#one", url="/a/#one", path="docs/a.md"),
        hit("a#two", url="/a/#two", path="docs/a.md"),
        hit("a#code-1", path="docs/a.md"),  # a code sample: no url, same file
        hit("b", url="/b/", path="docs/b.md"),
        hit("c#x", url="/c/#x", path="docs/c.md"),
        hit("d", url="/d/", path="docs/d.md"),
    ]
    assert page_run(hits, {"b": 2, "a": 1}) == ["a", "b", "docs/c.md"]
    # only the top 5 hits count: d is the sixth
    assert "d" not in page_run(hits, {"d": 2})


def test_a_code_sample_without_url_matches_a_lowercased_url_judgment():
    code = hit("functions/time/Format#code-1", path="content/en/functions/time/Format.md")
    assert page_run([code], normalise_grades({"/functions/time/format/": 2})) == [
        "functions/time/format"
    ]


def normalise_grades(grades: dict[str, int]) -> dict[str, int]:
    return {normalise(k): v for k, v in grades.items()}


def test_judgment_matches_url_path_or_uid():
    h = hit("tutorial/cors#steps", url="https://x.org/tutorial/cors/#steps", path="docs/cors.md")
    for key in ("tutorial/cors", "docs/cors.md"):
        assert page_run([h], {key: 2}) == [key]


def test_metrics_on_a_known_run():
    qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 2}, "q3": {"d": 2, "e": 1}}
    runs = {"q1": ["x", "a", "b"], "q2": ["c"], "q3": ["e", "y"]}
    m = score_pages(runs, qrels)
    assert m["q1"]["mrr"] == pytest.approx(0.5)
    assert (m["q1"]["hit@1"], m["q1"]["hit@3"], m["q1"]["hit@5"]) == (0.0, 1.0, 1.0)
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    assert m["q1"]["ndcg@5"] == pytest.approx(dcg / (2 + 1 / math.log2(3)))
    assert m["q2"] == {"mrr": 1.0, "hit@1": 1.0, "hit@3": 1.0, "hit@5": 1.0, "ndcg@5": 1.0}
    # a useful page (grade 1) first is no hit, but it counts in nDCG
    assert m["q3"]["mrr"] == 0.0 and m["q3"]["hit@5"] == 0.0
    assert m["q3"]["ndcg@5"] == pytest.approx(1 / (2 + 1 / math.log2(3)))
    # with relevant_grade=1 the useful page is a hit
    assert score_pages(runs, qrels, relevant_grade=1)["q3"]["hit@1"] == 1.0


def test_a_question_with_no_hits_scores_zero():
    m = score_pages({}, {"q": {"a": 2}})
    assert m["q"] == {"mrr": 0.0, "hit@1": 0.0, "hit@3": 0.0, "hit@5": 0.0, "ndcg@5": 0.0}


def test_evaluate_questions_means_and_tokens():
    answers = {
        "cors": [
            hit("mw", url="/mw/"),
            hit("cors#a", url="/cors/#a"),
            hit("cors#b", url="/cors/#b"),
        ],
        "tests": [hit("testing", url="/testing/")],
    }
    qs = [
        UrlQuestion("1", "cors", {"cors": 2, "mw": 1}),
        UrlQuestion("2", "tests", {"testing": 2}),
    ]
    s = evaluate_questions("fake", qs, lambda q: answers[q])
    assert s.metrics["mrr"] == pytest.approx((0.5 + 1.0) / 2)
    assert s.metrics["hit@1"] == pytest.approx(0.5)
    assert [o.pages for o in s.outcomes] == [("mw", "cors"), ("testing",)]
    want = (answer_tokens(answers["cors"]) + answer_tokens(answers["tests"])) / 2
    assert s.tokens == pytest.approx(want)
    text = json.dumps([h.to_dict() for h in answers["tests"]], separators=(",", ":"))
    assert answer_tokens(answers["tests"]) == len(text) // 4


def test_read_questions(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text(
        json.dumps({"qid": "a", "query": "add cors", "judgments": [{"url": "/cors/", "grade": 2}]})
        + "\n\n"
        + json.dumps({"query": "tests", "judgments": [{"url": "https://x.org/testing/#s"}]})
        + "\n"
    )
    qs = read_url_questions(p)
    assert [(q.qid, q.query, dict(q.grades)) for q in qs] == [
        ("a", "add cors", {"cors": 2}),
        ("3", "tests", {"testing": 1}),
    ]
    assert [q.must_contain for q in qs] == [(), ()]


def test_read_must_contain(tmp_path):
    p = tmp_path / "q.jsonl"
    mc = ["HTTPException", "status_code=404"]
    p.write_text(
        json.dumps({"query": "404", "judgments": [{"url": "/e/", "grade": 2}], "must_contain": mc})
        + "\n"
    )
    assert read_url_questions(p)[0].must_contain == ("HTTPException", "status_code=404")


OK = {"query": "x", "judgments": [{"url": "/a/", "grade": 2}]}


@pytest.mark.parametrize(
    "line, msg",
    [
        ("{not json", ":1: not JSON"),
        (json.dumps({"judgments": []}), "'query' string"),
        (json.dumps({"query": "x", "judgments": []}), "non-empty list"),
        (json.dumps({"query": "x", "judgments": [{"url": "/a/", "grade": "2"}]}), "grade"),
        (json.dumps({"query": "x", "judgments": [{"url": "#", "grade": 2}]}), "empty url"),
        (json.dumps({**OK, "must_contain": "HTTPException"}), ":1: 'must_contain' must be a list"),
        (json.dumps({**OK, "must_contain": ["a", 404]}), "non-empty strings"),
        (json.dumps({**OK, "must_contain": ["a", " "]}), "non-empty strings"),
        (json.dumps({**OK, "must_contain": None}), "must_contain"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, line, msg):
    p = tmp_path / "bad.jsonl"
    p.write_text(line + "\n")
    with pytest.raises(IngestError, match=msg):
        read_url_questions(p)


def test_duplicate_qid_is_an_error(tmp_path):
    p = tmp_path / "dup.jsonl"
    line = json.dumps({"qid": "a", "query": "x", "judgments": [{"url": "/a/", "grade": 2}]})
    p.write_text(line + "\n" + line + "\n")
    with pytest.raises(IngestError, match=r"dup.jsonl:2: duplicate qid"):
        read_url_questions(p)


def test_a_library_collections_uid_names_the_page_as_the_librarys_own_does() -> None:
    """A judgment written against one library's collection grades the same hit in a
    collection of libraries, whose uids carry ``name@version:``."""
    own = hit("config/index#env", url="https://vite.dev/config/#env", path="config/index.md")
    shared = hit("vite@8.2.2:config/index#env", url=own.url, path=own.path)
    assert hit_keys(shared) == hit_keys(own)
    assert "config/index" in hit_keys(shared)[1]
    assert hit_keys(hit("a:b@1:c"))[1] == {"a:b@1:c"}  # not a library prefix: kept whole
