"""Source readers: a path and a format name -> a batch of nodes, or one clear error.

The registry of the formats ``cogitave index`` reads (``auto`` detects one,
:mod:`cogitave.ingest.detect`), and the errors a user meets: a missing or unreadable source, a
file of another format (with a hint naming the format that fits), no documents at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from cogitave.errors import IngestError, InputError
from cogitave.ingest.records import Batch
from cogitave.schema import Schema

FORMATS = ("auto", "jsonl", "beir", "cranfield", "smart", "docs", "markdown")
_EXTENSIONS = {".md": "markdown", ".markdown": "markdown", ".jsonl": "jsonl"}

Reader = Callable[[Path, Schema | None, str | None, Sequence[Path]], Batch]


def _jsonl(path: Path, schema: Schema | None, base_url: str | None, _: Sequence[Path]) -> Batch:
    from cogitave.ingest.jsonl import read_jsonl

    return read_jsonl(path, schema)


def _beir(path: Path, schema: Schema | None, base_url: str | None, _: Sequence[Path]) -> Batch:
    from cogitave.ingest.beir import read_beir

    return read_beir(path, schema)


def _cranfield(path: Path, schema: Schema | None, base_url: str | None, _: Sequence[Path]) -> Batch:
    from cogitave.eval.cranfield import read_corpus

    return read_corpus(path)


def _smart(path: Path, schema: Schema | None, base_url: str | None, _: Sequence[Path]) -> Batch:
    from cogitave.ingest import smart

    return smart.read_corpus(path)


def _docs(path: Path, schema: Schema | None, base_url: str | None, _: Sequence[Path]) -> Batch:
    from cogitave.ingest.markdown import read_markdown

    return read_markdown(path, schema, base_url=base_url)


READERS: dict[str, Reader] = {
    "jsonl": _jsonl,
    "beir": _beir,
    "cranfield": _cranfield,
    "smart": _smart,
    "docs": _docs,
    "markdown": _docs,
}


def read_source(
    path: Path,
    fmt: str = "auto",
    schema: Path | None = None,
    base_url: str | None = None,
    allow_outside: Sequence[Path] = (),
) -> Batch:
    """The batch of ``path`` read as ``fmt`` (``auto``: detected); a schema file's
    declarations over the inferred ones."""
    from cogitave.ingest.detect import check_format, detect_format

    if not path.exists():
        raise IngestError(f"source not found: {path} (to remove its nodes: cogitave delete)")
    declared = Schema.load(schema) if schema else None
    fmt = detect_format(path) if fmt == "auto" else fmt
    reader = READERS.get(fmt)
    if reader is None:
        raise InputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    check_format(path, fmt)
    try:
        batch = reader(path, declared, base_url, allow_outside)
    except IngestError as e:
        hint = "" if e.details.get("errors") else format_hint(path, fmt)
        if not hint:  # bad records, or nothing else fits: the reader's own words
            raise
        raise IngestError(e.message + hint, details=e.details) from e
    except PermissionError as e:
        raise InputError(f"cannot read {e.filename or path}: permission denied") from e
    except (UnicodeDecodeError, IsADirectoryError, NotADirectoryError) as e:
        raise InputError(f"cannot read {path}: {e}") from e
    if not batch.nodes and not batch.problems:
        raise InputError(f"no {fmt} documents in {path}{format_hint(path, fmt)}")
    return batch


def format_hint(source: Path, fmt: str) -> str:
    """'; found 12 .md files: try --format markdown' when another format fits."""
    if not source.is_dir():
        return ""
    seen: dict[str, int] = {}
    for i, p in enumerate(source.rglob("*")):
        if i > 20_000:
            break
        if (f := _EXTENSIONS.get(p.suffix.lower())) and f != fmt:
            seen[f] = seen.get(f, 0) + 1
    if not seen:
        return ""
    f, n = max(seen.items(), key=lambda kv: kv[1])
    return f"; found {n} {f} files: try --format {f}"
