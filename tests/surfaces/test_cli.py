"""The CLI: the exact command forms, --json output, one-line errors with non-zero exits.

Commands run in this process (:func:`~tests.helpers.run_cli`, as ``main()`` runs them); one
test runs the console entry point as a process of its own."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import make_nodes
from tests.helpers import CLI, cli_process, run_cli
from tests.ingest.helpers import CISI_LIKE


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    src = tmp / "nodes.jsonl"
    src.write_text(
        "".join(json.dumps(n.to_record()["dims"] | {"uid": n.uid}) + "\n" for n in make_nodes(120))
    )
    run_cli("index", "--collection", str(tmp / "col"), "--format", "jsonl", str(src), "-q")
    return tmp


def test_search_json(indexed):
    proc = run_cli(
        "search", "--collection", str(indexed / "col"), "--json", "--limit", "3", "gamma"
    )
    body = json.loads(proc.stdout)
    assert [r["rank"] for r in body["results"]] == [1, 2, 3]
    assert {"uid", "score", "rank"} <= set(body["results"][0])
    assert body["diagnostics"]["root"] == body["root"]


def test_roots_lists_head(indexed):
    assert "HEAD" in run_cli("roots", "--collection", str(indexed / "col")).stdout


def test_eval_json(indexed, tmp_path):
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"_id": "1", "text": "gamma delta"}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n1\tn00003\t1\n")
    out = run_cli(
        "eval",
        "--collection",
        str(indexed / "col"),
        "--queries",
        str(q),
        "--qrels",
        str(qrels),
        "--json",
    ).stdout
    assert set(json.loads(out)["systems"]["bm25"]) >= {"ndcg@10", "recall@100", "mrr@10"}


def test_eval_url_graded(indexed, tmp_path):
    q = tmp_path / "questions.jsonl"
    q.write_text(
        json.dumps({"query": "gamma delta", "judgments": [{"url": "n00003", "grade": 2}]}) + "\n"
    )
    args = ("eval", "--collection", str(indexed / "col"), "--queries", str(q))
    body = json.loads(run_cli(*args, "--systems", "bm25", "--json").stdout)
    assert set(body["systems"]["bm25"]) >= {"mrr", "hit@1", "hit@5", "ndcg@5", "answer_tokens"}
    assert body["systems"]["bm25"]["queries"] == 1
    assert (
        "Hit@3" in run_cli(*args, "--format", "urls", "--systems", "bm25", "--group-by-page").stdout
    )


@pytest.mark.parametrize(
    "args, code",
    [
        (["search", "--collection", "{tmp}/none", "x"], "not_found"),
        (["compact", "--collection", "{tmp}/none"], "not_found"),
        (["search", "--collection", "{col}", "  "], "query"),
        (
            ["index", "--collection", "{tmp}/c2", "--format", "jsonl", "{tmp}/missing.jsonl"],
            "ingest",
        ),
        (
            ["index", "--collection", "{tmp}/c3", "--schema", "{tmp}/bad.toml", "{tmp}/ok.jsonl"],
            "schema",
        ),
        (["index", "--collection", "{tmp}/c4", "{tmp}/badedge.jsonl"], "ingest"),
        (["index", "--collection", "{tmp}/c5", "{tmp}/malformed.jsonl"], "ingest"),
    ],
)
def test_errors_are_one_line_no_traceback(indexed, tmp_path, args, code):
    (tmp_path / "bad.toml").write_text("[dimensions.x]\ntype = 'nope'\n")
    (tmp_path / "ok.jsonl").write_text('{"uid": "a", "title": "t"}\n')
    (tmp_path / "badedge.jsonl").write_text('{"uid": "a", "edges": [{"label": "x", "dst": "b"}]}\n')
    (tmp_path / "malformed.jsonl").write_text('{"uid": "a"\n')
    fmt = {"tmp": str(tmp_path), "col": str(indexed / "col")}
    proc = run_cli(*(a.format(**fmt) for a in args), ok=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith(f"error[{code}]"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_skip_bad_writes_good_records(tmp_path):
    src = tmp_path / "mixed.jsonl"
    src.write_text('{"uid": "a", "title": "alpha"}\n{oops\n{"uid": "b", "title": "beta"}\n')
    proc = run_cli("index", "--collection", str(tmp_path / "c"), "--skip-bad", "-q", str(src))
    assert f"{src}:2" in proc.stderr
    assert "indexed 2 nodes (1 skipped)" in proc.stdout


def test_compact_keeps_the_answers(indexed):
    col = str(indexed / "col")
    before = json.loads(run_cli("search", "--collection", col, "--json", "gamma delta").stdout)
    out = run_cli("compact", "--collection", col, "-q").stdout
    assert "vector segments ->" in out and "120 live nodes" in out
    after = json.loads(run_cli("search", "--collection", col, "--json", "gamma delta").stdout)
    assert after["root"] != before["root"]
    assert [r["uid"] for r in after["results"]] == [r["uid"] for r in before["results"]]


def test_index_reports_links_before_embedding_with_rate_and_eta(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the guide](guide.md) and [gone](missing.md).\n")
    (docs / "guide.md").write_text("# Guide\n\nInstall it, then run it.\n")
    proc = run_cli(
        "index", "--collection", str(tmp_path / "col"), "--format", "markdown", str(docs)
    )
    err = proc.stderr
    # The ingest report (with its unresolved link) comes before the embedding step starts.
    assert "1 unresolved" in err, err
    assert err.index("1 unresolved") < err.index("embed"), err
    embed_line = next(line for line in err.splitlines() if line.strip().startswith("embed"))
    # done/total, a rate, the elapsed time and the time left.
    shape = r"\b(\d+)/\1\s+[\d,.]+/s\s+\d+:\d\d:\d\d\s+eta\s+\d+:\d\d:\d\d"
    assert re.search(shape, embed_line), embed_line


def test_search_path_prefix_and_page_grouping(tmp_path):
    site = tmp_path / "site"
    for rel, body in {
        "guide/install.md": "# Install\n\nInstall the tool with pip.\n\n"
        "## Upgrade\n\nUpgrade with pip.\n",
        "reference/cli.md": "# CLI\n\nThe install command of the tool.\n",
    }.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(body)
    col = str(tmp_path / "col")
    run_cli("index", "--collection", col, str(site), "-q")

    def paths(*extra: str) -> list[str]:
        out = run_cli("search", "--collection", col, "--json", *extra, "install pip").stdout
        return [r.get("path", "") for r in json.loads(out)["results"]]

    every = paths("--no-group-by-page")
    assert {"guide/install.md", "reference/cli.md"} <= set(every)
    assert every.count("guide/install.md") > 1, "sections of one page, ungrouped"
    grouped = paths("--group-by-page")
    assert len(grouped) == len(set(grouped))
    assert set(paths("--path-prefix", "guide/")) == {"guide/install.md"}


def test_index_and_eval_a_smart_collection(tmp_path):
    src = tmp_path / "cisi"
    src.mkdir()
    (src / "CISI.ALL").write_text(CISI_LIKE)
    (src / "CISI.QRY").write_text(".I 1\n.W\nhistory of the decimal classification\n")
    (src / "CISI.REL").write_text("     1      1 0 0.000000\n")
    col = str(tmp_path / "col")
    hint = run_cli("index", "--collection", col, str(src), "-q", ok=False)
    assert hint.returncode != 0 and "--format smart" in hint.stderr
    run_cli("index", "--collection", col, "--format", "smart", str(src), "-q")
    out = run_cli(
        "eval",
        "--collection",
        col,
        "--format",
        "smart",
        "--queries",
        str(src / "CISI.QRY"),
        "--qrels",
        str(src / "CISI.REL"),
        "--systems",
        "bm25",
        "--json",
    ).stdout
    assert json.loads(out)["systems"]["bm25"]["mrr@10"] == 1.0


def test_settings_show_set_and_refuse_bad_keys(indexed, tmp_path):
    col = tmp_path / "col"
    shutil.copytree(indexed / "col", col)
    shown = json.loads(run_cli("settings", "--collection", str(col), "--json").stdout)
    assert shown["feedback"]["top"] == 5
    head = run_cli("roots", "--collection", str(col)).stdout
    out = run_cli(
        "settings",
        "--collection",
        str(col),
        "--set",
        "feedback.top=3",
        "--set",
        'docs.demote=["blog/*"]',
    ).stdout
    assert "published root" in out
    now = json.loads(run_cli("settings", "--collection", str(col), "--json").stdout)
    assert now["feedback"]["top"] == 3 and now["docs"]["demote"] == ["blog/*"]
    again = run_cli("settings", "--collection", str(col), "--set", "feedback.top=3").stdout
    assert "unchanged" in again
    assert head != run_cli("roots", "--collection", str(col)).stdout
    bad = run_cli("settings", "--collection", str(col), "--set", "feedback.nope=1", ok=False)
    assert bad.returncode != 0 and "nope" in bad.stderr and "Traceback" not in bad.stderr
    typo = run_cli("settings", "--collection", str(col), "--set", "feedbak.top=1", ok=False)
    assert typo.returncode != 0 and "feedbak" in typo.stderr
    wrong = run_cli("settings", "--collection", str(col), "--set", "feedback.top=many", ok=False)
    assert wrong.returncode != 0 and "top" in wrong.stderr
    assert json.loads(run_cli("settings", "--collection", str(col), "--json").stdout) == now


def test_the_entry_point_as_a_process(indexed: Path) -> None:
    """``python -m cogitave.surfaces.cli`` and the installed ``cogitave`` script, processes of
    their own: the answer on stdout with status 0; an engine error and a usage error are one
    line on stderr with status 2."""
    col = str(indexed / "col")
    found = cli_process("search", "-c", col, "--json", "gamma")
    assert json.loads(found.stdout)["results"]
    script = Path(sys.executable).with_name("cogitave")
    script_or_module = (str(script),) if script.exists() else CLI
    for command, args, code in (
        (CLI, ("search", "-c", col, "  "), "query"),
        (script_or_module, ("nope",), "usage"),
    ):
        proc = cli_process(*args, ok=False, command=command)
        assert proc.returncode == 2, (command, args, proc.stderr)
        assert proc.stderr.startswith(f"error[{code}]") and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_piped_output_is_never_wrapped_or_cut(tmp_path):
    """A program reading the CLI gets whole URLs and whole root ids; ``--width`` lays the
    output out in that many columns instead."""
    deep = "guide/" + "/".join(["create-models-with-relationships"] * 3)
    site = tmp_path / "site"
    (site / "docs" / deep).mkdir(parents=True)
    (site / "docs" / deep / "index.md").write_text(
        "# Current sessions\n\n## The current session\n\n" + "Sessions hold rows. " * 30
    )
    (site / "mkdocs.yml").write_text("site_name: S\nsite_url: https://docs.example.org/\n")
    col = str(tmp_path / "col")
    run_cli("index", "--collection", col, str(site), "-q")
    url = f"https://docs.example.org/{deep}/#the-current-session"
    text = run_cli("search", "--collection", col, "current session rows").stdout
    assert len(url) > 100 and url in text.split(), text
    roots = run_cli("roots", "--collection", col).stdout
    assert re.search(r"\b[0-9a-f]{64}\b", roots), roots
    narrow = run_cli("--width", "40", "search", "--collection", col, "current session rows")
    assert max(map(len, narrow.stdout.splitlines())) <= 40
    assert url not in narrow.stdout
    bad = run_cli("--width", "3", "roots", "--collection", col, ok=False)
    assert bad.returncode == 2 and "--width" in bad.stderr


def test_version_is_the_packages() -> None:
    from importlib import metadata

    import cogitave

    want = metadata.version("cogitave-query")
    assert cogitave.__version__ == want
    assert run_cli("--version").stdout.strip() == f"cogitave {want}"


def test_an_escaped_eof_error_is_a_fault_not_an_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """click turns EOFError into Abort, as it does Ctrl-C: a damaged file read somewhere
    must not print "aborted" and exit 130 as if the user had interrupted."""
    from cogitave import indexing

    def cut_short(*a: object, **k: object) -> None:
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")

    monkeypatch.setattr(indexing, "open_reader", cut_short)
    res = run_cli("roots", "-c", str(tmp_path), ok=False)
    assert res.returncode == 1 and "aborted" not in res.stderr
    assert res.stderr.strip().startswith("error[internal]: unexpected end of data (EOFError: C")
