"""Benchmark of the corpus-derived query rewrites (``cogitave.query.rewrite``) on SciFact.

Everything is generated, seeded, from SciFact's own vocabulary:

- typos at edit distance 1 and 2 of corpus words (deletion, insertion, substitution,
  adjacent transposition; never the first letter, never a digit), kept when zero-hit;
- wrongly merged words (``ab`` from an adjacent corpus pair ``a b``: should split);
- wrongly split words (``a b`` from a corpus word ``ab`` cut into two corpus words: should merge
  when the corpus prefers the compound);
- correctly spelled words that SciFact lacks (from Cranfield and the FastAPI/Hugo docs when
  present): any spell rewrite of one is a false rewrite. Zero-hit words the lexicon knows must
  never be spell-rewritten: the script fails if one is.

A typo counts as corrected when the rewrite gives the source word or a word with the same stem
(BM25 sees the same term). Prints markdown tables; writes nothing.

    .venv/bin/python bench/rewrites.py [--data ../shared/data] [--seed 13] [--n 2000]
        [--lexicons] [--sweep]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cogitave.expand import analysis
from cogitave.expand import lexicon as lx
from cogitave.expand.stats import CorpusStats, DimStats, StatsBuilder
from cogitave.ingest.beir import BEIR_SCHEMA, read_beir, read_queries
from cogitave.query import rewrite as rw

LETTERS = "abcdefghijklmnopqrstuvwxyz"
VOCAB_100K = 100_000

# Common English misspellings, written for this benchmark (not taken from a published list).
COMMON_MISSPELLINGS = """
recieve seperate definately occured untill wich becuase accomodate teh thier adress beleive
calender cemetary collegue comming commited concious curiousity dissapoint embarass enviroment
existance foriegn freind goverment gaurd happend harrass hieght immediatly independant knowlege
liason libary lisence maintainance millenium mispell neccessary noticable occassion occurence
persistant posession prefered publically realy recomend refered relevent religous remeber
resistence rythm sieze succesful suprise tommorow tounge truely unfortunatly wierd writting
begining beautifull buisness concensus critisism embarassment excercise familar finaly fourty
grammer greatful guarentee hygeine ignorence medecine mischievious naturaly paralel peice
perseverence posible probaly pronounciation questionaire reccomend restaraunt sentance shedule
similiar strenght temperture threshhold tomatos tyrany vaccuum visable yeild acheive arguement
basicly catagory cheif commitee concieve decieve dilema disasterous ecstacy efficent equiptment
experiance facinating flourescent fullfil harrassment independance intresting labratory lenght
neice occurrance oppurtunity particulary percieve plagerism potatos preceed privelege recieved
refrence rember resturant seige sucess supress vegeterian wheather
""".split()  # noqa: SIM905


# ---- data --------------------------------------------------------------------------------


def data_root(arg: str | None) -> Path:
    root = Path(arg or os.environ.get("COGITAVE_DATA") or Path(__file__).parents[2] / "shared/data")
    if (root / "corpus.jsonl").is_file():  # pointed at the scifact folder itself
        root = root.parent
    if not (root / "scifact" / "corpus.jsonl").is_file():
        sys.exit(f"no SciFact corpus under {root} (pass --data or set COGITAVE_DATA)")
    return root


@dataclass
class Corpus:
    stats: CorpusStats
    texts: list[str]
    queries: list[str]

    def vocab_df(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.stats.dims.values():
            for w, df in d.surface.items():
                out[w] = max(out.get(w, 0), df)
        return out


def load_scifact(root: Path) -> Corpus:
    batch = read_beir(root / "scifact")
    sb = StatsBuilder(BEIR_SCHEMA)
    sb.add_all(batch.nodes)
    texts = [f"{n.text('title')}\n{n.text('text')}" for n in batch.nodes]
    queries = list(read_queries(root / "scifact" / "queries.jsonl").values())
    return Corpus(sb.apply(None), texts, queries)


def other_vocab(root: Path) -> Counter[str]:
    """Token counts of the other corpora (text that is not SciFact), when present."""
    counts: Counter[str] = Counter()
    paths = [root / "cranfield" / "cran.all.1400"]
    for sub in ("docs_fastapi/docs/en/docs", "docs_hugo/content/en"):
        if (root / sub).is_dir():
            paths += sorted((root / sub).rglob("*.md"))
    for p in paths:
        if p.is_file():
            counts.update(analysis.surface(p.read_text(encoding="utf-8", errors="replace")))
    return counts


# ---- generated cases ---------------------------------------------------------------------


def _edit(w: str, rng: random.Random) -> str:
    op = rng.choice(("delete", "insert", "substitute", "transpose"))
    free = [i for i in range(1, len(w)) if not w[i].isdigit()]
    if op == "insert":
        i = rng.randrange(1, len(w) + 1)
        return w[:i] + rng.choice(LETTERS) + w[i:]
    if not free:
        return w
    i = rng.choice(free)
    if op == "delete":
        return w[:i] + w[i + 1 :]
    if op == "substitute":
        return w[:i] + rng.choice(LETTERS.replace(w[i], "")) + w[i + 1 :]
    if i + 1 < len(w) and not w[i + 1].isdigit() and w[i] != w[i + 1]:
        return w[:i] + w[i + 1] + w[i] + w[i + 2 :]
    return w


def typos(
    sources: Sequence[str], dist: int, n: int, zero: Callable[[str], bool], rng: random.Random
) -> list[tuple[str, str]]:
    """``n`` (typo, source) pairs at exactly ``dist`` edits, zero-hit in the corpus."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for _ in range(n * 50):
        if len(out) >= n:
            break
        src = rng.choice(sources)
        t = src
        for _ in range(dist):
            t = _edit(t, rng)
        if t in seen or rw.osa_distance(src, t, dist) != dist or not zero(t):
            continue
        seen.add(t)
        out.append((t, src))
    return out


def merged_pairs(
    texts: Sequence[str], n: int, zero: Callable[[str], bool], rng: random.Random
) -> list[tuple[str, tuple[str, str]]]:
    """(``ab``, (a, b)) from adjacent alphabetic corpus pairs whose concatenation is zero-hit."""
    out: list[tuple[str, tuple[str, str]]] = []
    seen: set[str] = set()
    for _ in range(n * 20):
        if len(out) >= n:
            break
        toks = analysis.surface(rng.choice(texts))
        if len(toks) < 2:
            continue
        i = rng.randrange(len(toks) - 1)
        a, b = toks[i], toks[i + 1]
        if not (a.isalpha() and b.isalpha() and len(a) >= 2 and len(b) >= 2):
            continue
        if a + b in seen or not zero(a + b):
            continue
        seen.add(a + b)
        out.append((a + b, (a, b)))
    return out


def split_words(
    vocab: dict[str, int], n: int, rng: random.Random
) -> list[tuple[tuple[str, str], str]]:
    """((a, b), ``ab``): corpus words that cut into two corpus words of 3+ letters."""
    out: list[tuple[tuple[str, str], str]] = []
    words = sorted(w for w, df in vocab.items() if df >= 2 and w.isalpha() and len(w) >= 6)
    rng.shuffle(words)
    for w in words:
        cuts = [i for i in range(3, len(w) - 2) if vocab.get(w[:i]) and vocab.get(w[i:])]
        if cuts:
            i = rng.choice(cuts)
            out.append(((w[:i], w[i:]), w))
            if len(out) >= n:
                break
    return out


# ---- scoring -----------------------------------------------------------------------------


def same_term(got: Sequence[str], want: Sequence[str]) -> bool:
    return [analysis.stem(t) for t in got] == [analysis.stem(t) for t in want]


def score_typos(
    cases: Iterable[tuple[str, str]], stats: CorpusStats, lex: lx.Lexicon
) -> Counter[str]:
    c: Counter[str] = Counter()
    for typo, src in cases:
        r = rw.rewrite([typo], stats, lex)
        c["n"] += 1
        if not r.rewrites:
            c["gated" if lex.is_word(typo) else "untouched"] += 1
        elif same_term(r.display, [src]):
            c["corrected"] += 1
        else:
            c["wrong"] += 1
    return c


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "n/a"


def table(head: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(lines)


# ---- sections ----------------------------------------------------------------------------


@dataclass
class Cases:
    d1: list[tuple[str, str]]
    d2: list[tuple[str, str]]
    merged: list[tuple[str, tuple[str, str]]]
    split: list[tuple[tuple[str, str], str]]
    out_of_corpus: list[str]


def make_cases(corpus: Corpus, root: Path, n: int, seed: int) -> Cases:
    rng = random.Random(seed)
    vocab = corpus.vocab_df()
    stats = corpus.stats

    def zero(t: str) -> bool:
        s = analysis.stem(t)
        return all(d.df(s) == 0 for d in stats.dims.values())

    sources = sorted(w for w, df in vocab.items() if df >= 2 and len(w) >= 4 and not w.isdigit())
    others = other_vocab(root)
    ooc = sorted(w for w, c in others.items() if c >= 3 and w.isalpha() and len(w) >= 3 and zero(w))
    rng.shuffle(ooc)
    return Cases(
        d1=typos(sources, 1, n, zero, rng),
        d2=typos(sources, 2, n, zero, rng),
        merged=merged_pairs(corpus.texts, n // 3, zero, rng),
        split=split_words(vocab, n // 3, rng),
        out_of_corpus=ooc[:n],
    )


def quality(corpus: Corpus, cases: Cases, lexicons: dict[str, lx.Lexicon]) -> None:
    stats = corpus.stats
    rows = []
    for name, lex in lexicons.items():
        for label, cs in (("typo d=1", cases.d1), ("typo d=2", cases.d2)):
            c = score_typos(cs, stats, lex)
            rows.append(
                (name, label, c["n"], pct(c["corrected"], c["n"]), pct(c["wrong"], c["n"]),
                 pct(c["gated"], c["n"]), pct(c["untouched"], c["n"]))
            )  # fmt: skip
        ok = wrong = 0
        for q, parts in cases.merged:
            r = rw.rewrite([q], stats, lex)
            ok += r.display == parts
            wrong += bool(r.rewrites) and r.display != parts
        n = len(cases.merged)
        rows.append((name, "merged `ab` -> split", n, pct(ok, n), pct(wrong, n), "-", "-"))
        ok = 0
        for parts, w in cases.split:
            ok += rw.rewrite(list(parts), stats, lex).display == (w,)
        n = len(cases.split)
        rows.append((name, "split `a b` -> merge", n, pct(ok, n), "-", "-", "-"))
    print("### Rewrite quality on generated SciFact cases\n")
    head = ("lexicon", "case", "n", "corrected", "wrong rewrite", "gated (typo is a word)",
            "untouched")  # fmt: skip
    print(table(head, rows))
    print(
        "\n`split a b -> merge` merges only when the corpus writes `ab` more often than `a b`"
        " (the rule), so 100% is not the target there.\n"
    )


def false_rewrites(
    corpus: Corpus, cases: Cases, lexicons: dict[str, lx.Lexicon], seed: int
) -> None:
    stats = corpus.stats
    rng = random.Random(seed + 1)
    wf = lx.WordfreqLexicon.load(1.0, reject_misspellings=False)
    vocab = corpus.vocab_df()
    real = sorted(w for w in wf.words if w.isalpha() and len(w) >= 3 and w not in vocab)
    rows = []
    for name, lex in lexicons.items():
        known = [w for w in rng.sample(real, min(len(real), 20000)) if lex.is_word(w)]
        known = [w for w in known if rw.rewrite([w], stats, lex).zero_hit][: len(cases.d1)]
        spelled = split = 0
        split_ex: list[str] = []
        for w in known:
            r = rw.rewrite([w], stats, lex)
            spelled += any(x.kind == "spell" for x in r.rewrites)
            if any(x.kind == "split" for x in r.rewrites):
                split += 1
                if len(split_ex) < 4:
                    split_ex.append(f"{w}->{' '.join(r.display)}")
        if spelled:
            sys.exit(f"FAIL: lexicon {name} let {spelled} known words be spell-rewritten")
        ooc = cases.out_of_corpus
        fr = noise = 0
        ex: list[str] = []
        for w in ooc:
            r = rw.rewrite([w], stats, lex)
            if any(x.kind == "spell" for x in r.rewrites):
                fr += 1
                if len(ex) < 5:
                    ex.append(f"{w}->{r.display[0]}")
            noise += bool(r.noise)
        rows.append(
            (name, len(known), pct(spelled, len(known)), f"{pct(split, len(known))} "
             f"({', '.join(split_ex)})", len(ooc), pct(fr, len(ooc)), pct(noise, len(ooc)),
             ", ".join(ex))
        )  # fmt: skip
    print("### False rewrites of correctly spelled zero-hit words\n")
    head = ("lexicon", "lexicon words", "spell-rewritten", "split", "other corpora's words",
            "spell-rewritten", "called noise", "examples")  # fmt: skip
    print(table(head, rows))
    print(
        "\nLexicon words: wordfreq words (Zipf >= 1) absent from SciFact that the lexicon knows."
        " Other corpora's words: Cranfield/FastAPI/Hugo tokens seen 3+ times, zero-hit in"
        " SciFact; many are names and code identifiers no lexicon lists.\n"
    )


def lexicon_gate(corpus: Corpus, cases: Cases, root: Path, seed: int) -> None:
    """The numbers behind the default lexicon choice."""
    floors = ("1.0", "1.5", "2.0", "2.5", "3.0")
    specs = ["none", *(f"wordfreq:{z}" for z in floors)]
    specs += [f"wordfreq:{z}:raw" for z in floors[1:4]]
    cn = root / "conceptnet" / "en_vocab.txt"
    if cn.is_file():
        specs.insert(1, f"conceptnet:{cn}")
    if lx.SYSTEM_WORDS_PATH.is_file():
        specs.append("system")
    qwords = sorted({t for q in corpus.queries for t in analysis.surface(q) if t.isalpha()})
    qwords = [w for w in qwords if len(w) >= 3]
    rows = []
    for spec in specs:
        t0 = time.perf_counter()
        lex = lx.lexicon_from_config(spec)
        load_ms = 1000 * (time.perf_counter() - t0)
        d1 = score_typos(cases.d1, corpus.stats, lex)
        d2 = score_typos(cases.d2, corpus.stats, lex)
        ooc = cases.out_of_corpus
        fr = sum(
            any(x.kind == "spell" for x in rw.rewrite([w], corpus.stats, lex).rewrites) for w in ooc
        )
        rows.append(
            (spec.replace(str(root), "$DATA"), f"{load_ms:.0f}",
             pct(sum(map(lex.is_word, qwords)), len(qwords)),
             pct(sum(lex.is_word(t) for t, _ in cases.d1), len(cases.d1)),
             pct(sum(map(lex.is_word, COMMON_MISSPELLINGS)), len(COMMON_MISSPELLINGS)),
             pct(d1["corrected"] + d2["corrected"], d1["n"] + d2["n"]),
             pct(fr, len(ooc)))
        )  # fmt: skip
    print("### Real-word gate: lexicon candidates\n")
    head = ("lexicon", "load ms", "knows SciFact query words", "accepts d=1 typos",
            "accepts common misspellings", "typos corrected (d1+d2)",
            "false spell rewrites (other corpora)")  # fmt: skip
    print(table(head, rows))
    print(
        f"\n{len(qwords)} query words, {len(cases.d1)} + {len(cases.d2)} typos,"
        f" {len(COMMON_MISSPELLINGS)} common misspellings, {len(cases.out_of_corpus)} words"
        " of other corpora. `raw` = no misspelling filter.\n"
    )


def sweep(corpus: Corpus, cases: Cases, lex: lx.Lexicon) -> None:
    rows = []
    saved = (rw.MIN_SPELL_LEN, rw.SHORT_MAX_LEN)
    try:
        for min_len in (3, 4):
            for short in (3, 4, 5, 6):
                rw.MIN_SPELL_LEN, rw.SHORT_MAX_LEN = min_len, short
                d1 = score_typos(cases.d1, corpus.stats, lex)
                d2 = score_typos(cases.d2, corpus.stats, lex)
                fr = sum(
                    any(x.kind == "spell" for x in rw.rewrite([w], corpus.stats, lex).rewrites)
                    for w in cases.out_of_corpus
                )
                rows.append(
                    (min_len, short, pct(d1["corrected"], d1["n"]), pct(d1["wrong"], d1["n"]),
                     pct(d2["corrected"], d2["n"]), pct(d2["wrong"], d2["n"]),
                     pct(fr, len(cases.out_of_corpus)))
                )  # fmt: skip
    finally:
        rw.MIN_SPELL_LEN, rw.SHORT_MAX_LEN = saved
    print("### Distance band sweep (default lexicon)\n")
    head = ("min length", "d=1 up to length", "d1 corrected", "d1 wrong", "d2 corrected",
            "d2 wrong", "false spell rewrites (other corpora)")  # fmt: skip
    print(table(head, rows))
    print()


def big_stats(corpus: Corpus) -> CorpusStats:
    """One dimension of ~100k surface words: SciFact's vocabulary topped up from wordfreq."""
    vocab = corpus.vocab_df()
    wf = lx.WordfreqLexicon.load(0.0, reject_misspellings=False)
    for w, z in sorted(wf.zipf.items(), key=lambda kv: -kv[1]):
        if len(vocab) >= VOCAB_100K:
            break
        if analysis.surface(w) == [w]:
            vocab.setdefault(w, max(1, int(10 ** (z - 3))))
    stems: dict[str, int] = {}
    for w, df in vocab.items():
        s = analysis.stem(w)
        stems[s] = stems.get(s, 0) + df
    return CorpusStats(n_nodes=5183, dims={"text": DimStats(5183, stems, vocab)})


def timing(corpus: Corpus, cases: Cases, lex: lx.Lexicon) -> None:
    rows = []
    for label, stats in (("SciFact", corpus.stats), ("100k words", big_stats(corpus))):
        n_vocab = len({w for d in stats.dims.values() for w in d.surface})
        stats = CorpusStats(stats.n_nodes, dict(stats.dims))  # a new snapshot: a cold index
        t0 = time.perf_counter()
        rw.rewrite(["zzzzqx"], stats, rw_null := lx.NullLexicon())  # builds the index
        build = time.perf_counter() - t0
        terms = [t for t, _ in cases.d1 + cases.d2]
        terms = [t for t in terms if rw.rewrite([t], stats, rw_null).zero_hit]
        for name, lx_ in (("none (every term looked up)", rw_null), ("default", lex)):
            times = []
            for t in terms:
                t0 = time.perf_counter()
                rw.rewrite([t], stats, lx_)
                times.append(1000 * (time.perf_counter() - t0))
            times.sort()
            rows.append(
                (label, n_vocab, f"{1000 * build:.0f}", name, len(times),
                 f"{statistics.mean(times):.3f}", f"{times[len(times) // 2]:.3f}",
                 f"{times[int(len(times) * 0.95)]:.3f}", f"{times[-1]:.3f}")
            )  # fmt: skip
    print("### Speed: one zero-hit term per rewrite() call (ms)\n")
    head = ("vocabulary", "words", "index build ms", "lexicon", "terms", "mean", "p50", "p95",
            "max")  # fmt: skip
    print(table(head, rows))
    print()


def real_queries(corpus: Corpus, lex: lx.Lexicon) -> None:
    kinds: Counter[str] = Counter()
    n_zero = n_changed = n_noise = 0
    examples: dict[str, list[str]] = {"spell": [], "split": [], "merge": []}
    for q in corpus.queries:
        r = rw.rewrite(analysis.surface(q), corpus.stats, lex)
        n_zero += bool(r.zero_hit)
        n_changed += r.changed
        n_noise += bool(r.noise)
        for x in r.rewrites:
            kinds[x.kind] += 1
            ex = f"`{x.original}` -> `{' '.join(x.replacement)}`"
            if len(examples[x.kind]) < 8 and ex not in examples[x.kind]:
                examples[x.kind].append(ex)
    print("### SciFact's own queries (default lexicon)\n")
    rows = [
        ("queries", len(corpus.queries)),
        ("with a zero-hit term", n_zero),
        ("rewritten", n_changed),
        ("with noise", n_noise),
        *((f"{k} rewrites", f"{kinds[k]}: {', '.join(v)}") for k, v in examples.items()),
    ]
    print(table(("", ""), rows))
    print()


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="shared data folder (or its scifact/ folder)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--n", type=int, default=2000, help="cases per generated kind")
    ap.add_argument("--lexicons", action="store_true", help="compare lexicon candidates")
    ap.add_argument("--sweep", action="store_true", help="sweep the distance band")
    args = ap.parse_args(argv)

    root = data_root(args.data)
    t0 = time.perf_counter()
    corpus = load_scifact(root)
    cases = make_cases(corpus, root, args.n, args.seed)
    print(
        f"SciFact: {corpus.stats.n_nodes} docs, {len(corpus.vocab_df())} surface words; "
        f"seed {args.seed}; prepared in {time.perf_counter() - t0:.1f}s\n"
    )
    default = lx.default_lexicon()
    lexicons: dict[str, lx.Lexicon] = {f"default ({getattr(default, 'name', '?')})": default}
    cn = root / "conceptnet" / "en_vocab.txt"
    if cn.is_file():
        lexicons["conceptnet"] = lx.lexicon_from_config(f"conceptnet:{cn}")
    if args.lexicons:
        lexicon_gate(corpus, cases, root, args.seed)
    if args.sweep:
        sweep(corpus, cases, default)
    quality(corpus, cases, lexicons)
    false_rewrites(corpus, cases, lexicons, args.seed)
    timing(corpus, cases, default)
    real_queries(corpus, default)
    print(json.dumps({"band": {"min_len": rw.MIN_SPELL_LEN, "d1_up_to": rw.SHORT_MAX_LEN}}))


if __name__ == "__main__":
    main()
