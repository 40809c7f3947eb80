"""Query text -> terms with their markers (emphasis, explicit dimension, negation).

The spec leaves the request's syntax open; this is the small, documented set:

- ``dim:term`` or ``dim:"a phrase"``: route to dimension ``dim`` (when ``dim`` is a dimension of
  the collection; otherwise the text is an ordinary word). Emphatic.
- ``+term``: emphatic: its dimension can never be the one the coherence gate forgives.
- ``"a quoted phrase"``: emphatic, every word of it.
- a word repeated in the query (``boots boots``) is emphatic.
- ``-term``: excluded: nodes containing it are removed (BM25 must-not on every dimension).
  A signed number (``-2``, ``+5``, as in ``E2F-1, -2, -3``) and a command-line flag
  (``--port``, ``-D``) are text, not operators: ``hugo server --port 1314`` searches for the
  port flag instead of removing every page that mentions a port.
- negation words (``not``, ``no``, ``without``, ``except``, ``excluding``, ``minus``, ``non``):
  the word after one is *negated*: it is not routed and not searched for. Negation is also a
  marker that disables the residual boost (the spec's rule). A negation word never excludes
  nodes by itself: ``patients without diabetes`` must still find papers that mention diabetes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, replace

from cogitave.expand import analysis

# Words joined by ``-``, ``/``, ``.``, ``_`` or ``::`` (one-to-many, async/await, os.path,
# group_by_page, std::fs): a compound the tokenizer splits into parts.
_COMPOUND = re.compile(r"(?<![\w\-/.])(?<!::)[^\W_]+(?:(?:[-/._]|::)[^\W_]+)+")
MAX_PHRASE_WORDS = 8
NEGATION_WORDS = frozenset({"not", "no", "without", "except", "excluding", "minus", "non"})
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
        """Terms to search for: neither negated nor excluded."""
        return tuple(t for t in self.terms if not (t.negated or t.excluded))

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
        if bare and toks[0] in NEGATION_WORDS:
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
    counts = Counter(t.text for t in terms if not (t.negated or t.excluded))
    out: list[QueryTerm] = []
    seen: set[str] = set()
    for t in terms:
        if t.negated or t.excluded:
            out.append(t)
            continue
        if t.text in seen:  # a repeated word is one emphatic term
            continue
        seen.add(t.text)
        if counts[t.text] > 1 and not t.emphatic:
            t = replace(t, emphatic=True)
        out.append(t)
    return ParsedQuery(tuple(out), tuple(markers), " ".join(plain))


def phrases(query: str) -> tuple[tuple[str, ...], ...]:
    """The query's compounds (``one-to-many``) and quoted phrases (``"read one row"``) as
    the stems the index holds, in order: two to :data:`MAX_PHRASE_WORDS` words each, an
    excluded one (``-"a b"``, ``-x-y``) left out."""
    out: dict[tuple[str, ...], None] = {}
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
        for text in texts:
            stems = tuple(analysis.stems(text))
            if 2 <= len(stems) <= MAX_PHRASE_WORDS:
                out[stems] = None
    return tuple(out)
