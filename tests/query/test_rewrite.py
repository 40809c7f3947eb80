"""Corpus-derived rewrites: each rule on a small product catalogue, the fast spell path against
brute force, and a SciFact smoke test when the shared data is present."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogitave.expand import analysis
from cogitave.expand.lexicon import Lexicon, NullLexicon, WordSetLexicon
from cogitave.expand.stats import CorpusStats, StatsBuilder
from cogitave.ingest.beir import BEIR_SCHEMA, read_beir
from cogitave.nodes import Node
from cogitave.query import rewrite as rw
from cogitave.query.rewrite import Rewritten, known_phrase, max_distance, osa_distance, rewrite
from cogitave.schema import Dimension, Schema
from tests.conftest import data_dir

CATALOGUE = [
    ("Leather boots", "brown leather boots for hiking, waterproof leather"),
    ("Leather jacket", "black leather jacket"),
    ("Biker leather jacket", "a leather jacket for riders"),
    ("Leatherjacket larvae", "garden pest guide"),
    ("Red cell batteries", "red cell AA batteries, pack of 4"),
    ("Red cell charger", "charger for red cell batteries"),
    ("DecoArt acrylic paint", "DecoArt paint for crafts"),
    ("DecoArt brush set", "brushes by DecoArt"),
    ("Deco art book", "a book on deco art styles"),
    ("Rubber boots", "boots for rain, rubber boots"),
    ("Boats", "inflatable boats"),
    ("Blue lamp", "a blue desk lamp and a cell phone stand"),
    ("Thinkpad tx200pro", "laptop tx200pro with 4gb"),
    ("Paper", "pack of 1000 sheets"),
    ("Cat toy", "toy for a cat"),
    ("Cut glass", "cut glass vase"),
]
SCHEMA = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))
WORDS = WordSetLexicon(
    frozenset({"leather", "lather", "boot", "red", "cell", "paint", "art", "lamp", "umbrella"})
)
NONE = NullLexicon()


def build(docs: list[tuple[str, str]] = CATALOGUE) -> CorpusStats:
    b = StatsBuilder(SCHEMA)
    b.add_all(
        Node(f"p{i}", kind="product", dims={"title": t, "body": x}) for i, (t, x) in enumerate(docs)
    )
    return b.apply(None)


@pytest.fixture(scope="module")
def stats() -> CorpusStats:
    return build()


def rw_q(
    query: str, stats: CorpusStats, lexicon: Lexicon = WORDS, dims: list[str] | None = None
) -> Rewritten:
    return rewrite(analysis.surface(query), stats, lexicon, dims=dims)


# ---- spell correction --------------------------------------------------------------------


def test_spell_leathr(stats: CorpusStats) -> None:
    r = rw_q("leathr boots", stats)
    assert r.tokens == ("leather", "boots") and r.display == ("leather", "boots")
    (x,) = r.rewrites
    assert (x.original, x.replacement, x.kind, x.distance) == ("leathr", ("leather",), "spell", 1)
    assert x.df == 3  # leather is in 3 titles (max over dimensions), not title + body
    assert r.zero_hit == ("leathr",) and r.noise == () and r.known_zero_hit == ()


def test_real_word_is_never_rewritten(stats: CorpusStats) -> None:
    r = rw_q("lather", stats)  # one edit from the corpus word "leather"
    assert r.rewrites == () and r.tokens == ()
    assert r.known_zero_hit == ("lather",) and r.noise == ()
    # the gate is what stops it: with no lexicon the same term is "corrected"
    assert rw_q("lather", stats, NONE).display == ("leather",)


def test_digits_never_change(stats: CorpusStats) -> None:
    # same letters, one digit different: distance 1, but the digits must match
    r = rw_q("tx300pro", stats, NONE)
    assert r.rewrites == () and r.noise == ("tx300pro",)
    # a token with digits is an identifier: never spell-corrected, even one letter away
    assert rw_q("tx200prp", stats, NONE).rewrites == ()
    # an all-digit token or one with too few letters is never corrected
    assert rw_q("10000", stats, NONE).rewrites == ()
    assert rw_q("5gb", stats, NONE).rewrites == ()


def test_first_letter_must_match(stats: CorpusStats) -> None:
    assert osa_distance("vatteries", "batteries", 2) == 1
    r = rw_q("vatteries", stats, NONE)
    assert r.rewrites == () and r.noise == ("vatteries",)
    assert rw_q("bstteries", stats, NONE).display == ("batteries",)


def test_distance_band_by_length(stats: CorpusStats) -> None:
    assert [max_distance(n) for n in range(1, 9)] == [0, 0, 1, 1, 1, 2, 2, 2]
    assert osa_distance("lethr", "leather", 2) == 2
    assert rw_q("lethr", stats, NONE).rewrites == ()  # 5 letters: distance 1 only
    assert rw_q("leathxx", stats, NONE).display == ("leather",)  # 7 letters: distance 2
    assert rw_q("lmap", stats, NONE).display == ("lamp",)  # a swap is one edit
    assert rw_q("ct", stats, NONE).rewrites == ()  # too short to correct


def test_tie_break_by_df_then_alphabet(stats: CorpusStats) -> None:
    # "bolts" is one edit from "boots" (df 2 in titles) and "boats" (df 1)
    r = rw_q("bolts", stats, NONE)
    assert r.display == ("boots",) and r.rewrites[0].df == 2
    # "cxt": "cat" and "cut" both df 1 at distance 1 -> alphabetical
    assert rw_q("cxt", stats, NONE).display == ("cat",)


# ---- compound splitting ------------------------------------------------------------------


def test_split_when_the_bigram_exists(stats: CorpusStats) -> None:
    r = rw_q("redcell batteries", stats)
    assert r.tokens == ("red", "cell", "batteries")
    (x,) = r.rewrites
    assert (x.kind, x.replacement, x.bigram_df) == ("split", ("red", "cell"), 2)
    assert r.zero_hit == ("redcell",) and r.noise == ()


def test_no_split_without_the_bigram(stats: CorpusStats) -> None:
    # "blue" and "cell" are corpus words, but never adjacent
    r = rw_q("bluecell", stats, NONE)
    assert r.rewrites == () and r.noise == ("bluecell",)


# ---- adjacent merging --------------------------------------------------------------------


def test_merge_when_the_compound_dominates(stats: CorpusStats) -> None:
    r = rw_q("deco art paint", stats)
    assert r.tokens == ("decoart", "deco", "art", "paint")  # both spellings for BM25
    assert r.display == ("decoart", "paint")
    (x,) = r.rewrites
    assert (x.kind, x.original, x.replacement) == ("merge", "deco art", ("decoart",))
    assert (x.df, x.bigram_df) == (2, 1)
    assert r.zero_hit == ()  # merging applies to tokens that have hits


def test_no_merge_when_the_bigram_dominates(stats: CorpusStats) -> None:
    # "leatherjacket" is a corpus word (df 1) but "leather jacket" is written twice
    r = rw_q("leather jacket", stats)
    assert r.rewrites == () and r.tokens == ("leather", "jacket")
    # and no merge when the compound is not a corpus word at all
    assert rw_q("hiking boots", stats).rewrites == ()


def test_merge_keeps_only_parts_with_hits() -> None:
    s = build([("DecoArt paint", "x"), ("Art book", "y")])
    r = rw_q("deco art", s)
    assert r.tokens == ("decoart", "art") and r.display == ("decoart",)
    assert r.zero_hit == ("deco",) and r.noise == ()


def test_merge_with_equal_counts_does_not_fire() -> None:
    s = build([("Deco art", "x"), ("DecoArt", "y")])
    assert rw_q("deco art", s).rewrites == ()


def test_one_character_parts_do_not_merge() -> None:
    s = build([("at home", "at"), ("a t", "56 cats"), ("5 6", "1000 1 000")])
    assert rw_q("a t", s).rewrites == ()  # "at" dominates "a t", but "a" is one character
    assert rw_q("5 6", s).rewrites == ()
    assert rw_q("1 000", s).rewrites == ()  # "1000" and "1 000" are both df 1 here


def test_thousands_group_merges(stats: CorpusStats) -> None:
    assert rw_q("pack of 1 000", stats).display == ("pack", "of", "1000")


# ---- noise and the result value ----------------------------------------------------------


def test_noise_and_known_zero_hit(stats: CorpusStats) -> None:
    r = rw_q("blue qzxv umbrella lamp", stats)
    assert r.zero_hit == ("qzxv", "umbrella")
    assert r.noise == ("qzxv",) and r.known_zero_hit == ("umbrella",)
    assert r.noise_fraction == 0.25
    assert r.tokens == ("blue", "lamp")
    assert r.display == ("blue", "qzxv", "umbrella", "lamp")
    assert not r.changed


def test_to_dict_is_json(stats: CorpusStats) -> None:
    r = rw_q("leathr redcell deco art zzqx", stats)
    d = json.loads(json.dumps(r.to_dict()))
    assert [x["kind"] for x in d["rewrites"]] == ["spell", "split", "merge"]
    assert all(x["reason"] for x in d["rewrites"])
    assert d["noise"] == ["zzqx"] and d["noise_fraction"] == 0.2


def test_empty_query(stats: CorpusStats) -> None:
    r = rewrite([], stats, WORDS)
    assert r == Rewritten((), (), ()) and r.noise_fraction == 0.0


def test_dims_restrict_what_counts_as_a_hit(stats: CorpusStats) -> None:
    # "waterproof" is only in bodies: zero-hit when only titles are searched
    assert rw_q("waterproof", stats, dims=["title"]).zero_hit == ("waterproof",)
    assert rw_q("waterproof", stats).zero_hit == ()
    # and the spell vocabulary follows the dimensions too
    assert rw_q("waterprof", stats, NONE).display == ("waterproof",)
    assert rw_q("waterprof", stats, NONE, dims=["title"]).rewrites == ()


def test_pure_and_per_snapshot(stats: CorpusStats) -> None:
    assert rw_q("leathr deco art", stats) == rw_q("leathr deco art", stats)
    assert rw._spell_index(stats, ("title", "body")) is rw._spell_index(stats, ("title", "body"))
    # a new snapshot with "leathr" in it: the term has hits, nothing to repair
    newer = build([*CATALOGUE, ("Leathr", "a brand")])
    assert rw_q("leathr", newer).rewrites == ()
    assert rw_q("leathr", stats).display == ("leather",)


# ---- the fast spell path against references ----------------------------------------------


def _osa_reference(a: str, b: str) -> int:
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(
                d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])
            )
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


short = st.text(alphabet="abc1", max_size=8)


@settings(max_examples=500, deadline=None)
@given(short, short, st.integers(0, 3))
def test_osa_banded_matches_reference(a: str, b: str, k: int) -> None:
    d = _osa_reference(a, b)
    assert osa_distance(a, b, k) == (d if d <= k else None)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.text(alphabet="abcdé2", min_size=1, max_size=7), st.integers(1, 5)),
    st.text(alphabet="abcdé2", min_size=1, max_size=7),
    st.integers(1, 2),
)
def test_spell_index_matches_brute_force(vocab: dict[str, int], t: str, k: int) -> None:
    digits = [c for c in t if c.isdigit()]
    brute = sorted(
        (d, -df, w)
        for w, df in vocab.items()
        if w != t
        and not w.isdigit()
        and w[0] == t[0]
        and [c for c in w if c.isdigit()] == digits
        and (d := _osa_reference(t, w)) <= k
    )
    got = rw._SpellIndex.build(vocab).nearest(t, k)
    assert got == ((brute[0][2], brute[0][0], -brute[0][1]) if brute else None)


# ---- real data ---------------------------------------------------------------------------


def test_scifact_typos_are_corrected() -> None:
    batch = read_beir(data_dir("scifact"))
    b = StatsBuilder(BEIR_SCHEMA)
    b.add_all(batch.nodes[:1500])
    stats = b.apply(None)
    vocab = sorted(
        w for d in stats.dims.values() for w, df in d.surface.items() if df >= 5 and w.isalpha()
    )
    rng = random.Random(3)
    words = [w for w in rng.sample(vocab, 400) if len(w) >= 7][:40]
    lex = NullLexicon()
    fixed = 0
    for w in words:
        typo = w[:3] + w[4] + w[3] + w[5:]  # swap two letters after the first three
        r = rewrite([typo], stats, lex)
        if r.zero_hit:
            fixed += r.display == (w,)
    assert fixed >= 0.8 * len(words)


@pytest.mark.parametrize(
    ("tokens", "phrase"),
    [
        (["boots", "for", "rainy", "weather"], ("rainy", "weather")),
        (["jacket", "for", "trekking", "in", "patagonia"], ("trekking", "patagonia")),
        (["rainy", "boots", "for", "weather"], ("rainy",)),  # scattered: runs of one
        (["in", "rainy", "boots", "cold", "windy", "weather"], ("cold", "windy", "weather")),
        (["boots"], ()),
    ],
)
def test_the_known_phrase_is_the_longest_run_standing_together(tokens, phrase) -> None:
    known = {"rainy", "weather", "trekking", "patagonia", "cold", "windy"}
    assert known_phrase(tokens, known) == phrase
