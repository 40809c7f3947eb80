"""JSONL and BEIR sources: records -> nodes, bad records reported with file and line."""

from __future__ import annotations

import json

import pytest

from cogitave.errors import IngestError, SchemaError
from cogitave.ingest.beir import read_beir, read_qrels, read_queries
from cogitave.ingest.jsonl import read_jsonl
from cogitave.schema import Schema


def write(tmp_path, lines):
    p = tmp_path / "nodes.jsonl"
    p.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines))
    return p


def test_records_become_nodes_with_inferred_dimensions(tmp_path):
    p = write(
        tmp_path,
        [
            json.dumps(
                {
                    "uid": "a",
                    "kind": "page",
                    "title": "Hello",
                    "year": 2020,
                    "edges": [{"label": "xref", "dst": "b"}],
                    "content": "# Hello",
                }
            ),
            "",
            json.dumps({"uid": "b", "title": "World", "tags": ["x", "y"]}),
        ],
    )
    batch = read_jsonl(p)
    assert not batch.problems
    a, b = batch.nodes
    assert a.kind == "page" and a.content == "# Hello" and a.edges[0].dst == "b"
    assert b.dims["tags"] == ("x", "y")
    assert batch.schema.semantic == ["title", "tags"]
    assert batch.schema.exact == ["year", "kind"]


def test_bad_records_name_file_and_line_and_refuse_the_batch(tmp_path):
    p = write(
        tmp_path,
        [
            json.dumps({"uid": "a", "title": "ok"}),
            "{not json",
            json.dumps({"title": "no uid"}),
            json.dumps({"uid": "c", "edges": [{"label": "likes", "dst": "a"}]}),
            json.dumps({"uid": "a", "title": "dup"}),
            b"\xff\xfe",
            json.dumps([1, 2]),
            json.dumps({"uid": "d", "nested": {"x": 1}}),
        ],
    )
    batch = read_jsonl(p)
    lines = [pr.line for pr in batch.problems]
    assert lines == [2, 3, 4, 5, 6, 7, 8]
    assert "allowed labels are: partOf" in batch.problems[2].reason
    with pytest.raises(IngestError) as e:
        batch.raise_if_bad()
    assert f"{p}:2" in e.value.message
    assert len(e.value.details["errors"]) == 7
    assert [n.uid for n in batch.nodes] == ["a"]  # what --skip-bad would write


def test_meta_is_kept_with_the_node_and_is_not_a_dimension(tmp_path):
    meta = {"authors": "Knuth, D. E.", "year": 1968}
    good = {"uid": "a", "title": "Sorting", "meta": meta}
    bad = {"uid": "b", "title": "x", "meta": "not an object"}
    p = write(tmp_path, [json.dumps(good), json.dumps(bad)])
    batch = read_jsonl(p)
    (a,) = batch.nodes
    assert a.meta == meta and "meta" not in a.dims
    assert batch.schema.names == ["title", "kind"]
    assert batch.problems[0].line == 2 and "'meta' must be an object" in batch.problems[0].reason
    with pytest.raises(SchemaError, match="meta"):
        Schema.from_dict({"dimensions": {"meta": {"type": "semantic"}}})


def test_declared_schema_types_are_enforced(tmp_path):
    schema = Schema.from_dict({"dimensions": {"title": {"type": "semantic"}}})
    p = write(tmp_path, [json.dumps({"uid": "a", "title": 5})])
    assert "semantic" in read_jsonl(p, schema).problems[0].reason


def test_missing_source(tmp_path):
    with pytest.raises(IngestError, match="not found"):
        read_jsonl(tmp_path / "nope.jsonl")


def test_beir_folder(tmp_path):
    (tmp_path / "corpus.jsonl").write_text(
        json.dumps({"_id": "d1", "title": "T", "text": "body"})
        + "\n"
        + json.dumps({"_id": "d2", "title": "", "text": "only text"})
        + "\n"
    )
    (tmp_path / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "body?"}) + "\n")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    batch = read_beir(tmp_path)
    assert [n.dims for n in batch.nodes] == [{"title": "T", "text": "body"}, {"text": "only text"}]
    assert read_queries(tmp_path / "queries.jsonl") == {"q1": "body?"}
    assert read_qrels(tmp_path / "qrels.tsv") == {"q1": {"d1": 1}}
