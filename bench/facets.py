"""A judged multi-facet collection from Debian's package index: where routing and coherence act.

    .venv/bin/python bench/facets.py [--packages FILE] [--size 6000] [--seed 15]
                                     [--explain N] [--write] [--regenerate-queries]

**Data.** Debian bookworm's ``main`` binary package index (``Packages``), read at bench time
from the apt lists of this machine through ``apt-helper cat-file`` (or ``--packages FILE``),
and parsed with python-debian. Nothing of it is committed; the built collections live in
``bench/.cache/facets/``. A package's debtags (``Tag:``) are its structure: ``implemented-in::``
(its language), ``interface::`` (command line, graphical, terminal, daemon, web),
``uitoolkit::`` (gtk, qt, ncurses...), and what it is for: ``use::``, ``works-with::``,
``field::``, ``network::`` (the *topic* tags of :data:`TOPIC`). A sub-tag counts as its parent
(``works-with::image:raster`` is ``works-with::image``).

**Nodes.** One per package, ``uid`` = package name. Fields of the package's one text: ``name``,
``description`` (the short ``Description:``), ``purpose`` (its topic tags in words, through
:data:`TOPIC`). Facets (``facet = true``): ``language``, ``interface``, ``toolkit`` (the tags in
words, through :data:`LANGUAGE`, :data:`INTERFACE`, :data:`TOOLKIT`). The control schema has the
same six dimensions, all fields. Every word is in the BM25 text of both (the ``all`` field holds
facets too); the ``_all`` vector holds the fields (all six dimensions in the control).

**Queries** (``bench/facets_queries.jsonl``, committed; ``--regenerate-queries`` rewrites it):
a seeded procedure over the data. A query is a topic (one topic tag, or an object tag from
``works-with::``/``field::`` with an action tag from ``use::``/``network::``) with one facet
constraint (a language, an interface or a toolkit) or two (a language and an interface or a
toolkit). A combination is a candidate when 2 to 30 packages satisfy it entirely and at least
5 more have the topic but miss a constraint (a constraint that excludes nothing constrains
nothing). Candidates are shuffled with the seed and taken with at most two queries per topic
and eight per facet value, half with one constraint and half with two; the text comes from a
template picked by the same seed ("command line image viewer written in perl").

**Judgments** (computed from the tags at bench time, :func:`judge`): grade 2 = the package has
every topic tag of the query and satisfies every facet constraint (``graphical`` is
``interface::graphical`` or ``interface::x11``); grade 1 = it has every topic tag but misses at
least one constraint (a C image viewer for "python image viewer"); 0 otherwise.

**Collection**: every package with a topic of some query (all judged packages), plus a seeded
sample of the rest of the index up to ``--size`` (tagged or not). It is built twice: with facets
and the fields-only control. Every system (bm25, dense, hybrid, planned) runs through
:func:`cogitave.eval.run.run_systems` on both; the per-query nDCG@10 of planned and hybrid give
the win/loss counts. ``--explain N`` prints the plan and gate of the N worst planned losses.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from debian.deb822 import Packages  # noqa: E402

APT_LIST = Path(
    "/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4"
)
QUERIES = HERE / "facets_queries.jsonl"
SYSTEMS = ("bm25", "dense", "hybrid", "planned")

# Tag value -> the words a node's facet text (and a query) uses for it.
LANGUAGE = {
    "python": "python",
    "perl": "perl",
    "java": "java",
    "ruby": "ruby",
    "haskell": "haskell",
    "ocaml": "ocaml",
    "lisp": "lisp",
    "php": "php",
    "tcl": "tcl",
    "lua": "lua",
    "ecmascript": "javascript",
    "scheme": "scheme",
    "shell": "shell",
    "c": "c",
    "c++": "c++",
    "r": "r",
    "objc": "objective-c",
    "c-sharp": "c#",
    "fortran": "fortran",
    "pascal": "pascal",
    "vala": "vala",
    "ada": "ada",
}
INTERFACE = {
    "commandline": "command line",
    "x11": "x11 graphical",
    "graphical": "graphical",
    "text-mode": "terminal",
    "daemon": "daemon",
    "web": "web",
    "shell": "shell",
    "3d": "3d",
    "framebuffer": "framebuffer",
    "svga": "svga",
}
TOOLKIT = {
    k: k
    for k in (
        "gtk",
        "qt",
        "ncurses",
        "sdl",
        "tk",
        "wxwidgets",
        "xlib",
        "athena",
        "gnustep",
        "motif",
        "glut",
        "fltk",
    )
}
FACET_TAGS = {"language": "implemented-in", "interface": "interface", "toolkit": "uitoolkit"}
FACET_WORDS = {"language": LANGUAGE, "interface": INTERFACE, "toolkit": TOOLKIT}
# Constraint values queries may use. C and C++ are left out: both analyse to the token "c", so
# no text system can tell them apart while the tags do. A value may stand for several tags.
CONSTRAINTS: dict[str, dict[str, tuple[str, ...]]] = {
    "language": {
        v: (v,)
        for v in (
            "python",
            "perl",
            "java",
            "ruby",
            "haskell",
            "ocaml",
            "lisp",
            "php",
            "tcl",
            "lua",
            "ecmascript",
        )
    },
    "interface": {
        "commandline": ("commandline",),
        "graphical": ("graphical", "x11"),
        "text-mode": ("text-mode",),
        "daemon": ("daemon",),
        "web": ("web",),
    },
    "toolkit": {v: (v,) for v in ("gtk", "qt", "ncurses", "sdl", "tk", "wxwidgets")},
}
# Query words for a constraint value (the facet text's words, or the shortest of them).
CONSTRAINT_WORDS = {
    "language": {v: LANGUAGE[v] for v in CONSTRAINTS["language"]},
    "interface": {
        "commandline": "command line",
        "graphical": "graphical",
        "text-mode": "terminal",
        "daemon": "daemon",
        "web": "web",
    },
    "toolkit": {v: TOOLKIT[v] for v in CONSTRAINTS["toolkit"]},
}
# Topic tags (parent level) -> their words in the ``purpose`` field and in queries.
TOPIC = {
    "use::editing": "editor",
    "use::viewing": "viewer",
    "use::converting": "converter",
    "use::checking": "checker",
    "use::monitor": "monitor",
    "use::configuring": "configuration",
    "use::analysing": "analysis",
    "use::playing": "player",
    "use::organizing": "organizer",
    "use::storing": "storage",
    "use::searching": "search",
    "use::downloading": "downloader",
    "use::scanning": "scanner",
    "use::timekeeping": "clock",
    "use::login": "login",
    "use::browsing": "browser",
    "use::compressing": "compression",
    "use::synchronizing": "synchronization",
    "use::chatting": "chat",
    "use::typesetting": "typesetting",
    "use::comparing": "comparison",
    "use::printing": "printing",
    "use::filtering": "filter",
    "use::gameplaying": "game",
    "use::learning": "learning",
    "use::proxying": "proxy",
    "use::text-formatting": "formatter",
    "use::transmission": "transfer",
    "use::driver": "driver",
    "works-with::text": "text",
    "works-with::audio": "audio",
    "works-with::image": "image",
    "works-with::mail": "email",
    "works-with::file": "file",
    "works-with::software": "source code",
    "works-with::db": "database",
    "works-with::video": "video",
    "works-with::archive": "archive",
    "works-with::logfile": "log",
    "works-with::dictionary": "dictionary",
    "works-with::font": "font",
    "works-with::vcs": "version control",
    "works-with::pim": "calendar",
    "works-with::network-traffic": "network traffic",
    "works-with::unicode": "unicode",
    "works-with::spreadsheet": "spreadsheet",
    "works-with::music-notation": "music notation",
    "works-with::im": "instant messaging",
    "works-with::bugs": "bug tracker",
    "field::mathematics": "mathematics",
    "field::biology": "biology",
    "field::finance": "finance",
    "field::statistics": "statistics",
    "field::geography": "geography",
    "field::physics": "physics",
    "field::linguistics": "linguistics",
    "field::electronics": "electronics",
    "field::chemistry": "chemistry",
    "field::arts": "art",
    "field::medicine": "medicine",
    "field::astronomy": "astronomy",
    "field::meteorology": "weather",
    "network::server": "server",
    "network::client": "client",
}
OBJECT_FACETS = ("works-with", "field")  # the first tag of a two-tag topic
ACTION_FACETS = ("use", "network")  # the second
TEMPLATES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("language",): ("{topic} written in {language}", "{language} {topic}"),
    ("interface",): ("{interface} {topic}", "{topic} with a {interface} interface"),
    ("toolkit",): ("{toolkit} {topic}", "{topic} using {toolkit}"),
    ("interface", "language"): (
        "{interface} {topic} written in {language}",
        "{language} {interface} {topic}",
    ),
    ("language", "toolkit"): (
        "{toolkit} {topic} written in {language}",
        "{language} {toolkit} {topic}",
    ),
}
MIN_FULL, MAX_FULL, MIN_PARTIAL = 2, 30, 5
PER_TOPIC, PER_VALUE = 2, 8


@dataclass(frozen=True)
class Package:
    """One record of the index: name, short description, section, normalised debtags."""

    name: str
    description: str
    section: str
    tags: frozenset[str]

    def values(self, facet: str) -> set[str]:
        """The tag values of one debtags facet (``implemented-in`` -> {"python"})."""
        prefix = facet + "::"
        return {t[len(prefix) :] for t in self.tags if t.startswith(prefix)}


def parent_tag(tag: str) -> str:
    """``works-with::image:raster`` -> ``works-with::image`` (a sub-tag counts as its parent)."""
    facet, _, value = tag.partition("::")
    return f"{facet}::{value.split(':', 1)[0]}" if value else tag


def read_packages(fh: TextIO | Iterable[str]) -> list[Package]:
    """Packages-format records -> packages (first record of a name wins; TODO tags dropped)."""
    out: dict[str, Package] = {}
    for para in Packages.iter_paragraphs(fh, use_apt_pkg=False):
        name = para.get("Package", "").strip()
        if not name or name in out:
            continue
        raw = (t.strip() for t in para.get("Tag", "").replace("\n", " ").split(","))
        tags = frozenset(parent_tag(t) for t in raw if "::" in t and not t.endswith("::TODO"))
        out[name] = Package(
            name,
            para.get("Description", "").split("\n", 1)[0].strip(),
            para.get("Section", "").strip(),
            tags,
        )
    return list(out.values())


def load_index(path: Path | None) -> list[Package]:
    """The machine's bookworm index (through apt-helper, which reads the lz4 list), or a
    plain Packages file."""
    if path is not None:
        with path.open(encoding="utf-8") as fh:
            return read_packages(fh)
    text = subprocess.run(
        ["/usr/lib/apt/apt-helper", "cat-file", str(APT_LIST)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return read_packages(io.StringIO(text))


# -- the node a package becomes ---------------------------------------------------------------
def facet_text(pkg: Package, facet: str) -> str:
    """A facet's text: its tags in words, in a fixed order."""
    words = FACET_WORDS[facet]
    return " ".join(words[v] for v in sorted(pkg.values(FACET_TAGS[facet])) if v in words)


def purpose_text(pkg: Package) -> str:
    """The topic tags of a package in words."""
    return " ".join(TOPIC[t] for t in sorted(pkg.tags) if t in TOPIC)


def node_dims(pkg: Package) -> dict[str, str]:
    """A package's dimension values (empty ones left out)."""
    dims = {
        "name": pkg.name,
        "description": pkg.description,
        "purpose": purpose_text(pkg),
        **{f: facet_text(pkg, f) for f in FACET_TAGS},
    }
    return {k: v for k, v in dims.items() if v}


def schema(facets: bool) -> Any:
    """Fields ``name``, ``description``, ``purpose``; ``language``, ``interface``, ``toolkit``
    as facets (or, for the control, as fields too)."""
    from cogitave.schema import Dimension, Schema

    return Schema(
        (
            Dimension("name", "semantic"),
            Dimension("description", "semantic"),
            Dimension("purpose", "semantic"),
            *(Dimension(f, "semantic", facet=facets) for f in FACET_TAGS),
        )
    )


# -- queries and judgments --------------------------------------------------------------------
def has_topic(pkg: Package, topic: Sequence[str]) -> bool:
    return all(t in pkg.tags for t in topic)


def satisfies(pkg: Package, facet: str, value: str) -> bool:
    """The package meets one facet constraint (any of the tags the value stands for)."""
    return bool(pkg.values(FACET_TAGS[facet]) & set(CONSTRAINTS[facet][value]))


def grade(pkg: Package, query: Mapping[str, Any]) -> int:
    """2: every topic tag and every constraint; 1: every topic tag, a constraint missed; 0."""
    if not has_topic(pkg, query["topic"]):
        return 0
    ok = all(satisfies(pkg, f, v) for f, v in query["facets"].items())
    return 2 if ok else 1


def judge(pkgs: Iterable[Package], queries: Sequence[Mapping[str, Any]]) -> dict[str, dict]:
    """Graded judgments ``{qid: {package: grade}}`` (grade > 0 only)."""
    qrels: dict[str, dict[str, int]] = {q["qid"]: {} for q in queries}
    for p in pkgs:
        for q in queries:
            if g := grade(p, q):
                qrels[q["qid"]][p.name] = g
    return qrels


def topics_of(pkg: Package) -> Iterator[tuple[str, ...]]:
    """The query topics a package has: each topic tag, and each object-action pair."""
    mine = sorted(t for t in pkg.tags if t in TOPIC)
    yield from ((t,) for t in mine)
    objs = [t for t in mine if t.split("::")[0] in OBJECT_FACETS]
    acts = [t for t in mine if t.split("::")[0] in ACTION_FACETS]
    yield from ((o, a) for o in objs for a in acts)


def query_text(topic: Sequence[str], facets: Mapping[str, str], template: str) -> str:
    words = {f: CONSTRAINT_WORDS[f][v] for f, v in facets.items()}
    return template.format(topic=" ".join(TOPIC[t] for t in topic), **words)


def generate_queries(pkgs: Sequence[Package], *, n: int = 60, seed: int = 15) -> list[dict]:
    """The seeded query procedure of the module docstring."""
    by_topic: dict[tuple[str, ...], list[Package]] = {}
    for p in pkgs:
        for t in topics_of(p):
            by_topic.setdefault(t, []).append(p)
    candidates: list[tuple[tuple[str, ...], dict[str, str]]] = []
    for topic in sorted(by_topic):
        members = by_topic[topic]
        if len(members) < MIN_FULL + MIN_PARTIAL:
            continue
        for combo in TEMPLATES:
            for values in _value_product(combo):
                facets = dict(zip(combo, values, strict=True))
                full = sum(all(satisfies(p, f, v) for f, v in facets.items()) for p in members)
                if MIN_FULL <= full <= MAX_FULL and len(members) - full >= MIN_PARTIAL:
                    candidates.append((topic, facets))
    rng = random.Random(seed)
    rng.shuffle(candidates)
    per_topic: Counter[tuple[str, ...]] = Counter()
    per_value: Counter[tuple[str, str]] = Counter()
    picked: dict[int, list[dict]] = {1: [], 2: []}
    for topic, facets in candidates:
        k = len(facets)
        if len(picked[k]) >= n // 2 or per_topic[topic] >= PER_TOPIC:
            continue
        if any(per_value[fv] >= PER_VALUE for fv in facets.items()):
            continue
        per_topic[topic] += 1
        per_value.update(facets.items())
        template = rng.choice(TEMPLATES[tuple(facets)])
        picked[k].append(
            {"text": query_text(topic, facets, template), "topic": list(topic), "facets": facets}
        )
    out = picked[1] + picked[2]
    return [{"qid": f"f{i + 1:03d}", **q} for i, q in enumerate(out)]


def _value_product(combo: Sequence[str]) -> Iterator[tuple[str, ...]]:
    if not combo:
        yield ()
        return
    for v in CONSTRAINTS[combo[0]]:
        for rest in _value_product(combo[1:]):
            yield (v, *rest)


def read_queries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def select(
    pkgs: Sequence[Package], queries: Sequence[Mapping[str, Any]], size: int, seed: int
) -> list[Package]:
    """Every package with the topic of some query, plus a seeded sample of the rest."""
    judged = [p for p in pkgs if any(has_topic(p, q["topic"]) for q in queries)]
    names = {p.name for p in judged}
    rest = [p for p in pkgs if p.name not in names]
    k = max(0, min(len(rest), size - len(judged)))
    return judged + random.Random(seed).sample(rest, k)


# -- building and running -------------------------------------------------------------------
def build(pkgs: Sequence[Package], facets: bool, cache: Path) -> tuple[Any, dict]:
    """The collection of ``pkgs`` (cached by content and schema) and its build record."""
    from _defaults import with_default_settings

    from cogitave import Collection, Node

    sch = schema(facets)
    key = hashlib.sha256(
        json.dumps([sch.hash(), [(p.name, node_dims(p)) for p in pkgs]]).encode()
    ).hexdigest()[:12]
    path = cache / f"{'facets' if facets else 'fields'}-{key}"
    meta_file = path.with_suffix(".build.json")
    if Collection.exists(path) and meta_file.is_file():
        return with_default_settings(Collection.open(path)), json.loads(meta_file.read_text())
    t0 = time.perf_counter()
    col = Collection.create(path, sch)
    col.add(Node(p.name, kind="package", dims=node_dims(p)) for p in pkgs)
    col.publish()
    secs = time.perf_counter() - t0
    meta = {"nodes": len(pkgs), "seconds": round(secs, 1)}
    meta_file.write_text(json.dumps(meta))
    return col, meta


def per_query_ndcg(col: Any, system: str, queries: Mapping[str, str], qrels: Mapping) -> dict:
    """nDCG@10 of each query, searched exactly as :func:`cogitave.eval.run.run_system` does."""
    import pytrec_eval

    from cogitave.eval.run import DEPTH
    from cogitave.query.types import SearchRequest

    run = {}
    for qid, text in queries.items():
        res = col.search(SearchRequest(query=text, limit=DEPTH, mode=system))
        run[qid] = {h.uid: float(DEPTH - h.rank + 1) for h in res.results} or {"__none__": 0.0}
    ev = pytrec_eval.RelevanceEvaluator({q: dict(qrels[q]) for q in queries}, {"ndcg_cut.10"})
    return {q: v["ndcg_cut_10"] for q, v in ev.evaluate(run).items()}


def wins(a: Mapping[str, float], b: Mapping[str, float], eps: float = 1e-9) -> tuple[int, ...]:
    """(a better, tied, b better) over the queries both scored."""
    diffs = [a[q] - b[q] for q in a if q in b]
    return (
        sum(d > eps for d in diffs),
        sum(abs(d) <= eps for d in diffs),
        sum(d < -eps for d in diffs),
    )


def explain(col: Any, text: str) -> str:
    """The plan's routed dimensions and the gate's numbers for one query."""
    from cogitave.query.types import SearchRequest

    res = col.search(SearchRequest(query=text, limit=10, mode="planned"))
    plan = res.diagnostics["plan"]
    dims = {d["dim"]: d["terms"] for d in plan["dimensions"]}
    routes = {r["term"]: (r["dim"], r["homes"], r["idf"]) for r in plan["routes"]}
    g = res.diagnostics.get("gate", {})
    keep = ("rule", "relaxed", "candidates", "passed", "per_dimension")
    return f"  dims={dims}\n  routes={routes}\n  gate={ {k: g.get(k) for k in keep} }"


def main() -> None:
    from _machine import machine_line, write_section

    from cogitave.eval.run import run_systems

    ap = argparse.ArgumentParser()
    ap.add_argument("--packages", type=Path, help="a plain Packages file (default: apt lists)")
    ap.add_argument("--cache", type=Path, default=HERE / ".cache" / "facets")
    ap.add_argument("--size", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--regenerate-queries", action="store_true")
    ap.add_argument("--explain", type=int, default=0)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)

    pkgs = load_index(args.packages)
    if args.regenerate_queries or not QUERIES.is_file():
        qs = generate_queries(pkgs, n=args.queries, seed=args.seed)
        QUERIES.write_text("".join(json.dumps(q) + "\n" for q in qs))
    queries = read_queries(QUERIES)
    chosen = select(pkgs, queries, args.size, args.seed)
    qrels = judge(chosen, queries)
    texts = {q["qid"]: q["text"] for q in queries}
    # the precision view: only packages that meet every constraint count
    strict = {q: {d: 1 for d, g in r.items() if g == 2} for q, r in qrels.items()}
    n2 = sum(g == 2 for r in qrels.values() for g in r.values())
    n1 = sum(g == 1 for r in qrels.values() for g in r.values())
    print(
        f"{len(pkgs)} packages in the index; collection {len(chosen)}; {len(queries)} queries; "
        f"judgments: {n2} grade 2, {n1} grade 1",
        flush=True,
    )
    lines = [
        "| schema | system | nDCG@10 | recall@100 | MRR@10 | p50 ms | nDCG@10, grade 2 only |",
        "|---|---|---|---|---|---|---|",
    ]
    builds, per_q, cols = [], {}, {}
    for facets in (True, False):
        name = "facets" if facets else "fields (control)"
        col, meta = build(chosen, facets, args.cache)
        cols[name] = col
        builds.append(f"{name}: {meta['nodes']} nodes in {meta['seconds']} s")
        run_systems(col, ["planned"], dict(list(texts.items())[:10]), qrels)  # warm caches
        full = run_systems(col, SYSTEMS, texts, qrels)
        for s, st in zip(full, run_systems(col, SYSTEMS, texts, strict), strict=True):
            m = s.metrics
            lines.append(
                f"| {name} | {s.system} | {m['ndcg@10']:.4f} | {m['recall@100']:.4f} | "
                f"{m['mrr@10']:.4f} | {s.p50_ms:.1f} | {st.metrics['ndcg@10']:.4f} |"
            )
            print(lines[-1], flush=True)
        for system in ("hybrid", "planned"):
            per_q[(name, system)] = per_query_ndcg(col, system, texts, qrels)
    fac, ctl = "facets", "fields (control)"
    pairs = [
        ("planned vs hybrid, facets", per_q[(fac, "planned")], per_q[(fac, "hybrid")]),
        ("planned vs hybrid, control", per_q[(ctl, "planned")], per_q[(ctl, "hybrid")]),
        ("planned (facets) vs hybrid (control)", per_q[(fac, "planned")], per_q[(ctl, "hybrid")]),
        ("planned (facets) vs planned (control)", per_q[(fac, "planned")], per_q[(ctl, "planned")]),
    ]
    by_k: dict[int, list[str]] = {}
    for q in queries:
        by_k.setdefault(len(q["facets"]), []).append(q["qid"])
    wl = ["| comparison | queries | wins | ties | losses |", "|---|---|---|---|---|"]
    for label, a, b in pairs:
        for k, qids in [(0, list(texts)), *sorted(by_k.items())]:
            sub = {q: a[q] for q in qids}
            w, t, lo = wins(sub, b)
            scope = "all" if k == 0 else f"{k} constraint{'s' if k > 1 else ''}"
            wl.append(f"| {label} | {scope} ({len(qids)}) | {w} | {t} | {lo} |")
    print("\n".join(wl))
    if args.explain:
        a, b = per_q[(fac, "planned")], per_q[(fac, "hybrid")]
        worst = sorted(texts, key=lambda q: a[q] - b[q])[: args.explain]
        for q in worst:
            print(f"{q} {texts[q]!r}: planned {a[q]:.3f} hybrid {b[q]:.3f}")
            print(explain(cols[fac], texts[q]))
    out = (
        f"\n## Multi-facet collection: Debian packages ({time.strftime('%Y-%m-%d')})\n\n"
        f"{machine_line()}\n\n"
        f"`.venv/bin/python bench/facets.py --write` (size {args.size}, seed {args.seed}): "
        f"{len(chosen)} packages of Debian bookworm main ({len(pkgs)} in the index), "
        f"{len(queries)} queries from bench/facets_queries.jsonl, judgments from debtags "
        f"({n2} grade 2, {n1} grade 1; derivation in the bench's docstring; the last column "
        "counts grade 2 only). Facets: "
        "language, interface, toolkit; fields: name, description, purpose. Control: the same "
        "six dimensions, all fields.\n\n"
        + "\n".join(lines)
        + "\n\nPer-query nDCG@10:\n\n"
        + "\n".join(wl)
        + "\n\nBuilds (default encoder): "
        + "; ".join(builds)
        + "\n"
    )
    if args.write:
        write_section("facets", out)


if __name__ == "__main__":
    main()
