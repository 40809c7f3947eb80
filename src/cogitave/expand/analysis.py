"""Text analysis shared by the write path, the lexical index and the query planner.

Tantivy's ``term_query`` does not analyse its input, so the planner must produce exactly the
tokens tantivy indexed. Both sides therefore use the *same* tantivy ``TextAnalyzer`` objects,
built here once: the simple tokenizer (split on non-alphanumerics), tokens over 40 bytes dropped,
lowercasing, then the English Snowball stemmer (tantivy's ``en_stem`` pipeline).

``surface`` tokens (lowercased, not stemmed) feed the corpus vocabulary used by the rewrites
(spell correction, compound splitting, adjacent merging); ``stems`` are what BM25 matches.
The two lists align one to one: the stemmer never drops a token.
"""

from __future__ import annotations

from functools import lru_cache

import tantivy

ANALYZER_NAME = "cq_en"
MAX_TOKEN_BYTES = 40


def _builder() -> tantivy.TextAnalyzerBuilder:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
        .filter(tantivy.Filter.lowercase())
    )


SURFACE = _builder().build()
STEMMED = _builder().filter(tantivy.Filter.stemmer("english")).build()
_STEM_ONLY = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)


def index_analyzer() -> tantivy.TextAnalyzer:
    """The analyzer registered on every lexical index under :data:`ANALYZER_NAME`."""
    return _builder().filter(tantivy.Filter.stemmer("english")).build()


def surface(text: str) -> list[str]:
    """Lowercased tokens, unstemmed."""
    return SURFACE.analyze(text)


def stems(text: str) -> list[str]:
    """Tokens exactly as the lexical index stores them."""
    return STEMMED.analyze(text)


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    """Stem of one already-lowercased surface token."""
    out = _STEM_ONLY.analyze(token)
    return out[0] if out else token
