"""The lexical store: tantivy (BM25, FST term dictionary, immutable mergeable segments).

Fields of the tantivy schema, derived from the collection schema:

- ``uid``: raw text, for delete/update by uid (a raw text term; not an integer field, whose
  term deletes silently match nothing in tantivy-py 0.27);
- ``nid``: u64 fast field, the node's internal id (joins BM25 hits to vectors and node rows);
- ``s_<dim>``: one analysed text field per semantic dimension (field-scoped BM25);
- ``x_<dim>``: raw, casefolded values of an exact dimension (binary match / filters);
- ``t_<dim>``: analysed values plus derived enum tails of an exact dimension (searchable,
  routable words such as ``elderly``);
- ``all``: every semantic dimension's text in one analysed field (the whole-query BM25 lens;
  one combined field beats summed per-field BM25 on whole-query ranking, as in Elasticsearch's
  ``copy_to``).

Tantivy writes immutable segment files named by UUID plus a ``meta.json`` that lists them.
A publish works in a scratch directory of hard links to the previous root's files, commits,
and stores every file of the result as a content-addressed object; a root's snapshot directory
is again hard links, so roots share unchanged segments and a reader's files never change.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import tantivy

from cogitave.errors import CorruptionError
from cogitave.expand import analysis
from cogitave.nodes import Node
from cogitave.schema import Schema
from cogitave.store.roots import RootStore, file_name, root_id
from cogitave.texts import dim_texts

_SKIP = (".tantivy-meta.lock", ".tantivy-writer.lock", ".managed.json")
WRITER_HEAP = 128_000_000
ALL_FIELD = "all"


def field_name(dim: str, schema: Schema) -> str:
    """The tantivy field BM25 scores for a dimension (tails field for exact dimensions)."""
    return f"s_{dim}" if schema[dim].type == "semantic" else f"t_{dim}"


def build_tantivy_schema(schema: Schema) -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("uid", tokenizer_name="raw")
    sb.add_unsigned_field("nid", fast=True, indexed=True)
    sb.add_text_field(ALL_FIELD, tokenizer_name=analysis.ANALYZER_NAME)
    for d in schema.dimensions:
        if d.type == "semantic":
            sb.add_text_field(f"s_{d.name}", tokenizer_name=analysis.ANALYZER_NAME)
        else:
            sb.add_text_field(f"x_{d.name}", tokenizer_name="raw")
            sb.add_text_field(f"t_{d.name}", tokenizer_name=analysis.ANALYZER_NAME)
    return sb.build()


def _open(path: Path, schema: Schema, *, create: bool) -> tantivy.Index:
    ts = build_tantivy_schema(schema)
    try:
        idx = tantivy.Index(ts, path=str(path), reuse=not create)
    except ValueError as e:  # tantivy reports corrupt/missing files as ValueError
        raise CorruptionError(f"cannot open lexical index in {path}: {e}") from e
    idx.register_tokenizer(analysis.ANALYZER_NAME, analysis.index_analyzer())
    return idx


def _writable(path: Path) -> bool:
    """Whether this process can create files in ``path`` (false on a read-only mount, even
    for root)."""
    return os.access(path, os.W_OK)


def link_tree(store: RootStore, files: Mapping[str, str], dst: Path) -> None:
    """Materialise a lexical file table as hard links (copies if links fail) in ``dst``."""
    dst.mkdir(parents=True, exist_ok=True)
    for name, digest in files.items():
        src = store.object_path(digest)
        target = dst / file_name(name)
        try:
            os.link(src, target)
        except FileExistsError:
            pass
        except OSError:
            shutil.copyfile(src, target)


class LexicalWriter:
    """Applies one publish's deletes and adds on top of the previous root's segments."""

    def __init__(
        self, store: RootStore, schema: Schema, base: Mapping[str, str] | None, work: Path
    ) -> None:
        self.store = store
        self.schema = schema
        self.work = work
        self.base = dict(base or {})
        if self.base:
            link_tree(store, self.base, work)
        else:
            work.mkdir(parents=True, exist_ok=True)
        self.index = _open(work, schema, create=not self.base)
        self.tschema = self.index.schema
        self.writer = self.index.writer(heap_size=WRITER_HEAP, num_threads=1)

    def delete(self, uids: Iterable[str]) -> None:
        for uid in uids:
            self.writer.delete_documents_by_term("uid", uid)

    def add(self, nid: int, node: Node) -> None:
        doc = tantivy.Document()
        doc.add_text("uid", node.uid)
        doc.add_unsigned("nid", nid)
        texts = dim_texts(node, self.schema)
        whole = [t for d, t in texts.items() if self.schema[d].type == "semantic"]
        if whole:
            doc.add_text(ALL_FIELD, "\n".join(whole))
        for dim, text in texts.items():
            if self.schema[dim].type == "semantic":
                doc.add_text(f"s_{dim}", text)
            else:
                raw = node.kind if dim == "kind" else node.dims[dim]
                for v in raw if isinstance(raw, tuple) else (raw,):
                    doc.add_text(f"x_{dim}", str(v).strip().casefold())
                doc.add_text(f"t_{dim}", text)
        self.writer.add_document(doc)

    def commit(self) -> dict[str, str]:
        """Commit, wait for merges, and store every index file as an object.

        Returns the file table (name -> object hash) of the new lexical state."""
        self.writer.commit()
        self.writer.wait_merging_threads()
        files: dict[str, str] = {}
        for p in sorted(self.work.iterdir()):
            if p.name in _SKIP or p.name.startswith("."):
                continue
            # Segment files are immutable once written: a name already in the base table is
            # the same bytes. meta.json is rewritten by every commit.
            if p.name in self.base and p.name != "meta.json":
                files[p.name] = self.base[p.name]
            else:
                files[p.name] = self.store.put_file(p)
        return files


def with_filters(
    ts: tantivy.Schema,
    terms_q: tantivy.Query,
    filters: Mapping[str, Sequence[str]] | None,
    nids: Sequence[int] | None = None,
) -> tantivy.Query:
    """``terms_q`` restricted by exact ``filters`` (dimension -> allowed casefolded values)
    and, given ``nids``, to those node ids; each restriction a zero-scoring required clause,
    so BM25 scores are those of the terms alone."""
    if not filters and nids is None:
        return terms_q
    # The terms must stay required: beside a Must filter, Should clauses become optional.
    subs = [(tantivy.Occur.Must, terms_q)]
    for dim, values in (filters or {}).items():
        vals = [str(v).strip().casefold() for v in values]
        allowed = tantivy.Query.term_set_query(ts, f"x_{dim}", vals)
        subs.append((tantivy.Occur.Must, tantivy.Query.const_score_query(allowed, 0.0)))
    if nids is not None:
        among = tantivy.Query.term_set_query(ts, "nid", list(nids))
        subs.append((tantivy.Occur.Must, tantivy.Query.const_score_query(among, 0.0)))
    return tantivy.Query.boolean_query(subs)


class LexicalReader:
    """BM25 over one root's snapshot of the lexical index."""

    def __init__(self, path: Path, schema: Schema) -> None:
        self.schema = schema
        self.index = _open(path, schema, create=False)
        self.tschema = self.index.schema
        self.searcher = self.index.searcher()
        self._lock = threading.Lock()

    @classmethod
    def for_root(
        cls, store: RootStore, rid: str, files: Mapping[str, str], schema: Schema
    ) -> LexicalReader:
        """The reader of root ``rid``: over its snapshot directory, materialised once as hard
        links; or, when the collection cannot be written (a read-only mount), over a private
        scratch directory of symbolic links to its objects (tantivy takes a lock file in the
        directory it reads, so it needs one it can write)."""
        snap = store.snapshot_dir(rid)
        for _ in range(3):  # a publish's retention may remove a half-built dir: build again
            if (snap / "meta.json").exists() or not _writable(store.snapshots):
                break
            tmp = store.snapshots / f".{root_id(rid)}.{os.getpid()}.{threading.get_ident()}"
            shutil.rmtree(tmp, ignore_errors=True)
            try:
                link_tree(store, files, tmp)
                os.rename(tmp, snap)
            except FileNotFoundError:
                continue
            except OSError:  # another reader materialised it first, or no room to
                shutil.rmtree(tmp, ignore_errors=True)
        if (snap / "meta.json").exists() and _writable(snap):
            return cls(snap, schema)
        scratch = Path(tempfile.mkdtemp(prefix=f"cogitave-{rid[:12]}-"))
        try:
            for name, digest in files.items():
                os.symlink(store.object_path(digest).resolve(), scratch / file_name(name))
            reader = cls(scratch, schema)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        weakref.finalize(reader, shutil.rmtree, scratch, True)
        return reader

    def num_docs(self) -> int:
        return int(self.searcher.num_docs)

    def query(
        self,
        field: str,
        terms: Sequence[str],
        *,
        require_all: bool = False,
        filters: Mapping[str, Sequence[str]] | None = None,
        nids: Sequence[int] | None = None,
        weights: Mapping[str, float] | None = None,
        phrases: Mapping[tuple[str, ...], float] | None = None,
    ) -> tantivy.Query:
        """A BM25 query over ``field`` for analysed ``terms`` (OR, or AND if ``require_all``),
        restricted by exact ``filters`` (dimension -> allowed casefolded values) and to
        ``nids`` when given; a term in ``weights`` scores that multiple of its BM25, and a
        phrase of ``phrases`` (analysed words, adjacent and in order) adds its weight times
        its BM25 (tantivy's phrase score: the phrase's frequency, its words' summed idf)."""
        occur = tantivy.Occur.Must if require_all else tantivy.Occur.Should
        ts = self.tschema
        weights = weights or {}
        clauses = []
        for t in dict.fromkeys(terms):
            q = tantivy.Query.term_query(ts, field, t)
            if (w := weights.get(t, 1.0)) != 1.0:
                q = tantivy.Query.boost_query(q, w)
            clauses.append((occur, q))
        for words, w in (phrases or {}).items():
            if len(words) > 1 and w > 0:
                phrase = tantivy.Query.phrase_query(ts, field, list(words))
                clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(phrase, w)))
        return with_filters(ts, tantivy.Query.boolean_query(clauses), filters, nids)

    def search(self, query: tantivy.Query, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``limit`` hits as (nids uint64, scores float32), best first."""
        if limit <= 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        res = self.searcher.search(query, limit, count=False)
        hits = res.hits
        if not hits:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        nids = self.searcher.fast_field_values("nid", [a for _, a in hits])
        return np.asarray(nids, np.uint64), np.fromiter((s for s, _ in hits), np.float32, len(hits))

    def matching(self, query: tantivy.Query, limit: int) -> np.ndarray:
        """nids of every match (up to ``limit``), unordered."""
        return self.search(query, limit)[0]

    def matching_among(self, query: tantivy.Query, nids: np.ndarray) -> np.ndarray:
        """Bool mask over ``nids``: which of them ``query`` matches (one query, restricted to
        those nids through the indexed ``nid`` field)."""
        if not len(nids):
            return np.zeros(0, bool)
        among = tantivy.Query.term_set_query(self.tschema, "nid", nids.tolist())
        q = tantivy.Query.boolean_query([(tantivy.Occur.Must, among), (tantivy.Occur.Must, query)])
        return np.isin(nids, self.matching(q, len(nids)))
