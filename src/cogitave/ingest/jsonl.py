"""JSONL source: one JSON object per line (``uid``, optional ``kind``, ``content``, ``edges``;
every other key is a dimension value)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cogitave.errors import IngestError
from cogitave.ingest.records import Batch, Problem, collect
from cogitave.schema import Schema


def iter_jsonl(path: Path) -> Iterator[tuple[str, int, Any]]:
    """``(file, line, object)`` per non-blank line; unparsable lines come back as a Problem."""
    try:
        f = path.open("rb")
    except OSError as e:
        raise IngestError(f"cannot read {path}: {e.strerror or e}") from e
    with f:
        for i, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                yield str(path), i, json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                yield str(path), i, Problem(str(path), i, "not valid UTF-8")
            except json.JSONDecodeError as e:
                yield (
                    str(path),
                    i,
                    Problem(str(path), i, f"malformed JSON: {e.msg} at column {e.colno}"),
                )


def read_jsonl(path: str | Path, schema: Schema | None = None) -> Batch:
    """Read a JSONL file, or every ``*.jsonl`` file of a folder (sorted)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*.jsonl"))
        if not files:
            raise IngestError(f"no .jsonl files in folder {p}")
    elif p.is_file():
        files = [p]
    else:
        raise IngestError(f"source not found: {p}")

    def records() -> Iterator[tuple[str, int, Any]]:
        for f in files:
            yield from iter_jsonl(f)

    return collect(records(), schema)
