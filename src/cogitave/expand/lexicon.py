"""The real-word gate: "is this token a real English word?".

The query rewrites (:mod:`cogitave.query.rewrite`) never spell-correct a real word, and the
planner treats a zero-hit term as noise only when the lexicon does not know it. Everything else
about a collection's vocabulary comes from its own statistics; this gate is the one outside
source.

Rules shared by every implementation (:class:`WordSetLexicon`):

- a token is a lowercased surface token (:func:`cogitave.expand.analysis.surface`);
- a token with a digit is never a word (numbers and codes such as ``x200`` are the digit rule's
  business in the rewrites, not the lexicon's);
- inflections of a known word count as known. :func:`base_forms` strips one regular suffix by
  rule (plural ``-s``/``-es``/``-ies``; ``-ed``/``-ied``; ``-ing``; comparative ``-er``/``-est``
  and ``-ier``/``-iest``; adverb ``-ly``/``-ily``/``-ically``/``-bly``) with the usual
  spelling repairs (restore a final ``e``; undo a doubled consonant after consonant-vowel, but
  not ``ff``/``ss``/``zz``), applied up to :data:`MAX_DEINFLECT_DEPTH` times
  (``runners -> runner -> run``). A base needs :data:`MIN_BASE_LEN` characters and a vowel, and
  must be in the word set itself. Rules rather than the Snowball stem, because a stem also
  matches a truncated typo (``generat`` is the stem of ``generate``, so a stem check would call
  that typo a word and block its correction). The price: ``runing`` passes as ``run + ing``.

Implementations:

- :class:`ConceptNetLexicon`: ConceptNet's English vocabulary (``term<TAB>pos`` lines) and/or
  ConceptNet assertion CSVs (``/c/en/`` terms). Multi-word terms (``_`` or ``-``) add their
  single-word parts; ConceptNet lists no function words, so a short closed-class list written
  here (:data:`FUNCTION_WORDS`) is added.
- :class:`WordfreqLexicon`: the ``wordfreq`` package's English list (a pip dependency, no extra
  file) above a Zipf floor, minus tokens that look like a common misspelling of a much more
  frequent word (see :func:`WordfreqLexicon.misspelling_of`).
- :class:`SystemWordsLexicon`: ``/usr/share/dict/words`` when the system has it.
- :class:`NullLexicon`: knows nothing (``"none"``: every zero-hit non-word may be rewritten).

Default (:func:`default_lexicon`): ``WordfreqLexicon(DEFAULT_MIN_ZIPF)``: all of wordfreq's
large English list (Zipf >= 1.0) with the misspelling filter. Measured with
``bench/rewrites.py --lexicons`` on SciFact (2,000 + 2,000 generated typos; 2,000 correctly
spelled Cranfield/FastAPI/Hugo words that SciFact lacks), against ConceptNet's vocabulary and
higher floors:

=====================  ===========  ===============  ===================  ===================
lexicon                query words  typos corrected  false spell rewrite  common misspellings
                       known        (d1 + d2)        (other corpora)      accepted
=====================  ===========  ===============  ===================  ===================
wordfreq, Zipf >= 1.0  94.2%        84.0%            6.7%                 62%
wordfreq, Zipf >= 2.0  86.0%        84.9%            11.2%                28%
wordfreq, Zipf >= 3.0  66.6%        85.3%            20.0%                11%
ConceptNet vocabulary  80.6%        85.3%            18.4%                10%
=====================  ===========  ===============  ===================  ===================

A false rewrite (a correct word silently searched as another) costs more than a missed
correction (the term stays zero-hit and the dense legs still see it), so the broadest list
wins: each Zipf step up buys under 1 point of corrections for 4-9 points of false rewrites.
"""

from __future__ import annotations

import gzip
import os
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable
from urllib.parse import unquote

from cogitave.errors import InputError, NotFoundError

MAX_DEINFLECT_DEPTH = 2
MIN_BASE_LEN = 3
MIN_PART_LEN = 2
# wordfreq's "large" English list starts at Zipf 1.0, so the default floor keeps all of it:
# measured on SciFact, every step up refuses real domain words (adventitia, spermatids,
# remolding at 1.0-1.5) and raises false spell rewrites more than it gains corrections.
DEFAULT_MIN_ZIPF = 1.0
# A listed token is a misspelling of a neighbour one typo-shaped edit away when the neighbour
# is this much more frequent (Zipf units: 1.5 = ~30x). See WordfreqLexicon.misspelling_of.
MISSPELLING_MARGIN = 1.5
# A word listed this frequently is not a typo however frequent its neighbour is.
MAX_TYPO_ZIPF = 4.0
# Shorter tokens are not examined: among short words a frequent neighbour one swap away is
# common and proves nothing ("tunel"/"tunnel" is an assay, "trnas" is tRNAs).
MIN_TYPO_LEN = 6
SYSTEM_WORDS_PATH = Path("/usr/share/dict/words")
_VOWELS = frozenset("aeiouy")
_DIGIT = re.compile(r"\d")
_SPLIT = re.compile(r"[^0-9a-z\u00c0-\u024f]+")

# Closed-class English words (articles, pronouns, prepositions, conjunctions, auxiliaries,
# determiners), written for this project: ConceptNet's vocabulary leaves them out.
FUNCTION_WORDS: frozenset[str] = frozenset(
    """
    a an the this that these those some any each every either neither no none all both few
    many much more most less least other another such what which who whom whose whatever
    whichever whoever i me my mine myself you your yours yourself yourselves he him his himself
    she her hers herself it its itself we us our ours ourselves they them their theirs
    themselves one ones and or nor but yet so if then else than because since unless until
    while whereas although though whether as at by for from in into of off on onto out over
    under up down upon with within without about above across after against along among
    around before behind below beneath beside besides between beyond during except inside
    near outside past per through throughout till to toward towards via am is are was were be
    been being do does did done doing have has had having shall should will would can could
    may might must ought not very too also just only even still already again ever never here
    there where when why how whenever wherever
    """.split()  # noqa: SIM905 - one readable block rather than 180 one-word lines
)


@runtime_checkable
class Lexicon(Protocol):
    """Answers "is this lowercased surface token a real English word?"."""

    def is_word(self, token: str) -> bool: ...


def _undouble(stem: str, out: list[str]) -> None:
    # English doubles a final consonant after a single vowel: stop -> stopped, big -> bigger;
    # words spelt with a final ff/ss/zz keep it (staff -> staffed).
    if (
        len(stem) >= 4
        and stem[-1] == stem[-2]
        and stem[-1] not in _VOWELS
        and stem[-1] not in "fsz"
        and stem[-3] in _VOWELS
        and stem[-4] not in _VOWELS
    ):
        out.append(stem[:-1])


def base_forms(token: str) -> list[str]:
    """Candidate bases of ``token`` after stripping one regular English inflection suffix."""
    w, n, out = token, len(token), []
    if n > 4 and w.endswith("ies"):
        out.append(w[:-3] + "y")
    if n > 3 and w.endswith("es"):
        out.append(w[:-2])
    if n > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        out.append(w[:-1])
    if n > 4 and w.endswith("ied"):
        out.append(w[:-3] + "y")
    if n > 4 and w.endswith("ed"):
        out += [w[:-2], w[:-1]]
        _undouble(w[:-2], out)
    if n > 5 and w.endswith("ing"):
        out += [w[:-3], w[:-3] + "e"]
        _undouble(w[:-3], out)
    for suf, y_suf in (("er", "ier"), ("est", "iest")):
        if n > len(suf) + 2 and w.endswith(suf):
            stem = w[: -len(suf)]
            out += [stem, stem + "e"]
            _undouble(stem, out)
            if w.endswith(y_suf):
                out.append(w[: -len(y_suf)] + "y")
    if n > 4 and w.endswith("ly"):
        out.append(w[:-2])
        if w.endswith("ily"):
            out.append(w[:-3] + "y")
        if w.endswith("ically"):
            out.append(w[:-4])
        if w.endswith(("bly", "ply", "tly", "dly")):
            out.append(w[:-1] + "e")  # probably -> probable, simply -> simple
    return [b for b in out if len(b) >= MIN_BASE_LEN and not _VOWELS.isdisjoint(b)]


@dataclass(frozen=True)
class WordSetLexicon:
    """A lexicon backed by a set of lowercased words, with rule-based de-inflection."""

    words: frozenset[str]
    name: str = "words"

    def is_word(self, token: str) -> bool:
        """True for a known word or a regular inflection of one; never for a digit token."""
        return self.match(token) is not None

    def match(self, token: str) -> str | None:
        """The listed word that makes ``token`` known (itself or a de-inflected base)."""
        t = token.lower()
        if not t or _DIGIT.search(t):
            return None
        return self._match(t, MAX_DEINFLECT_DEPTH)

    def _match(self, t: str, depth: int) -> str | None:
        if t in self.words:
            return t
        if depth <= 0:
            return None
        for b in base_forms(t):
            m = self._match(b, depth - 1)
            if m is not None:
                return m
        return None

    def __len__(self) -> int:
        return len(self.words)


def _single_words(term: str) -> Iterator[str]:
    """A term, lowercased, and the parts of a multi-word term (``_``, ``-``, spaces)."""
    t = term.strip().lower()
    if not t:
        return
    parts = [p for p in _SPLIT.split(t.replace("_", " ")) if p]
    if len(parts) == 1 and parts[0] == t:
        yield t
        return
    yield from (p for p in parts if len(p) >= MIN_PART_LEN)


def _open_text(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:  # type: ignore[operator]
        yield from f


def _conceptnet_terms(path: Path) -> Iterator[str]:
    """English terms of one ConceptNet file: a vocabulary TSV or an assertions CSV."""
    for line in _open_text(path):
        if line.startswith("/a/"):
            cols = line.split("\t")
            for uri in cols[2:4]:
                if uri.startswith("/c/en/"):
                    yield unquote(uri[6:].split("/", 1)[0])
        elif line.strip() and not line.startswith("#"):
            yield line.split("\t", 1)[0]


@dataclass(frozen=True)
class ConceptNetLexicon(WordSetLexicon):
    """ConceptNet's English terms (single words and the parts of multi-word terms)."""

    name: str = "conceptnet"

    @classmethod
    def load(cls, path: str | Path) -> ConceptNetLexicon:
        """Read a vocabulary TSV, an assertions CSV (optionally ``.gz``) or a folder of them."""
        p = Path(path)
        if not p.exists():
            raise NotFoundError(f"ConceptNet lexicon not found: {p}", details={"path": str(p)})
        files = sorted(x for x in p.iterdir() if x.is_file()) if p.is_dir() else [p]
        return cls.from_terms(
            (t for f in files for t in _conceptnet_terms(f)), name=f"conceptnet:{p}"
        )

    @classmethod
    def from_terms(cls, terms: Iterable[str], *, name: str = "conceptnet") -> ConceptNetLexicon:
        """Build from raw ConceptNet terms (``ice_cream``, ``x-ray``, ``dog``)."""
        words = {w for term in terms for w in _single_words(term)}
        return cls(frozenset(words | FUNCTION_WORDS), name=name)


@dataclass(frozen=True)
class SystemWordsLexicon(WordSetLexicon):
    """A system word list, one word a line (``/usr/share/dict/words``)."""

    name: str = "system"

    @classmethod
    def load(cls, path: str | Path = SYSTEM_WORDS_PATH) -> SystemWordsLexicon:
        p = Path(path)
        if not p.is_file():
            raise NotFoundError(
                f"system word list not found: {p} (install a words package, e.g. wamerican, "
                'or use lexicon = "wordfreq")',
                details={"path": str(p)},
            )
        words = {w for line in _open_text(p) for w in _single_words(line.split("'")[0])}
        return cls(frozenset(words), name=f"system:{p}")


@dataclass(frozen=True)
class NullLexicon:
    """Knows no word: no real-word gate, every unrepaired zero-hit term is noise."""

    name: str = "none"

    def is_word(self, token: str) -> bool:
        return False


@dataclass(frozen=True)
class WordfreqLexicon(WordSetLexicon):
    """wordfreq's English words with Zipf >= ``min_zipf``, minus likely misspellings.

    wordfreq counts what people write, typos included (``recieve`` has Zipf 2.75, the same as
    ``lather``), so a frequency floor alone cannot separate them. With ``reject_misspellings``
    a listed token is still refused when :meth:`misspelling_of` finds a typo-shaped neighbour
    at least :data:`MISSPELLING_MARGIN` Zipf more frequent.
    """

    name: str = "wordfreq"
    min_zipf: float = DEFAULT_MIN_ZIPF
    reject_misspellings: bool = True
    zipf: dict[str, float] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def load(
        cls, min_zipf: float = DEFAULT_MIN_ZIPF, *, reject_misspellings: bool = True
    ) -> WordfreqLexicon:
        try:
            import wordfreq
        except ImportError as e:  # pragma: no cover - a declared dependency
            raise NotFoundError("the wordfreq package is not installed") from e
        # The packed list is buckets of words by centibel (bucket i: Zipf 9 - i/100); reading
        # it directly shares one float per bucket instead of holding wordfreq's own dict too.
        zipf: dict[str, float] = {}
        for i, bucket in enumerate(wordfreq.get_frequency_list("en", wordlist="large")):
            z = round(9 - i / 100, 2)
            for w in bucket:
                zipf.setdefault(w, z)
        words = frozenset(w for w, z in zipf.items() if z >= min_zipf)
        suffix = "" if reject_misspellings else ",raw"
        return cls(
            words,
            name=f"wordfreq:{min_zipf:g}{suffix}",
            min_zipf=min_zipf,
            reject_misspellings=reject_misspellings,
            zipf=zipf,
        )

    def is_word(self, token: str) -> bool:
        m = self.match(token)
        if m is None:
            return False
        # A de-inflected typo ("comunicates") is judged by the listed base it matched.
        return not (self.reject_misspellings and self.misspelling_of(m))

    def misspelling_of(self, token: str) -> str | None:
        """A much more frequent listed word one typo-shaped edit away, if any.

        Typo shapes (first letter kept): two adjacent letters swapped (``recieve``), a doubled
        letter undone or a single one doubled (``occured``, ``untill``). Only listed tokens of
        :data:`MIN_TYPO_LEN`+ characters below Zipf :data:`MAX_TYPO_ZIPF` are examined. Vowel
        swaps and dropped letters are *not* shapes: measured on SciFact they refused real words
        (``murine``/``marine``, ``modal``/``model``, ``coarse``/``course``, ``cohesin``/
        ``cohesion``), and a refused real word may then be "corrected" into the wrong one.
        """
        z = self.zipf.get(token)
        if z is None or z >= MAX_TYPO_ZIPF or len(token) < MIN_TYPO_LEN:
            return None
        best, best_z = None, z + MISSPELLING_MARGIN
        for v in _typo_neighbours(token):
            vz = self.zipf.get(v, 0.0)
            if vz >= best_z:
                best, best_z = v, vz
        return best


def _typo_neighbours(t: str) -> set[str]:
    """Spellings one typo-shaped edit from ``t``, first letter kept: swaps and (un)doubling."""
    out: set[str] = set()
    n = len(t)
    for i in range(1, n - 1):
        if t[i] != t[i + 1]:
            out.add(t[:i] + t[i + 1] + t[i] + t[i + 2 :])
    for i in range(1, n):
        c = t[i]
        if i + 1 < n and t[i + 1] == c:
            out.add(t[:i] + t[i + 1 :])
        elif c.isalpha():
            out.add(t[: i + 1] + c + t[i + 1 :])
    out.discard(t)
    return out


_CACHE: dict[str, Lexicon] = {}
_LOCK = threading.Lock()


def lexicon_from_config(spec: str) -> Lexicon:
    """A lexicon from a collection's config string, loaded once per process.

    ``"conceptnet:/path"`` (vocabulary TSV, assertions CSV[.gz] or a folder), ``"wordfreq"``
    (Zipf floor :data:`DEFAULT_MIN_ZIPF`), ``"wordfreq:3.0"``, ``"wordfreq:3.0:raw"`` (no
    misspelling filter), ``"system"`` or ``"system:/path"``, ``"none"``, ``"default"``.
    """
    key = spec.strip()
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    lex = _build(key)
    with _LOCK:
        return _CACHE.setdefault(key, lex)


def _build(spec: str) -> Lexicon:
    kind, _, arg = spec.partition(":")
    kind = kind.lower()
    if kind == "default" and not arg:
        return _build("wordfreq")
    if kind == "none" and not arg:
        return NullLexicon()
    if kind == "conceptnet":
        if not arg:
            raise InputError("lexicon 'conceptnet' needs a path: conceptnet:/path/to/en_vocab.txt")
        return ConceptNetLexicon.load(os.path.expanduser(arg))
    if kind == "system":
        return SystemWordsLexicon.load(os.path.expanduser(arg) if arg else SYSTEM_WORDS_PATH)
    if kind == "wordfreq":
        floor, _, flag = arg.partition(":")
        try:
            min_zipf = float(floor) if floor else DEFAULT_MIN_ZIPF
        except ValueError as e:
            raise InputError(f"lexicon {spec!r}: the Zipf floor must be a number") from e
        if flag not in ("", "raw"):
            raise InputError(f"lexicon {spec!r}: unknown flag {flag!r} (only 'raw')")
        return WordfreqLexicon.load(min_zipf, reject_misspellings=flag != "raw")
    raise InputError(
        f"unknown lexicon {spec!r}; use conceptnet:/path, wordfreq[:zipf], system[:/path], "
        "none or default"
    )


def default_lexicon() -> Lexicon:
    """The lexicon a user has with no extra files (see the module docstring)."""
    return lexicon_from_config("default")
