"""The forward term index against tantivy: the same (candidate, term) answers, the same search
results with or without it, and its objects kept by retention and checked by verify."""

from __future__ import annotations

import copy
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tantivy

from cogitave import Collection, Node, SearchRequest
from cogitave.config import Settings
from cogitave.query.engine import Engine
from cogitave.schema import Dimension, Schema, TailRule
from cogitave.store.arrays import npy_bytes
from cogitave.store.lexical import LexicalReader
from cogitave.store.manifest import Manifest
from cogitave.store.roots import RootStore, referenced_objects
from cogitave.store.snapshot import Snapshot
from cogitave.store.terms import TermIndex, field_tokens, h32
from cogitave.store.verify import verify_collection
from tests.conftest import WORDS
from tests.query import catalogue

MIXED = Schema(
    (
        Dimension("title", "semantic"),
        Dimension("body", "semantic"),
        Dimension("colour", "exact", (TailRule(("warm",), equals="red"),)),
        Dimension("year", "exact", (TailRule(("recent",), gte=2020), TailRule(("old",), lt=2000))),
    )
)
# Words the analyzer treats specially: stop words (kept), numbers split on punctuation,
# stemming, casefolding beyond ASCII, tokens of 40 bytes or more (dropped).
ODD = [
    "the",
    "and",
    "of",
    "2020.5",
    "3rd",
    "x_y",
    "can't",
    "1,000",
    "Running",
    "runs",
    "naïve",
    "İstanbul",
    "Straße",
    "ΣΑΣ",
    "a" * 39,
    "b" * 40,
    "c" * 45,
]
COLOURS = ["Red", " blue ", "GREEN", "Crimson Red", "naïve ÉCRU", "  ", "red"]
FIELDS = ["s_title", "s_body", "t_colour", "x_colour", "t_year", "x_year", "t_kind", "x_kind"]


def mixed_nodes(lo: int, hi: int, seed: int) -> list[Node]:
    """Nodes ``m<lo>`` .. ``m<hi-1>``: text with odd words, optional exact values (scalars and
    tuples, numbers and strings), two kinds."""
    rng = random.Random(seed)
    vocab = WORDS[:30] + ODD
    out = []
    for i in range(lo, hi):
        dims: dict[str, Any] = {
            "title": " ".join(rng.choices(vocab, k=rng.randint(1, 5))),
            "body": " ".join(rng.choices(vocab, k=rng.randint(0, 30))),
        }
        r = rng.random()
        if r < 0.4:
            dims["colour"] = rng.choice(COLOURS)
        elif r < 0.7:
            dims["colour"] = tuple(rng.sample(COLOURS, 2))
        r = rng.random()
        if r < 0.5:
            dims["year"] = rng.randint(1990, 2025)
        elif r < 0.7:
            dims["year"] = rng.choice(["1999", "2021.5", 2019.5])
        out.append(Node(uid=f"m{i:05d}", kind=rng.choice(["doc", "Page"]), dims=dims))
    return out


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    """Three publishes: 300 nodes; 100 new, 60 replaced, 40 deleted; 50 new and 10 deleted."""
    col = Collection.create(tmp_path_factory.mktemp("terms") / "c", MIXED, encoder=None)
    col.add(mixed_nodes(0, 300, seed=1))
    col.publish()
    col.add(mixed_nodes(300, 400, seed=2))
    col.add(mixed_nodes(0, 60, seed=3))  # same uids, new text
    col.delete(f"m{i:05d}" for i in range(100, 140))
    col.publish()
    col.add(mixed_nodes(400, 450, seed=4))
    col.delete(f"m{i:05d}" for i in (5, 150, 310, 320, 330, 340, 350, 360, 370, 380))
    col.publish()
    return col


def vocabulary(snap: Snapshot) -> dict[str, set[str]]:
    """Per field: every token any node (dead ones too) holds, the statistics' stems (counted
    by another path through the analyzer) and a few tokens no node holds."""
    out: dict[str, set[str]] = {f: {"", "zzz", "red", "blue", "2020"} for f in FIELDS}
    for nid in range(snap.manifest.next_nid):
        for f, toks in field_tokens(snap.nodes.node(nid), snap.schema).items():
            out[f].update(toks)
    for d in snap.schema.names:
        prefix = "s" if snap.schema[d].type == "semantic" else "t"
        out[f"{prefix}_{d}"].update(snap.stats.dim(d).stems)
    return out


def tantivy_any(lex: LexicalReader, field_tokens: dict[str, list[str]]) -> tantivy.Query:
    return tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Should, tantivy.Query.term_query(lex.tschema, f, t))
            for f, toks in field_tokens.items()
            for t in toks
        ]
    )


def without_terms(manifest: Manifest) -> Manifest:
    """A manifest as written before the forward term index."""
    segments = tuple({k: v for k, v in seg.items() if k != "terms"} for seg in manifest.segments)
    return manifest.with_(segments=segments)


# -- the index against tantivy ----------------------------------------------------------------
def test_every_token_matches_the_same_nodes_as_tantivy(mixed: Collection) -> None:
    snap = mixed.snapshot
    assert snap.terms.available and len(snap.manifest.segments) == 3
    lex = snap.lexical
    live = snap.nodes.live_nids()
    for field, tokens in vocabulary(snap).items():
        for tok in sorted(tokens):
            q = tantivy.Query.term_query(lex.tschema, field, tok)
            want = set(lex.matching(q, len(live) + 1).tolist())
            got = set(live[snap.terms.matches({field: [tok]}, live)].tolist())
            assert got == want, (field, tok)


def test_random_draws_agree_with_matching_among(mixed: Collection) -> None:
    snap = mixed.snapshot
    lex = snap.lexical
    vocab = {f: sorted(v) for f, v in vocabulary(snap).items()}
    live = snap.nodes.live_nids().tolist()
    rng = random.Random(11)
    hits = 0
    for _ in range(400):
        fields = rng.sample(FIELDS, rng.randint(1, 3))
        ft = {f: rng.sample(vocab[f], min(len(vocab[f]), rng.randint(1, 3))) for f in fields}
        cands = np.asarray(rng.sample(live, rng.randint(1, 200)), np.uint64)  # fused order
        want = lex.matching_among(tantivy_any(lex, ft), cands)
        got = snap.terms.matches(ft, cands)
        assert (got == want).all(), ft
        hits += int(got.sum())
    assert hits > 1000  # the draws do match things


def test_joined_keys_are_sorted_and_edge_cases(mixed: Collection) -> None:
    terms = mixed.snapshot.terms
    for f in FIELDS:
        keys = terms.keys(f)
        assert keys.dtype == np.uint64 and len(keys) and (np.diff(keys.astype(np.int64)) > 0).all()
    some = mixed.snapshot.nodes.live_nids()[:5]
    assert terms.matches({"s_body": ["alpha"]}, np.zeros(0, np.uint64)).shape == (0,)
    assert not terms.matches({"s_body": []}, some).any()
    assert not terms.matches({"s_nope": ["alpha"]}, some).any()
    assert h32("alpha") == 3029414926 and h32("") == 634351890  # stable across processes


def test_a_root_without_the_index_says_so(mixed: Collection) -> None:
    snap = mixed.snapshot
    old = Snapshot(snap.store, snap.root, without_terms(snap.manifest))
    assert not old.terms.available
    assert not TermIndex(snap.store, [*snap.manifest.segments[:1], {"count": 0}]).available
    assert TermIndex(snap.store, []).available


# -- the callers: identical results, with the index or through tantivy ------------------------
CATALOGUE_QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("red leather boots", {}),
    ("boots -cotton", {}),
    ("elderly wool", {}),
    ("male leather", {}),
    ("women red bag", {}),
    ("red suede loafers -city", {}),
    ("child wool scarf", {}),
    ("boots", {"filters": {"gender": ("M",)}}),
    ("red", {"filters": {"gender": ("f", " M ")}}),
    ("leather -boots", {"filters": {"gender": ("F",)}}),
    ("senior male wool", {"backfill": True}),
    ("bag", {"filters": {"age": ("70",)}}),
    ("red leather", {"mode": "bm25", "filters": {"gender": ("F",)}}),
]
MIXED_QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("alpha warm", {}),
    ("beta recent gamma", {}),
    ("alpha -beta", {}),
    ("delta old warm", {}),
    ("running the", {"filters": {"colour": ("red", "BLUE")}}),
    ("epsilon", {"filters": {"year": ("1999",), "kind": ("page",)}}),
    ("zeta -gamma -alpha", {"filters": {"colour": ("",)}}),
    ("kappa lambda warm recent", {"backfill": True}),
]


def responses(snap: Snapshot, queries: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    eng = Engine(snap)
    out = []
    for q, kw in queries:
        res = eng.search(SearchRequest(query=q, limit=50, **kw))
        diag = res.diagnostics
        lenses = [(lens["name"], lens["hits"]) for lens in diag["lenses"]]
        out.append(
            (
                q,
                [(h.uid, h.score, h.lenses) for h in res.results],
                diag.get("gate"),
                diag["filters"],
                lenses,
                diag["total_hits"],
            )
        )
    return out


@pytest.mark.parametrize("which", ["catalogue", "mixed"])
def test_searches_are_identical_with_and_without_the_index(
    which: str, mixed: Collection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if which == "catalogue":
        col, queries = catalogue.build(tmp_path / "cat"), CATALOGUE_QUERIES
    else:
        col, queries = mixed, MIXED_QUERIES
    snap = col.snapshot
    old = Snapshot(snap.store, snap.root, without_terms(snap.manifest))
    via_tantivy = responses(old, queries)
    assert any(r[2] and r[2]["rejected"] for r in via_tantivy)  # the gate does decide
    assert any(r[3].get("removed") for r in via_tantivy)  # filters and exclusions do remove
    assert any(name.startswith("exact:") and n for r in via_tantivy for name, n in r[4])

    def no_tantivy(*a: Any, **k: Any) -> None:
        raise AssertionError("matching_among called with the term index available")

    monkeypatch.setattr(LexicalReader, "matching_among", no_tantivy)
    fresh = Snapshot(snap.store, snap.root, snap.manifest)
    assert responses(fresh, queries) == via_tantivy


def test_a_collection_of_older_roots_still_searches(tmp_path: Path) -> None:
    """A HEAD written without term arrays (as before the index): reads fall back to tantivy,
    verify passes, and the next publish's segment has the arrays again."""
    col = catalogue.build(tmp_path / "c", settings=Settings(lexicon="none"))
    want = responses(col.snapshot, CATALOGUE_QUERIES)
    store = col.store
    rid = store.write_root(without_terms(col.snapshot.manifest))
    store.set_head(rid)
    old = Collection.open(tmp_path / "c")
    assert not old.snapshot.terms.available
    assert responses(old.snapshot, CATALOGUE_QUERIES) == want
    assert verify_collection(tmp_path / "c").ok
    old.add(catalogue.nodes()[:1])
    old.publish()
    segs = old.snapshot.manifest.segments
    assert "terms" not in segs[0] and "terms" in segs[-1] and not old.snapshot.terms.available
    after = responses(old.snapshot, CATALOGUE_QUERIES)
    # compact writes the missing arrays from the stored records: the index is back, with the
    # same keys a fresh publish writes and the same answers
    old.compact()
    assert old.snapshot.terms.available
    assert all("terms" in seg for seg in old.snapshot.manifest.segments)
    assert responses(old.snapshot, CATALOGUE_QUERIES) == after
    for f in ("s_title", "s_body"):
        assert np.array_equal(
            old.snapshot.terms.keys(f)[: len(col.snapshot.terms.keys(f))],
            col.snapshot.terms.keys(f),
        )
    assert verify_collection(tmp_path / "c").ok


# -- retention and verify ---------------------------------------------------------------------
def term_objects(manifest: Manifest) -> set[str]:
    return {e["keys_obj"] for seg in manifest.segments for e in (seg.get("terms") or {}).values()}


def test_retention_keeps_and_verify_checks_the_term_arrays(tmp_path: Path) -> None:
    path = tmp_path / "c"
    col = Collection.create(path, MIXED, encoder=None)
    for k in range(4):
        col.add(mixed_nodes(100 * k, 100 * k + 100, seed=k))
        col.delete([f"m{100 * k - 1:05d}"] if k else [])
        col.publish(retention=2)
    store = RootStore(path)
    roots = store.list_roots()
    assert len(roots) == 2
    for r in roots:
        m = store.read_root(r.id)
        objs = term_objects(m)
        assert len(objs) >= 3 * len(m.segments)
        assert objs <= set(referenced_objects(m))
        assert all((store.objects / o).is_file() for o in objs)
    report = verify_collection(path)
    assert report.ok and not report.orphans, report.lines()

    # a damaged term array is named
    head = store.read_root(store.head())
    seg = head.segments[-1]
    obj = seg["terms"]["s_body"]["keys_obj"]
    p = store.objects / obj
    data = bytearray(p.read_bytes())
    data[-1] ^= 0xFF
    p.write_bytes(bytes(data))
    report = verify_collection(path)
    assert not report.ok and report.bad[0].head and report.bad[0].file == str(p)


def test_verify_rejects_unsorted_or_foreign_keys(mixed: Collection, tmp_path: Path) -> None:
    shutil.copytree(mixed.store.path, tmp_path / "c", ignore=shutil.ignore_patterns("snapshots"))
    store = RootStore(tmp_path / "c")
    head = store.read_root(store.head())
    entry = head.segments[0]["terms"]["s_title"]
    keys = np.load(store.object_path(entry["keys_obj"]))
    bad_keys = {
        "not sorted": keys[::-1].copy(),
        "another segment": keys + (np.uint64(10_000) << np.uint64(32)),
    }
    for problem, arr in bad_keys.items():
        segments = copy.deepcopy(list(head.segments))
        segments[0]["terms"]["s_title"] = {
            "keys_obj": store.put_bytes(npy_bytes(arr)),
            "count": len(arr),
        }
        rid = store.write_root(head.with_(segments=tuple(segments)))
        report = verify_collection(store.path)
        bad = [r for r in report.roots if r.root == rid]
        assert bad and not bad[0].ok and problem in (bad[0].problem or ""), bad
        assert all(r.ok for r in report.roots if r.root != rid)
        (store.roots / f"{rid}.json").unlink()


def test_warm_joins_every_field_ahead_of_the_first_query(mixed: Collection) -> None:
    snap = Snapshot.open(mixed.store, mixed.root)
    assert snap.terms._keys == {}
    Engine(snap).warm()
    assert set(snap.terms._keys) == set(FIELDS)


@pytest.mark.parametrize("seed", range(5))
def test_row_local_search_equals_set_membership(seed: int) -> None:
    """Rows of every length (none, one key, hundreds), nids past the last row, hashes at both
    ends of the 32-bit range: the row-local binary search answers like a set."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(400)] + ["", "x" * 30]
    held: dict[int, set[str]] = {}
    for nid in range(300):
        size = int(rng.choice([0, 1, 2, 7, 64, 250]))
        held[nid] = {vocab[int(i)] for i in rng.choice(len(vocab), size=size, replace=False)}
    keys = np.unique(
        np.asarray([(nid << 32) | h32(t) for nid, toks in held.items() for t in toks], np.uint64)
    )
    index = TermIndex.__new__(TermIndex)
    TermIndex.__init__(index, None, [{"terms": {"f": {}}}])  # type: ignore[arg-type]
    index._keys["f"] = keys
    for _ in range(20):
        nids = rng.choice(340, size=int(rng.integers(1, 120)), replace=False).astype(np.uint64)
        toks = [vocab[int(i)] for i in rng.choice(len(vocab), size=int(rng.integers(1, 4)))]
        want = [bool(held.get(int(n), set()) & set(toks)) for n in nids.tolist()]
        assert index.matches({"f": toks}, nids).tolist() == want
