"""One opener: ``cogitave.open(path)`` and ``Collection.open(path)`` open a plain, a sharded
or a library collection behind the same Reader; the README's Python example runs on a
collection of libraries; ``settings`` and ``eval`` take all three."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

import cogitave
from cogitave import Collection, SearchRequest
from cogitave.distributed import hashed
from cogitave.distributed.facade import ShardedCollection
from cogitave.errors import NotFoundError
from cogitave.libraries.collection import LibraryCollection
from cogitave.reader import Reader
from tests.conftest import SCHEMA, make_nodes
from tests.helpers import run_cli, sharded_docs_collection

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("open") / "deps"
    lib = LibraryCollection.create(path, encoder=hashed.register())
    nodes = [replace(n, kind="page") for n in make_nodes(30, seed=4)]
    lib.sync_library("demo", "1.0.0", nodes, schema=SCHEMA, source="/src/demo")
    return path


def test_every_kind_opens_behind_one_reader(
    libs: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    sharded = sharded_docs_collection(tmp_path_factory)
    for path, kind in ((libs, LibraryCollection), (sharded, ShardedCollection)):
        for opened in (cogitave.open(path), cogitave.open(str(path)), Collection.open(path)):
            assert isinstance(opened, kind) and isinstance(opened, Reader)
            assert opened.search(SearchRequest(query="alpha gamma", limit=3)).results
    assert "open" in cogitave.__all__
    with pytest.raises(NotFoundError, match="no collection at"):
        cogitave.open(libs.parent / "nothing")


def test_the_readme_python_example_runs_on_libraries(
    libs: Path, capsys: pytest.CaptureFixture
) -> None:
    text = README.read_text(encoding="utf-8")
    code = re.search(r"Python:\n\n```python\n(.*?)```", text, re.S)
    assert code is not None, "the README's Python example"
    exec(compile(code.group(1).replace('"./col"', repr(str(libs))), "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "demo@1.0.0:" in printed


def test_settings_and_eval_take_a_collection_of_libraries(libs: Path, tmp_path: Path) -> None:
    shown = json.loads(run_cli("settings", "-c", str(libs), "--json").stdout)
    assert shown["docs"]["demote"] != ["blog/*"]
    run_cli("settings", "-c", str(libs), "--set", 'docs.demote=["blog/*"]', "-q")
    after = json.loads(run_cli("settings", "-c", str(libs), "--json").stdout)
    assert after["docs"]["demote"] == ["blog/*"]
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"_id": "1", "text": "alpha gamma"}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    uid = (
        LibraryCollection.open(libs).search(SearchRequest(query="alpha gamma", mode="bm25")).uids[0]
    )
    qrels.write_text(f"query-id\tcorpus-id\tscore\n1\t{uid}\t1\n")
    args = ("eval", "-c", str(libs), "--queries", str(q), "--qrels", str(qrels), "--json")
    body = json.loads(run_cli(*args, "--systems", "bm25").stdout)
    assert body["systems"]["bm25"]["mrr@10"] == 1.0


def test_settings_of_a_sharded_collection_are_shown_not_changed(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    sharded = sharded_docs_collection(tmp_path_factory)
    assert json.loads(run_cli("settings", "-c", str(sharded), "--json").stdout)
    bad = run_cli("settings", "-c", str(sharded), "--set", "docs.demote=[]", ok=False)
    assert bad.returncode == 2 and "sharded" in bad.stderr
