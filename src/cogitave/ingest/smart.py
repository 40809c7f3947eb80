"""Classic test collections in the SMART format (Cranfield, CISI, CACM, MEDLINE, ...): records
-> nodes, queries and judgments.

A record is ``.I id`` followed by fields, each a marker line (``.T``) and the lines after it.
The record's text is its ``.T`` title, ``.W`` abstract and ``.K`` keywords: dimensions, fields
of one text (none is a facet), in that order; only the fields a corpus has become dimensions.
``.A`` authors and ``.B`` bibliography (journal, volume, date) describe the record rather than
say what it is about: they are kept in the node's ``meta`` (``authors``, ``source``), returned with
the node but neither searched nor embedded (a journal name or a surname in every text is noise
to both legs: RRF of the two legs on CACM 0.5129 with them in the text, 0.5326 without; CISI
0.4049 / 0.4144; Cranfield 0.4135 / 0.4141). The other markers (``.X`` citation lists, ``.N``
entry notes, ``.C`` categories) end the field before them and are skipped, so their lines never
leak into a text.

Queries are keyed by their ``.I`` id (numbers without leading zeros: CACM's judgments say
``01`` for query ``1``) or, for Cranfield, by position (see :mod:`cogitave.eval.cranfield`).
A query's text is its ``.W`` field (its ``.T`` when it has none).

Judgments are ``query doc ...`` lines. Binary collections (CISI, CACM) list the relevant
pairs; their third column is not a grade, and every listed pair has gain 1.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from cogitave.errors import IngestError
from cogitave.ingest.records import Batch, collect
from cogitave.schema import Dimension, Schema

FIELDS = {"T": "title", "W": "abstract", "K": "keywords"}
META = {"A": "authors", "B": "source"}
# Corpus file names of the usual distributions, tried (case-insensitively) in a folder.
CORPUS_FILES = (
    "cran.all.1400",
    "cran.all",
    "cisi.all",
    "cacm.all",
    "med.all",
    "adi.all",
    "time.all",
)
_MARK = re.compile(r"^\.([A-Z])\b\s*(.*)$")


def records(path: Path) -> Iterator[tuple[int, str, dict[str, str]]]:
    """``(line, id, {marker letter: text})`` per ``.I`` record, every marker kept."""
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
            field = m.group(1)
            cur.setdefault(field, [])
            if m.group(2):
                cur[field].append(m.group(2))
        elif cur is not None and field:
            cur[field].append(line.strip())
    if cur is not None:
        yield start, rid, {k: " ".join(v).strip() for k, v in cur.items()}


def key(ident: str) -> str:
    """An id as judgments and nodes both name it: a number loses its leading zeros."""
    s = ident.strip()
    return str(int(s)) if s.isdigit() else s


def corpus_file(path: str | Path) -> Path:
    """The corpus file: ``path`` itself, or the known corpus file inside a folder."""
    p = Path(path)
    if p.is_dir():
        names = {f.name.lower(): f for f in p.iterdir() if f.is_file()}
        found = next((names[n] for n in CORPUS_FILES if n in names), None)
        if found is None:
            raise IngestError(
                f"no SMART corpus in {p} (looked for {', '.join(CORPUS_FILES)}, any case)"
            )
        p = found
    if not p.is_file():
        raise IngestError(f"no SMART corpus at {p}")
    return p


def read_corpus(path: str | Path) -> Batch:
    """Nodes of a SMART corpus (a file, or a folder holding one of :data:`CORPUS_FILES`)."""
    p = corpus_file(path)
    recs = list(records(p))
    if not recs:
        raise IngestError(f"{p}: no .I records: not a SMART corpus")
    present = {m for _, _, fields in recs for m, text in fields.items() if text}
    schema = Schema(tuple(Dimension(n, "semantic") for m, n in FIELDS.items() if m in present))

    def rows() -> Iterator[tuple[str, int, dict]]:
        for line, rid, fields in recs:
            rec: dict = {"uid": key(rid), "kind": "doc"}
            for marker, name in FIELDS.items():
                if fields.get(marker):
                    rec[name] = fields[marker]
            meta = {name: fields[m] for m, name in META.items() if fields.get(m)}
            if meta:
                rec["meta"] = meta
            yield str(p), line, rec

    return collect(rows(), schema)


def read_cranfield(path: str | Path) -> Batch:
    """Nodes of Cranfield's ``cran.all.1400`` (a file, or a folder holding it)."""
    p = Path(path)
    if p.is_dir():
        p = p / "cran.all.1400"
    if not p.is_file():
        raise IngestError(f"no Cranfield corpus at {p}")
    return read_corpus(p)


def read_queries(path: str | Path, by: Literal["id", "position"] = "id") -> dict[str, str]:
    """``{query key: text}``: keyed by ``.I`` id, or by position 1..N."""
    p = Path(path)
    if not p.is_file():
        raise IngestError(f"queries file not found: {p}")
    out: dict[str, str] = {}
    for pos, (_, rid, fields) in enumerate(records(p), 1):
        text = fields.get("W") or fields.get("T", "")
        out[str(pos) if by == "position" else key(rid)] = text
    return out


def read_qrels(path: str | Path, graded: bool = False) -> dict[str, dict[str, int]]:
    """``{query key: {doc id: gain}}``. Binary: every listed pair has gain 1. ``graded``
    (Cranfield): the third column is a grade, 1 most relevant; gain = 5 - grade, and grades
    below 1 (``-1``: not relevant) are dropped."""
    p = Path(path)
    if not p.is_file():
        raise IngestError(f"qrels file not found: {p}")
    out: dict[str, dict[str, int]] = {}
    for i, line in enumerate(p.read_text().splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < (3 if graded else 2):
            raise IngestError(f"{p}:{i}: expected 'query doc{' grade' if graded else ''}'")
        q, d = key(parts[0]), key(parts[1])
        if graded:
            try:
                g = int(parts[2])
            except ValueError:
                raise IngestError(f"{p}:{i}: grade {parts[2]!r} is not a whole number") from None
            if g < 1:
                continue
            out.setdefault(q, {})[d] = 5 - g
        else:
            out.setdefault(q, {})[d] = 1
    return out
