"""The Cranfield collection: ``cran.all.1400`` records, ``cran.qry`` queries, ``cranqrel``.

Records are ``.I n`` followed by ``.T`` title, ``.A`` authors, ``.B`` bibliography and ``.W``
abstract: four dimensions of one node, a natural multi-dimension corpus.

The trap: ``cranqrel`` numbers queries by their *position* in ``cran.qry`` (1..225), not by
their ``.I`` numbers (001, 002, 004, ...). Queries are therefore keyed by position here.
Grade ``-1`` (no relevance) is dropped; the others (1..4, 1 most relevant) are mapped to gains
``5 - grade`` so that graded nDCG rewards the most relevant documents most.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from cogitave.errors import IngestError
from cogitave.ingest.records import Batch, collect
from cogitave.schema import Dimension, Schema

FIELDS = {".T": "title", ".A": "author", ".B": "bibliography", ".W": "abstract"}
CRANFIELD_SCHEMA = Schema(tuple(Dimension(n, "semantic") for n in FIELDS.values()))
_MARK = re.compile(r"^\.(I|T|A|B|W)\b\s*(.*)$")


def _records(path: Path) -> Iterator[tuple[int, str, dict[str, str]]]:
    """``(line, id, {marker: text})`` per ``.I`` record."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise IngestError(f"cannot read {path}: {e.strerror or e}") from e
    cur: dict[str, list[str]] | None = None
    rid, start, field = "", 0, ""
    for i, line in enumerate(text.splitlines(), 1):
        m = _MARK.match(line)
        if m and m.group(1) == "I":
            if cur is not None:
                yield start, rid, {k: " ".join(v).strip() for k, v in cur.items()}
            cur, rid, start, field = {}, m.group(2).strip(), i, ""
        elif m and cur is not None:
            field = "." + m.group(1)
            cur.setdefault(field, [])
            if m.group(2):
                cur[field].append(m.group(2))
        elif cur is not None and field:
            cur[field].append(line.strip())
    if cur is not None:
        yield start, rid, {k: " ".join(v).strip() for k, v in cur.items()}


def read_corpus(path: str | Path) -> Batch:
    """Nodes of ``cran.all.1400`` (a file, or a folder holding it)."""
    p = Path(path)
    if p.is_dir():
        p = p / "cran.all.1400"
    if not p.is_file():
        raise IngestError(f"no Cranfield corpus at {p}")

    def recs() -> Iterator[tuple[str, int, dict]]:
        for line, rid, fields in _records(p):
            rec: dict = {"uid": rid, "kind": "doc"}
            for marker, name in FIELDS.items():
                if fields.get(marker):
                    rec[name] = fields[marker]
            yield str(p), line, rec

    return collect(recs(), CRANFIELD_SCHEMA)


def read_queries(path: str | Path) -> dict[str, str]:
    """``{position: text}`` with positions 1..N as strings (what cranqrel uses)."""
    return {
        str(pos): fields.get(".W", "") for pos, (_, _, fields) in enumerate(_records(Path(path)), 1)
    }


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """``{query position: {doc id: gain}}``; gain = 5 - grade, grade -1 dropped."""
    p = Path(path)
    if not p.is_file():
        raise IngestError(f"qrels file not found: {p}")
    out: dict[str, dict[str, int]] = {}
    for i, line in enumerate(p.read_text().splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 3:
            raise IngestError(f"{p}:{i}: expected 'query doc grade'")
        q, d, g = parts[0], parts[1], int(parts[2])
        if g < 1:
            continue
        out.setdefault(q, {})[d] = 5 - g
    return out
