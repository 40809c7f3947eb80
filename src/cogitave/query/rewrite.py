"""Corpus-derived query rewrites: repair zero-hit terms against the collection's own vocabulary.

Input: the query's surface tokens (:func:`cogitave.expand.analysis.surface`), the snapshot's
:class:`~cogitave.expand.stats.CorpusStats` and a real-word :class:`~cogitave.expand.lexicon.
Lexicon`. Output: :class:`Rewritten`. A pure function of the three: no dictionary other than
the lexicon gate, no model, nothing written.

A term is *zero-hit* when its stem has df 0 in every searched dimension. Corpus df of a surface
token or a bigram is the maximum over the searched dimensions (a node counts once per dimension,
so a sum would count one node several times). The rules, in the order they apply:

1. **Adjacent merging** (every adjacent pair, hits or not): ``a b`` becomes ``ab`` when ``ab``
   is a corpus word and ``df(ab) > bigram_df(a b)``. Both spellings stay in the BM25 tokens
   (``deco art -> decoart deco art``). Pairs are taken greedily left to right; a token joins at
   most one merge. Parts shorter than :data:`MIN_PART_LEN` never merge (``a t -> at`` and
   ``5 6 -> 56`` dominate by accident), except a thousands group (``1 000 -> 1000``).
2. **Compound splitting** (zero-hit tokens): ``ab`` becomes ``a b`` when both parts are corpus
   words of at least :data:`MIN_PART_LEN` characters and ``bigram_df(a b) > 0``; the split with
   the largest bigram df wins (then the more balanced split, then the leftmost).
   Not gated by the lexicon: a real word missing from the corpus (``notebook``) may still
   split when the corpus writes it spaced.
3. **Spell correction** (zero-hit tokens the lexicon does not know): the nearest corpus word by
   optimal-string-alignment distance (Levenshtein plus adjacent transposition as one edit),
   within :func:`max_distance` of the token's letter count (digits excluded): none below
   :data:`MIN_SPELL_LEN` letters, 1 up to :data:`SHORT_MAX_LEN`, 2 beyond. Ties go to the
   higher corpus df, then alphabetical order. Guards: a real word (``lexicon.is_word``) is never
   rewritten; the first character must match; a token with a digit is never corrected (on
   SciFact's own queries 12 of 13 such corrections were wrong: ``bcp1 -> bc1``, ``elf3 ->
   eif3`` are gene names, not typos), and no candidate may differ from a token in its digits.
4. **Noise**: zero-hit tokens still unrepaired and unknown to the lexicon. The unrepaired ones
   the lexicon knows are ``known_zero_hit``.
5. **The dropped real-word phrase** (``known_phrase``, what the residual boost embeds): the
   longest run of ``known_zero_hit`` words that stand together in the query, function words
   allowed between them (``boots for *rainy weather*``, ``jacket for *trekking in patagonia*``).
   Known zero-hit words scattered through a long question, each between words the corpus has
   (CISI: ``... *businessmen* need for proper ... *unobstructed* use of ...``), are not a
   phrase: reordering every survivor by their meaning cost CISI 0.0075 nDCG@10.

The band was chosen with ``bench/rewrites.py --sweep`` (SciFact, default lexicon): distance 1
up to 4 letters corrects 80.5% of distance-2 typos but rewrites 13.3% wrongly and 7.7% of
correct out-of-corpus words; up to 5 letters: 77.9% / 10.1% / 6.7%; up to 6: 72.5% / 7.2% /
4.8%. Five is the balance (and Elasticsearch's ``AUTO`` fuzziness); 90% of distance-1 typos
are corrected.

Spell lookup uses a per-snapshot index built lazily on first need and kept while the
``CorpusStats`` object lives: vocabulary bucketed by first character, each bucket sorted by
length, with a character histogram per word. A query term scans only its bucket's length window
``[n - k, n + k]``, drops words whose bag distance already exceeds ``k`` (a lower bound of the
edit distance, numpy over the window), and runs the banded DP with early exit on the few
survivors, nearest bound first (p95 under 0.5 ms per zero-hit term on a 100k-word vocabulary,
in pure Python + numpy).
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from cogitave.expand import analysis
from cogitave.expand.lexicon import FUNCTION_WORDS, Lexicon
from cogitave.expand.stats import CorpusStats

RewriteKind = Literal["spell", "split", "merge"]

# Edit-distance band by the token's letter count (digits are fixed, so they are not counted).
# Measured with bench/rewrites.py --sweep on SciFact; it is also Lucene's AUTO fuzziness.
MIN_SPELL_LEN = 3  # fewer letters: never spell-corrected
SHORT_MAX_LEN = 5  # up to this many letters: distance 1; more: distance 2
MAX_DISTANCE = 2
MIN_PART_LEN = 2  # shortest part of a split, and of a merge (keeps "a t" -> "at" out)
_DIGITS = re.compile(r"\d")
_THOUSANDS = re.compile(r"\d{1,3}")
_N_BINS = 37  # a-z, 0-9, anything else


def max_distance(n: int) -> int:
    """The edit distance a token with ``n`` letters (non-digits) may be corrected across."""
    if n < MIN_SPELL_LEN:
        return 0
    return 1 if n <= SHORT_MAX_LEN else MAX_DISTANCE


@dataclass(frozen=True)
class TermRewrite:
    """One rewrite and its evidence."""

    original: str  # the token, or "a b" for a merge
    replacement: tuple[str, ...]
    kind: RewriteKind
    position: int  # index of the (first) original token
    distance: int = 0  # spell: edit distance
    df: int = 0  # spell/merge: corpus df of the new word; split: the smaller part's df
    bigram_df: int = 0  # split: df of "a b"; merge: df of the spaced "a b"

    @property
    def reason(self) -> str:
        """One line for diagnostics."""
        rep = " ".join(self.replacement)
        if self.kind == "spell":
            return (
                f"{self.original!r} has no hits; {rep!r} is a corpus word {self.distance} "
                f"edit(s) away (df {self.df})"
            )
        if self.kind == "split":
            return f"{self.original!r} has no hits; the corpus writes {rep!r} (df {self.bigram_df})"
        return (
            f"the corpus writes {rep!r} (df {self.df}) more often than {self.original!r} "
            f"(df {self.bigram_df}); both are searched"
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["replacement"] = list(self.replacement)
        out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Rewritten:
    """The query after rewrites.

    ``tokens``: surface tokens for BM25, in query order, both spellings of a merge, never a
    zero-hit term (it matches nothing; a merge keeps only the parts that have hits).
    ``display``: the corrected query, one spelling per place, unrepaired terms kept ("did you
    mean"). ``zero_hit``: every zero-hit term of the input; ``noise`` and ``known_zero_hit``
    split the unrepaired ones by the lexicon; ``known_phrase``: the longest run of
    ``known_zero_hit`` words standing together (rule 5).
    """

    original: tuple[str, ...]
    tokens: tuple[str, ...]
    display: tuple[str, ...]
    rewrites: tuple[TermRewrite, ...] = ()
    zero_hit: tuple[str, ...] = ()
    noise: tuple[str, ...] = ()
    known_zero_hit: tuple[str, ...] = ()
    known_phrase: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.rewrites)

    @property
    def noise_fraction(self) -> float:
        """Share of the query's token occurrences that are noise (0 for an empty query)."""
        if not self.original:
            return 0.0
        noise = set(self.noise)
        return sum(t in noise for t in self.original) / len(self.original)

    def to_dict(self) -> dict[str, Any]:
        return {
            "original": list(self.original),
            "tokens": list(self.tokens),
            "display": list(self.display),
            "rewrites": [r.to_dict() for r in self.rewrites],
            "zero_hit": list(self.zero_hit),
            "noise": list(self.noise),
            "known_zero_hit": list(self.known_zero_hit),
            "known_phrase": list(self.known_phrase),
            "noise_fraction": round(self.noise_fraction, 4),
        }


def rewrite(
    tokens: Sequence[str],
    stats: CorpusStats,
    lexicon: Lexicon,
    *,
    dims: Sequence[str] | None = None,
) -> Rewritten:
    """Apply merging, splitting and spell correction; classify what stays zero-hit."""
    toks = tuple(tokens)
    view = _View(stats, tuple(dims) if dims is not None else tuple(stats.dims))
    zero = [view.zero_hit(t) for t in toks]

    rewrites: list[TermRewrite] = []
    # slot i -> (display tokens, BM25 tokens); None means the token joined the previous merge
    slots: list[tuple[tuple[str, ...], tuple[str, ...]] | None] = [
        ((t,), () if z else (t,)) for t, z in zip(toks, zero, strict=True)
    ]
    repaired = [False] * len(toks)

    i = 0
    while i + 1 < len(toks):
        m = _merge(toks[i], toks[i + 1], view, i)
        if m is None:
            i += 1
            continue
        rewrites.append(m)
        compound = m.replacement[0]
        spaced = tuple(t for t, z in zip(toks[i : i + 2], zero[i : i + 2], strict=True) if not z)
        slots[i] = ((compound,), (compound, *spaced))
        slots[i + 1] = None
        repaired[i] = repaired[i + 1] = True
        i += 2

    for i, t in enumerate(toks):
        if not zero[i] or repaired[i]:
            continue
        r = _split(t, view, i)
        if r is None and not lexicon.is_word(t):
            r = _spell(t, view, i)
        if r is not None:
            rewrites.append(r)
            slots[i] = (r.replacement, r.replacement)
            repaired[i] = True

    zero_hit = _unique(t for t, z in zip(toks, zero, strict=True) if z)
    left = _unique(t for i, t in enumerate(toks) if zero[i] and not repaired[i])
    known = {t for t in left if lexicon.is_word(t)}
    return Rewritten(
        original=toks,
        tokens=tuple(x for s in slots if s is not None for x in s[1]),
        display=tuple(x for s in slots if s is not None for x in s[0]),
        rewrites=tuple(sorted(rewrites, key=lambda r: r.position)),
        zero_hit=zero_hit,
        noise=tuple(t for t in left if t not in known),
        known_zero_hit=tuple(t for t in left if t in known),
        known_phrase=known_phrase(toks, known),
    )


def known_phrase(tokens: Sequence[str], known: set[str]) -> tuple[str, ...]:
    """The longest run of ``known`` words standing together in ``tokens`` (function words may
    join them), its words once each; the first such run on a tie."""
    best: list[str] = []
    run: list[str] = []
    for t in tokens:
        if t in known:
            run.append(t)
        elif not (run and t in FUNCTION_WORDS):
            if len(run) > len(best):
                best = run
            run = []
    if len(run) > len(best):
        best = run
    return _unique(best)


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


class _View:
    """Max-over-dimensions lookups on the searched dimensions of one snapshot."""

    def __init__(self, stats: CorpusStats, dims: tuple[str, ...]) -> None:
        self.stats = stats
        self.dims = dims
        self._d = [stats.dim(d) for d in dims]

    def zero_hit(self, token: str) -> bool:
        s = analysis.stem(token)
        return all(d.df(s) == 0 for d in self._d)

    def df(self, token: str) -> int:
        return max((d.surface_df(token) for d in self._d), default=0)

    def bigram(self, a: str, b: str) -> int:
        return max((d.bigram(a, b) for d in self._d), default=0)

    def index(self) -> _SpellIndex:
        return _spell_index(self.stats, self.dims)


def _merge(a: str, b: str, view: _View, pos: int) -> TermRewrite | None:
    short = len(a) < MIN_PART_LEN or len(b) < MIN_PART_LEN
    if short and not (_THOUSANDS.fullmatch(a) and len(b) == 3 and b.isdigit()):
        return None  # one-character parts merge by accident ("a t", "5 6"); "1 000" is fine
    compound = a + b
    cdf = view.df(compound)
    if cdf == 0:
        return None
    bdf = view.bigram(a, b)
    if cdf <= bdf:
        return None
    return TermRewrite(f"{a} {b}", (compound,), "merge", pos, df=cdf, bigram_df=bdf)


def _split(t: str, view: _View, pos: int) -> TermRewrite | None:
    best: tuple[int, int, int, int] | None = None  # (bigram df, balance, -cut, parts df)
    for i in range(MIN_PART_LEN, len(t) - MIN_PART_LEN + 1):
        a, b = t[:i], t[i:]
        adf, bdf = view.df(a), view.df(b)
        if not adf or not bdf:
            continue
        g = view.bigram(a, b)
        if g > 0 and (best is None or (g, min(i, len(t) - i), -i) > best[:3]):
            best = (g, min(i, len(t) - i), -i, min(adf, bdf))
    if best is None:
        return None
    g, _, neg_cut, parts_df = best
    cut = -neg_cut
    return TermRewrite(t, (t[:cut], t[cut:]), "split", pos, df=parts_df, bigram_df=g)


def _spell(t: str, view: _View, pos: int) -> TermRewrite | None:
    if _DIGITS.search(t):
        return None  # identifiers with digits (gene names, model numbers) are not typos
    k = max_distance(len(_DIGITS.sub("", t)))
    if k == 0:
        return None
    hit = view.index().nearest(t, k)
    if hit is None:
        return None
    word, dist, df = hit
    return TermRewrite(t, (word,), "spell", pos, distance=dist, df=df)


# ---- the spell index ---------------------------------------------------------------------


def _bin(c: str) -> int:
    """Histogram bin of a character: a-z 0-25, 0-9 26-35, anything else 36."""
    o = ord(c)
    if 97 <= o <= 122:
        return o - 97
    if 48 <= o <= 57:
        return o - 48 + 26
    return 36


def _histograms(words: list[str]) -> np.ndarray:
    """Character histograms, one column per word: shape ``(_N_BINS, len(words))``, int8."""
    lens = np.fromiter((len(w) for w in words), np.intp, len(words))
    codes = np.frombuffer("".join(words).encode("utf-32-le"), np.uint32).astype(np.int64)
    bins = np.full(codes.shape, 36, np.intp)
    lower = (codes >= 97) & (codes <= 122)
    digit = (codes >= 48) & (codes <= 57)
    bins[lower] = codes[lower] - 97
    bins[digit] = codes[digit] - 48 + 26
    owner = np.repeat(np.arange(len(words)), lens)
    flat = np.bincount(bins * len(words) + owner, minlength=_N_BINS * len(words))
    return np.minimum(flat, 127).astype(np.int8).reshape(_N_BINS, len(words))


@dataclass
class _Bucket:
    """Words sharing a first character, sorted by length."""

    words: list[str]
    dfs: list[int]
    lens: np.ndarray
    hist: np.ndarray  # (_N_BINS, len(words))


@dataclass
class _SpellIndex:
    buckets: dict[str, _Bucket] = field(default_factory=dict)

    @classmethod
    def build(cls, vocab: dict[str, int]) -> _SpellIndex:
        by_first: dict[str, list[str]] = {}
        for w in vocab:
            if not w.isdigit():
                by_first.setdefault(w[0], []).append(w)
        out = cls()
        for c, ws in by_first.items():
            ws.sort(key=lambda w: (len(w), w))
            out.buckets[c] = _Bucket(
                words=ws,
                dfs=[vocab[w] for w in ws],
                lens=np.fromiter((len(w) for w in ws), np.int32, len(ws)),
                hist=_histograms(ws),
            )
        return out

    def nearest(self, t: str, k: int) -> tuple[str, int, int] | None:
        """(word, distance, df) of the best candidate within ``k``, or None."""
        b = self.buckets.get(t[0])
        if b is None:
            return None
        n = len(t)
        lo = int(np.searchsorted(b.lens, n - k, "left"))
        hi = int(np.searchsorted(b.lens, n + k, "right"))
        if lo >= hi:
            return None
        # Bag distance, a lower bound of the edit distance: max(|w|, |t|) - shared characters.
        # Only the query's own bins can be shared, so only those columns are read.
        shared = np.zeros(hi - lo, np.int32)
        for c, m in Counter(_bin(ch) for ch in t).items():
            shared += np.minimum(b.hist[c, lo:hi], m)
        bound = np.maximum(b.lens[lo:hi], n) - shared
        cand = np.flatnonzero(bound <= k)
        digits = _DIGITS.findall(t)
        best: tuple[int, int, str] | None = None
        for j in cand[np.argsort(bound[cand], kind="stable")].tolist():
            if best is not None and bound[j] > best[0]:
                break  # best-first: nothing left can be as close
            w = b.words[lo + j]
            if w == t or _DIGITS.findall(w) != digits:
                continue
            d = osa_distance(t, w, k if best is None else best[0])
            if d is None:
                continue
            key = (d, -b.dfs[lo + j], w)
            if best is None or key < best:
                best = key
        return None if best is None else (best[2], best[0], -best[1])


_INDEX: dict[tuple[int, tuple[str, ...]], tuple[weakref.ref[CorpusStats], _SpellIndex]] = {}
_INDEX_LOCK = threading.Lock()


def _spell_index(stats: CorpusStats, dims: tuple[str, ...]) -> _SpellIndex:
    """The spell index of ``stats`` over ``dims``, built on first use (stats are immutable)."""
    key = (id(stats), dims)
    with _INDEX_LOCK:
        hit = _INDEX.get(key)
        if hit is not None and hit[0]() is stats:
            return hit[1]
    vocab: dict[str, int] = {}
    for name in dims:
        for w, df in stats.dim(name).surface.items():
            if df > vocab.get(w, 0):
                vocab[w] = df
    index = _SpellIndex.build(vocab)
    ref = weakref.ref(stats, lambda _r, key=key: _INDEX.pop(key, None))
    with _INDEX_LOCK:
        _INDEX[key] = (ref, index)
    return index


def osa_distance(a: str, b: str, k: int) -> int | None:
    """Optimal-string-alignment distance of ``a`` and ``b`` if it is at most ``k``, else None.

    Levenshtein with a swap of two adjacent characters counted as one edit. The common prefix
    and suffix are dropped first (they cost nothing); then a banded DP computes only cells with
    ``|i - j| <= k`` and stops as soon as a whole band row exceeds ``k``.
    """
    la, lb = len(a), len(b)
    if abs(la - lb) > k:
        return None
    p, m = 0, min(la, lb)
    while p < m and a[p] == b[p]:
        p += 1
    q = 0
    while q < m - p and a[la - 1 - q] == b[lb - 1 - q]:
        q += 1
    a, b = a[p : la - q], b[p : lb - q]
    la, lb = len(a), len(b)
    if la == 0 or lb == 0:
        return max(la, lb)  # <= k: the length check above
    big = k + 1
    prev2: list[int] = []
    prev = [j if j <= k else big for j in range(lb + 1)]
    for i in range(1, la + 1):
        cur = [big] * (lb + 1)
        if i <= k:
            cur[0] = i
        ai = a[i - 1]
        row_min = cur[0]
        lo = i - k if i > k else 1
        hi = i + k if i + k < lb else lb
        for j in range(lo, hi + 1):
            bj = b[j - 1]
            v = prev[j - 1] + (ai != bj)
            if prev[j] + 1 < v:
                v = prev[j] + 1
            if cur[j - 1] + 1 < v:
                v = cur[j - 1] + 1
            if i > 1 and j > 1 and ai == b[j - 2] and a[i - 2] == bj and prev2[j - 2] + 1 < v:
                v = prev2[j - 2] + 1
            cur[j] = v
            if v < row_min:
                row_min = v
        if row_min > k:
            return None
        prev2, prev = prev, cur
    d = prev[lb]
    return d if d <= k else None
