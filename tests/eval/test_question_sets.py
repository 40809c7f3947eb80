"""The bench's question sets read as the evaluator reads them, and every question says what
its answer must show."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogitave.eval.docs import read_url_questions

QUESTIONS = Path(__file__).resolve().parents[2] / "bench" / "questions"
SETS = sorted(QUESTIONS.glob("*.jsonl"))


def test_the_sets_are_there() -> None:
    names = {p.stem for p in SETS}
    assert {"fastapi", "hugo", "cogitave", "vite", "react", "python"} <= names


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.stem)
def test_every_question_has_an_answering_page_and_must_contain(path: Path) -> None:
    qs = read_url_questions(path)
    # a collection's own set holds 30 or more; its extra sets (``fastapi-errors``) are
    # counted together in tests/bench/test_docs_quality.py
    assert len(qs) >= (30 if "-" not in path.stem else 10)
    for q in qs:
        assert max(q.grades.values()) >= 2, q.qid
        assert q.must_contain, q.qid
        assert all(len(s) <= 60 for s in q.must_contain), q.qid
