"""BEIR folders: ``corpus.jsonl`` (``_id``, ``title``, ``text``) -> nodes with ``title`` and
``text`` dimensions; ``queries.jsonl`` and ``qrels/*.tsv`` for evaluation."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cogitave.errors import IngestError
from cogitave.ingest.jsonl import iter_jsonl
from cogitave.ingest.records import Batch, Problem, collect
from cogitave.schema import Dimension, Schema

BEIR_SCHEMA = Schema((Dimension("title", "semantic"), Dimension("text", "semantic")))


def read_beir(folder: str | Path, schema: Schema | None = None) -> Batch:
    """Nodes of a BEIR corpus (kind ``doc``)."""
    root = Path(folder)
    corpus = root / "corpus.jsonl" if root.is_dir() else root
    if not corpus.is_file():
        raise IngestError(f"no BEIR corpus at {corpus} (expected a folder with corpus.jsonl)")

    def records() -> Iterator[tuple[str, int, Any]]:
        for file, line, obj in iter_jsonl(corpus):
            if isinstance(obj, Problem) or not isinstance(obj, dict):
                yield file, line, obj
                continue
            rec: dict[str, Any] = {"uid": obj.get("_id"), "kind": "doc"}
            for key in ("title", "text"):
                if isinstance(obj.get(key), str) and obj[key].strip():
                    rec[key] = obj[key]
            yield file, line, rec

    return collect(records(), schema or BEIR_SCHEMA)


def read_queries(path: str | Path) -> dict[str, str]:
    """BEIR ``queries.jsonl``: ``{_id: text}``."""
    out: dict[str, str] = {}
    for file, line, obj in iter_jsonl(Path(path)):
        if isinstance(obj, Problem) or not isinstance(obj, dict) or "_id" not in obj:
            raise IngestError(f"{file}:{line}: not a BEIR query record")
        out[str(obj["_id"])] = str(obj.get("text", ""))
    return out


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV (``query-id corpus-id score`` with a header) -> ``{qid: {doc: grade}}``."""
    p = Path(path)
    if not p.is_file():
        raise IngestError(f"qrels file not found: {p}")
    out: dict[str, dict[str, int]] = {}
    with p.open(newline="", encoding="utf-8") as f:
        for i, row in enumerate(csv.reader(f, delimiter="\t"), 1):
            if not row or (i == 1 and not row[-1].lstrip("-").isdigit()):
                continue
            if len(row) < 3:
                raise IngestError(f"{p}:{i}: expected 'query-id corpus-id score'")
            out.setdefault(row[0], {})[row[1]] = int(row[2])
    return out


def dumps_queries(queries: dict[str, str]) -> str:
    return "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items())
