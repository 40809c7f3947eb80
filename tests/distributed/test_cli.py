"""The command line on a sharded collection: index --shards, search, eval, errors (in this
process, but for Ray)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import make_nodes
from tests.helpers import cli_process, run_cli


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shcli")
    src = tmp / "nodes.jsonl"
    src.write_text(
        "".join(json.dumps(n.to_record()["dims"] | {"uid": n.uid}) + "\n" for n in make_nodes(120))
    )
    run_cli("index", "--collection", str(tmp / "one"), "--format", "jsonl", str(src), "-q")
    run_cli("index", "--collection", str(tmp / "sh"), "--shards", "3", str(src), "-q")
    return tmp


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_search_sharded_as_plain(indexed, mode) -> None:
    def top(name: str) -> list[str]:
        proc = run_cli("search", "-c", str(indexed / name), "--json", "--mode", mode, "gamma river")
        return [r["uid"] for r in json.loads(proc.stdout)["results"]]

    assert top("sh") == top("one")
    body = json.loads(
        run_cli("search", "-c", str(indexed / "sh"), "--json", "--mode", mode, "x").stdout
    )
    assert body["diagnostics"]["partial"] is False and body["diagnostics"]["shards"] == 3


def test_sync_adds_to_the_same_shards(indexed, tmp_path) -> None:
    src = tmp_path / "more.jsonl"
    src.write_text(json.dumps({"uid": "extra-1", "title": "zeppelin", "body": "zeppelin"}) + "\n")
    run_cli("index", "-c", str(indexed / "sh"), str(src), "-q")
    proc = run_cli("search", "-c", str(indexed / "sh"), "--json", "--mode", "bm25", "zeppelin")
    assert [r["uid"] for r in json.loads(proc.stdout)["results"]] == ["extra-1"]
    bad = run_cli("index", "-c", str(indexed / "sh"), "--shards", "2", str(src), ok=False)
    assert bad.returncode != 0 and "3 shards, not 2" in bad.stderr


def test_eval_on_sharded(indexed, tmp_path) -> None:
    (tmp_path / "q.jsonl").write_text(json.dumps({"_id": "q1", "text": "gamma river"}) + "\n")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tn00000\t1\n")
    proc = run_cli(
        "eval",
        "-c",
        str(indexed / "sh"),
        "--queries",
        str(tmp_path / "q.jsonl"),
        "--qrels",
        str(tmp_path / "qrels.tsv"),
        "--json",
    )
    assert set(json.loads(proc.stdout)["systems"]) == {"bm25", "dense", "hybrid", "planned"}


def test_ray_needs_a_sharded_collection(indexed) -> None:
    proc = run_cli("search", "-c", str(indexed / "one"), "--ray", "local", "gamma", ok=False)
    assert proc.returncode == 2 and "needs a sharded collection" in proc.stderr
    proc = run_cli("index", "-c", str(indexed / "one"), "--shards", "2", "nowhere.jsonl", ok=False)
    assert proc.returncode != 0


def test_search_with_local_ray(indexed) -> None:
    """A process of its own: ``--ray local`` starts Ray in the process that runs the command
    and leaves it to the process's exit; in the test process it would outlive the test."""
    pytest.importorskip("ray")
    args = ("search", "-c", str(indexed / "sh"), "--json", "--mode", "hybrid", "gamma river")
    local = json.loads(run_cli(*args).stdout)
    on_ray = json.loads(cli_process(*args, "--ray", "local").stdout)
    assert [r["uid"] for r in on_ray["results"]] == [r["uid"] for r in local["results"]]
    assert on_ray["diagnostics"]["partial"] is False
