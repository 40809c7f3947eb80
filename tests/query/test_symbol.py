"""A query that is one dotted name puts the node of that name first (its title, or its uid
within a library), among what the other lenses found."""

from __future__ import annotations

from pathlib import Path

from cogitave import Collection, Node, SearchRequest
from cogitave.distributed import hashed
from cogitave.libraries.collection import LibraryCollection
from cogitave.schema import Dimension, Schema

SCHEMA = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))


def _nodes() -> list[Node]:
    # The named node's text is long and mostly about other things; its neighbours' titles
    # and bodies repeat the same two words, so words alone rank them above it.
    long = "Connection pooling, redirects and cookies are kept across requests. " * 12
    out = [Node(uid="pkg.Client", kind="api", dims={"title": "pkg.Client", "body": long})]
    for name in ("get", "post", "put", "close", "send", "stream"):
        body = f"Send a {name} request with the pkg client: pkg client {name}."
        out.append(Node(uid=f"pkg.Client.{name}", kind="api",
                        dims={"title": f"pkg.Client.{name}", "body": body}))  # fmt: skip
    default = {"title": "pkg.USE_CLIENT_DEFAULT", "body": "pkg client default"}
    out.append(Node(uid="pkg.USE_CLIENT_DEFAULT", kind="api", dims=default))
    return out


def test_a_dotted_name_puts_its_node_first(tmp_path: Path) -> None:
    col = Collection.create(tmp_path / "c", SCHEMA, encoder=hashed.register())
    col.add(_nodes())
    col.publish()
    for q in ("pkg.Client", "pkg.Client()"):
        res = col.search(SearchRequest(query=q, limit=3))
        assert res.uids[0] == "pkg.Client", (q, res.uids)
    # words, not a name: no symbol lens, nothing pinned
    plain = col.search(SearchRequest(query="pkg client", limit=3))
    assert "symbol" not in str(plain.diagnostics.get("lenses", ""))


def test_a_dotted_name_finds_its_node_inside_a_library(tmp_path: Path) -> None:
    libs = LibraryCollection.create(tmp_path / "libs", encoder=hashed.register())
    libs.sync_library("pkg", "1.0", _nodes(), schema=SCHEMA, source="/src/pkg")
    res = libs.search(SearchRequest(query="pkg.Client", limit=3))
    assert res.uids[0].endswith(":pkg.Client"), res.uids
