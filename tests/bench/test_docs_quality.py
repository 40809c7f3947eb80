"""``bench/questions/`` and how ``bench/docs_quality.py`` maps its files to collections: every
question file parses, each question is judged by URL with grade 1 or 2, qids are unique, and
the error-message sets (``<collection>-errors.jsonl``) hold at least 30 questions together.
Reads only the question files and temporary folders."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cogitave.eval.docs import read_url_questions

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import docs_quality as D

BENCH = Path(D.__file__).resolve().parent
FILES = sorted((BENCH / "questions").glob("*.jsonl"))


def test_there_are_question_files() -> None:
    names = {p.stem for p in FILES}
    assert {"fastapi", "hugo", "cogitave"} <= names
    assert {"fastapi-errors", "hugo-errors", "cogitave-errors"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_question_is_judged_by_url_with_grade_1_or_2(path: Path) -> None:
    qs = read_url_questions(path)  # raises on a bad line, naming file:line
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    assert len(rows) == len(qs)
    qids = [r.get("qid") for r in rows]
    assert all(isinstance(q, str) and q for q in qids), "every question has a qid"
    assert len(set(qids)) == len(qids), "qids are unique"
    for r in rows:
        assert r["query"].strip(), r["qid"]
        assert r["judgments"], r["qid"]
        for j in r["judgments"]:
            assert isinstance(j.get("url"), str) and j["url"].strip(), r["qid"]
            assert j.get("grade") in (1, 2), r["qid"]
        assert any(j["grade"] == 2 for j in r["judgments"]), f"{r['qid']}: no answering page"


def test_error_sets_hold_at_least_30_questions() -> None:
    errors = [p for p in FILES if p.stem.endswith("-errors")]
    assert sum(len(read_url_questions(p)) for p in errors) >= 30


def test_every_set_is_run_on_the_collection_it_is_named_after() -> None:
    collections = set(D.trees(Path("/nonexistent")))
    for path in FILES:
        owners = [c for c in collections if path in dict(D.question_sets(c)).values()]
        assert len(owners) == 1, f"{path.name} is run on {owners}"


def test_question_sets_are_the_main_set_then_its_named_sets(tmp_path: Path) -> None:
    for name in ("fastapi.jsonl", "fastapi-errors.jsonl", "fastapi-a.jsonl", "fastapix.jsonl"):
        (tmp_path / name).write_text("{}\n")
    (tmp_path / "hugo-errors.jsonl").write_text("{}\n")
    got = D.question_sets("fastapi", tmp_path)
    assert got == [
        ("fastapi", tmp_path / "fastapi.jsonl"),
        ("fastapi-a", tmp_path / "fastapi-a.jsonl"),
        ("fastapi-errors", tmp_path / "fastapi-errors.jsonl"),
    ]
    # a collection without its main set still runs its named sets
    assert D.question_sets("hugo", tmp_path) == [("hugo-errors", tmp_path / "hugo-errors.jsonl")]
    assert D.question_sets("vite", tmp_path) == []


def test_the_code_verbatim_table_reads_the_trees_and_names_a_missing_one(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "docs" / "sphinx"
    text = D.code_verbatim(
        {"sphinx": fixture, "gone": tmp_path / "nope", "x": fixture}, {"sphinx", "gone"}
    )
    assert text.startswith("## Code verbatim (")
    assert "| sphinx | 5 | 3 | 3 | 1.0000 | 0 |" in text
    assert f"| gone | - | - | - | - | not checked: {tmp_path / 'nope'} not found |" in text
    assert "| x |" not in text
