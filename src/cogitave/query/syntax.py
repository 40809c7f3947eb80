"""Query text -> terms with their markers (emphasis, explicit dimension, negation).

The spec leaves the request's syntax open; this is the small, documented set:

- ``dim:term`` or ``dim:"a phrase"``: route to dimension ``dim`` (when ``dim`` is a dimension of
  the collection; otherwise the text is an ordinary word). Emphatic.
- ``+term``: emphatic: its dimension can never be the one the coherence gate forgives.
- ``"a quoted phrase"``: emphatic, every word of it.
- ``'a quoted message'`` (single quotes standing at word boundaries, as an error message
  quotes a name: ``No module named 'x'``, ``'NoneType' object``): its words are ordinary
  terms, and together they are matched whole like a compound (see :func:`phrases`). An
  apostrophe inside a word (``don't``, ``user's``) is not a quote.
- a word repeated in the query (``boots boots``) is emphatic.
- ``-term``: excluded: nodes containing it are removed (BM25 must-not on every dimension).
  A signed number (``-2``, ``+5``, as in ``E2F-1, -2, -3``) and a command-line flag
  (``--port``, ``-D``) are text, not operators: ``hugo server --port 1314`` searches for the
  port flag instead of removing every page that mentions a port.
- negation words (``not``, ``no``, ``without``, ``except``, ``excluding``, ``minus``, ``non``):
  the word itself is not searched for, and the word after one is marked *negated* but stays
  an ordinary term, routed and searched: a pasted error message (``'NoneType' object is not
  subscriptable``, ``No module named 'x'``) or a plain compound (``non blocking io``) must
  find the page that says it. Negation is only a marker that disables the residual boost
  (the spec's rule: "without X" must not pull X-like nodes up). It never excludes nodes:
  ``patients without diabetes`` still finds papers that mention diabetes; only ``-term``
  excludes.
- exception names (``TypeError``, ``ModuleNotFoundError``) are one token each, kept whole
  by the tokenizer, and ``TypeError:`` is the word, not a ``dim:`` prefix.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace

from cogitave.expand import analysis

# Words joined by ``-``, ``/``, ``.``, ``_`` or ``::`` (one-to-many, async/await, os.path,
# group_by_page, std::fs): a compound the tokenizer splits into parts.
_COMPOUND = re.compile(r"(?<![\w\-/.])(?<!::)[^\W_]+(?:(?:[-/._]|::)[^\W_]+)+")
MAX_PHRASE_WORDS = 8
NEGATION_WORDS = frozenset({"not", "no", "without", "except", "excluding", "minus", "non"})
# ``'a quoted message'``: the quote marks stand at word boundaries (not ``don't``).
_SINGLE_QUOTED = re.compile(r"(?<![\w'])(?P<sign>-)?'(?P<text>[^'\n\"]+)'(?![\w'])")
_PIECE = re.compile(
    r'(?P<sign>[+-])?(?:(?P<dim>[A-Za-z_][A-Za-z0-9_]*):)?(?:"(?P<phrase>[^"]*)"?|(?P<word>[^\s"]+))'
)


@dataclass(frozen=True)
class QueryTerm:
    """One surface token of the query and what the syntax said about it."""

    text: str
    position: int
    dim: str | None = None
    emphatic: bool = False
    negated: bool = False
    excluded: bool = False
    marked: bool = False  # the user marked this word alone: ``+with``, ``"with"``, ``dim:with``


@dataclass(frozen=True)
class ParsedQuery:
    terms: tuple[QueryTerm, ...]
    negation_markers: tuple[str, ...]
    plain: str  # the query without syntax, for the whole-query embedding

    @property
    def positive(self) -> tuple[QueryTerm, ...]:
        """Terms to search for: every term but the excluded (a negated one included)."""
        return tuple(t for t in self.terms if not t.excluded)

    @property
    def excluded(self) -> tuple[str, ...]:
        return tuple(t.text for t in self.terms if t.excluded)


def _not_an_operator(word: str) -> bool:
    """A signed number (``-2``), a long flag (``--port``: the sign plus ``-port``) or a short
    flag (``-D``, ``-p``): text a reader of docs types, never an exclusion or emphasis."""
    return word[:1].isdigit() or word.startswith("-") or len(word.rstrip(".,;:!?")) == 1


def parse(query: str, dimensions: Collection[str]) -> ParsedQuery:
    """Split ``query`` into analysed terms with markers."""
    terms: list[QueryTerm] = []
    markers: list[str] = []
    plain: list[str] = []
    negate_next = False
    quoted = _single_quoted(query)
    for m in _PIECE.finditer(query):
        sign, dim, phrase, word = (
            m.group("sign"),
            m.group("dim"),
            m.group("phrase"),
            m.group("word"),
        )
        if sign and dim is None and word is not None and _not_an_operator(word):
            sign = None  # "-2", "--port", "-D": a number or a command-line flag
        if dim is not None and dim not in dimensions:
            # not a dimension: keep "dim:" as part of the text (e.g. "http:" or "note:")
            word = f"{dim}:{word}" if word is not None else None
            phrase = phrase if word is None else None
            dim = None
        text = phrase if phrase is not None else word or ""
        toks = analysis.surface(text)
        if not toks:
            continue
        bare = sign is None and dim is None and phrase is None and len(toks) == 1
        if bare and toks[0] in NEGATION_WORDS and not quoted(m.start()):
            markers.append(toks[0])
            negate_next = True
            continue
        excluded = sign == "-"
        if excluded:
            markers.append(f"-{toks[0]}")
        else:
            plain.append(text)
        emphatic = sign == "+" or dim is not None or phrase is not None
        for i, tok in enumerate(toks):
            terms.append(
                QueryTerm(
                    text=tok,
                    position=len(terms),
                    dim=dim,
                    emphatic=emphatic,
                    negated=negate_next and i == 0 and not excluded,
                    excluded=excluded,
                    marked=emphatic and len(toks) == 1,
                )
            )
        negate_next = False
    counts = Counter(t.text for t in terms if not t.excluded)
    out: list[QueryTerm] = []
    seen: set[str] = set()
    for t in terms:
        if t.excluded:
            out.append(t)
            continue
        if t.text in seen:  # a repeated word is one emphatic term
            continue
        seen.add(t.text)
        if counts[t.text] > 1 and not t.emphatic:
            t = replace(t, emphatic=True)
        out.append(t)
    return ParsedQuery(tuple(out), tuple(markers), " ".join(plain))


def _single_quoted(query: str) -> Callable[[int], bool]:
    """Whether a position of ``query`` lies inside a ``'quoted message'``."""
    spans = [
        (m.start(), m.end())
        for m in _SINGLE_QUOTED.finditer(query)
        if query.count('"', 0, m.start()) % 2 == 0
    ]
    return lambda pos: any(a <= pos < b for a, b in spans)


def phrases(query: str) -> tuple[tuple[str, ...], ...]:
    """The query's compounds (``one-to-many``) and quoted phrases (``"read one row"``,
    ``'a quoted message'``) as the stems the index holds, in order: two to
    :data:`MAX_PHRASE_WORDS` words each, an excluded one (``-"a b"``, ``-x-y``) left out."""
    out: dict[tuple[str, ...], None] = {}
    singles = {
        m.start(): m.group("text")
        for m in _SINGLE_QUOTED.finditer(query)
        if not m.group("sign") and query.count('"', 0, m.start()) % 2 == 0
    }
    for m in _PIECE.finditer(query):
        word = m.group("word")
        flag = m.group("dim") is None and word is not None and _not_an_operator(word)
        if m.group("sign") == "-" and not flag:  # excluded, as parse() reads it
            continue
        if m.group("phrase") is not None:
            texts = [m.group("phrase")]
        else:  # the whole piece: ``std::fs`` is read as a ``dim:`` prefix by the pattern
            piece = m.group(0).lstrip("+-/")  # ``--root-path``, ``/api/v1``: words too
            texts = [c.group(0) for c in _COMPOUND.finditer(piece)]
        if m.start() in singles or m.start() + 1 in singles:  # a message opens here
            texts.insert(0, singles[m.start() if m.start() in singles else m.start() + 1])
        for text in texts:
            stems = tuple(analysis.stems(text))
            if 2 <= len(stems) <= MAX_PHRASE_WORDS:
                out[stems] = None
    return tuple(out)
