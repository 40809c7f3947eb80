"""Graph facets through the facade and REST: kinds, labels and exact values around results."""

from __future__ import annotations

from fastapi.testclient import TestClient

from cogitave import Collection, Edge, Node
from cogitave.schema import Dimension, Schema
from cogitave.surfaces.http import create_app

SCHEMA = Schema((Dimension("title", "semantic"), Dimension("language", "exact")))


def test_facets_count_kinds_labels_and_exact_values(tmp_path):
    col = Collection.create(tmp_path / "c", SCHEMA, encoder=None)
    col.add(
        [
            Node(
                "page",
                "page",
                {"title": "Path parameters"},
                edges=(
                    Edge("implementedBy", "s1"),
                    Edge("implementedBy", "s2"),
                    Edge("xref", "other"),
                ),
            ),
            Node("s1", "code_sample", {"title": "example", "language": "python"}),
            Node("s2", "code_sample", {"title": "example", "language": "bash"}),
            Node("other", "page", {"title": "Query parameters"}),
        ]
    )
    col.publish()
    f = col.facets(["page"])
    assert f.kinds == {"code_sample": 2, "page": 1}
    assert f.labels == {"implementedBy": 2, "xref": 1}
    assert f.values == {"language": {"python": 1, "bash": 1}}
    assert col.facets(["page"], labels=["xref"]).kinds == {"page": 1}
    client = TestClient(create_app(col))
    body = client.get("/facets", params={"uids": "page", "labels": "implementedBy"}).json()
    assert body["kinds"] == {"code_sample": 2} and body["values"]["language"]["bash"] == 1
    bad = client.get("/facets", params={"uids": "page", "labels": "likes"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "label"
