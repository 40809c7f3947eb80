"""Search quality on real documentation questions, graded by page URL.

    COGITAVE_DATA=../shared/data .venv/bin/python bench/docs_quality.py [--build-only] [--write]
        [--encoder bge] [--texts plain|context-v1|context-v2|context-v3|context-v4] [--only a,b]
        [--graph int8-static-v2] [--against plain] [--verbatim-only]
    .venv/bin/python bench/docs_quality.py --verbatim-only [--write]

Builds (once, cached in ``bench/.cache/docs_quality/``) the FastAPI docs, the Hugo docs, this
project's own docs, Vite's and React's docs (``bench/.cache/sources/vite/docs`` and
``bench/.cache/sources/react.dev``, checked out from github.com/vitejs/vite and
github.com/reactjs/react.dev) and Python 3.11's (Debian's ``python3.11-doc``, read from its
``_sources``) with ``read_markdown`` and the default encoder; a tree that is missing is
skipped. Then runs each question set of ``bench/questions/`` through bm25, dense, hybrid and
planned and prints MRR, Hit@1/3/5, nDCG@5 over page URLs (top 5 hits as returned) and the
answer size in tokens (characters / 4 of the compact JSON of those 5 hits), plus the
per-query wins and losses of planned against hybrid. Grouped by page (as ``docs_search``),
each system's ``docs_search`` Markdown answer at the default budget is read too: the share of
questions whose answer holds every ``must_contain`` string, the median hits it shows and the
mean tokens it takes. ``--write`` replaces their section of ``bench/RESULTS.md``.

A collection is asked every set named after it: ``bench/questions/<name>.jsonl`` and then each
``bench/questions/<name>-<set>.jsonl`` (in name order), each reported as a set of its own
(``fastapi-errors``) in the same tables. The ``-errors`` sets are real error messages, pasted
as the software prints them (a pydantic 422 body, a Go template error, ``error[conflict]:
...``), judged by the pages that explain the error or its fix. They are **evaluation sets**:
no default was chosen on them. They were looked at once for a choice: leaving nodes with
little text of their own unembedded was not adopted into the ``context-v2`` recipe, its
tuning-set gains being within one question and hugo-errors losing 0.071 MRR.

``--texts RECIPE`` builds with another text recipe (:mod:`cogitave.texts`) into a cache of its
own (``bench/.cache/docs_quality-RECIPE``), to compare recipes on the same questions.
``--graph NAME`` builds with another of the encoder's graphs (``cogitave encoders`` lists them;
default: the encoder's default) into a cache of its own (``bench/.cache/docs_quality-NAME``),
to compare graphs the same way.

``--against RECIPE`` builds each collection with that text recipe too and adds a table: every
set's planned, grouped scores on both builds, the differences and the questions that moved.

``--verbatim-only`` builds and embeds nothing: it reads each tree as ``cogitave index`` would
and counts its pages' code blocks held verbatim by the nodes read
(:mod:`cogitave.eval.verbatim`), printed as the "Code verbatim" table; with ``--write`` it
replaces the ``code_verbatim`` section of ``bench/RESULTS.md`` (the other section stays).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import time
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path

from _defaults import with_default_settings
from _machine import machine_line, write_section

from cogitave import Collection, publish
from cogitave.eval import verbatim
from cogitave.eval.docs import (
    METRICS,
    UrlQuestion,
    UrlScore,
    collection_search,
    docs_answer,
    evaluate_questions,
    read_url_questions,
)
from cogitave.expand.embed import DEFAULT_ENCODER, canonical_name, encoder_spec
from cogitave.expand.graphs import wanted_kind
from cogitave.expand.models import MINILM, recorded_graph
from cogitave.ingest.docs import read_docs as read_markdown
from cogitave.nodes import Node
from cogitave.sync import node_hash
from cogitave.texts import DEFAULT_TEXTS, TEXT_RECIPES, texts_recipe

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "docs_quality"
QUESTIONS = HERE / "questions"
SYSTEMS = ("bm25", "dense", "hybrid", "planned")
HEAD = (
    "| system | MRR | Hit@1 | Hit@3 | Hit@5 | nDCG@5 | answer tokens "
    "| must-contain | hits shown | tokens read |"
)
SUMMARY = (
    "| set | questions | system | MRR | Hit@1 | nDCG@5 | must-contain | hits shown | tokens read |"
)
# The ranking without the page-aware stage: every node competes, no grouping, no demotion.
BEFORE = {
    "group_by_page": False,
    "include_kinds": ("nav_group", "source_file"),
    "demote": False,
}


SOURCES = HERE / ".cache" / "sources"
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")  # Debian's python3.11-doc
# Where a tree's pages are served when the tree does not say (a built Sphinx tree).
BASE_URLS = {"python": "https://docs.python.org/3.11/"}


def trees(data: Path) -> dict[str, Path]:
    """Collection name -> docs tree (its question sets: :func:`question_sets`)."""
    return {
        "fastapi": data / "docs_fastapi",
        "hugo": data / "docs_hugo",
        "cogitave": HERE.parent,
        "vite": SOURCES / "vite" / "docs",
        "react": SOURCES / "react.dev",
        "python": PYTHON_DOCS,
    }


def question_sets(name: str, questions: Path = QUESTIONS) -> list[tuple[str, Path]]:
    """The question sets of collection ``name``: (set name, file), ``<name>.jsonl`` first, then
    each ``<name>-<set>.jsonl`` in name order (``fastapi-errors``); a missing file is left out."""
    main = questions / f"{name}.jsonl"
    extra = sorted(questions.glob(f"{name}-*.jsonl"))
    return [(p.stem, p) for p in ([main] if main.is_file() else []) + extra]


def cache_of(encoder: str, texts: str = DEFAULT_TEXTS, graph: str | None = None) -> Path:
    """Where the collections of ``encoder`` built with text recipe ``texts`` (and its graph
    ``graph``, None: its default) are cached (the defaults': ``docs_quality/``)."""
    name = canonical_name(encoder)
    parts = [] if name == DEFAULT_ENCODER else [name.split("/")[-1]]
    parts += [] if texts == DEFAULT_TEXTS else [texts]
    parts += [graph] if graph else []
    return CACHE.with_name("-".join(["docs_quality", *parts]))


def graph_of(encoder: str, graph: str | None = None) -> str:
    """The graph a build with ``encoder`` runs: ``graph``, else the encoder's default."""
    return graph or wanted_kind(encoder_spec(encoder) or MINILM)


def use_texts(recipe: str) -> None:
    """New collections of this process record (and embed by) text recipe ``recipe``."""
    if recipe not in TEXT_RECIPES:
        sys.exit(f"--texts must be one of {', '.join(TEXT_RECIPES)}, not {recipe!r}")
    publish.DEFAULT_TEXTS = recipe


# Trees that change under the bench (this project's own docs): a cached build is checked
# against what the tree reads today and built again when it differs. The others are fixed
# checkouts, and reading Python's 19,279 nodes only to check costs a minute.
LIVE_TREES = frozenset({"cogitave"})


def _digest(nodes: Sequence[Node]) -> str:
    """One hash of every node a tree reads (uid and content), order-free."""
    h = hashlib.sha256()
    for line in sorted(f"{n.uid}\t{node_hash(n)}" for n in nodes):
        h.update(line.encode())
    return h.hexdigest()[:16]


def build(
    name: str,
    tree: Path,
    *,
    rebuild: bool = False,
    encoder: str = DEFAULT_ENCODER,
    texts: str = DEFAULT_TEXTS,
    graph: str | None = None,
) -> Collection:
    """The cached collection of ``tree``, built with ``encoder`` (its graph ``graph``, None: the
    default, and text recipe ``texts``, set by :func:`use_texts`) when missing or built by
    another recipe or graph."""
    path = cache_of(encoder, texts, graph) / name
    want_graph = graph_of(encoder, graph)
    done = path / ".built"
    batch = None
    if done.is_file() and not rebuild:
        col = Collection.open(path, encoder=canonical_name(encoder))
        recorded = texts_recipe(col.snapshot.manifest.encoder)
        made_by = recorded_graph(col.snapshot.manifest.encoder)
        if recorded != texts:  # a cache of another recipe (the default changed): build again
            print(f"{name}: the cached build read {recorded} texts, not {texts}; building again")
        elif made_by != want_graph:  # the default graph changed
            print(f"{name}: the cached build ran graph {made_by}, not {want_graph}; building again")
        elif name not in LIVE_TREES:
            return with_default_settings(col)
        else:
            batch = read_markdown(tree, base_url=BASE_URLS.get(name))
            if _digest(batch.nodes) in done.read_text():
                return with_default_settings(col)
            print(f"{name}: its docs changed since the cached build; building again", flush=True)
    if path.exists():
        shutil.rmtree(path)
    t0 = time.perf_counter()
    batch = batch or read_markdown(tree, base_url=BASE_URLS.get(name))
    col = Collection.create(path, batch.schema, encoder=encoder, graph=graph)
    col.add(batch.nodes)
    col.publish()
    took = time.perf_counter() - t0
    done.write_text(f"{len(batch.nodes)} nodes in {took:.0f} s\ndigest {_digest(batch.nodes)}\n")
    print(f"built {name}: {done.read_text().strip()}", flush=True)
    return col


def main() -> None:
    ap = argparse.ArgumentParser()
    data = os.environ.get("COGITAVE_DATA") or HERE.parent.parent / "shared" / "data"
    ap.add_argument("--data", type=Path, default=Path(data))
    ap.add_argument("--only", default="", help="comma-separated collections (default: all)")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--encoder", default=DEFAULT_ENCODER)
    ap.add_argument("--texts", default=DEFAULT_TEXTS, help="the text recipe to build with")
    ap.add_argument("--graph", default=None, help="the encoder graph to build with")
    ap.add_argument("--write", action="store_true")
    ap.add_argument(
        "--against",
        default="",
        help="another text recipe: each set scored on both builds, planned and grouped by page",
    )
    ap.add_argument(
        "--verbatim-only",
        action="store_true",
        help="only the code-verbatim check of each tree (nothing built or embedded)",
    )
    args = ap.parse_args()
    use_texts(args.texts)
    wanted = {s for s in args.only.split(",") if s}
    if args.verbatim_only:
        text = code_verbatim(trees(args.data), wanted)
        print(text)
        if args.write:
            write_section("code_verbatim", text)
        return
    for name, tree in trees(args.data).items():
        if wanted and name not in wanted:
            continue
        if not tree.exists():
            print(f"skip {name}: {tree} not found", file=sys.stderr)
            continue
        build(
            name, tree, rebuild=args.rebuild, encoder=args.encoder, texts=args.texts,
            graph=args.graph,
        )  # fmt: skip
    if args.build_only:
        return
    out = [
        f"\n## Documentation questions graded by page URL ({time.strftime('%Y-%m-%d')})\n",
        machine_line(),
        "",
        f"Encoder `{canonical_name(args.encoder)}` (graph `{graph_of(args.encoder, args.graph)}`), "
        f"text recipe `{args.texts}`.",
        "",
        "`COGITAVE_DATA=../shared/data .venv/bin/python bench/docs_quality.py --write`. "
        "Questions written from reading each docs tree (`bench/questions/`); 2 = the page "
        "that answers, 1 = a useful page. MRR and Hit@k count answering pages, nDCG@5 both "
        "grades, over the top 5 hits as returned, mapped to pages (a page counts once, at "
        "its first hit). Answer tokens: characters / 4 of those 5 hits as compact JSON. "
        "What an agent reads, for the systems grouped by page: the `docs_search` Markdown "
        "answer at its default budget (2,000 tokens, 10 hits); must-contain is the share of "
        "questions whose answer holds every `must_contain` string of the question "
        "(case-insensitive), hits shown the median hits the answer shows, tokens read its "
        "mean size (characters / 4).",
        "",
        "The sets named `<collection>-errors` (`bench/questions/<collection>-errors.jsonl`) are "
        "real error messages as the software prints them (a pydantic 422 body, a Go template "
        "error, `error[conflict]: ...`), each judged by the pages that explain the error or its "
        "fix, with the fix's identifier as must-contain. They are evaluation sets: no default was "
        "chosen on them (they were scored beside the tuning sets when the `context-v2` and "
        '`context-v4` text recipes were chosen; section "Embedding texts").',
        "",
    ]
    sections: list[str] = []
    summary = [SUMMARY, "|---" * 9 + "|"]
    for name, tree in trees(args.data).items():
        if (wanted and name not in wanted) or not tree.exists():
            continue
        col = build(name, tree, encoder=args.encoder, texts=args.texts, graph=args.graph)
        for label, path in question_sets(name):
            summary += score_set(col, label, read_url_questions(path), sections)
    out += ["### Every set: docs_search, grouped by page\n", *summary, ""]
    if args.against:
        out += against(args, wanted)
    out += sections
    text = "\n".join(out) + "\n"
    print(text)
    if args.write:
        write_section("docs_quality", text)


def code_verbatim(named: dict[str, Path], wanted: AbstractSet[str] = frozenset()) -> str:
    """The "Code verbatim" section: per tree, its pages' code blocks and how many the nodes
    read from it hold as written (a missing tree: a row saying so)."""
    rows: list[tuple[str, verbatim.Verbatim | str]] = []
    for name, tree in named.items():
        if wanted and name not in wanted:
            continue
        if not tree.exists():
            print(f"skip {name}: {tree} not found", file=sys.stderr)
            rows.append((name, f"not checked: {tree} not found"))
            continue
        t0 = time.perf_counter()
        batch = read_markdown(tree, base_url=BASE_URLS.get(name))
        found = verbatim.check_tree(tree, batch)
        print(
            f"{name}: {found.verbatim}/{found.blocks} code blocks verbatim "
            f"({time.perf_counter() - t0:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
        rows.append((name, found))
    return "\n".join(
        [
            f"## Code verbatim ({time.strftime('%Y-%m-%d')})\n",
            "`.venv/bin/python bench/docs_quality.py --verbatim-only --write`: each tree read as "
            "`cogitave index` reads it (nothing embedded). A code block of a page read: a "
            "Markdown fence (an include-only fence left out), a Hugo code shortcode's body, a "
            "reStructuredText literal block, code directive or doctest block, found by the "
            "check's own parsers (`cogitave.eval.verbatim`); verbatim: the whole of one fence "
            "the nodes hold (a code sample's code or a fence of its page's Markdown), byte for "
            "byte.",
            "",
            *verbatim.table(rows),
        ]
    )


TUNING = frozenset({"fastapi", "hugo", "cogitave"})
"""The sets the text recipes and the planner's defaults were chosen on (bench/RESULTS.md,
"Embedding texts"); every other set is an evaluation set."""


def against(args: argparse.Namespace, wanted: AbstractSet[str]) -> list[str]:
    """Each set on this run's build and on a build of text recipe ``args.against`` (same
    encoder and graph): planned, grouped by page, both scores, the differences and the questions
    whose reciprocal rank moved (the table rows)."""
    rows = [
        f"### Against the `{args.against}` text recipe: planned, grouped by page\n",
        f"Each collection built with `{args.against}` and with `{args.texts}` (same encoder and "
        "graph) and scored on the same questions in this run. Up / down: the questions whose "
        "answering page rose or fell (reciprocal rank). Tuning sets: "
        + ", ".join(sorted(TUNING))
        + "; the others are evaluation sets.",
        "",
        f"| set | {args.against}: MRR / Hit@1 / nDCG@5 | {args.texts} | MRR | Hit@1 | nDCG@5 "
        "| up / down |",
        "|---" * 7 + "|",
    ]
    for name, tree in trees(args.data).items():
        if (wanted and name not in wanted) or not tree.exists():
            continue
        use_texts(args.against)
        other = build(name, tree, encoder=args.encoder, texts=args.against, graph=args.graph)
        use_texts(args.texts)
        col = build(name, tree, encoder=args.encoder, texts=args.texts, graph=args.graph)
        for label, path in question_sets(name):
            qs = read_url_questions(path)
            a, b = (
                evaluate_questions(
                    "planned", qs, collection_search(c, "planned", group_by_page=True)
                )
                for c in (other, col)
            )
            ma, mb = a.metrics, b.metrics
            pairs = zip(a.outcomes, b.outcomes, strict=True)
            rr = [(x.metrics["mrr"], y.metrics["mrr"]) for x, y in pairs]
            up = sum(y > x + 1e-9 for x, y in rr)
            down = sum(y < x - 1e-9 for x, y in rr)
            tag = " (tuning)" if label in TUNING else ""
            rows.append(
                f"| {label}{tag} | {ma['mrr']:.3f} / {ma['hit@1']:.3f} / {ma['ndcg@5']:.3f} "
                f"| {mb['mrr']:.3f} / {mb['hit@1']:.3f} / {mb['ndcg@5']:.3f} "
                f"| {mb['mrr'] - ma['mrr']:+.3f} | {mb['hit@1'] - ma['hit@1']:+.3f} "
                f"| {mb['ndcg@5'] - ma['ndcg@5']:+.3f} | {up} / {down} |"
            )
    return [*rows, ""]


def score_set(
    col: Collection, name: str, qs: Sequence[UrlQuestion], sections: list[str]
) -> list[str]:
    """Score set ``name`` on ``col``: its section goes to ``sections``; returns its two rows of
    the summary (planned, hybrid)."""
    before = {s: evaluate_questions(s, qs, collection_search(col, s, **BEFORE)) for s in SYSTEMS}
    plain = {s: evaluate_questions(s, qs, collection_search(col, s)) for s in SYSTEMS}
    after = {
        s: evaluate_questions(
            s, qs, collection_search(col, s, group_by_page=True), answer=docs_answer(col, s)
        )
        for s in SYSTEMS
    }
    print(f"{name}: {len(qs)} questions scored", flush=True)
    sections += [f"### {name}: {len(qs)} questions, {len(col)} nodes\n", HEAD]
    sections.append("|---" * 10 + "|")
    sections += [row(s, f"{s.system}: before (every node, no grouping)") for s in before.values()]
    sections += [row(s, f"{s.system}: default (no nav/source, demotions)") for s in plain.values()]
    sections += [row(s, f"{s.system}: grouped by page (docs_search)") for s in after.values()]
    sections += ["", *missed(after["planned"])]
    sections += ["", *wins(after["planned"], before["planned"], "grouped", "before")]
    sections += ["", *wins(after["hybrid"], before["hybrid"], "grouped", "before")]
    sections += ["", *wins(before["planned"], before["hybrid"], "before", "before")]
    sections += ["", *wins(after["planned"], after["hybrid"], "grouped", "grouped"), ""]
    return [brief(name, len(qs), after[s]) for s in ("planned", "hybrid")]


def read_cells(s: UrlScore) -> str:
    """Must-contain rate, median hits shown and mean tokens read of the answers ("-": unread)."""
    r = s.read
    if r is None:
        return "- | - | -"
    rate = "-" if r.contains is None else f"{r.contains:.3f}"
    return f"{rate} | {r.shown:g} | {r.tokens:.0f}"


def brief(name: str, n: int, s: UrlScore) -> str:
    """One row of the summary: a set's ranking and what an agent reads of it."""
    return (
        f"| {name} | {n} | {s.system} | {s.metrics['mrr']:.3f} | {s.metrics['hit@1']:.3f} "
        f"| {s.metrics['ndcg@5']:.3f} | {read_cells(s)} |"
    )


def missed(s: UrlScore) -> list[str]:
    """The questions whose answer lacks a ``must_contain`` string, with what it lacks."""
    lines = [
        f"- `{o.qid}` lacks {', '.join(f'`{m}`' for m in o.read.missing)} "
        f"(top: `{o.pages[0] if o.pages else '-'}`)"
        for o in s.outcomes
        if o.read is not None and o.read.missing
    ]
    return [f"{s.system} grouped: {len(lines)} answers lack a must_contain string.", *lines]


def row(s: UrlScore, label: str | None = None) -> str:
    cells = " | ".join(f"{s.metrics[m]:.3f}" for m in METRICS)
    return f"| {label or s.system} | {cells} | {s.tokens:.0f} | {read_cells(s)} |"


def wins(a: UrlScore, b: UrlScore, la: str = "", lb: str = "") -> list[str]:
    """Questions where ``a`` beats or trails ``b`` on nDCG@5, with the first page each gave."""
    na, nb = f"{a.system} {la}".strip(), f"{b.system} {lb}".strip()
    other = {o.qid: o for o in b.outcomes}
    won, lost = [], []
    for o in a.outcomes:
        p = other[o.qid]
        d = o.metrics["ndcg@5"] - p.metrics["ndcg@5"]
        if abs(d) < 1e-9:
            continue
        line = (
            f"`{o.qid}` {o.metrics['ndcg@5']:.2f} vs {p.metrics['ndcg@5']:.2f} "
            f"(top: `{o.pages[0] if o.pages else '-'}` vs `{p.pages[0] if p.pages else '-'}`)"
        )
        (won if d > 0 else lost).append(line)
    return [
        f"{na} vs {nb} on nDCG@5: {len(won)} wins, {len(lost)} losses, "
        f"{len(a.outcomes) - len(won) - len(lost)} ties.",
        *(f"- win {x}" for x in won),
        *(f"- loss {x}" for x in lost),
    ]


if __name__ == "__main__":
    main()
