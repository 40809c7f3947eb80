"""SMART-format collections: fields read, skipped markers never leak, ids and judgments."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogitave.errors import IngestError
from cogitave.eval import cranfield
from cogitave.ingest import smart
from tests.ingest.helpers import CISI_LIKE

CACM_LIKE = """.I 1
.T
Preliminary Report-International Algebraic Language
.B
CACM December, 1958
.A
Perlis, A. J.
.N
CA581203 JB March 22, 1978  8:28 PM
.X
100	5	1
.I 02
.T
Extraction of Roots by Repeated Subtractions
.W
A technique for extracting roots.
.K
roots, subtraction
.C
5.11
"""
QUERIES = """.I 1
.W
 What articles deal with TSS, an operating
system for IBM computers?
.N
 1. Richard Alexander
.I 2
.T
A query with only a title
.I 10
.W
 a third one
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_fields_are_read_and_skipped_markers_never_leak(tmp_path: Path) -> None:
    batch = smart.read_corpus(write(tmp_path, "CISI.ALL", CISI_LIKE))
    assert [d.name for d in batch.schema.dimensions] == ["title", "abstract", "kind"]
    assert not any(d.facet for d in batch.schema.dimensions), "fields of one text, not facets"
    one = batch.nodes[0]
    assert one.meta["authors"] and "author" not in one.dims, "authors describe, they are not text"
    assert one.uid == "1"
    assert one.dims["title"] == "18 Editions of the Dewey Decimal Classifications"
    assert one.dims["abstract"].endswith("Decimal Classification.")
    text = " ".join(str(v) for n in batch.nodes for v in n.dims.values())
    assert "92" not in text and "\t" not in text, "the .X citation lines are skipped"


def test_only_present_fields_become_dimensions_and_ids_lose_zeros(tmp_path: Path) -> None:
    batch = smart.read_corpus(write(tmp_path, "cacm.all", CACM_LIKE))
    names = [d.name for d in batch.schema.dimensions]
    assert names == ["title", "abstract", "keywords", "kind"]
    first, second = batch.nodes
    assert "abstract" not in first.dims and first.meta["source"] == "CACM December, 1958"
    assert "CACM" not in " ".join(first.text(d) for d in names), "the source is never searched"
    assert "8:28" not in str(first.dims), "the .N entry note is skipped"
    assert second.uid == "2" and second.dims["keywords"] == "roots, subtraction"
    assert "5.11" not in str(second.dims)


def test_a_folder_is_searched_for_its_corpus_file(tmp_path: Path) -> None:
    write(tmp_path, "CISI.ALL", CISI_LIKE)
    write(tmp_path, "CISI.QRY", QUERIES)
    assert len(smart.read_corpus(tmp_path).nodes) == 2
    with pytest.raises(IngestError, match="no SMART corpus"):
        smart.read_corpus(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(IngestError, match="looked for"):
        smart.read_corpus(empty)
    with pytest.raises(IngestError, match=r"no \.I records"):
        smart.read_corpus(write(tmp_path, "x.all", "just text\n"))


@pytest.mark.parametrize("name", ["MED.ALL", "ADI.ALL", "cacm.all", "cran.all.1400"])
def test_every_known_distribution_name_is_found(tmp_path: Path, name: str) -> None:
    write(tmp_path, name, CISI_LIKE)
    assert smart.corpus_file(tmp_path).name == name


def test_queries_by_id_or_position(tmp_path: Path) -> None:
    q = write(tmp_path, "q.txt", QUERIES)
    by_id = smart.read_queries(q)
    assert list(by_id) == ["1", "2", "10"]
    assert by_id["1"] == "What articles deal with TSS, an operating system for IBM computers?"
    assert by_id["2"] == "A query with only a title"
    assert list(smart.read_queries(q, by="position")) == ["1", "2", "3"]


def test_binary_and_graded_judgments(tmp_path: Path) -> None:
    binary = write(tmp_path, "qrels.text", "01 1410  0 0\n01 1572  0 0\n\n10 0007 0 0\n")
    assert smart.read_qrels(binary) == {"1": {"1410": 1, "1572": 1}, "10": {"7": 1}}
    graded = write(tmp_path, "cranqrel", "1 184 2\n1 29 -1\n1 31 1\n")
    assert smart.read_qrels(graded, graded=True) == {"1": {"184": 3, "31": 4}}
    assert cranfield.read_qrels(graded) == {"1": {"184": 3, "31": 4}}
    with pytest.raises(IngestError, match="grade"):
        smart.read_qrels(write(tmp_path, "bad", "1 2 x\n"), graded=True)
    with pytest.raises(IngestError, match="expected"):
        smart.read_qrels(write(tmp_path, "short", "1\n"))
